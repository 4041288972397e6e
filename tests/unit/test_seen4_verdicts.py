"""Verdicts on the seen4 captures of tests/corpus/seen (issue 29): each test reads one capture and
asserts what an operator reads in it (values taken from the capture, not from the parser's output)."""

from __future__ import annotations

from pathlib import Path

from ccparse import registry
from conftest import corpus_capture

from clusterctl.analysis import checks
from clusterctl.analysis.checks.kernel_log import judge_kernel_log
from clusterctl.analysis.expectations import build

SEEN = Path(__file__).resolve().parents[1] / "corpus" / "seen"


def capture(rel: str) -> str:
    """The capture text after the ``# corpus-`` header lines."""
    return corpus_capture("seen", rel)


def kernel(rel: str) -> tuple[dict, list]:
    checks.load_all()
    data = registry.parse("kernel-log", capture(rel))
    return data, judge_kernel_log("n1", data, build({})).findings


def test_dmesg_reltime_stamps_are_read_and_the_unrecovered_gpu_named() -> None:
    # dmesg -H: '[  +0.000844] nvidia 0000:03:00.0: AER: can't recover', the root port 00:03.0's
    # 'Multiple Uncorrected (Fatal) error received: 0000:00:03.0', no Xid
    data, fs = kernel("kernel-log/returnn1500-dmesg-H-reltime-aer-multiple-uncorrected-fatal-no-xid.txt")
    assert data["lines"] == 12 and not data["xids"]
    assert {e["pci"] for e in data["aer_fatal"]} == {"0000:00:03.0"}
    assert {(e["pci"], e["driver"]) for e in data["aer_unrecovered"]} == {("0000:03:00.0", "nvidia"),
                                                                          ("0000:03:00.1", "snd_hda_intel")}
    (fatal,) = [f for f in fs if f.severity == "critical"]
    assert fatal.check == "kernel_pcie" and "0000:03:00.0 (nvidia)" in fatal.message


def test_journal_month_of_another_locale_and_reset_required_are_read() -> None:
    # 'июл 01 22:08:37 pc kernel: nvidia-modeset: ERROR: GPU:0: ... (Reset required [NV_ERR_RESET_REQUIRED])', twice
    data, fs = kernel("kernel-log/ogkm472-journalctl-russian-month-gsp-alloc-reset-required-display.txt")
    assert data["lines"] == 7
    got = [(e["gpu"], e["what"], e["time"]) for e in data["gpu_fatal"]]
    assert got == [("GPU0", "Reset required", "июл 01 22:08:37")] * 2
    (f,) = [f for f in fs if f.severity == "critical"]
    assert f.check == "kernel_gpu" and f.subject == "n1/GPU0"


def test_reset_required_without_a_named_gpu_is_critical() -> None:
    # indented dmesg -T: 'NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED]'
    data, fs = kernel("kernel-log/sichek51-dmesg-T-indented-gsp-alloc-failed-nv-err-reset-required.txt")
    assert [(e["gpu"], e["time"]) for e in data["gpu_fatal"]] == [(None, "Sun Jan 11 09:52:01 2026")]
    assert [f.severity for f in fs if f.check == "kernel_gpu"] == ["critical"]


def test_dmesg_delta_and_minute_stamps() -> None:
    # dmesg -d ('[ 12.345678 <    0.000120>]') and dmesg -H's minute line ('[Jan11 09:52]')
    text = ("[ 1843.308145 <    0.000120>] NVRM: GPU 0000:b3:00.0: RmInitAdapter failed! (0x62:0x40:2168)\n"
            "[Jan11 09:52] pcieport 0000:00:03.0: AER: Uncorrected (Fatal) error received: 0000:00:03.0\n")
    data = registry.parse("kernel-log", text)
    assert [e["time"] for e in data["gpu_fatal"]] == ["1843.308145 <    0.000120>"]
    assert [e["time"] for e in data["aer_fatal"]] == ["Jan11 09:52"]


def topo(rel: str) -> tuple[dict, list]:
    from clusterctl.analysis.checks.gpu import judge_topo

    checks.load_all()
    data = registry.parse("nvidia-smi-topo", capture(rel))
    return data, judge_topo("n1", data, build({})).findings


def test_topo_after_an_environment_report_is_read() -> None:
    # collect_env's 'vLLM Version : ...' and 'GPU Topology:' lines first; GPU0-GPU1 NV12, 8 NICs
    data, fs = topo("nvidia-smi-topo/vllm19607-collect-env-2gpu-nv12-8nics-blank-affinity.txt")
    assert data["skipped_lines"] == 4 and [g["name"] for g in data["gpus"]] == ["GPU0", "GPU1"]
    assert data["gpus"][0]["links"]["GPU1"] == "NV12" and len(data["nics"]) == 8
    assert not [f for f in fs if f.severity != "info"]


