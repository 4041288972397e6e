"""Self-contained HTML report: plots, threshold lines, heatmap, findings; no external assets."""

from __future__ import annotations

import re

from clusterctl.analysis.engine import HostReport, PairResult, Report, judge_pairs
from clusterctl.analysis.model import Finding, Metric
from clusterctl.analysis.stragglers import find_stragglers
from clusterctl.report_html import render


def report() -> Report:
    hosts = {}
    for i in range(8):
        h = f"gpu{i:02d}"
        r = HostReport(h)
        bw = 231.7 * (0.7 if i == 5 else 1.0)
        # the floors the checks applied travel on the metric (checks/nccl.py, checks/perftest.py)
        r.metrics.append(Metric(h, "nccl_busbw_GBps", bw, "all_reduce", "GB/s", floor=180.0,
                                floor_source="nccl_busbw_floor_GBps"))
        for rail in range(4):
            r.metrics.append(Metric(h, "ib_write_bw_Gbps", 390.0 if (i, rail) != (2, 1) else 180.0,
                                    f"mlx5_{rail}/1", "Gb/s", floor=360.0,
                                    floor_source="90% of the 400 Gb/s line rate (ib_rate_gbps)"))
        hosts[h] = r
    hosts["gpu02"].findings.append(Finding("gpu02", "ib_rate", "critical", "gpu02/mlx5_1/1",
                                           "rate 200 Gb/s < expected 400 <script>"))
    rep = Report(hosts=hosts, expectations={"nccl_busbw_floor_GBps": 180.0, "ib_rate_gbps": 400,
                                            "ib_write_bw_min_fraction": 0.9, "straggler_threshold": 0.25})
    rep.stragglers = find_stragglers(m for r in hosts.values() for m in r.metrics)
    rep.pairs = [PairResult("gpu00", "gpu01", "ib_write_bw_Gbps", "loopback", 390.0),
                 PairResult("gpu02", "gpu03", "ib_write_bw_Gbps", "loopback", 100.0),
                 PairResult("gpu01", "gpu02", "ib_write_bw_Gbps", "loopback", 120.0),
                 PairResult("gpu03", "gpu00", "ib_write_bw_Gbps", "loopback", 391.0)]
    rep.bad_pairs, rep.pair_verdicts = judge_pairs(rep.pairs, 0.75)
    return rep


def test_render_sections_and_self_contained() -> None:
    html = render(report(), title="t")
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    assert "<script" not in html and "&lt;script&gt;" in html  # finding text escaped
    assert html.count("<svg") >= 5  # busbw per node, ib_write_bw 4 rails per node, per rail, heatmap
    assert "floor 180 applied (nccl_busbw_floor_GBps)" in html
    assert "floor 360 applied (90% of the 400 Gb/s line rate (ib_rate_gbps))" in html
    assert "straggler cut" in html
    assert "nccl_busbw_GBps per rail" not in html and "ib_write_bw_Gbps per rail" in html
    assert "gpu02 - gpu03: 39% of median" in html  # heatmap cell title (100 / median 255)
    assert "gpu05" in html and "Stragglers" in html


def test_render_empty_report() -> None:
    html = render(Report(hosts={"a": HostReport("a")}))
    assert "No findings" in html and "No pairwise results" in html and "no evidence" in html
