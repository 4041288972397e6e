"""Verdicts on round2 rest captures that today's parsers judged wrong (issue 29, KNOWN_MISSES): each test
reads one capture and asserts what an operator reads in it (values taken from the capture, not from the
parser's output)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from ccparse import registry
from ccparse.common import ParseError
from conftest import corpus_capture

from clusterctl.analysis import checks
from clusterctl.analysis.expectations import build
from clusterctl.analysis.model import NOTHING, CheckResult, Finding


def capture(rel: str) -> str:
    """The capture text after the ``# corpus-`` header lines."""
    return corpus_capture("round2", rel)


def findings(res: CheckResult | Iterable[Finding]) -> list[Finding]:
    return list(res.findings if isinstance(res, CheckResult) else res)


def test_sinfo_rows_without_their_header_are_read_and_down_fail_judged() -> None:
    # '%D %t %N' rows, no header: '4  maint c[005,011,013,019]', '2  down$ c[003,012]',
    # '3  fail* c[020-022]', '3  down* c[010,017,023]'
    from clusterctl.analysis.checks.slurm_nodes import judge_sinfo

    checks.load_all()
    data = registry.parse("sinfo", capture("sinfo/arjuna85-gpu-partition-state-summary-maint-down-fail-no-header.txt"))
    got = [(r["nodes"], r["state"], r["nodelist"]) for r in data["partitions"]]
    assert got == [(4, "maint", "c[005,011,013,019]"), (2, "down$", "c[003,012]"), (3, "fail*", "c[020-022]"),
                   (3, "down*", "c[010,017,023]")]
    fs = findings(judge_sinfo("n1", data, build({})))
    critical = {f.subject for f in fs if f.severity == "critical"}
    assert {"c003", "c012", "c020", "c021", "c022", "c010", "c017", "c023"} <= critical
    assert not {"c005", "c011", "c013", "c019"} & critical


def test_sinfo_default_rows_without_header_and_garbage_still_fails() -> None:
    data = registry.parse("sinfo", "gpu* up infinite 2 down* n[1-2]\n")
    assert [(r["partition"], r["default"], r["base_state"], r["hosts"]) for r in data["partitions"]] == [
        ("gpu", True, "down", ["n1", "n2"])]
    with pytest.raises(ParseError):
        registry.parse("sinfo", "3 down* n[1-2]\n")  # NODES does not match the list
    with pytest.raises(ParseError):
        registry.parse("sinfo", "hello world\n")


def nccl_log(rel: str) -> tuple[dict, list[Finding]]:
    from clusterctl.analysis.checks.nccl import judge_nccl_log

    checks.load_all()
    data = registry.parse("nccl-log", capture(rel))
    return data, findings(judge_nccl_log("n1", data, build({})))


def test_pytorch_watchdog_lines_behind_a_pid_prefix_are_read_and_cannot_judge() -> None:
    # '[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective
    # operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, ... Timeout(ms)=600000)', ranks 0 and 4;
    # then two 'Exception (either an error or timeout) detected by watchdog' lines of ranks 0 and 3
    data, fs = nccl_log("nccl-log/llamafactory7396-pid-prefixed-rank-watchdog-allreduce-timeout-4-lines.txt")
    assert [(t["rank"], t["op"], t["seq"], t["timeout_ms"]) for t in data["pg_timeouts"]] == [
        (0, "ALLREDUCE", 1580, 600000), (4, "ALLREDUCE", 1580, 600000)]
    assert [e["rank"] for e in data["pg_errors"]] == [0, 4, 0, 3]
    assert not data["warnings"]
    (f,) = fs
    assert f.severity == "info" and f.message.startswith(NOTHING) and "ALLREDUCE SeqNum 1580" in f.message


def test_pytorch_watchdog_lines_with_rank_prefix_and_frames_cannot_judge() -> None:
    # '[rank5]:[E901 05:20:03.445217639 ProcessGroupNCCL.cpp:684] [Rank 5] Some NCCL operations have failed or
    # timed out ...', then the watchdog's 'WorkNCCL(SeqNum=460631, OpType=ALLREDUCE, NumelIn=1' and C++ frames
    data, fs = nccl_log("nccl-log/deepspeed7533-rank-prefixed-watchdog-allreduce-numel1-timeout-with-frames.txt")
    assert [(t["rank"], t["op"], t["seq"]) for t in data["pg_timeouts"]] == [(5, "ALLREDUCE", 460631)]
    assert len(data["pg_errors"]) == 3 and data["lines"] == 3
    assert [f.severity for f in fs] == ["info"] and fs[0].message.startswith(NOTHING)


def test_watchdog_beside_a_fatal_nccl_error_is_judged_by_the_error() -> None:
    text = ("[rank1]:[E0901 05:20:03.445217639 ProcessGroupNCCL.cpp:684] [Rank 1] Some NCCL operations have failed"
            " or timed out.\n"
            "n1:12:34 [1] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1234> with status=12 opcode=0\n")
    data = registry.parse("nccl-log", text)
    fs = findings(judge_nccl_log_for(data))
    assert any(f.severity == "critical" for f in fs)


def judge_nccl_log_for(data: dict) -> CheckResult | Iterable[Finding]:
    from clusterctl.analysis.checks.nccl import judge_nccl_log

    checks.load_all()
    return judge_nccl_log("n1", data, build({}))


