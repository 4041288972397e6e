"""Issue 29, round 2: the rest (not held-out) corpus captures the parsers misread, copied as
fixtures; expected values are read off the captures themselves."""

from __future__ import annotations

from pathlib import Path

from ccparse import registry
from conftest import read_fixture

from clusterctl.analysis import engine
from clusterctl.analysis.expectations import build


def parse(rel: str) -> dict:
    return registry.parse(rel.split("/")[0], read_fixture(rel))


def judge(rel: str, tmp_path: Path) -> engine.HostReport:
    host = tmp_path / "n1"
    host.mkdir()
    (host / f"{rel.split('/')[0]}.txt").write_text(read_fixture(rel))
    return engine.analyze_dir(tmp_path, build(None), jobs=1).hosts["n1"]


def real(rep: engine.HostReport) -> list[engine.Finding]:
    return [f for f in rep.findings if f.check not in ("coverage", "evidence", "parse", "collect")]


# --- nccl-tests: tails and excerpts are judged, their layout read from the rows ---

def test_nccl_tests_rows_without_header_or_trailer(tmp_path: Path) -> None:
    out = parse("nccl-tests/mooncake3484-rows-only-cut-32k-32m.txt")
    assert out["format"] == "new" and len(out["rows"]) == 11
    assert out["largest"]["size_bytes"] == 33554432 and out["busbw_largest_GBps"] == 300.51
    assert out["wrong_total"] == 0 and len(out["cut"]) == 2  # no header, no trailer
    rep = judge("nccl-tests/mooncake3484-rows-only-cut-32k-32m.txt", tmp_path)
    assert rep.status == "healthy" and any(f.check == "coverage" and "judged what is there" in f.message
                                           for f in rep.notes)


def test_nccl_tests_old_layout_rows_without_redop() -> None:
    out = parse("nccl-tests/nccl340-2.6.4-old-error-column-rows-only.txt")
    assert out["format"] == "old" and len(out["rows"]) == 12 and out["rows"][0]["redop"] is None
    assert out["busbw_largest_GBps"] == 20.34 and out["wrong_total"] == 0 and out["avg_busbw_GBps"] == 6.6972
    tail = parse("nccl-tests/nccl1706-2gpu-128m-tail-interleaved-nccl-info-destroy.txt")
    assert tail["busbw_largest_GBps"] == 25.86 and tail["nccl"]["lines"] == 2 and tail["out_of_bounds"] == 0


def test_nccl_tests_cut_after_first_row() -> None:
    out = parse("nccl-tests/hpcaienvs30-rccl-tests-mi300x-8gpu-one-row.txt")
    assert out["n_ranks"] == 8 and len(out["rows"]) == 1 and out["busbw_largest_GBps"] == 161.14
    assert out["cut"] and "trailer" in out["cut"][0]


def test_nccl_tests_empty_redop_of_alltoall() -> None:
    out = parse("nccl-tests/superbench-a100x8-alltoall-validation0-na-errors.txt")
    assert len(out["rows"]) == 34 and out["largest"]["size_bytes"] == 8589934592
    assert out["busbw_largest_GBps"] == 224.31 and out["wrong_total"] is None and out["cut"] == []


def test_nccl_tests_header_and_trailer_without_hash_out_of_bounds_fail(tmp_path: Path) -> None:
    rel = "nccl-tests/nccltests37-v100x8-allgather-4g-oob-2-failed-no-hash.txt"
    out = parse(rel)
    assert out["collective"] == "all_gather_perf" and out["format"] == "old" and out["cut"] == []
    assert out["out_of_bounds"] == 2 and out["wrong_total"] == 2 and out["busbw_largest_GBps"] == 129.05
    rep = judge(rel, tmp_path)
    assert rep.status == "failed" and any(f.check == "nccl_wrong" and f.severity == "critical" for f in real(rep))
