"""nccl-tests parser gates equal the general forms they stand in front of (ccparse.nccl_tests).

``_may_fail(s)`` is False only where the failure alternation ``_FAILURE_ANY`` finds nothing; a ``#``
line is asked only the patterns of its first letter after ``#`` and blanks, which is sound when no
pattern matches a line whose letter differs. Random lines of the messages' pieces, blanks (tabs,
Unicode spaces) and ``#`` marks, plus every line of the repository's nccl-tests captures.
"""

from __future__ import annotations

from pathlib import Path

from ccparse import nccl_tests as nt
from hypothesis import example, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
LINES = sorted({ln.strip() for base in ("tests/fixtures", "tests/corpus")
                for p in (REPO / base).rglob("*") if p.is_file() and p.parent.name in ("nccl-tests", "nccl-log")
                for ln in p.read_text(errors="replace").splitlines()})
LEADS = {nt._PARAMS: "n", nt._TESTS_VERSION: "n", nt._RANK: "R", nt._COLLECTIVE: "C", nt._AVG: "A", nt._OOB: "O"}
TOKENS = [*nt._MPI_ERRORS, "Test NCCL failure", "Test CUDA failure", "Test failure", "NCCL failure", "Cuda failure",
          "failur", "mpiru", "unabl", "slot", "PRT", "sru", "MPI_ABOR", "Primary jo", "PMI", "#", " ", "\t", "\u00a0",
          "\u2003", "x", ":", "nThread 1 nGpus 8 minBytes 8 maxBytes 128",
          "Rank  0 Group  0 Pid 1 on h device 0 [0x1] A",
          "nccl-tests version 2.13.9 nccl-headers=22102 nccl-library=22102",
          "Collective test starting: all_reduce_perf",
          "Avg bus bandwidth    : 1.5", "Out of bounds values : 0 OK", "size count type", "Rank", "nThread", "Avg"]


def test_repository_lines() -> None:
    assert len(LINES) > 500
    for line in LINES:
        _check(line)


def _check(s: str) -> None:
    if not nt._may_fail(s):
        assert nt._FAILURE_ANY.search(s) is None
    if s.startswith("#"):
        lead = s[1:].lstrip()[:1]
        for pattern, letter in LEADS.items():
            if pattern.match(s):
                assert lead == letter


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=12).map("".join))
@example("#\u00a0Avg bus bandwidth : 3")
@example("# Rank 0 Pid 1 on h device 0 [0x1] A  Test failure")
@example("PRTE has lost communication")
def test_gates_equal_the_patterns(text: str) -> None:
    _check(text)
    _check(text.strip())
    _check("#" + text)
