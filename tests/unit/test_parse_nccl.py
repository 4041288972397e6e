"""nccl-tests (text, -J JSON) and NCCL_DEBUG=INFO log parsers, expected values read off the fixtures."""

from __future__ import annotations

import pytest
from ccparse import nccl_tests, registry
from ccparse.common import ParseError
from conftest import read_fixture
from hypothesis import given, settings
from hypothesis import strategies as st

T = "nccl-tests/"


def parse(kind: str, rel: str) -> dict:
    return registry.parse(kind, read_fixture(rel))


def test_new_format_2node_largest_size_not_average() -> None:
    out = parse("nccl-tests", T + "h100x16-2node-a3mega-all-reduce-8B-8G.txt")
    assert out["format"] == "new" and out["n_ranks"] == 16
    assert out["hosts"] == ["ztan-mig-235z", "ztan-mig-gq73"]
    assert out["largest"]["size_bytes"] == 8589934592 and out["busbw_largest_GBps"] == 338.82
    assert out["algbw_largest_GBps"] == 180.71 and out["largest"]["in_place"]["busbw_GBps"] == 337.35
    assert out["avg_busbw_GBps"] == 70.742 and out["wrong_total"] == 0 and len(out["rows"]) == 31
    assert out["min_bytes"] == 8 and out["max_bytes"] == 8589934592


def test_gcm_single_and_pairwise() -> None:
    single = parse("nccl-tests", T + "a100x8-single-node-all-reduce-gcm.txt")
    assert single["nccl_version"] == "2.16.2" and single["n_ranks"] == 8 and single["busbw_largest_GBps"] == 231.72
    assert single["rows"][0] == {"size_bytes": 33554432, "count": 8388608, "type": "float", "redop": "sum",
                                 "root": -1, "line": 19,
                                 "out_of_place": {"time_us": 344.8, "algbw_GBps": 97.32, "busbw_GBps": 170.31,
                                                  "wrong": 0},
                                 "in_place": {"time_us": 349.5, "algbw_GBps": 95.99, "busbw_GBps": 167.99,
                                              "wrong": 0}}
    pair = parse("nccl-tests", T + "a100x8-2node-pairwise-all-reduce-gcm.txt")
    assert pair["nccl_version"] == "2.12.12" and pair["n_ranks"] == 16 and pair["busbw_largest_GBps"] == 182.8
    assert pair["avg_busbw_GBps"] == 150.209


def test_old_format_with_nccl_info_interleaved() -> None:
    out = parse("nccl-tests", T + "superbench-a100x8-old-format-with-nccl-info-interleaved.txt")
    assert out["format"] == "old" and out["n_ranks"] == 8 and out["n_gpus_per_proc"] == 8
    assert out["busbw_largest_GBps"] == 235.26 and out["largest"]["size_bytes"] == 8589934592
    assert out["wrong_total"] is None  # "error" column is N/A (validation off)
    assert out["rows"][0]["size_bytes"] == 0 and out["rows"][0]["root"] is None
    assert out["nccl"]["lines"] == 1  # "hostname:3442:3442 [0] NCCL INFO Launch mode Parallel"


def test_h200_live_single_rank() -> None:
    out = parse("nccl-tests", "h200-live/all_reduce_perf-1xh200-nccl-2.28.9.txt")
    assert out["collective"] == "all_reduce_perf" and out["tests_version"] == "2.19.6"
    assert out["nccl_version"] == "2.28.9"  # nccl-library=22809
    assert out["n_ranks"] == 1 and out["busbw_largest_GBps"] == 0.0 and out["algbw_largest_GBps"] == 2121.6
    assert out["largest"]["in_place"]["algbw_GBps"] == 1e6


def test_mpirun_failure_is_a_failed_result_naming_the_line() -> None:
    out = parse("nccl-tests", T + "mpirun-not-enough-slots-gcm.txt")
    assert out["rows"] == [] and out["failure"]["line"] == 4 and "not enough slots" in out["failure"]["text"]


