"""The analysis report as a person reads it on a terminal, and its JSON/HTML files."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from clusterctl.analysis.engine import Report
from clusterctl.paths import write_atomic

STYLE = {"failed": "red", "unreachable": "red", "degraded": "yellow", "no evidence": "magenta",
         "cannot judge": "magenta", "healthy": "green"}
#: row order: failed, unreachable, degraded, no evidence, cannot judge, healthy
ORDER = {"failed": 0, "unreachable": 1, "degraded": 2, "no evidence": 3, "cannot judge": 4, "healthy": 5}
#: at most this many rows: failed first, then degraded; healthy hosts are summarised
MAX_ROWS = 200


def findings_table(report: Report, title: str = "fabric verification", *, all_hosts: bool = False) -> Table:
    rows = sorted(report.hosts.values(), key=lambda r: (ORDER[r.status], r.host))
    if not all_hosts and len(rows) > MAX_ROWS:
        rows = [r for r in rows if r.status != "healthy"][:MAX_ROWS]
    t = Table(title=title)
    for col, just in (("host", "left"), ("status", "left"), ("critical", "right"), ("warning", "right"),
                      ("top finding", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in rows:
        c = r.counts()
        top = r.top() or (r.notes[-1] if r.status == "no evidence" and r.notes else None)
        text = f"{top.check}: {top.subject}: {top.message}" if top else ""
        if r.status == "cannot judge":
            text = f"cannot judge: {r.cannot_judge_reason}"
        if r.status == "unreachable":
            text = f"not reached: {r.unreachable}"
        t.add_row(escape(visible(r.host)), f"[{STYLE[r.status]}]{r.status}[/]", str(c["critical"]), str(c["warning"]),
                  escape(visible(text)))
    return t


#: control characters (terminal escape sequences start with ESC) and the bidi/format characters
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` with control characters shown as escapes (``\\x1b``): a host or file name from an
    evidence folder never drives the terminal (issue 28 class 8)."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def read_as_lines(report: Report, limit: int = 20) -> list[str]:
    """What ``analyze`` chose for the files not named ``<KIND>.txt``, one line each (at most ``limit``,
    then how many more): ``n1/dmesg.txt: read as KIND kernel-log (kernel log lines ... on line 1: ...)``
    or ``n1/uname_-a: unknown KIND: ..., file not judged ...``."""
    out = []
    for h, r in sorted(report.hosts.items()):
        for name, v in sorted(r.read_as.items()):
            out.append(f"{h}/{name}: read as KIND {v['kind']} ({v['why']})" if v["kind"] else f"{h}/{name}: {v['why']}")
    if len(out) > limit:
        out = [*out[:limit], f"... and {len(out) - limit} more files (--json: each host's read_as)"]
    return [visible(ln) for ln in out]


def summary_line(report: Report) -> str:
    c = report.status_counts()
    none = f", {c['no evidence']} with no evidence" if c.get("no evidence") else ""
    none += f", {c['cannot judge']} cannot judge" if c.get("cannot judge") else ""
    none += f", {c['unreachable']} unreachable" if c.get("unreachable") else ""
    return (f"{len(report.hosts)} hosts: {c['healthy']} healthy, {c['degraded']} degraded, {c['failed']} failed{none}; "
            f"{len(report.stragglers)} straggler(s); analysed in {report.seconds:.2f}s")


def write_outputs(report: Report, json_path: Path | None, html_path: Path | None, title: str) -> None:
    if json_path is not None:
        write_atomic(json_path, json.dumps(report.to_dict(), indent=1) + "\n")
    if html_path is not None:
        from clusterctl.report_html import render

        write_atomic(html_path, render(report, title=title))
