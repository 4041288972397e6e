"""Session 8's review of three severities the table changed in session 7 (issue 29), each on real captures.

The table's rule (clusterctl/analysis/severity.yml): failed = the node must not run the next job,
degraded = it runs, slower or at risk. Verdicts are the engine's host status of one capture.

* ``ib_tool_error.error_line`` stays degraded: ibstat's ``ibpanic`` line does not tell a lost rail
  from a device that is no fabric port; a lost rail is failed through ``ib_hca_count.below``.
* ``ib_link_layer.mismatch`` is failed again: it fires only when the host has no port of the
  fabric's link layer at all, and such a node cannot join the fabric.
* ``qos_trust.pcp`` stays degraded: RoCE runs lossy (slower), unlike PFC off on the RoCE priority.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from conftest import judge_text

from clusterctl.analysis.model import Finding, host_status

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench_corpus  # noqa: E402

H = "n1"


def capture(part: str, rel: str) -> str:
    assert rel not in bench_corpus.load_holdout(part), "held-out files are not used by unit tests"
    return bench_corpus.read_capture(bench_corpus.CORPUS / part / rel)


def judge(kind: str, text: str, spec: dict[str, Any] | None = None) -> list[Finding]:
    return judge_text(kind, text, spec, H)


def test_ibpanic_alone_is_degraded_a_lost_rail_counted_is_failed() -> None:
    # gpud's A100 capture: 8 HDR CAs listed, then ibstat panics on mlx5_8 (stat of the device failed)
    text = capture("network", "ibstat/gpud-a100-8hdr-ibpanic-mlx5_8.txt")
    lost = re.search(r"ibpanic: .*IB device '([^']+)'", text)
    assert lost is not None
    listed = re.findall(r"^CA '([^']+)'", text, re.M)
    assert lost.group(1) not in listed
    findings = judge("ibstat", text, {"fabric": "infiniband"})
    (err,) = [f for f in findings if f.check == "ib_tool_error"]
    assert (err.severity, err.subject) == ("warning", f"{H}/{lost.group(1)}")
    assert host_status(findings) == "degraded"
    # the inventory says the node has one more rail than ibstat could list: that is failed
    findings = judge("ibstat", text, {"fabric": "infiniband", "rdma_devices_per_node": len(listed) + 1})
    assert [f.check for f in findings if f.severity == "critical"] == ["ib_hca_count"]
    assert host_status(findings) == "failed"


def test_ibpanic_on_a_non_fabric_vf_does_not_decide_the_verdict() -> None:
    # Azure ND: ibstat panics on mlx5_an0 (the Accelerated Networking Ethernet VF, no IB port); the
    # node is failed for mlx5_ib0's port stuck in Initializing, not for the panic line
    text = capture("round2", "ibstat/azhpc59-ndv4-flattened-initializing-ibpanic.txt")
    vf = re.search(r"ib(?:panic|error): .*'(mlx5_an\d+)'", text)
    assert vf is not None
    findings = judge("ibstat", text)
    assert {(f.check, f.severity) for f in findings if vf.group(1) in f.subject} == {("ib_tool_error", "warning")}
    assert {f.subject.split("/")[1] for f in findings if f.severity == "critical"} == {"mlx5_ib0"}


def test_no_port_of_the_fabric_link_layer_is_failed() -> None:
    # twelve RoCE (Ethernet) ports, all Active: healthy on a RoCE fabric, unusable on an InfiniBand one
    text = capture("network", "ibstat/gpud-h100-roce-8x400-4x100-active.txt")
    layers = set(re.findall(r"Link layer:\s*(\S+)", text))
    assert layers == {"Ethernet"}
    assert host_status(judge("ibstat", text, {"fabric": "roce"})) == "healthy"
    findings = judge("ibstat", text, {"fabric": "infiniband"})
    ports = len(re.findall(r"^\s*Port \d+:", text, re.M))
    mismatch = [f for f in findings if f.check == "ib_link_layer"]
    assert len(mismatch) == ports and {f.severity for f in mismatch} == {"critical"}
    assert host_status(findings) == "failed"


def test_trust_pcp_is_degraded_pfc_off_on_the_roce_priority_is_failed() -> None:
    text = capture("network", "mlnx_qos/idx41001320304-set-trust-pcp-buffer-row.txt")
    assert re.search(r"Priority trust state:\s*pcp", text)
    findings = judge("mlnx_qos", text)
    assert {(f.check, f.severity) for f in findings if f.severity != "info"} == {("qos_trust", "warning")}
    assert host_status(findings) == "degraded"
    # the same port with PFC off on priority 3 (the RoCE priority): lossless is gone, failed
    off = re.sub(r"(enabled\s+(?:\S+\s+){3})1", r"\g<1>0", text, count=1)
    assert off != text
    assert "qos_pfc" in {f.check for f in judge("mlnx_qos", off) if f.severity == "critical"}
