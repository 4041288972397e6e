"""Helpers for the lab integration tests: run the CLI, run a command in a lab container."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / "inventories" / "lab"
CLI = [sys.executable, "-m", "clusterctl.cli"]


# Every Slurm cluster this test run builds on fresh containers (a fixture appends its name each time it sets one up;
# molecule_test() appends a scenario that brings up its own controller). tests/conftest.py prints the
# count at the end and fails the run when it exceeds SLURM_BUILDS_MAX (#18: Slurm built once per run;
# the lab is the second: its tests exercise `clusterctl provision` itself, over SSH).
SLURM_BUILDS: list[str] = []
SLURM_BUILDS_MAX = 2


@functools.cache
def lab_image() -> None:
    """The images every Molecule scenario and the lab run on, each built at most once per test run (a
    no-op when it exists): localhost/clusterctl-lab (Slurm, munge, MariaDB, Redis, rdma-core packages
    baked in, services off) and localhost/clusterctl-bare (the same base without them)."""
    for args in ([], ["--bare"]):
        r = subprocess.run(["bash", str(REPO / "lab" / "build-image.sh"), *args], capture_output=True, text=True,
                           timeout=1800, check=False)
        assert r.returncode == 0, f"lab/build-image.sh {args} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def cc(*args: str, timeout: int = 1200) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, check=False)


def sh(host: str, command: str) -> str:
    out = subprocess.run(["podman", "exec", f"clusterctl-lab-{host}", "sh", "-c", command],
                         capture_output=True, text=True, check=False)
    return out.stdout


def builds_slurm(scenario: str) -> bool:
    """Whether Molecule scenario SCENARIO brings up its own Slurm controller (a platform in slurm_controller)."""
    import yaml

    conf = yaml.safe_load((REPO / "molecule" / scenario / "molecule.yml").read_text())
    return any("slurm_controller" in p.get("groups", []) for p in conf.get("platforms", []))


def molecule(step: str, scenario: str, timeout: int, env: dict[str, str] | None = None) -> None:
    """``molecule STEP -s SCENARIO`` from the repository root with this venv's tools on PATH; fails
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
    r = subprocess.run([str(exe) if exe.exists() else "molecule", step, "-s", scenario], cwd=REPO, env=full,
                       text=True, capture_output=True, timeout=timeout, check=False)
    assert r.returncode == 0, f"molecule {step} -s {scenario} failed:\n{r.stdout[-6000:]}\n{r.stderr[-3000:]}"


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


def molecule_test(scenario: str, timeout: int, env: dict[str, str] | None = None) -> None:
    """``molecule test -s SCENARIO`` (its whole sequence, its own containers)."""
    if builds_slurm(scenario):
        SLURM_BUILDS.append(f"molecule test -s {scenario}")
    molecule("test", scenario, timeout, env)


# (side effect, verify) playbooks relative to molecule/, in the order of molecule/slurm/molecule.yml's
# test_sequence (tests/unit/test_molecule_shape.py keeps the two in step).
SLURM_CASES = {
    "slurm": [("side_effect", "slurm/munge_side_effect.yml"), ("verify", "slurm/cluster_verify.yml")],
    "slurm_scaleout": [("side_effect", "slurm_scaleout/side_effect.yml"), ("verify", "slurm_scaleout/verify.yml")],
    "storage": [("verify", "storage/verify.yml"), ("side_effect", "storage/side_effect.yml")],
}


def run_slurm_case(case: str, env: dict[str, str]) -> None:
    """One case of the shared Molecule Slurm cluster (the fixture slurm_cluster built it)."""
    for step, playbook in SLURM_CASES[case]:
        var = "CC_SLURM_SIDE_EFFECT" if step == "side_effect" else "CC_SLURM_VERIFY"
        molecule(step.replace("_", "-"), "slurm", 1800, {**env, var: playbook})
