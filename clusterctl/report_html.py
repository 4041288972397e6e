"""Self-contained HTML report of an analysis: inline SVG plots and CSS, no external asset.

Sections: summary; per-node summary (status, counts, top finding: the same rows as the terminal
table); findings grouped by host; stragglers; the floors the checks applied; bandwidth per node
(one dot per host, per metric and subject) with the floor each check applied (derived or from the
inventory, carried on the metric by the check) and the straggler cut as lines; bandwidth per rail;
a heatmap of pairwise test results (value / median of pairs).

A dot's colour is the verdict of the findings, never a recomputation: the worst finding of that host
(critical or warning, the findings table's rows) about that metric (its check, e.g. ``nccl_busbw``
for ``nccl_busbw_GBps``, or a straggler finding) or about that exact subject (``host/mlx5_1/1``).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from statistics import median
from typing import Any

from clusterctl.analysis.engine import HostReport, Report
from clusterctl.analysis.model import Metric
from clusterctl.analysis.stragglers import group_metrics
from clusterctl.report_table import ORDER, visible

W, H, PAD_L, PAD_R, PAD_T, PAD_B = 900, 260, 60, 20, 20, 40
HEATMAP_MAX_HOSTS = 96

#: metric name -> the checks (Finding.check) that judge it
METRIC_CHECKS: dict[str, frozenset[str]] = {
    "nccl_busbw_GBps": frozenset({"nccl_busbw"}),
    "ib_write_bw_Gbps": frozenset({"ib_write_bw"}),
}
COLOURS = {"critical": "#c00", "warning": "#e69500", "ok": "#36c"}
#: healthy hosts listed one per row in the per-node summary up to this many; beyond, summarised
SUMMARY_MAX_HEALTHY = 200

CSS = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px} h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}
.failed{color:#b00;font-weight:bold} .degraded{color:#a60} .healthy{color:#070}
.no-evidence,.cannot-judge{color:#a0a} .unreachable{color:#b00} .critical{color:#b00} .warning{color:#a60}
svg{background:#fafafa;border:1px solid #ddd}
.legend{font-size:12px;color:#555}
"""


def _e(x: Any) -> str:
    return html.escape(visible(str(x)), quote=True)


def floors(metrics: Sequence[Metric]) -> list[tuple[float, str]]:
    """The distinct (floor, source) the checks applied to these metrics, lowest first."""
    return sorted({(float(m.floor), m.floor_source) for m in metrics if m.floor is not None})


def verdict(rep: HostReport | None, metric: str, subject: str) -> str:
    """``critical``, ``warning`` or ``ok``: the worst finding of the host about this metric or subject."""
    if rep is None:
        return "ok"
    checks = METRIC_CHECKS.get(metric, frozenset()) | {"straggler"}
    exact = f"{rep.host}/{subject}" if subject else rep.host
    worst = "ok"
    for f in rep.findings:
        about = f.subject == exact or f.subject.startswith(exact + "/") or (
            f.check in checks and f.subject in (rep.host, exact))
        if about and (f.severity == "critical" or worst == "ok"):
            worst = f.severity
    return worst


def _dot(cx: float, cy: float, r: float, host: str, v: str, title: str, opacity: str = "") -> str:
    return (f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r}" fill="{COLOURS[v]}"{opacity} class="dot {v}" '
            f'data-host="{_e(host)}" data-verdict="{v}"><title>{_e(title)}</title></circle>')


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


def node_plot(name: str, subject: str, by_host: Mapping[str, list[Metric]], report: Report) -> str:
    """One dot per host (hosts in name order), the applied floor(s) and the straggler cut as lines."""
    exp = report.expectations
    hosts = sorted(by_host)
    vals = {h: median(m.value for m in by_host[h]) for h in hosts}
    med = median(vals.values())
    applied = floors([m for h in hosts for m in by_host[h]])
    thr = float(exp.get("straggler_threshold", 0.25))
    hib = by_host[hosts[0]][0].higher_is_better
    cut = med * (1 - thr) if hib else med * (1 + thr)
    unit = by_host[hosts[0]][0].unit
    lo, hi = _range(list(vals.values()), [cut] + [f for f, _ in applied])
    parts, y = _axes(lo, hi, f"{name} {unit}".strip())
    x = _scale(0, max(len(hosts) - 1, 1), PAD_L + 8, W - PAD_R - 8)
    r = 3 if len(hosts) <= 512 else 1.5
    for i, h in enumerate(hosts):
        v = verdict(report.hosts.get(h), name, subject)
        parts.append(_dot(x(i), y(vals[h]), r, h, v, f"{h}: {vals[h]:g} ({v})"))
    for f, src in applied:
        parts.append(_hline(y, f, "#c00", f"floor {f:g} applied ({src})" if src else f"floor {f:g} applied"))
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


