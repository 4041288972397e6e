"""nccl steady state (issue 19): one module round-trip per host (rdma_facts also returns the state of
the two NCCL files), both write tasks skipped when nothing differs, drift rewritten and reported, in
check mode without writing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from clusterctl import collection

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench_day2  # noqa: E402


def run(root: Path, inv: Path, *extra: str, rc: int = 0) -> tuple[int, str]:
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), **collection.ansible_env(),
               ANSIBLE_GATHERING="explicit", PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    p = subprocess.run(["ansible-playbook", "-i", str(inv / "hosts.yml"), str(root / "day2.yml"), *extra],
                       env=env, capture_output=True, text=True, check=False)
    assert p.returncode == rc, p.stdout[-3000:] + p.stderr[-2000:]
    m = re.search(rf"sim0001\s*:\s*ok=\d+\s+changed=(\d+)\s+unreachable=0\s+failed={int(rc != 0)}", p.stdout)
    assert m, p.stdout[-2000:]
    return int(m.group(1)), p.stdout


def tasks(out: str) -> list[str]:
    return re.findall(r"^TASK \[clusterctl\.hpc\.nccl : (.*)\] \*", out, re.M)


def items(out: str, status: str) -> list[str]:
    """Basenames of the items of the write task reported with ``status`` (changed, skipping, ok)."""
    block = out.split("TASK [clusterctl.hpc.nccl : Write the NCCL configuration and login environment]", 1)[1]
    block = block.split("TASK [", 1)[0].split("PLAY RECAP", 1)[0]
    return [Path(p).name for p in re.findall(rf"^{status}: \[sim0001\] => \(item=([^)]*)\)", block, re.M)]


@pytest.mark.skipif(os.geteuid() != 0, reason="the role writes root-owned files")
def test_steady_state_one_module_and_drift_rewritten(tmp_path: Path) -> None:
    inv = bench_day2.make_inventory(tmp_path, 1)
    conf = tmp_path / "nodes" / "sim0001" / "etc" / "nccl.conf"
    prof = tmp_path / "nodes" / "sim0001" / "etc" / "nccl.sh"
    changed, out = run(tmp_path, inv)
    # one task writes both files (its items are reported one by one; the recap counts the task once)
    assert changed == 1 and items(out, "changed") == ["nccl.conf", "nccl.sh"] and conf.is_file() and prof.is_file()
    assert "NCCL_IB_HCA" in conf.read_text()
    changed, out = run(tmp_path, inv)
    assert changed == 0
    # both items skipped: neither ran (the callback may not print skipped items at all)
    assert items(out, "changed") == [] and items(out, "ok") == []
    # four tasks per host in steady state: the argument-spec check, the one module, the one assert
    # and the skipped write task (no Ethernet-only read, no second assert)
    assert tasks(out) == STEADY_TASKS, tasks(out)
    # drift: edited content and a changed mode; check mode reports both with a diff and writes nothing
    text = conf.read_text()
    conf.write_text(text + "NCCL_DEBUG=INFO\n")
    prof.chmod(0o600)
    changed, out = run(tmp_path, inv, "--check", "--diff")
    assert changed == 1 and items(out, "changed") == ["nccl.conf", "nccl.sh"] and "-NCCL_DEBUG=INFO" in out
    assert conf.read_text().endswith("NCCL_DEBUG=INFO\n") and prof.stat().st_mode & 0o777 == 0o600
    changed, out = run(tmp_path, inv)
    assert changed == 1 and items(out, "changed") == ["nccl.conf", "nccl.sh"]
    assert conf.read_text() == text and prof.stat().st_mode & 0o777 == 0o644
    # a deleted file is written again
    prof.unlink()
    changed, out = run(tmp_path, inv)
    assert changed == 1 and items(out, "changed") == ["nccl.sh"] and items(out, "ok") == []
    assert prof.is_file()
    assert run(tmp_path, inv)[0] == 0


STEADY_TASKS = ["Validating arguments against arg spec 'main' - NCCL defaults derived from discovered RDMA facts",
                "Collect RDMA facts and the current NCCL files", "Validate nccl variables",
                "Write the NCCL configuration and login environment"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the role writes root-owned files")
def test_ethernet_same_four_tasks_files_only(tmp_path: Path) -> None:
    """Ethernet fabric: the same single module call reads only the two files (read_sysfs=false)."""
    inv = bench_day2.make_inventory(tmp_path, 1)
    with (inv / "host_vars" / "sim0001.yml").open("a") as f:
        f.write("nccl_fabric: ethernet\n")
    conf = tmp_path / "nodes" / "sim0001" / "etc" / "nccl.conf"
    changed, out = run(tmp_path, inv, "-v")
    assert changed == 1 and conf.is_file() and "NCCL_IB_HCA" not in conf.read_text()
    assert "clusterctl_rdma" not in out  # no RDMA fact set on Ethernet hosts
    changed, out = run(tmp_path, inv)
    assert changed == 0 and tasks(out) == STEADY_TASKS, tasks(out)


@pytest.mark.skipif(os.geteuid() != 0, reason="the role writes root-owned files")
def test_no_usable_port_fails_naming_key_and_value(tmp_path: Path) -> None:
    """Every rail a front-end NIC: the one assert fails naming fabric and frontend_nics; nothing written."""
    inv = bench_day2.make_inventory(tmp_path, 1)
    host_vars = inv / "host_vars" / "sim0001.yml"
    nics = [f"mlx5_{d}" for d in range(8)]
    host_vars.write_text(host_vars.read_text().replace("nccl_frontend_nics: []", f"nccl_frontend_nics: {nics}"))
    _, out = run(tmp_path, inv, rc=2)
    assert "nccl_fabric=roce but no ACTIVE Ethernet RDMA port outside nccl_frontend_nics=" in out
    assert "'mlx5_7'" in out and "nccl_require_hca=false" in out
    assert not (tmp_path / "nodes" / "sim0001" / "etc" / "nccl.conf").exists()
    # invalid inputs are reported before (and instead of) the port check, each with key and value
    with host_vars.open("a") as f:
        f.write("nccl_roce_dscp: 99\n")
    _, out = run(tmp_path, inv, rc=2)
    assert "nccl_roce_dscp=99: must be an integer 0..63" in out and "no ACTIVE" not in out
