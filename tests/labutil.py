"""Helpers for the lab integration tests: run the CLI, run a command in a lab container."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / "inventories" / "lab"
CLI = [sys.executable, "-m", "clusterctl.cli"]


@functools.cache
def lab_image() -> None:
    """The one image every Molecule scenario and the lab run on (Slurm, munge, MariaDB, Redis, rdma-core
    packages baked in, services off): built at most once per test run, a no-op when it exists."""
    r = subprocess.run(["bash", str(REPO / "lab" / "build-image.sh")], capture_output=True, text=True,
                       timeout=1800, check=False)
    assert r.returncode == 0, f"lab/build-image.sh failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def cc(*args: str, timeout: int = 1200) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, check=False)


def sh(host: str, command: str) -> str:
    out = subprocess.run(["podman", "exec", f"clusterctl-lab-{host}", "sh", "-c", command],
                         capture_output=True, text=True, check=False)
    return out.stdout


def molecule_test(scenario: str, timeout: int, env: dict[str, str] | None = None) -> None:
    """``molecule test -s SCENARIO`` from the repository root with this venv's tools on PATH; fails
    the calling test with the end of its output unless it exits 0 (skips when podman is missing)."""
    import os
    import shutil

    import pytest

    if shutil.which("podman") is None:
        pytest.skip("podman is missing: run lab/host-setup.sh and lab/build-image.sh first")
    from clusterctl import collection

    collection.collections_path()  # the .ansible/collections link the scenarios' ANSIBLE_COLLECTIONS_PATH names
    lab_image()
    venv_bin = Path(sys.executable).parent
    exe = venv_bin / "molecule"
    full = dict(os.environ, **(env or {}))
    # molecule shells out to ansible-config/ansible-playbook: the venv's bin must be on PATH
    full["PATH"] = f"{venv_bin}{os.pathsep}{full.get('PATH', '')}"
    r = subprocess.run([str(exe) if exe.exists() else "molecule", "test", "-s", scenario], cwd=REPO, env=full,
                       text=True, capture_output=True, timeout=timeout, check=False)
    assert r.returncode == 0, f"molecule test -s {scenario} failed:\n{r.stdout[-6000:]}\n{r.stderr[-3000:]}"


#: The lab's cluster spec on the simulated RoCE fabrics of tests/fixtures/simfabric/lab-roce-*.yml
#: (two 400 Gb/s devices a node, PFC on priority 3, RoCE traffic on DSCP 26).
ROCE_SPEC = {"fabric": "roce", "pfc_priority": 3, "roce_dscp": 26, "rdma_devices_per_node": 2, "ib_rate_gbps": 400}


def lab_copy_on_roce(dest: Path) -> Path:
    """A copy of the lab inventory at ``dest`` whose cluster spec declares :data:`ROCE_SPEC`."""
    import shutil

    import yaml

    shutil.copytree(LAB, dest)
    cluster = dest / "group_vars" / "all" / "cluster.yml"
    spec = yaml.safe_load(cluster.read_text())
    spec.update(ROCE_SPEC)
    cluster.write_text(yaml.safe_dump(spec, sort_keys=False))
    return dest