def rail_plot(name: str, groups: Mapping[str, Mapping[str, list[Metric]]], report: Report) -> str:
    """Per rail (subject) a column of every host's value; the applied floor(s) as lines."""
    subjects = sorted(groups)
    applied = floors([m for s in subjects for ms in groups[s].values() for m in ms])
    allv = [median(m.value for m in ms) for s in subjects for ms in groups[s].values()]
    unit = next(iter(next(iter(groups.values())).values()))[0].unit
    lo, hi = _range(allv, [f for f, _ in applied])
    parts, y = _axes(lo, hi, f"{name} {unit}".strip())
    step = (W - PAD_L - PAD_R) / max(len(subjects), 1)
    for i, s in enumerate(subjects):
        cx = PAD_L + step * (i + 0.5)
        hosts = sorted(groups[s])
        for j, h in enumerate(hosts):
            v = median(m.value for m in groups[s][h])
            jitter = ((j * 37) % 21 - 10) / 10 * min(step * 0.3, 20)
            ver = verdict(report.hosts.get(h), name, s)
            parts.append(_dot(cx + jitter, y(v), 2, h, ver, f"{h} {s}: {v:g} ({ver})", ' fill-opacity="0.7"'))
        parts.append(f'<text x="{cx:.1f}" y="{H - PAD_B + 14}" font-size="10" text-anchor="middle">{_e(s)}</text>')
    for f, src in applied:
        parts.append(_hline(y, f, "#c00", f"floor {f:g} applied ({src})" if src else f"floor {f:g} applied"))
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


def _sorted_hosts(report: Report) -> list[HostReport]:
    return sorted(report.hosts.values(), key=lambda r: (ORDER[r.status], r.host))


def _cls(status: str) -> str:
    return status.replace(" ", "-")


def node_summary(report: Report) -> str:
    """One row per node, worst first: status, counts and top finding (the terminal table's rows)."""
    rows, healthy = [], 0
    for r in _sorted_hosts(report):
        if r.status == "healthy":
            healthy += 1
            if healthy > SUMMARY_MAX_HEALTHY:
                continue
        c = r.counts()
        top = r.top() or (r.notes[-1] if r.status == "no evidence" and r.notes else None)
        text = f"{top.check}: {top.subject}: {top.message}" if top else ""
        if r.status == "unreachable":
            text = f"not reached: {r.unreachable}"
        rows.append(f"<tr class='node' data-host='{_e(r.host)}' data-status='{_e(r.status)}'>"
                    f"<td><a href='#host-{_e(r.host)}'>{_e(r.host)}</a></td>"
                    f"<td class='{_cls(r.status)}'>{_e(r.status)}</td><td>{c['critical']}</td><td>{c['warning']}</td>"
                    f"<td>{_e(text)}</td></tr>")
    more = (f"<p class='legend'>and {healthy - SUMMARY_MAX_HEALTHY} more healthy hosts</p>"
            if healthy > SUMMARY_MAX_HEALTHY else "")
    return ("<table id='nodes'><tr><th>host</th><th>status</th><th>critical</th><th>warning</th>"
            "<th>top finding</th></tr>" + "".join(rows) + "</table>" + more)


def findings_html(report: Report) -> str:
    """The findings grouped by host, worst host first."""
    parts = []
    for r in _sorted_hosts(report):
        if not r.findings:
            continue
        rows = "".join(f"<tr><td class='{f.severity}'>{f.severity}</td><td>{_e(f.check)}</td>"
                       f"<td>{_e(f.subject)}</td><td>{_e(f.message)}</td></tr>" for f in r.findings)
        parts.append(f"<h3 id='host-{_e(r.host)}' class='host' data-host='{_e(r.host)}'>{_e(r.host)}: "
                     f"<span class='{_cls(r.status)}'>{_e(r.status)}</span></h3>"
                     "<table class='findings'><tr><th>severity</th><th>check</th><th>subject</th><th>message</th></tr>"
                     + rows + "</table>")
    if not parts:
        return "<p>No findings: every host is healthy.</p>"
    return "".join(parts)