def test_topo_excerpt_without_header_infers_its_columns() -> None:
    # starts at 'GPU4 NV18 NV18 NV18 NV18 X ...'; NIC0's X is the 9th cell: 8 GPU columns, 12 NICs
    data, fs = topo("nvidia-smi-topo/vllm6746-8x-h100-nv18-excerpt-starts-at-gpu4-no-header.txt")
    assert data["columns_inferred"] and data["columns"][:9] == [f"GPU{i}" for i in range(8)] + ["NIC0"]
    assert len(data["columns"]) == 20 and [g["name"] for g in data["gpus"]] == ["GPU4", "GPU5", "GPU6", "GPU7"]
    assert data["gpus"][0]["links"]["GPU7"] == "NV18" and data["gpus"][0]["links"]["NIC6"] == "PXB"
    assert not [f for f in fs if f.severity != "info"]


def test_topo_gpu_without_any_nvlink_on_an_nv18_board_is_critical() -> None:
    # B200: every pair NV18 except GPU2's row and column (NODE/SYS); no header line
    data, fs = topo("nvidia-smi-topo/vllm16336-b200-gpu2-node-sys-no-nvlink-starts-at-gpu0-row.txt")
    assert data["columns_inferred"] and data["gpus"][2]["links"]["GPU3"] == "NODE"
    bad = [f for f in fs if f.severity != "info"]
    assert [(f.severity, f.subject) for f in bad] == [("critical", "n1/gpu2")]


def test_topo_header_without_rows_is_nothing_judgeable() -> None:
    data, fs = topo("nvidia-smi-topo/sglang26541-check-env-b200-16-nics-header-only-cut-in-gpu0-row.txt")
    assert data["gpus"] == [] and data["truncated"] and len(data["columns"]) == 24
    (f,) = fs
    assert f.check == "coverage" and "no GPU row" in f.message


def nccl_log(rel: str) -> tuple[dict, list]:
    from clusterctl.analysis.checks.nccl import judge_nccl_log

    checks.load_all()
    data = registry.parse("nccl-log", capture(rel))
    return data, judge_nccl_log("n1", data, build({})).findings


def test_nccl_lines_behind_a_log_collectors_time_stamps_are_read() -> None:
    # '2025-11-09 15:39:31.043 +08:00 [2025-11-09 07:39:30] h100-28:238:1313 [0] ... NCCL WARN ...', 3 lines
    data, fs = nccl_log("nccl-log/nccl1905-tz-and-bracket-ts-prefix-comm-fatal-qp-async-fatal-status4.txt")
    assert data["hosts"] == ["h100-28"] and len(data["warnings"]) == 3
    assert data["warnings"][0].startswith("communicator encountered a fatal error")
    assert [f.severity for f in fs if f.check == "nccl_transport"] == ["critical"] * 3


def test_pytorch_one_line_ncclremoteerror_is_fatal() -> None:
    # one line: '... ncclRemoteError: A call failed ... Last error: NET/IB : Got completion ... with error 12 ...'
    data, fs = nccl_log("nccl-log/alpaca207-pytorch-one-line-ncclremoteerror-last-error-ib-err12.txt")
    (w,) = data["warnings"]
    assert "ncclRemoteError" in w and "vendor err 129" in w
    assert [f.severity for f in fs] == ["critical"]


def test_distbackenderror_with_a_socket_last_error_is_fatal() -> None:
    # 'ncclRemoteError: A call failed possibly due to a network error ...' then the socket 'Last error:'
    data, fs = nccl_log("nccl-log/nccl2076-torch-distbackenderror-remote-socket-recv-reset-by-peer.txt")
    assert [w.split(":")[0] for w in data["warnings"]] == ["ncclRemoteError"]
    assert [(f.check, f.severity) for f in fs] == [("nccl_transport", "critical")]


def nccl_tests(rel: str) -> tuple[dict, list]:
    from clusterctl.analysis.checks.nccl import judge_nccl_tests

    checks.load_all()
    data = registry.parse("nccl-tests", capture(rel))
    return data, judge_nccl_tests("n1", data, build({})).findings


def test_intel_mpi_rank_labels_and_a_busbw_collapse_inside_the_run() -> None:
    # '[0]' before every line and glued where output was flushed mid-line ('-1[0]'); busbw 29.50 GB/s
    # at 33554432 B, then 5.27 ... 5.31 GB/s up to 536870912 B
    from ccparse.capture import clean_capture

    assert clean_capture(capture("nccl-tests/nccl1453-rank-label-prefix-interleaved-busbw-29-then-5gbs-from-64m.txt"),
                         "nccl-tests").hosts == ["0"]
    data, fs = nccl_tests("nccl-tests/nccl1453-rank-label-prefix-interleaved-busbw-29-then-5gbs-from-64m.txt")
    assert [r["size_bytes"] for r in data["rows"]][:2] == [1048576, 2097152] and len(data["rows"]) == 10
    assert data["largest"]["size_bytes"] == 536870912 and data["busbw_largest_GBps"] == 5.31
    (drop,) = [f for f in fs if f.severity == "warning"]
    assert "29.5 GB/s" in drop.message and "33554432 B" in drop.message


