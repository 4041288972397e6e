"""fabric_evidence KIND sysfs-ib and tool_dirs on the lab's simulated RoCE trees, judged by the engine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import simfabric
from ccparse import registry
from fabric_modrun import run_module

from clusterctl.analysis.engine import analyze_dir

REPO = Path(__file__).resolve().parents[2]
SIM = REPO / "tests" / "fixtures" / "simfabric"
SPEC = {"fabric": "roce", "pfc_priority": 3, "roce_dscp": 26, "rdma_devices_per_node": 2, "ib_rate_gbps": 400}


def node(tmp: Path, desc: str) -> Path:
    """The layout the lab test copies into a container: <root>/sys (tree) and <root>/bin (fake tools)."""
    simfabric.build(simfabric.load(SIM / desc), tmp / "sys")
    shutil.copytree(REPO / "tests" / "fakebin", tmp / "bin")
    (tmp / "proc").mkdir()
    return tmp


def collect(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("SIMFABRIC_QOS_STATE", raising=False)
    return run_module("fabric_evidence", {"sysfs_root": str(root / "sys"), "proc_root": str(root / "proc"),
                                          "tool_dirs": [str(root / "bin")], "kinds": ["sysfs-ib", "mlnx_qos"]},
                      check_mode=True)


def test_sysfs_dump_round_trips_through_the_parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = collect(node(tmp_path, "lab-roce-healthy.yml"), monkeypatch)
    assert r["changed"] is False and "failed" not in r
    ev = r["evidence"]
    assert ev["sysfs-ib"]["status"] == "ok"
    assert all(k.startswith("/sys/bus/pci/devices/") for k in json.loads(ev["sysfs-ib"]["stdout"]))
    data = registry.parse("sysfs-ib", ev["sysfs-ib"]["stdout"])
    ports = {(d["name"], p["port"]): p for d in data["devices"] for p in d["ports"]}
    # the description: two RoCE ports at 400 Gb/s on rdma0/rdma1, MTU 9000, IPv4 10.10.{0,1}.11
    assert ports[("mlx5_0", 1)]["rate_gbps"] == 400 and ports[("mlx5_0", 1)]["netdev"] == "rdma0"
    assert ports[("mlx5_1", 1)]["netdev_mtu"] == 9000 and ports[("mlx5_1", 1)]["roce_v2_ipv4"] == "10.10.1.11"
    assert [d["pci"] for d in data["devices"]] == ["0000:18:00.0", "0000:2a:00.0"]
    # fake mlnx_qos found through tool_dirs (not on PATH), one reading per RoCE netdev
    assert ev["mlnx_qos"]["status"] == "ok" and ev["mlnx_qos"]["cmd"][0] == str(tmp_path / "bin" / "mlnx_qos")
    assert ev["mlnx_qos#rdma1"]["status"] == "ok" and "Priority trust state: dscp" in ev["mlnx_qos"]["stdout"]


def test_missing_tool_without_tool_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = node(tmp_path, "lab-roce-healthy.yml")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    r = run_module("fabric_evidence", {"sysfs_root": str(root / "sys"), "proc_root": str(root / "proc"),
                                       "kinds": ["mlnx_qos"]})
    assert r["evidence"]["mlnx_qos"]["status"] == "tool_missing"


def test_healthy_and_degraded_nodes_judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    evidence = tmp_path / "evidence"
    for host, desc in (("lab-c1", "lab-roce-healthy.yml"), ("lab-c2", "lab-roce-degraded.yml")):
        r = collect(node(tmp_path / host, desc), monkeypatch)
        (evidence / host).mkdir(parents=True)
        for kind, v in r["evidence"].items():
            (evidence / host / f"{kind}.txt").write_text(v["stdout"])
        (evidence / host / "_collect.json").write_text(json.dumps(r["summary"]))
    report = analyze_dir(evidence, SPEC).to_dict()
    assert report["hosts"]["lab-c1"] == {"status": "healthy", "findings": []}
    c2 = report["hosts"]["lab-c2"]
    assert c2["status"] == "failed"
    got = {(f["check"], f["subject"]) for f in c2["findings"]}
    assert ("qos_pfc", "lab-c2/rdma0") in got  # PFC off on priority 3 of rdma0
    assert any(c == "ib_rate" or s == "lab-c2/mlx5_1/1" for c, s in got), got  # 200 of 400 Gb/s

