"""The evidence folder that playbooks/verify.yml (fabric_evidence) wrote on a live H200 machine
(tests/fixtures/h200-live/verify-evidence) judged by the analysis: one GPU, no RDMA devices."""

from __future__ import annotations

import json

from conftest import LOCAL_FIXTURES

from clusterctl.analysis.engine import analyze_dir
from clusterctl.analysis.expectations import build

EV = LOCAL_FIXTURES / "h200-live" / "verify-evidence"


def test_collector_told_device_absent_from_tool_output() -> None:
    status = json.loads((EV / "h200-live" / "_collect.json").read_text())
    # the machine has no /sys/class/infiniband: RDMA KINDs are "device absent", the GPU KINDs "ok"
    assert {k for k, v in status.items() if v["status"] == "device_absent"} == {"ibstat", "ibstatus", "mlnx_qos",
                                                                               "sysfs-ib"}
    assert {k for k, v in status.items() if v["status"] == "ok"} == {"nvidia-smi-q", "nvidia-smi-query",
                                                                    "nvidia-smi-topo"}


def test_the_machine_as_it_is_is_healthy() -> None:
    report = analyze_dir(EV, build({"fabric": "ethernet", "gpus_per_node": 1, "rdma_devices_per_node": 0}))
    d = report.to_dict() if hasattr(report, "to_dict") else report
    host = d["hosts"]["h200-live"]
    assert host["status"] == "healthy", host
    assert host["findings"] == []


def test_an_eight_gpu_infiniband_spec_fails_it() -> None:
    report = analyze_dir(EV, build({"fabric": "infiniband", "gpus_per_node": 8, "rdma_devices_per_node": 8}))
    d = report.to_dict() if hasattr(report, "to_dict") else report
    host = d["hosts"]["h200-live"]
    assert host["status"] == "failed"
    checks = {f["check"] for f in host["findings"] if f["severity"] == "critical"}
    assert any("gpu" in c for c in checks), checks


def test_one_fact_seen_in_two_captures_is_one_finding() -> None:
    report = analyze_dir(EV, build({"fabric": "ethernet", "gpus_per_node": 8}))
    d = report.to_dict() if hasattr(report, "to_dict") else report
    msgs = [f["message"] for f in d["hosts"]["h200-live"]["findings"] if f["check"] == "gpu_count"]
    assert len(msgs) == 1, msgs  # nvidia-smi -q and --query-gpu both show 1 GPU
