"""Self-contained HTML report of an analysis: inline SVG plots and CSS, no external asset.

Sections: summary; bandwidth per node (one dot per host, per metric and subject) with the
expected floor and the straggler cut as lines; bandwidth per rail (every host's value for each
device/port) with the same lines; a heatmap of pairwise test results (value / median of pairs);
the findings table.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from statistics import median
from typing import Any

from clusterctl.analysis.engine import Report
from clusterctl.analysis.model import Metric
from clusterctl.analysis.stragglers import group_metrics

W, H, PAD_L, PAD_R, PAD_T, PAD_B = 900, 260, 60, 20, 20, 40
HEATMAP_MAX_HOSTS = 96

#: metric name -> expectation key(s) giving its floor: (key, factor key or None)
FLOORS: dict[str, tuple[str, str | None]] = {
    "nccl_busbw_GBps": ("nccl_busbw_floor_GBps", None),
    "ib_write_bw_Gbps": ("ib_rate_gbps", "ib_write_bw_min_fraction"),
}

CSS = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px} h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}
.failed{color:#b00;font-weight:bold} .degraded{color:#a60} .healthy{color:#070}
.critical{color:#b00} .warning{color:#a60} svg{background:#fafafa;border:1px solid #ddd}
.legend{font-size:12px;color:#555}
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def floor_for(metric: str, exp: Mapping[str, Any]) -> float | None:
    key, factor_key = FLOORS.get(metric, ("", None))
    v = exp.get(key)
    if not isinstance(v, int | float) or isinstance(v, bool):
        return None
    f = exp.get(factor_key) if factor_key else 1.0
    return float(v) * float(f) if isinstance(f, int | float) else None


def _scale(lo: float, hi: float, a: float, b: float) -> Any:
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def _axes(ymin: float, ymax: float, ylabel: str) -> tuple[list[str], Any]:
    y = _scale(ymin, ymax, H - PAD_B, PAD_T)
    parts = [f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{H - PAD_B}" stroke="#888"/>',
             f'<line x1="{PAD_L}" y1="{H - PAD_B}" x2="{W - PAD_R}" y2="{H - PAD_B}" stroke="#888"/>']
    for i in range(5):
        v = ymin + (ymax - ymin) * i / 4
        parts.append(f'<text x="{PAD_L - 4}" y="{y(v) + 4:.1f}" font-size="10" text-anchor="end">{v:.4g}</text>')
        parts.append(f'<line x1="{PAD_L}" y1="{y(v):.1f}" x2="{W - PAD_R}" y2="{y(v):.1f}" stroke="#eee"/>')
    parts.append(f'<text x="12" y="{H / 2}" font-size="11" transform="rotate(-90 12 {H / 2})" '
                 f'text-anchor="middle">{_e(ylabel)}</text>')
    return parts, y


def _hline(y: Any, v: float, color: str, label: str) -> str:
    return (f'<line x1="{PAD_L}" y1="{y(v):.1f}" x2="{W - PAD_R}" y2="{y(v):.1f}" stroke="{color}" '
            f'stroke-dasharray="5,3"/><text x="{W - PAD_R - 2}" y="{y(v) - 3:.1f}" font-size="10" '
            f'fill="{color}" text-anchor="end">{_e(label)}</text>')


def _range(values: Sequence[float], extra: Sequence[float]) -> tuple[float, float]:
    lo = min([*values, *extra, 0.0])
    hi = max([*values, *extra]) * 1.08 or 1.0
    return lo, hi


def node_plot(name: str, subject: str, by_host: Mapping[str, list[Metric]], exp: Mapping[str, Any],
              slow: set[str]) -> str:
    """One dot per host (hosts in name order), floor and straggler cut as dashed lines."""
    hosts = sorted(by_host)
    vals = {h: median(m.value for m in by_host[h]) for h in hosts}
    med = median(vals.values())
    floor = floor_for(name, exp)
    thr = float(exp.get("straggler_threshold", 0.25))
    hib = by_host[hosts[0]][0].higher_is_better
    cut = med * (1 - thr) if hib else med * (1 + thr)
    unit = by_host[hosts[0]][0].unit
    lo, hi = _range(list(vals.values()), [cut] + ([floor] if floor else []))
    parts, y = _axes(lo, hi, f"{name} {unit}".strip())
    x = _scale(0, max(len(hosts) - 1, 1), PAD_L + 8, W - PAD_R - 8)
    r = 3 if len(hosts) <= 512 else 1.5
    for i, h in enumerate(hosts):
        bad = h in slow or (floor is not None and hib and vals[h] < floor)
        parts.append(f'<circle cx="{x(i):.1f}" cy="{y(vals[h]):.1f}" r="{r}" fill="{"#c00" if bad else "#36c"}">'
                     f'<title>{_e(h)}: {vals[h]:g}</title></circle>')
    if floor is not None:
        parts.append(_hline(y, floor, "#c00", f"expected floor {floor:g}"))
    parts.append(_hline(y, cut, "#a60", f"straggler cut {cut:.4g} ({thr:.0%} off median {med:.4g})"))
    if len(hosts) <= 40:
        for i, h in enumerate(hosts):
            parts.append(f'<text x="{x(i):.1f}" y="{H - PAD_B + 12}" font-size="9" text-anchor="end" '
                         f'transform="rotate(-30 {x(i):.1f} {H - PAD_B + 12})">{_e(h)}</text>')
    else:
        parts.append(f'<text x="{W / 2}" y="{H - 8}" font-size="11" text-anchor="middle">'
                     f'{len(hosts)} hosts in name order (hover a dot for its host)</text>')
    title = f"{name} ({subject})" if subject else name
    return f"<h3>{_e(title)}</h3>" + _svg(parts)


def rail_plot(name: str, groups: Mapping[str, Mapping[str, list[Metric]]], exp: Mapping[str, Any]) -> str:
    """Per rail (subject) a column of every host's value; floor line when known."""
    subjects = sorted(groups)
    floor = floor_for(name, exp)
    allv = [median(m.value for m in ms) for s in subjects for ms in groups[s].values()]
    unit = next(iter(next(iter(groups.values())).values()))[0].unit
    lo, hi = _range(allv, [floor] if floor else [])
    parts, y = _axes(lo, hi, f"{name} {unit}".strip())
    step = (W - PAD_L - PAD_R) / max(len(subjects), 1)
    for i, s in enumerate(subjects):
        cx = PAD_L + step * (i + 0.5)
        hosts = sorted(groups[s])
        for j, h in enumerate(hosts):
            v = median(m.value for m in groups[s][h])
            jitter = ((j * 37) % 21 - 10) / 10 * min(step * 0.3, 20)
            bad = floor is not None and v < floor
            parts.append(f'<circle cx="{cx + jitter:.1f}" cy="{y(v):.1f}" r="2" fill="{"#c00" if bad else "#36c"}" '
                         f'fill-opacity="0.7"><title>{_e(h)} {_e(s)}: {v:g}</title></circle>')
        parts.append(f'<text x="{cx:.1f}" y="{H - PAD_B + 14}" font-size="10" text-anchor="middle">{_e(s)}</text>')
    if floor is not None:
        parts.append(_hline(y, floor, "#c00", f"expected floor {floor:g}"))
    return f"<h3>{_e(name)} per rail</h3>" + _svg(parts)


