"""Smoke run of bench/bench_validate.py at a tiny size (no timing asserts): the generated inventory
is valid and the measurement and table come out."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import bench_validate as bench  # noqa: E402


def test_smoke_size(tmp_path: Path) -> None:
    from clusterctl.inventory import load_checked

    inv = load_checked(bench.generate(130, tmp_path / "inv"))
    assert len(inv.groups["slurm_compute"]) == 130
    assert inv.host_vars["gpu000128"]["slurm_compute_memlock_limit"] == "64G"
    rows = bench.run([70], baseline=None, baseline_max=0, ansible_max=0, timeout=300)
    assert rows[0]["new"]["hosts"] == 71
    assert "| 70 |" in bench.table(rows)
    assert "| 70 | new |" in bench.phase_table(rows)
