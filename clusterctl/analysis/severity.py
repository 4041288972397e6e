"""The one severity table of ``clusterctl analyze`` (issue 29): ``severity.yml`` beside this module.

Each rule says what a finding demands: ``failed`` (drain now: the node must not run the next job),
``degraded`` (it runs, slower or at risk) or ``note``; and the source the action comes from. Checks
take a finding's severity from here with :func:`sev` (``sev("dcgmi_diag.all_skipped")``), so the table
is the only place a severity is decided for those rules. ``python -m clusterctl.analysis.severity``
renders the table into ``docs/severity.md`` (a test holds the two equal).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

import yaml

from clusterctl.analysis.model import Severity

TABLE = Path(__file__).with_name("severity.yml")
DOC = Path(__file__).resolve().parents[2] / "docs" / "severity.md"
#: the table's words -> the finding severities of clusterctl.analysis.model
TO_FINDING: dict[str, Severity] = {"failed": "critical", "degraded": "warning", "note": "info"}
#: the action each severity demands of the operator (rendered in docs/severity.md)
ACTIONS: dict[str, str] = {
    "failed": "drain now: the node must not run the next job; repair or replace, then return it to service",
    "degraded": "the node runs jobs, but slower or at risk: schedule the fix (next drain or maintenance window) "
                "and watch the trend",
    "note": "no action: recorded as context (what was seen, what was not judged and why)",
}
HOST_STATUS = {"failed": "failed", "degraded": "degraded", "note": "healthy"}
EXITS = {"failed": "3 (`analyze`, `verify`)", "degraded": "0", "note": "0"}


@functools.cache
def rules() -> dict[str, dict[str, Any]]:
    doc = yaml.safe_load(TABLE.read_text())
    out: dict[str, dict[str, Any]] = {}
    for r in doc["rules"]:
        if r["id"] in out or r["severity"] not in TO_FINDING:
            raise ValueError(f"{TABLE}: rule {r['id']!r}: duplicate id or severity {r['severity']!r}")
        out[r["id"]] = r
    return out


def sev(rule_id: str) -> Severity:
    """The finding severity of ``rule_id`` (KeyError for a rule not in the table)."""
    return TO_FINDING[rules()[rule_id]["severity"]]


def render() -> str:
    lines = ["# Severity of analyze findings", "",
             "Generated from `clusterctl/analysis/severity.yml` by `python -m clusterctl.analysis.severity`; "
             "do not edit by hand.", "",
             "## What each severity demands", "",
             "| severity | the action | finding severity | host status | exit status |",
             "|---|---|---|---|---|",
             *(f"| **{word}** | {ACTIONS[word]} | `{fs}` | `{HOST_STATUS[word]}` | {EXITS[word]} |"
               for word, fs in TO_FINDING.items()), "",
             "A host's status is its worst finding; a host whose evidence could not be read, or whose checks "
             "all need an inventory key, is `cannot judge` (exit 5), never healthy.", "",
             "## Rules", "",
             "A rule id is `<check>.<cause>`: the check is the `check` field a finding carries in the report.",
             "", "| rule | severity | source | note |", "|---|---|---|---|"]
    for r in rules().values():
        cells = [f"`{r['id']}`", r["severity"], str(r.get("source") or ""), str(r.get("note") or "")]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    DOC.write_text(render())
    sys.stdout.write(f"wrote {DOC}\n")