def heatmap(report: Report) -> str:
    """Pair result / median of pairs of the same metric: hosts on both axes (capped)."""
    if not report.pairs:
        return "<p>No pairwise results in this evidence.</p>"
    meds: dict[tuple[str, str], float] = {}
    for key in {(p.metric, p.subject) for p in report.pairs}:
        meds[key] = median(p.value for p in report.pairs if (p.metric, p.subject) == key) or 1.0
    ratio: dict[tuple[str, str], float] = {}
    for p in report.pairs:
        r = p.value / meds[(p.metric, p.subject)]
        for k in ((p.a, p.b), (p.b, p.a)):
            ratio[k] = min(ratio.get(k, r), r)
    bad_hosts = {h for ab in report.bad_pairs for h in ab}
    hosts = sorted({h for ab in ratio for h in ab}, key=lambda h: (h not in bad_hosts, h))[:HEATMAP_MAX_HOSTS]
    hosts.sort()
    n = len(hosts)
    cell = max(4, min(24, 600 // max(n, 1)))
    off = 90
    size = off + cell * n + 10
    idx = {h: i for i, h in enumerate(hosts)}
    parts = []
    for (a, b), r in ratio.items():
        if a not in idx or b not in idx:
            continue
        t = max(0.0, min(1.0, r))
        red, green = int(255 * (1 - t)), int(200 * t)
        parts.append(f'<rect x="{off + idx[b] * cell}" y="{off + idx[a] * cell}" width="{cell}" height="{cell}" '
                     f'fill="rgb({red},{green},60)"><title>{_e(a)} - {_e(b)}: {r:.0%} of median</title></rect>')
    if cell >= 8:
        for h, i in idx.items():
            parts.append(f'<text x="{off - 4}" y="{off + i * cell + cell * 0.75}" font-size="{min(cell - 1, 10)}" '
                         f'text-anchor="end">{_e(h)}</text>')
            parts.append(f'<text x="{off + i * cell + cell * 0.75}" y="{off - 4}" font-size="{min(cell - 1, 10)}" '
                         f'transform="rotate(-60 {off + i * cell + cell * 0.75} {off - 4})">{_e(h)}</text>')
    note = (f"<p class='legend'>showing {n} of {len({h for ab in ratio for h in ab})} hosts (hosts in bad pairs "
            f"first)</p>" if n < len({h for ab in ratio for h in ab}) else "")
    legend = ("<p class='legend'>cell = pair result / median of all pairs (green 100 %, red 0 %); "
              "empty = pair not tested (the schedule tests O(1) partners per node).</p>")
    return legend + note + f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}">' \
        + "".join(parts) + "</svg>"


def _svg(parts: list[str]) -> str:
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">' \
        + "".join(parts) + "</svg>"


def findings_html(report: Report) -> str:
    rows = []
    order = {"failed": 0, "degraded": 1, "healthy": 2}
    for r in sorted(report.hosts.values(), key=lambda r: (order[r.status], r.host)):
        for f in r.findings:
            rows.append(f"<tr><td>{_e(r.host)}</td><td class='{r.status}'>{r.status}</td>"
                        f"<td class='{f.severity}'>{f.severity}</td><td>{_e(f.check)}</td><td>{_e(f.subject)}</td>"
                        f"<td>{_e(f.message)}</td></tr>")
    if not rows:
        return "<p>No findings: every host is healthy.</p>"
    return ("<table><tr><th>host</th><th>status</th><th>severity</th><th>check</th><th>subject</th>"
            "<th>message</th></tr>" + "".join(rows) + "</table>")


def render(report: Report, title: str = "clusterctl fabric verification") -> str:
    c = report.status_counts()
    exp = report.expectations
    groups = group_metrics(m for r in report.hosts.values() for m in r.metrics)
    slow = {(s.metric, s.subject): set() for s in report.stragglers}  # type: dict[tuple[str, str], set[str]]
    for s in report.stragglers:
        slow[(s.metric, s.subject)].add(s.host)
    node_plots, by_name = [], {}  # type: list[str], dict[str, dict[str, dict[str, list[Metric]]]]
    for (name, subject), by_host in sorted(groups.items()):
        by_name.setdefault(name, {})[subject] = by_host
        if len(by_host) >= 2:
            node_plots.append(node_plot(name, subject, by_host, exp, slow.get((name, subject), set())))
    rail_plots = [rail_plot(name, subs, exp) for name, subs in sorted(by_name.items()) if len(subs) >= 2]
    thresholds = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in report.thresholds().items())
    strag = "".join(f"<tr><td>{_e(s.host)}</td><td>{_e(s.metric)}</td><td>{_e(s.subject)}</td><td>{s.value:g}</td>"
                    f"<td>{s.median:g}</td><td>{s.deviation:.0%}</td></tr>" for s in report.stragglers)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title><style>{CSS}</style></head><body>
<h1>{_e(title)}</h1>
<p>{len(report.hosts)} hosts: <span class="healthy">{c['healthy']} healthy</span>,
<span class="degraded">{c['degraded']} degraded</span>, <span class="failed">{c['failed']} failed</span>;
{len(report.stragglers)} straggler(s); {len(report.pairs)} pair results.</p>
<h2>Findings</h2>
{findings_html(report)}
<h2>Stragglers</h2>
{"<table><tr><th>host</th><th>metric</th><th>subject</th><th>value</th><th>peers' median</th><th>worse by</th></tr>"
 + strag + "</table>" if strag else "<p>None.</p>"}
<h2>Bandwidth per node</h2>
{"".join(node_plots) or "<p>No per-node metrics in this evidence.</p>"}
<h2>Bandwidth per rail</h2>
{"".join(rail_plots) or "<p>No per-rail metrics in this evidence.</p>"}
<h2>Pairwise results</h2>
{heatmap(report)}
<h2>Expected values</h2>
<table>{thresholds}</table>
</body></html>
"""
