"""fabric_evidence module: ok / tool_missing / device_absent / error / skipped, never changed."""

from __future__ import annotations

from pathlib import Path

import pytest
import simfabric
from conftest import read_fixture
from fabric_modrun import run_module


def fake(bindir: Path, name: str, body: str) -> None:
    bindir.mkdir(exist_ok=True)
    p = bindir / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(0o755)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    (tmp_path / "proc").mkdir()
    return tmp_path


def sysfs(tmp: Path) -> Path:
    return simfabric.build({"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "link_layer": "InfiniBand"}]}]},
                           tmp / "sys")


def test_ok_and_missing_tools_check_mode(env: Path) -> None:
    (env / "ibstat.out").write_text(read_fixture("ibstat/h100-all-active-2.txt"))
    fake(env / "bin", "ibstat", f"cat {env}/ibstat.out\n")
    fake(env / "bin", "nvidia-smi", "echo 'No devices were found'; exit 6\n")
    r = run_module("fabric_evidence", {"sysfs_root": str(sysfs(env)), "proc_root": str(env / "proc"),
                                       "kinds": ["ibstat", "ibstatus", "nvidia-smi-q"]}, check_mode=True)
    assert r["changed"] is False and "failed" not in r
    ev = r["evidence"]
    assert ev["ibstat"]["status"] == "ok" and ev["ibstat"]["stdout"].startswith("# source:")
    assert ev["ibstatus"]["status"] == "tool_missing"
    assert ev["nvidia-smi-q"]["status"] == "device_absent" and ev["nvidia-smi-q"]["rc"] == 6
    assert r["summary"]["ibstat"] == {"status": "ok", "rc": 0, "stderr": ""}


def test_no_rdma_devices_and_errors(env: Path) -> None:
    fake(env / "bin", "ibstat", "echo boom >&2; exit 1\n")
    fake(env / "bin", "nvidia-smi", "echo 'NVIDIA-SMI has failed' >&2; exit 9\n")
    r = run_module("fabric_evidence", {"sysfs_root": str(env / "nosys"), "proc_root": str(env / "proc"),
                                       "kinds": ["ibstat", "mlnx_qos", "nvidia-smi-q"]})
    ev = r["evidence"]
    assert ev["ibstat"]["status"] == "device_absent"  # not even run: no class/infiniband
    assert ev["mlnx_qos"]["status"] == "device_absent"
    assert ev["nvidia-smi-q"]["status"] == "error" and ev["nvidia-smi-q"]["rc"] == 9


def test_active_tests_skipped_when_jobs_run(env: Path) -> None:
    (env / "proc" / "4242").mkdir()
    (env / "proc" / "4242" / "comm").write_text("slurmstepd\n")
    r = run_module("fabric_evidence", {"sysfs_root": str(sysfs(env)), "proc_root": str(env / "proc"),
                                       "kinds": [], "active": ["nccl-tests", "ib_write_bw"]})
    assert r["running_jobs"] == 1
    assert {k: v["status"] for k, v in r["evidence"].items()} == {"nccl-tests": "skipped", "ib_write_bw": "skipped"}
