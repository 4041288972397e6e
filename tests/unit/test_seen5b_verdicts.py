"""Verdicts on the seen5b captures of tests/corpus/seen (issue 29): each test reads one capture and
asserts what an operator reads in it (values taken from the capture, not from the parser's output)."""

from __future__ import annotations

from ccparse import registry
from conftest import corpus_capture

from clusterctl.analysis import checks
from clusterctl.analysis.checks.nccl import judge_results
from clusterctl.analysis.checks.perftest import judge_ib_write_bw
from clusterctl.analysis.checks.ports import judge_ports
from clusterctl.analysis.expectations import build
from clusterctl.analysis.model import NOTHING, CheckResult


def capture(rel: str) -> str:
    """The capture text after the ``# corpus-`` header lines."""
    return corpus_capture("seen", rel)


def test_ibstatus_cut_after_default_gid_is_nothing_judgeable() -> None:
    # ethtool eth0 first, then "Infiniband device 'rxe0' port 1 status:" and only its 'default gid' line:
    # no state, phys state or rate of the port was captured
    checks.load_all()
    data = registry.parse("ibstatus", capture("ibstatus/rxedev52-ethtool-then-ibstatus-rxe0-cut-after-default-gid.txt"))
    assert [(d["name"], d["ports"]) for d in data["devices"]] == [("rxe0", [])]
    assert data["truncated"] is True
    fs = judge_ports("n1", data, build({})).findings
    (cov,) = [f for f in fs if f.check == "coverage"]
    assert cov.message.startswith(NOTHING) and "rxe0" in cov.message
    assert not [f for f in fs if f.severity in ("critical", "warning")]


def test_nccl_warn_lines_inside_nccl_tests_output_are_judged() -> None:
    # 'v100-gpu-1:14926:14926 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]' and the same
    # from v100-gpu-5, between the '#  Rank' lines and the table; one row (8 B, busbw 0.00, error N/A)
    checks.load_all()
    data = registry.parse(
        "nccl-tests", capture("nccl-tests/nccltests82-socket-ib-disabled-warn-failed-open-libibverbs-one-8b-row.txt"))
    assert [r["size_bytes"] for r in data["rows"]] == [8]
    assert data["nccl"]["warnings"] == ["Failed to open libibverbs.so[.1]"] * 2
    fs = judge_results("n1", data, build({})).findings
    warns = [f for f in fs if f.check == "nccl_warn"]
    assert [f.severity for f in warns] == ["warning", "warning"]
    assert all("libibverbs" in f.message for f in warns)


def test_perftest_rows_without_their_header_are_read_but_not_judged() -> None:
    # ib_send_bw commands ('-s 4194304 --run_infinitely', no --report_gbits) are prompt lines the reading layer
    # sets aside; 'Node B output:' then rows ' 4194304    4826    0.00    965.20    0.000241' ... with no
    # '#bytes ... BW average[...]' header: sizes and iterations are read, the unit is not in the table
    checks.load_all()
    data = registry.parse("ib_write_bw",
                          capture("ib_write_bw/perftest130-run-infinitely-rows-only-no-header-two-clients.txt"))
    assert data["truncated"] is True and data["unit"] is None
    assert [(r["bytes"], r["iterations"], r["bw_avg_gbps"], r["reports"]) for r in data["results"]] == [
        (4194304, 4826, None, 8)]
    assert data["bw_avg_gbps"] is None and data["max_size_bytes"] == 4194304
    res = judge_ib_write_bw("n1", data, build({}))
    assert isinstance(res, CheckResult)
    (cov,) = res.findings
    assert cov.check == "coverage" and cov.message.startswith(NOTHING) and "header" in cov.message


def test_perftest_header_after_rows_replaces_the_inferred_columns() -> None:
    # a five-number line before a real header (the same rows then printed under '#bytes ... [Gb/sec]')
    text = (" 65536      5000             0.00               96.50              0.184000\n"
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
            " 65536      5000             97.10              96.50              0.184000\n")
    data = registry.parse("ib_write_bw", text)
    assert data["unit"] == "Gb/sec" and data["bw_avg_gbps"] == 96.5 and data["bw_peak_gbps"] == 97.1
    assert [r["line"] for r in data["results"]] == [3]


def test_nccl_tests_cut_before_the_column_header_is_nothing_judgeable() -> None:
    # the mpiexec command, ssh's 'Warning: Permanently added ...', '# nThread 1 nGpus 1 minBytes 1048576 maxBytes
    # 2147483648 ... validation: 0', '# Using devices' and '#   Rank 0-9' of dilldevib-0/-1; no header, no row
    checks.load_all()
    data = registry.parse("nccl-tests",
                          capture("nccl-tests/nccl307-broadcast-mpiexec-ssh-warning-rank-list-cut-no-rows.txt"))
    assert (data["min_bytes"], data["max_bytes"], data["validation"]) == (1048576, 2147483648, 0)
    assert data["rows"] == [] and len(data["devices"]) == 10
    assert data["hosts"] == ["dilldevib-0", "dilldevib-1"]
    assert "before the column header" in data["cut"][-1]
    fs = judge_results("n1", data, build({})).findings
    (cov,) = fs
    assert cov.check == "coverage" and cov.message.startswith(NOTHING) and "no result row" in cov.message