def floors_html(report: Report) -> str:
    """Each floor a check applied: metric, subject, floor, where it came from, hosts judged against it."""
    seen: dict[tuple[str, str, float, str], set[str]] = {}
    for r in report.hosts.values():
        for m in r.metrics:
            if m.floor is not None:
                seen.setdefault((m.name, m.subject, float(m.floor), m.floor_source), set()).add(r.host)
    if not seen:
        return "<p>No check applied a floor (none known for these metrics: set one in the inventory).</p>"
    rows = "".join(f"<tr><td>{_e(n)}</td><td>{_e(s)}</td><td>{f:g}</td><td>{_e(src)}</td><td>{len(h)}</td></tr>"
                   for (n, s, f, src), h in sorted(seen.items()))
    return ("<table id='floors'><tr><th>metric</th><th>subject</th><th>floor applied</th><th>from</th>"
            "<th>hosts</th></tr>" + rows + "</table>")


def render(report: Report, title: str = "clusterctl fabric verification") -> str:
    c = report.status_counts()
    groups = group_metrics(m for r in report.hosts.values() for m in r.metrics)
    node_plots, by_name = [], {}  # type: list[str], dict[str, dict[str, dict[str, list[Metric]]]]
    for (name, subject), by_host in sorted(groups.items()):
        by_name.setdefault(name, {})[subject] = by_host
        if len(by_host) >= 2:
            node_plots.append(node_plot(name, subject, by_host, report))
    rail_plots = [rail_plot(name, subs, report) for name, subs in sorted(by_name.items()) if len(subs) >= 2]
    thresholds = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in report.thresholds().items())
    strag = "".join(f"<tr><td>{_e(s.host)}</td><td>{_e(s.metric)}</td><td>{_e(s.subject)}</td><td>{s.value:g}</td>"
                    f"<td>{s.median:g}</td><td>{s.deviation:.0%}</td></tr>" for s in report.stragglers)
    refused = "".join(f"<li>{_e(x)}</li>" for x in report.refused)
    none = (f", <span class='no-evidence'>{c['no evidence']} with no evidence</span>" if c.get("no evidence")
            else "")
    none += (f", <span class='cannot-judge'>{c['cannot judge']} cannot judge</span>" if c.get("cannot judge")
             else "")
    none += f", <span class='unreachable'>{c['unreachable']} unreachable</span>" if c.get("unreachable") else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title><style>{CSS}</style></head><body>
<h1>{_e(title)}</h1>
<p>{len(report.hosts)} hosts: <span class="healthy">{c['healthy']} healthy</span>,
<span class="degraded">{c['degraded']} degraded</span>, <span class="failed">{c['failed']} failed</span>{none};
{len(report.stragglers)} straggler(s); {len(report.pairs)} pair results.</p>
{"<p>Refused (not read):</p><ul>" + refused + "</ul>" if refused else ""}
<h2>Nodes</h2>
{node_summary(report)}
<h2>Findings by host</h2>
{findings_html(report)}
<h2>Stragglers</h2>
{"<table><tr><th>host</th><th>metric</th><th>subject</th><th>value</th><th>peers' median</th><th>worse by</th></tr>"
 + strag + "</table>" if strag else "<p>None.</p>"}
<h2>Floors the checks applied</h2>
{floors_html(report)}
<h2>Bandwidth per node</h2>
<p class="legend">dot colour = the host's findings about that metric or rail (red critical, orange warning,
blue none), the same verdict as the findings above.</p>
{"".join(node_plots) or "<p>No per-node metrics in this evidence.</p>"}
<h2>Bandwidth per rail</h2>
{"".join(rail_plots) or "<p>No per-rail metrics in this evidence.</p>"}
<h2>Pairwise results</h2>
{heatmap(report)}
<h2>Expected values</h2>
<table>{thresholds}</table>
</body></html>
"""