def test_truncated_garbage_and_test_failure() -> None:
    text = read_fixture(T + "a100x8-single-node-all-reduce-gcm.txt")
    cut = text.split("    67108864")[0]
    out = registry.parse("nccl-tests", cut)  # a cut table is judged on its rows, the cut recorded (issue 29)
    assert out["busbw_largest_GBps"] == 170.31 and "trailer" in out["cut"][0]
    row = " 1073741824     268435456     float     sum      -1   8109.1  132.41  231.72      0   8109.7  132.40  231.70"
    half = text.replace(row + "      0", "  1073741824     268435456     float")
    with pytest.raises(ParseError) as e:
        registry.parse("nccl-tests", half)
    assert "fields" in e.value.reason
    for bad in ("", "hello\nworld\n", "# nThread 1 nGpus 8 minBytes 8 maxBytes 8\n"):
        with pytest.raises(ParseError):
            registry.parse("nccl-tests", bad)
    failed = registry.parse("nccl-tests", "gpu1: Test NCCL failure common.cu:1012 'unhandled system error'\n")
    assert failed["failure"] == {"line": 1, "text": "gpu1: Test NCCL failure common.cu:1012 'unhandled system error'"}


def test_new_columns_iters_and_name() -> None:
    text = ("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   "
            "busbw  #wrong #iters\n"
            "   1073741824     268435456     float     sum      -1   8109.1  132.41  231.72       0   8109.7  132.40  "
            "231.70       0     20    \n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 231.71\n")
    out = registry.parse("nccl-tests", text)
    assert out["busbw_largest_GBps"] == 231.72 and out["rows"][0]["iterations"] == 20


def test_json_output() -> None:
    out = parse("nccl-tests-json", "nccl-tests-json/a100x8-all-reduce-J-shape-of-util-cu.txt")
    assert out["format"] == "json" and out["collective"] == "all_reduce_perf" and out["nccl_version"] == "2.16.2"
    assert out["n_ranks"] == 8 and out["hosts"] == ["gpu-a01"]
    assert out["busbw_largest_GBps"] == 231.72 and out["largest"]["root"] == -1 and out["wrong_total"] == 0
    assert out["avg_busbw_GBps"] == 229.27
    for bad in ("", "{\"results\": [", "{\"foo\": 1}", "{\"results\": []}"):
        with pytest.raises(ParseError) as e:
            registry.parse("nccl-tests-json", bad)
        assert e.value.tool == "nccl-tests -J"


def test_nccl_log_live_socket_single_rank() -> None:
    out = parse("nccl-log", "h200-live/nccl-log-live-580.159.04.txt")
    assert out["version"] == "2.28.9" and out["cuda"] == "13.0"
    assert out["network"] == "Socket" and out["transport"] == "Socket" and out["ib_no_device"] is True
    assert out["socket_interfaces"] == ["eth0"] and out["gdr"] is False and out["gdr_hcas"] == {"eth0": False}
    assert out["n_ranks"] == 1 and out["n_nodes"] == 1 and out["hosts"] == ["vm"]


def test_nccl_log_roce_gdr() -> None:
    out = parse("nccl-log", "nccl-log/roce-2node-16rank-nccl-2.27.5-gdrdma-excerpt.txt")
    assert out["version"] == "2.27.5" and out["network"] == "IB" and out["transport"] == "RoCE"
    assert out["ib_devices"] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_11"]
    assert {d["link_layer"] for d in out["net_devices"]} == {"RoCE"}
    assert out["gdr"] is True and out["channel_transports"] == ["NET/IB", "P2P/IPC"]
    assert out["n_ranks"] == 16 and out["n_nodes"] == 2


def test_nccl_log_ib_and_garbage() -> None:
    text = ("h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
            "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:10.0.0.1<0>\n"
            "h:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
            "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n"
            "h:1:1 [0] NCCL WARN NET/IB : Got completion with error 12\n")
    out = registry.parse("nccl-log", text)
    assert out["transport"] == "IB" and out["gdr"] is False
    assert out["warnings"] == ["NET/IB : Got completion with error 12"]
    with pytest.raises(ParseError) as e:
        registry.parse("nccl-log", "allreduce 8388608 bytes\n")
    assert e.value.tool == "nccl-log" and e.value.line == 1


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*nccl_tests._MPI_ERRORS, "Test NCCL failure", "Cuda failure", "NCCL failure", "Test",
                                 " ", "#  ", "x", "failure", "srun", ": error", "\t", "é"]), max_size=10).map("".join))
def test_one_failure_search_gates_the_two(line: str) -> None:
    """The combined search finds something exactly when the MPI error or the test failure search does."""
    both = nccl_tests._MPI_ERROR.search(line) or nccl_tests._TEST_FAIL.search(line)
    assert bool(nccl_tests._FAILURE_ANY.search(line)) == bool(both)
