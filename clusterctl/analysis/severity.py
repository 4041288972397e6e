"""The one severity table of ``clusterctl analyze`` (issue 29): ``severity.yml`` beside this module.

Each rule says what a finding demands: ``failed`` (drain now: the node must not run the next job),
``degraded`` (it runs, slower or at risk) or ``note``; and the source the action comes from. Checks
take a finding's severity from here with :func:`sev` (``sev("dcgmi_diag.all_skipped")``), so the table
is the only place a severity is decided for those rules. ``python -m clusterctl.analysis.severity``
renders the table into ``docs/severity.md`` (a test holds the two equal).
"""

from __future__ import annotations

import functools
import json
import pkgutil
import sys
from pathlib import Path
from typing import Any

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
#: what ``clusterctl remediate`` does for a node drained for a failed rule (its ``remedy``; none when absent),
#: least disruptive first: a check whose failed rules differ takes the most disruptive one
REMEDIES: dict[str, str] = {
    "gpu_reset": "GPU reset (nvidia-smi -r) once the node is idle, then re-verify",
    "reboot": "reboot through Slurm (scontrol reboot ASAP nextstate=DOWN), then re-verify",
    "none": "no automatic action: needs hardware or a person (stays drained)",
}
HOST_STATUS = {"failed": "failed", "degraded": "degraded", "note": "healthy"}
EXITS = {"failed": "3 (`analyze`, `verify`)", "degraded": "0", "note": "0"}


def load_data(package: str, stem: str) -> Any:
    """The data file ``<stem>.yml`` of ``package`` (read through the package loader, so it works from a
    zip too), or its JSON rendering ``<stem>.json`` where there is no YAML file or no PyYAML: the node
    check's bundle (clusterctl/lifecycle/bundle.py) carries the tables as JSON and runs on nodes with the
    standard library only."""
    try:
        import yaml
    except ImportError:  # pragma: no cover - the node check's bundle on a node without PyYAML
        yaml = None  # type: ignore[assignment]
    if yaml is not None:
        try:
            raw = pkgutil.get_data(package, f"{stem}.yml")
        except OSError:
            raw = None
        if raw is not None:
            # libyaml's parser where PyYAML has it (the same safe constructors and resolver; the
            # pure-Python one takes about 0.1 s per table at every start of the CLI)
            return yaml.load(raw.decode("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    raw = pkgutil.get_data(package, f"{stem}.json")
    if raw is None:  # pragma: no cover - a loader without get_data
        raise FileNotFoundError(f"{package}: {stem}.yml / {stem}.json")
    return json.loads(raw.decode("utf-8"))


@functools.cache
def rules() -> dict[str, dict[str, Any]]:
    doc = load_data(__package__ or "clusterctl.analysis", "severity")
    out: dict[str, dict[str, Any]] = {}
    for r in doc["rules"]:
        if r["id"] in out or r["severity"] not in TO_FINDING:
            raise ValueError(f"{TABLE}: rule {r['id']!r}: duplicate id or severity {r['severity']!r}")
        if "remedy" in r and (r["severity"] != "failed" or r["remedy"] not in REMEDIES):
            raise ValueError(f"{TABLE}: rule {r['id']!r}: remedy {r['remedy']!r} (only failed rules take one of "
                             f"{', '.join(REMEDIES)})")
        out[r["id"]] = r
    return out


def sev(rule_id: str) -> Severity:
    """The finding severity of ``rule_id`` (KeyError for a rule not in the table)."""
    return TO_FINDING[rules()[rule_id]["severity"]]


def remedy(rule_id: str) -> str:
    """The remedy of ``rule_id`` (``none`` for a rule that names none or is not ``failed``)."""
    r = rules()[rule_id]
    return str(r.get("remedy") or "none") if r["severity"] == "failed" else "none"


def remedy_for(word: str) -> tuple[str, str]:
    """(remedy, rule or check it was read from) for a drain reason's first word: a rule id
    (``gpu_row_remap.pending``) or a check (``gpu_row_remap``: the most disruptive remedy of its failed
    rules, ``none`` winning: a check that may need hardware gets no automatic action). Anything else:
    ``none``."""
    if word in rules():
        return remedy(word), word
    failed = [r for rid, r in rules().items() if rid.split(".")[0] == word and r["severity"] == "failed"]
    if not failed:
        return "none", ""
    order = list(REMEDIES)
    worst = max((str(r.get("remedy") or "none") for r in failed), key=order.index)
    return worst, word


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
    lines += ["", "## Remedies (`clusterctl remediate`)", "",
              "What the remediation loop does for a node drained for a failed rule (the rule's `remedy`); a drain "
              "reason naming only a check takes the most disruptive remedy of that check's failed rules.", "",
              "| remedy | what happens | rules |", "|---|---|---|"]
    for word, what in REMEDIES.items():
        ids = [f"`{rid}`" for rid, r in rules().items() if r["severity"] == "failed" and remedy(rid) == word]
        lines.append(f"| `{word}` | {what} | {', '.join(ids)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    DOC.write_text(render())
    sys.stdout.write(f"wrote {DOC}\n")