def test_nic_link_up_again_and_again_without_a_down_is_a_reopened_port() -> None:
    # 'Mar 27 15:37:34 cc1 kernel: mlx5_core 0000:01:00.1 eth1: Link up' at 15:37:34, :39, :43 and 15:38:19,
    # no 'Link down' line; 8021q re-adds VLAN 0 each time
    from clusterctl.analysis.checks.kernel_log import judge_kernel_log

    checks.load_all()
    data = registry.parse(
        "kernel-log", capture("kernel-log/cubecos733-journalctl-f-grep-eth-mlx5-eth1-link-up-reopened-repeatedly.txt"))
    eth1 = data["link_flaps"]["eth1"]
    assert (eth1["ups"], eth1["downs"], eth1["first"], eth1["last"]) == (4, 0, "Mar 27 15:37:34", "Mar 27 15:38:19")
    (f,) = findings(judge_kernel_log("n1", data, build({})))
    assert f.severity == "warning" and f.subject == "n1/eth1" and "4 times" in f.message


def test_virtual_links_becoming_ready_are_no_reopened_port() -> None:
    # a container's eth0 created again and again: IPv6 ADDRCONF's 'link becomes ready', no PCI function named
    from clusterctl.analysis.checks.kernel_log import judge_kernel_log

    checks.load_all()
    text = "".join(f"2025-01-17T17:10:4{i}+0000 h1 kernel: IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready\n"
                   for i in range(5))
    data = registry.parse("kernel-log", text)
    assert data["link_flaps"]["eth0"]["ups"] == 5
    assert not findings(judge_kernel_log("n1", data, build({})))


def test_dcgmi_table_cut_after_its_header_is_read_and_cannot_judge() -> None:
    # 'dcgmi diag -i 0 -r 2', 'Successfully ran diagnostic for group.', then the '| Diagnostic | Result |'
    # header and its '+===+' rule only
    from clusterctl.analysis.checks.gpu import judge_dcgmi_diag

    checks.load_all()
    data = registry.parse("dcgmi-diag",
                          capture("dcgmi-diag/gpuoperator670-exporter-pod-prompt-r2-i0-cut-after-table-header.txt"))
    assert data["results"] == [] and data["tests"] == [] and data["cut"]
    (f,) = findings(judge_dcgmi_diag("n1", data, build({})))
    assert f.severity == "info" and f.message.startswith(NOTHING)
    assert registry.parse("dcgmi-diag", "| Diagnostic | Result |\n")["results"] == []


def test_lspci_excerpt_inside_a_device_section_behind_a_logger_prefix_is_read_and_cannot_judge() -> None:
    # '12:16:06 DEBUG| [stdout] \t\t\t[SN] Serial number: ACYAQ04F' ... 'Read/write fields:', 'End',
    # '\tCapabilities: [100 v2] Advanced Error Reporting': 23 lines, no device header, no LnkCap/LnkSta
    from clusterctl.analysis.checks.gpu import judge_lspci

    checks.load_all()
    data = registry.parse("lspci", capture("lspci/avocado1281-powervm-debug-stdout-prefixed-vpd-and-aer-cut.txt"))
    assert data["devices"] == [] and "22 of 23 lines" in data["cut"][0]
    (f,) = findings(judge_lspci("n1", data, build({})))
    assert f.severity == "info" and f.message.startswith(NOTHING)
    with pytest.raises(ParseError):
        registry.parse("lspci", "Filesystem Size Used\n/dev/sda1 10G 5G\n")


def test_xml_report_cut_inside_the_identity_fields_is_read_and_cannot_judge() -> None:
    # 'nvidia-smi -q -x' echoed, then the v10 report of driver 430.64, attached_gpus 1, GPU 00000000:29:00.0
    # 'GeForce GTX 1660 Ti' (persistence Enabled) up to '<minor_number>0</minor_number>': no closing tags
    from clusterctl.analysis.checks.gpu import judge_nvidia_smi_q_xml

    checks.load_all()
    data = registry.parse(
        "nvidia-smi-q-xml", capture("nvidia-smi-q-xml/cpux115-430.64-gtx1660ti-xml-command-echoed-cut-in-identity.txt"))
    assert (data["driver_version"], data["attached_gpus"]) == ("430.64", 1) and data["cut"]
    (g,) = data["gpus"]
    assert (g["bus_id"], g["name"], g["minor_number"]) == ("00000000:29:00.0", "GeForce GTX 1660 Ti", 0)
    (f,) = findings(judge_nvidia_smi_q_xml("n1", data, build({})))
    assert f.severity == "info" and f.message.startswith(NOTHING)


def test_xml_cut_inside_a_leaf_is_read_to_the_last_whole_element_and_bad_nesting_still_fails() -> None:
    head = "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<driver_version>550.54</driver_version>\n"
    data = registry.parse("nvidia-smi-q-xml", head + "<attached_gpus>1</attached_gpus>\n<gpu id=\"00000000:01:00.0\">\n"
                          "<product_name>NVIDIA A100</product_name>\n<vbios_version>92.00.")
    assert [g["name"] for g in data["gpus"]] == ["NVIDIA A100"] and data["cut"]
    with pytest.raises(ParseError):
        registry.parse("nvidia-smi-q-xml", head + "<gpu><a></b>")
