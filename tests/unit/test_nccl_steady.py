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


def run(root: Path, inv: Path, *extra: str) -> tuple[int, str]:
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), **collection.ansible_env(),
               ANSIBLE_GATHERING="explicit", PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    p = subprocess.run(["ansible-playbook", "-i", str(inv / "hosts.yml"), str(root / "day2.yml"), *extra],
                       env=env, capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    m = re.search(r"sim0001\s*:\s*ok=\d+\s+changed=(\d+)\s+unreachable=0\s+failed=0", p.stdout)
    assert m, p.stdout[-2000:]
    return int(m.group(1)), p.stdout


def skipped(out: str, task: str) -> bool:
    return re.search(rf"TASK \[clusterctl\.hpc\.nccl : {task}\][^\n]*\n(skipping: \[sim0001\]|\s*$)", out) is not None


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
    assert skipped(out, r"Read the current NCCL files \(Ethernet fabric, no RDMA facts\)")
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
