"""The issue-10 benchmark at N=8: every injected fault found, none invented (fast regression guard)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import bench_analysis as bench  # noqa: E402


def test_fault_injection_edits_the_fixture_text() -> None:
    ib = bench.set_port_rate(bench.read_fixture(bench.BASE["ibstat"]), "mlx5_4", 200)
    block = ib[ib.index("CA 'mlx5_4'"):ib.index("CA 'mlx5_5'")]
    assert "Rate: 200" in block
    q = bench.set_remap_pending(bench.read_fixture(bench.BASE["nvidia-smi-q"]), 3)
    assert q.count("Pending                           : Yes") == 1
    slow = bench.scale_nccl(bench.read_fixture(bench.BASE["nccl-tests"]), 0.7)
    # fixture's 1 GiB row: busbw 231.72 out-of-place -> 162.20
    assert "162.20" in slow and "231.72" not in slow


def test_n8_precision_recall(tmp_path: Path) -> None:
    from clusterctl.analysis.engine import analyze_dir

    kinds = bench.judged_kinds()
    assert "ibstat" in kinds
    faults = bench.generate(8, tmp_path / "ev", kinds=kinds)
    assert faults, "no fault injected"
    report = analyze_dir(tmp_path / "ev", bench.EXPECTATIONS)
    s = bench.score(report, faults)
    assert s["missed"] == [] and s["invented_hosts"] == [], s
    assert s["precision"] == 1.0 and s["recall"] == 1.0


def test_pairwise_schedule_blames_injected_nodes() -> None:
    p = bench.pairwise(64)
    assert (p["rounds"], p["tests"], p["naive_tests"]) == (2, 64, 2016)
    assert p["bad_confirmed"] == p["bad_injected"]


def test_all_four_analysis_paths_agree_at_n8() -> None:
    """raw / pre-parsed x 1 / 2 processes (run_one fails when their reports differ)."""
    r = bench.run_one(8, 2, None)
    assert r["found"] == r["faults"] and r["invented_count"] == 0
    assert r["preparsed_files"] == r["files"] == 24
    assert all(r[f"{m}_s"] >= 0 for m, _, _ in bench.MODES)
    # the H200 text and XML folders were judged too, to the same report (run_one fails otherwise)
    assert all(r[f"h200{f}_{j}_s"] >= 0 for f in bench.GPU_FORMATS for j in ("j1", "jN"))


def test_h200_text_and_xml_bases_carry_the_same_eight_gpus() -> None:
    from ccparse import registry

    text, xml = (registry.parse("nvidia-smi-q", bench.h200x8(f)) for f in ("text", "xml"))
    assert text["attached_gpus"] == xml["attached_gpus"] == 8
    assert [g["bus_id"] for g in text["gpus"]] == [g["bus_id"] for g in xml["gpus"]]
    bad = registry.parse("nvidia-smi-q", bench.set_remap_pending_xml(bench.h200x8("xml"), 3))
    assert [g["remapped_rows"]["pending"] for g in bad["gpus"]] == [False, False, False, True] + [False] * 4
