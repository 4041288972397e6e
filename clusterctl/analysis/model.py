"""Data types shared by every check: findings, metrics and the check registry."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["critical", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("critical", "warning", "info")


#: the message start of an info finding (severity.yml ``coverage.nothing_judgeable``) for a capture that was
#: read but holds nothing a check judges; the engine then counts that capture as not judged
NOTHING = "cannot judge: nothing judgeable: "
#: the marker a check puts in an info finding when it needed an inventory key: "cannot judge: needs KEY"
NEEDS = "cannot judge: needs "


@dataclass(frozen=True)
class Finding:
    """One judgement about one precise subject.

    ``subject`` is ``host`` or ``host/device[/port]`` or ``host/gpuN`` (GPU index as nvidia-smi
    prints it), so a person can go straight to the part named.
    """

    host: str
    check: str
    severity: Severity
    subject: str
    message: str

    def to_dict(self) -> dict[str, str]:
        d = asdict(self)
        d.pop("host")
        return d


@dataclass(frozen=True)
class Metric:
    """A number measured on a host, compared across hosts by the straggler analysis."""

    host: str
    name: str  # e.g. "nccl_busbw_GBps", "ib_write_bw_Gbps"
    value: float
    subject: str = ""
    unit: str = ""
    higher_is_better: bool = True
    #: the floor the check judged this value against (None: not judged against one), and where that
    #: floor came from (an inventory key or the derivation), for the report to draw what was applied
    floor: float | None = None
    floor_source: str = ""


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)


#: check function: (host, parsed data of one KIND, expectations) -> findings and metrics.
CheckFn = Callable[[str, Any, Mapping[str, Any]], CheckResult | Iterable[Finding]]

#: KIND -> check functions that judge that KIND's parsed output.
CHECKS: dict[str, list[CheckFn]] = {}


def check(kind: str) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn`` as a judge of evidence of ``kind`` (the ccparse KIND name)."""

    def wrap(fn: CheckFn) -> CheckFn:
        CHECKS.setdefault(kind, []).append(fn)
        return fn

    return wrap


def host_status(findings: Iterable[Finding]) -> str:
    """``failed`` if any critical finding, ``degraded`` if any warning, else ``healthy``."""
    sev = {f.severity for f in findings}
    if "critical" in sev:
        return "failed"
    if "warning" in sev:
        return "degraded"
    return "healthy"
