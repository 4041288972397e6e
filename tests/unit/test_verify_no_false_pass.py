"""verify --level full gives no false pass: fabric_evidence collects nvidia-smi nvlink -s and the kernel
log (fake tools through the module's real code path), and a node with GPUs that lacks dcgmi or
nccl-tests fails with a finding that says what to install."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import LOCAL_FIXTURES
from fabric_modrun import run_module

from clusterctl.analysis.engine import analyze_dir

KL = LOCAL_FIXTURES / "kernel-log"
H200 = LOCAL_FIXTURES / "h200-live"


def fake(bindir: Path, name: str, body: str) -> None:
    p = bindir / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(0o755)


@pytest.fixture
def node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "bin").mkdir()
    (tmp_path / "proc").mkdir()
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/nonexistent")
    return tmp_path


def collect(node: Path, **params: object) -> dict:
    r = run_module("fabric_evidence", {"sysfs_root": str(node / "nosys"), "proc_root": str(node / "proc"),
                                       "tool_dirs": [str(node / "bin")], **params})
    assert r["changed"] is False and "failed" not in r, r
    return r


def test_kernel_log_from_journalctl_with_the_window_asked_for(node: Path) -> None:
    (node / "log.txt").write_text((KL / "xid79-fallen-off-bus-journal.txt").read_text())
    fake(node / "bin", "journalctl", f'echo "$@" > {node}/args; /bin/cat {node}/log.txt\n')
    r = collect(node, kinds=["kernel-log"], kernel_log_since="-24h", kernel_log_lines=500)
    ev = r["evidence"]["kernel-log"]
    assert ev["status"] == "ok" and "Xid (PCI:0000:2b:00): 79" in ev["stdout"]
    assert (node / "args").read_text().split() == ["-k", "--since", "-24h", "-o", "short-iso", "--no-pager", "-n",
                                                    "500"]


def test_kernel_log_falls_back_to_dmesg_and_keeps_the_last_lines(node: Path) -> None:
    fake(node / "bin", "journalctl", "echo 'No journal files were found.' >&2; echo '-- No entries --'\n")
    fake(node / "bin", "dmesg", f"/bin/cat {KL / 'fallen-off-bus-no-xid-dmesg.txt'}\n")
    ev = collect(node, kinds=["kernel-log"], kernel_log_lines=3)["evidence"]["kernel-log"]
    assert ev["status"] == "ok" and ev["cmd"][-1].endswith("dmesg")
    assert ev["stdout"].splitlines()[0].strip() == "NVRM: fallen off the bus and is not responding to commands."
    assert len(ev["stdout"].splitlines()) == 3


def test_kernel_log_tool_missing_and_denied(node: Path) -> None:
    ev = collect(node, kinds=["kernel-log"])["evidence"]["kernel-log"]
    assert ev["status"] == "tool_missing"
    fake(node / "bin", "dmesg", "echo 'dmesg: read kernel buffer failed: Operation not permitted' >&2; exit 1\n")
    ev = collect(node, kinds=["kernel-log"])["evidence"]["kernel-log"]
    assert ev["status"] == "error" and "Operation not permitted" in ev["stderr"]


def test_nvlink_status_is_collected(node: Path) -> None:
    fixture = H200 / "nvidia-smi-nvlink-live-580.159.04.txt"
    fake(node / "bin", "nvidia-smi", f'[ "$1 $2" = "nvlink -s" ] && /usr/bin/tail -n +2 {fixture}; exit 0\n')
    ev = collect(node, kinds=["nvidia-smi-nvlink"])["evidence"]["nvidia-smi-nvlink"]
    assert ev["status"] == "ok" and ev["cmd"][1:] == ["nvlink", "-s"]
    fake(node / "bin", "nvidia-smi", "echo 'No devices were found'; exit 6\n")
    assert collect(node, kinds=["nvidia-smi-nvlink"])["evidence"]["nvidia-smi-nvlink"]["status"] == "device_absent"


def write(ev_dir: Path, host: str, status: dict) -> None:
    (ev_dir / host).mkdir(parents=True)
    (ev_dir / host / "_collect.json").write_text(json.dumps(status))


FULL_MISSING = {
    "nvidia-smi-query": {"status": "ok", "rc": 0, "stderr": ""},
    "dcgmi-diag": {"status": "tool_missing", "rc": None, "stderr": "dcgmi not found in PATH"},
    "nccl-tests": {"status": "tool_missing", "rc": None,
                   "stderr": "/opt/nccl-tests/build/all_reduce_perf not found or not executable"},
}


def test_gpus_found_and_full_level_tools_missing_fail_the_node(tmp_path: Path) -> None:
    write(tmp_path, "g1", FULL_MISSING)
    rep = analyze_dir(tmp_path, {})  # no gpus_per_node: nvidia-smi found GPUs, that is enough
    host = rep.hosts["g1"]
    assert host.status == "failed"
    msgs = {f.message.split(":")[0]: f.message for f in host.findings if f.severity == "critical"}
    assert set(msgs) == {"dcgmi-diag", "nccl-tests"}
    assert "datacenter-gpu-manager-4-core" in msgs["dcgmi-diag"] and "nvidia_gpu role" in msgs["dcgmi-diag"]
    assert "libnccl-dev" in msgs["nccl-tests"] and "all_reduce_perf not found" in msgs["nccl-tests"]


def test_gpus_expected_but_nvidia_smi_missing_fails_too(tmp_path: Path) -> None:
    missing = {"status": "tool_missing", "stderr": "nvidia-smi not found"}
    status = {**FULL_MISSING, "nvidia-smi-query": missing, "nvidia-smi-q": missing, "nvidia-smi-topo": missing}
    write(tmp_path, "g1", status)
    rep = analyze_dir(tmp_path, {"gpus_per_node": 8})
    # one finding for nvidia-smi (the first KIND it would have captured), not one per KIND
    crit = sorted(f.message.split(":")[0] for f in rep.hosts["g1"].findings if f.severity == "critical")
    assert crit == ["dcgmi-diag", "nccl-tests", "nvidia-smi-q"]


def test_a_node_without_gpus_only_notes_the_missing_tools(tmp_path: Path) -> None:
    status = {**FULL_MISSING, "nvidia-smi-query": {"status": "tool_missing", "stderr": "nvidia-smi not found"}}
    write(tmp_path, "cpu1", status)
    rep = analyze_dir(tmp_path, {"gpus_per_node": 0})
    # nothing failed, and nothing was judged either (no capture file): "no evidence", not healthy
    assert rep.hosts["cpu1"].status == "no evidence"
    assert {f.message.split(":")[0] for f in rep.hosts["cpu1"].notes} == {"dcgmi-diag", "nccl-tests",
                                                                           "nvidia-smi-query", "cpu1/"}