def test_a_run_of_small_messages_is_not_judged_against_the_floor() -> None:
    # one row at 500000 B (H100 NVL, 4 ranks on 2 hosts): 3.97 GB/s busbw, #wrong 0
    data, fs = nccl_tests("nccl-tests/nccl2441-2.18.3-version-header-h100-nvl-4-ranks-2-hosts-one-row.txt")
    assert data["largest"]["size_bytes"] == 500000 and data["busbw_largest_GBps"] == 3.97
    assert [f.severity for f in fs] == ["info"] and "latency-bound" in fs[0].message


ROUND2 = SEEN.parent / "round2"


def round2(rel: str) -> str:
    lines = (ROUND2 / rel).read_text(encoding="utf-8").splitlines(keepends=True)
    while lines and lines[0].startswith("# corpus-"):
        lines.pop(0)
    return "".join(lines)


def test_ip_link_headers_quoted_without_index_and_a_no_carrier_nic() -> None:
    # '    eth0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc mq state DOWN   qlen 1000' between prose lines,
    # then 'vlan2@bond0: <NO-CARRIER,...> ... state LOWERLAYERDOWN'
    from clusterctl.analysis.checks.roce import ip_link_mtu

    data = registry.parse("ip-link", round2("ip-link/clusterlabs235-eth0-no-carrier-vlan-lowerlayerdown-prose.txt"))
    got = [(x["index"], x["ifname"], x["parent"], x["carrier"], x["qdisc"], x["state"]) for x in data["links"]]
    assert got == [(None, "eth0", None, False, "mq", "DOWN"),
                   (None, "vlan2", "bond0", False, "noqueue", "LOWERLAYERDOWN")]
    fs = list(ip_link_mtu("n1", data, build({})))
    assert [(f.severity, f.subject) for f in fs] == [("warning", "n1/eth0")]


def test_indented_open_mpi_tags_are_a_launcher_prefix() -> None:
    # '   [1,0]<stdout>:#       size ...' (a markdown list's indentation), rows to 2147483648 B at 437.79 GB/s
    data = registry.parse("nccl-tests", round2("nccl-tests/awsome-eks-p5-2node-mpi-stdout-prefix-indented-elided.txt"))
    assert data["largest"]["size_bytes"] == 2147483648 and data["busbw_largest_GBps"] == 437.79
    assert data["wrong_total"] == 0 and data["out_of_bounds"] == 0


def test_validation_off_and_no_floor_is_nothing_judgeable() -> None:
    # 'nThread 1 nGpus 1 ... validation: 0 graph: 0' ('#' stripped), all_gather to 8589934592 B, 50.17 GB/s busbw
    data, fs = nccl_tests_text(round2("nccl-tests/dstack-gcp-a3high-tcpx-allgather-validation0-4space-indent.txt"))
    assert data["validation"] == 0 and data["busbw_largest_GBps"] == 50.17
    assert [f.check for f in fs] == ["coverage"] and "validation off" in fs[0].message


def nccl_tests_text(text: str) -> tuple[dict, list]:
    from clusterctl.analysis.checks.nccl import judge_nccl_tests

    checks.load_all()
    data = registry.parse("nccl-tests", text)
    return data, judge_nccl_tests("n1", data, build({})).findings


def perftest(rel: str) -> tuple[dict, list]:
    from clusterctl.analysis.checks.perftest import judge_ib_write_bw

    checks.load_all()
    data = registry.parse("ib_write_bw", round2(rel))
    return data, judge_ib_write_bw("n1", data, build({})).findings


def test_roce_test_with_an_all_zero_gid_is_failed() -> None:
    # Link type Ethernet, Device mlx5_0, ' GID: 00:00:...:00' for the local and the remote address, no result row
    data, fs = perftest("ib_write_bw/k8srdmasriov32-hca-mode-quoted-header-gid-zero-redacted.txt")
    assert data["link_type"] == "Ethernet" and data["gids"] == [":".join(["00"] * 16)] * 2
    assert [(f.severity, f.subject) for f in fs] == [("critical", "n1/mlx5_0")]


def test_a_result_just_above_a_standard_rate_is_read_as_that_rate() -> None:
    # ib0 loopback, 8388608 B, BW average 24056.72 MB/sec = 201.8 Gb/s (perftest MB = 2^20 B): HDR 200, not
    # 'half of at least 400'; no line rate stated, so read as an HDR port at line rate, in a note (session 32)
    data, fs = perftest("ib_write_bw/superbench-ib-loopback-ib0-8m-server-client-interleaved.txt")
    assert round(data["bw_avg_gbps"], 1) == 201.8
    assert [f.severity for f in fs] == ["info"] and "is 101% of 200 Gb/s, the standard rate" in fs[0].message
