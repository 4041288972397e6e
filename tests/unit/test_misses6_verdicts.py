"""Verdicts on round2 rest captures that today's parsers judged wrong (issue 29, KNOWN_MISSES): each test
reads one capture and asserts what an operator reads in it (values taken from the capture, not from the
parser's output)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from ccparse import registry
from ccparse.common import ParseError

from clusterctl.analysis import checks
from clusterctl.analysis.expectations import build
from clusterctl.analysis.model import CheckResult, Finding

ROUND2 = Path(__file__).resolve().parents[1] / "corpus" / "round2"


def capture(rel: str) -> str:
    """The capture text after the ``# corpus-`` header lines."""
    lines = (ROUND2 / rel).read_text(encoding="utf-8").splitlines(keepends=True)
    while lines and lines[0].startswith("# corpus-"):
        lines.pop(0)
    return "".join(lines)


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
