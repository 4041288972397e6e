"""clusterctl's verdicts in the Prometheus text exposition format (version 0.0.4).

One writer for ``clusterctl analyze/verify --prom FILE`` and for the textfile a node's exporter
serves: the node check (:mod:`clusterctl.lifecycle.nodecheck`, in its bundle) renders its verdict
with :func:`render_verdict`, which goes through the same :func:`render`. The standard library only
(the node check's bundle carries this module). Every metric family is documented in README.md
("Metrics"); the names are listed in :data:`FAMILIES` so the dashboards and alert rules can be checked against them.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from clusterctl.paths import write_atomic

#: every status a host can have in a report (engine.HostReport.status)
STATUSES = ("healthy", "degraded", "failed", "no evidence", "cannot judge", "unreachable")

#: name -> (type, help): the families this module writes, in the order written
FAMILIES: dict[str, tuple[str, str]] = {
    "clusterctl_node_status": (
        "gauge", "1 for the status clusterctl gave the host in its last analysis, 0 for the others"),
    "clusterctl_findings": (
        "gauge", "Findings of the last analysis by host, check and severity"),
    "clusterctl_measured": (
        "gauge", "A number the last analysis measured (busbw GB/s, ib_write_bw Gb/s, ...) by host, metric, subject"),
    "clusterctl_measured_floor": (
        "gauge", "The floor the last analysis judged clusterctl_measured against, where it judged one"),
    "clusterctl_xid_events": (
        "gauge", "NVIDIA Xid events in the kernel log of the host at the last analysis, by Xid code"),
    "clusterctl_node_drained": (
        "gauge", "1 for a host clusterctl drained in Slurm at the last verify --drain (reason 'clusterctl: ...')"),
    "clusterctl_hosts": (
        "gauge", "Hosts of the last analysis by status"),
    "clusterctl_last_verify_timestamp_seconds": (
        "gauge", "Unix time of the last analysis clusterctl wrote these metrics from"),
}

#: the file name clusterctl writes in node_exporter's textfile folder (node check and verify alike:
#: the last verdict about the node wins; two files with the same series would fail the scrape)
TEXTFILE = "clusterctl.prom"


class HostView(Protocol):
    """What :func:`render` reads of a host (engine.HostReport has it)."""

    @property
    def status(self) -> str: ...
    @property
    def findings(self) -> Sequence[Any]: ...
    @property
    def notes(self) -> Sequence[Any]: ...
    @property
    def metrics(self) -> Sequence[Any]: ...


class ReportView(Protocol):
    """What :func:`render` reads of a report (engine.Report has it)."""

    @property
    def hosts(self) -> Mapping[str, HostView]: ...


@dataclass(frozen=True)
class _Finding:
    check: str
    severity: str
    message: str


@dataclass
class _Host:
    status: str
    findings: list[_Finding] = field(default_factory=list)
    notes: list[_Finding] = field(default_factory=list)
    metrics: list[Any] = field(default_factory=list)


@dataclass
class _Report:
    hosts: dict[str, _Host]


_XID = re.compile(r"^Xid (\d+) .*?: (\d+) time\(s\)")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items()) + "}"


def _number(v: float) -> str:
    if v != v:  # NaN
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v)) if not float(v).is_integer() else str(int(v))


def xid_counts(findings: Iterable[object]) -> Counter[str]:
    """Xid code -> events, from the ``xid`` findings of one host (kernel_log: one per GPU and code)."""
    out: Counter[str] = Counter()
    for f in findings:
        if getattr(f, "check", "") != "xid":
            continue
        m = _XID.match(getattr(f, "message", ""))
        if m:
            out[m.group(1)] += int(m.group(2))
    return out


def render(report: ReportView, now: float | None = None, drained: Iterable[str] = ()) -> str:
    """The whole textfile for ``report``: HELP and TYPE once per family, samples sorted by host;
    ``drained``: the hosts the run drained (verify --drain)."""
    samples: dict[str, list[tuple[dict[str, str], float]]] = {name: [] for name in FAMILIES}
    counts: Counter[str] = Counter()
    for host in sorted(report.hosts):
        r = report.hosts[host]
        status = r.status
        counts[status] += 1
        for s in STATUSES:
            samples["clusterctl_node_status"].append(({"host": host, "status": s}, 1.0 if s == status else 0.0))
        by_check: Counter[tuple[str, str]] = Counter((f.check, f.severity) for f in [*r.findings, *r.notes])
        for (chk, sev), n in sorted(by_check.items()):
            samples["clusterctl_findings"].append(({"host": host, "check": chk, "severity": sev}, float(n)))
        seen: set[tuple[str, str]] = set()
        for m in r.metrics:
            key = (m.name, m.subject)
            if key in seen:  # one sample per label set: the first measurement of a subject wins
                continue
            seen.add(key)
            lab = {"host": host, "metric": m.name, "subject": m.subject, "unit": m.unit}
            samples["clusterctl_measured"].append((lab, float(m.value)))
            if m.floor is not None:
                samples["clusterctl_measured_floor"].append((lab, float(m.floor)))
        for code, n in sorted(xid_counts([*r.findings, *r.notes]).items(), key=lambda kv: int(kv[0])):
            samples["clusterctl_xid_events"].append(({"host": host, "code": code}, float(n)))
    for host in sorted(set(drained)):
        samples["clusterctl_node_drained"].append(({"host": host}, 1.0))
    for s in STATUSES:
        samples["clusterctl_hosts"].append(({"status": s}, float(counts[s])))
    samples["clusterctl_last_verify_timestamp_seconds"].append(({}, float(time.time() if now is None else now)))

    return render_families(FAMILIES, samples)


Samples = Mapping[str, Sequence[tuple[Mapping[str, str], float]]]


def render_families(families: Mapping[str, tuple[str, str]], samples: Samples) -> str:
    """The exposition text of ``families`` (name -> (type, help)), in their order: HELP and TYPE once
    per family, then its samples (labels, value) as given. Every textfile clusterctl writes goes
    through here (this module's :func:`render`, the Slurm textfile of :mod:`clusterctl.report.slurm_textfile`)."""
    lines: list[str] = []
    for name, (typ, help_) in families.items():
        lines.append(f"# HELP {name} {_escape(help_)}")
        lines.append(f"# TYPE {name} {typ}")
        lines.extend(f"{name}{_labels(lab)} {_number(v)}" for lab, v in samples.get(name, ()))
    return "\n".join(lines) + "\n"


def write(report: ReportView, path: Path, now: float | None = None, drained: Iterable[str] = ()) -> None:
    """Write :func:`render` of ``report`` to ``path`` atomically (mode 0644: node_exporter reads it)."""
    write_atomic(path, render(report, now, drained))


def render_verdict(verdict: Mapping[str, Any], now: float | None = None) -> str:
    """:func:`render` of the node check's ``verdict.json`` (host, status, findings as dicts with check,
    severity, message): the node's own textfile, the same families and labels as verify's."""
    findings = [_Finding(str(f.get("check", "")), str(f.get("severity", "")), str(f.get("message", "")))
                for f in verdict.get("findings") or () if isinstance(f, Mapping)]
    host = _Host(str(verdict.get("status") or "cannot judge"),
                 [f for f in findings if f.severity != "info"], [f for f in findings if f.severity == "info"])
    return render(_Report({str(verdict["host"]): host}), now)
