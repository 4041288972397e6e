"""fabric_evidence module: ok / tool_missing / device_absent / error / skipped, never changed."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest
import simfabric
from ccparse import registry
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


FAKE_IB = Path(__file__).resolve().parents[1] / "fakebin" / "ib_write_bw"
SIM = Path(__file__).resolve().parents[1] / "fixtures" / "simfabric"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def loopback_node(env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A node with lab-roce-healthy.yml's two 400 Gb/s RoCE ports and the fake perftest beside its
    tree (the fake reads the rates from ``<tmp>/sys``), its server on 127.0.0.1 only."""
    monkeypatch.setenv("FAKE_IB_BIND", "127.0.0.1")
    simfabric.build(simfabric.load(SIM / "lab-roce-healthy.yml"), env / "sys")
    shutil.copy(FAKE_IB, env / "bin" / "ib_write_bw")
    return env


def test_ib_write_bw_loopback_runs_both_sides(loopback_node: Path) -> None:
    node = loopback_node
    r = run_module("fabric_evidence", {"sysfs_root": str(node / "sys"), "proc_root": str(node / "proc"),
                                       "kinds": [], "active": ["ib_write_bw"], "ib_write_bw_seconds": 1,
                                       "ib_write_bw_port": free_port()})
    ev = r["evidence"]["ib_write_bw"]
    assert ev["status"] == "ok", ev
    assert ev["cmd"][-1] == "localhost" and ev["cmd"][ev["cmd"].index("-d") + 1] == "mlx5_0"
    # the fake reports 96 % of the port's 400 Gb/s (tests/fakebin/ib_write_bw's docstring)
    parsed = registry.parse("ib_write_bw", ev["stdout"])
    assert parsed["bw_avg_gbps"] == pytest.approx(384.0)
    assert r["changed"] is False


def test_ib_write_bw_loopback_failing_device_is_an_error_not_a_retry(loopback_node: Path) -> None:
    """A device the tool cannot open: the tool's own error, not taken for a server that never listened."""
    node = loopback_node
    r = run_module("fabric_evidence", {"sysfs_root": str(node / "sys"), "proc_root": str(node / "proc"),
                                       "kinds": [], "active": ["ib_write_bw"], "ib_write_bw_seconds": 1,
                                       "ib_write_bw_device": "mlx5_7", "ib_write_bw_port": free_port()})
    ev = r["evidence"]["ib_write_bw"]
    assert ev["status"] == "error" and ev["rc"] == 1
    assert "IB device mlx5_7 not found" in ev["stderr"]
    assert "did not accept" not in ev["stderr"]  # not mistaken for a server that never listened


PAIR = Path(__file__).resolve().parents[1] / "fixtures" / "h200-xml-pair"


def test_nvidia_smi_q_is_captured_as_xml_where_nvidia_smi_prints_it(env: Path) -> None:
    # the H200 text and XML reports of one run (tests/fixtures/h200-xml-pair), source lines dropped
    for name in ("nvidia-smi-q.txt", "nvidia-smi-q-x.txt"):
        (env / name).write_text((PAIR / name).read_text().split("\n", 1)[1])
    fake(env / "bin", "nvidia-smi", f'if [ "$2" = "-x" ]; then cat {env}/nvidia-smi-q-x.txt; '
                                    f"else cat {env}/nvidia-smi-q.txt; fi\n")
    r = run_module("fabric_evidence", {"sysfs_root": str(env / "nosys"), "proc_root": str(env / "proc"),
                                       "kinds": ["nvidia-smi-q"]}, check_mode=True)
    ev = r["evidence"]["nvidia-smi-q"]
    assert ev["status"] == "ok" and ev["cmd"][1:] == ["-q", "-x"]
    assert "<nvidia_smi_log>" in ev["stdout"]
    data = r["parsed"]["nvidia-smi-q"]["data"]
    assert data == registry.parse("nvidia-smi-q", ev["stdout"])
    assert data["gpus"][0]["name"] == "NVIDIA H200"


def test_nvidia_smi_q_falls_back_to_text_when_no_xml_comes(env: Path) -> None:
    # a stand-in (or an old driver) that ignores -x and prints the text report
    (env / "q.txt").write_text((PAIR / "nvidia-smi-q.txt").read_text().split("\n", 1)[1])
    fake(env / "bin", "nvidia-smi", f"cat {env}/q.txt\n")
    r = run_module("fabric_evidence", {"sysfs_root": str(env / "nosys"), "proc_root": str(env / "proc"),
                                       "kinds": ["nvidia-smi-q"]}, check_mode=True)
    ev = r["evidence"]["nvidia-smi-q"]
    assert ev["status"] == "ok" and ev["cmd"][1:] == ["-q"]
    assert r["parsed"]["nvidia-smi-q"]["data"]["gpus"][0]["bus_id"] == "00000000:00:06.0"
