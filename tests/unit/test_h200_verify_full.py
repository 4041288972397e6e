"""`clusterctl verify --level full` on the live H200 (tests/fixtures/h200-live/verify-full, captured by
bench/device/h200_verify_full.sh): nccl-tests 2.19.6 built there ran, dcgmi is not installed there,
so the node fails with the finding that says what to install (issue 14 item 4 on real hardware).
Expected values read from the captured text."""

from __future__ import annotations

import json

from ccparse import registry
from conftest import LOCAL_FIXTURES

from clusterctl.analysis.engine import analyze_dir
from clusterctl.analysis.expectations import build

D = LOCAL_FIXTURES / "h200-live" / "verify-full"
EV = D / "evidence"
HOST = EV / "h200-live"
#: bench/device/h200-inventory/group_vars/all/cluster.yml
SPEC = {"cluster_name": "h200", "fabric": "ethernet", "rdma_devices_per_node": 0, "mtu": 1500, "gpus_per_node": 1}


def test_the_collector_ran_nccl_tests_and_found_no_dcgmi() -> None:
    st = json.loads((HOST / "_collect.json").read_text())
    assert st["nccl-tests"]["status"] == "ok" and st["dcgmi-diag"] == {
        "rc": None, "status": "tool_missing", "stderr": "dcgmi not found in PATH"}
    # journalctl is not on the machine (machine.txt lists /usr/bin/dmesg only): the kernel log is dmesg's
    assert st["kernel-log"]["status"] == "ok" and "journalctl" not in (D / "machine.txt").read_text()
    # nvidia-smi nvlink -s printed nothing on this one-GPU machine: "ok", no file written
    assert st["nvidia-smi-nvlink"]["status"] == "ok" and not (HOST / "nvidia-smi-nvlink.txt").exists()


def test_the_live_captures_parse() -> None:
    nccl = registry.parse("nccl-tests", (HOST / "nccl-tests.txt").read_text())
    text = (HOST / "nccl-tests.txt").read_text()
    assert "# nccl-tests version 2.19.6" in text and "NVIDIA H200" in text
    # header: nccl-library=22803; 11 sizes 8 MiB..8 GiB; one GPU: bus bandwidth 0 (2(n-1)/n), no wrong value
    assert nccl["tests_version"] == "2.19.6" and nccl["nccl_version"] == "2.28.3"
    assert len(nccl["rows"]) == 11 and nccl["max_bytes"] == 8589934592
    assert nccl["largest"]["out_of_place"] == {"time_us": 3996.75, "algbw_GBps": 2149.2, "busbw_GBps": 0.0,
                                               "wrong": 0}
    assert nccl["wrong_total"] == 0 and nccl["devices"][0]["bus"] == "0000:00:06"
    kl = registry.parse("kernel-log", (HOST / "kernel-log.txt").read_text())
    # the boot log of the VM: the driver loaded (NVRM lines), no Xid, no GPU off the bus, no NVLink error
    assert kl["xids"] == [] and kl["fallen_off_bus"] == [] and kl["nvlink_errors"] == []
    assert kl["link_flaps"] == {} and kl["lines"] == 359


def test_the_node_fails_for_the_missing_dcgmi_alone() -> None:
    report = analyze_dir(EV, build(SPEC))
    host = report.hosts["h200-live"]
    assert host.status == "failed"
    (f,) = host.findings
    assert f.severity == "critical" and f.check == "collect"
    assert f.message.startswith("dcgmi-diag: not installed on a node with GPUs (gpus_per_node is 1)")
    assert "datacenter-gpu-manager-4-core" in f.message and "nvidia_gpu role" in f.message
    # the same judgement as the report verify wrote on the machine
    live = json.loads((D / "verify-report.json").read_text())
    assert live["hosts"]["h200-live"] == report.to_dict()["hosts"]["h200-live"]
    recorded = json.loads((D / "analyze.json").read_text())  # recorded before the --json envelope, or in it
    assert recorded.get("result", recorded)["hosts"] == live["hosts"]


def test_without_the_inventory_the_gpus_nvidia_smi_found_are_enough() -> None:
    # no gpus_per_node: nvidia-smi found the GPU (nvidia-smi-query ok), so dcgmi is still required
    report = analyze_dir(EV, build({}))
    crit = [f.message for f in report.hosts["h200-live"].findings if f.severity == "critical"]
    assert len(crit) == 1 and "nvidia-smi found GPUs" in crit[0]


def test_verify_console_names_why_no_pair_test_ran() -> None:
    out = (D / "verify-console.txt").read_text()
    assert "pairwise nccl-tests: not run (1 node(s) can take part, 2 needed)" in out
    assert "pairwise ib_write_bw: h200-live left out: ib_write_bw device_absent: no RDMA device" in out
    assert out.rstrip().endswith("verify exit 3")
