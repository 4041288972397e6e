"""The decision core of the node lifecycle (issue 25): pure functions, no I/O.

Each run of the loop (``clusterctl remediate``, once or from the controller's timer) observes every
Slurm node (:class:`NodeView`: state, reason, partitions, boot time), reads what it remembers of
each node (:class:`Record`, kept in the state folder by :mod:`clusterctl.lifecycle.store`) and asks
:func:`decide` what to do. The flow (:mod:`clusterctl.lifecycle.flow`) runs the actions, and feeds
their outcome back through :func:`after` (records change only there), so the rules below are the
whole policy and can be tested over any sequence of events:

- a node out of service for a reason that does not start ``clusterctl:`` (an admin, Slurm itself)
  is never acted on; a record of ours for it is forgotten;
- a node clusterctl drained gets the remedy its reason's rule names in the one severity table
  (:func:`clusterctl.analysis.severity.remedy_for`): ``gpu_reset`` once the node is idle,
  ``reboot`` through Slurm (``nextstate=DOWN``, held with ``State=FAIL``: no job until resumed; Slurm drops
  DRAIN when the reboot completes and ``ReturnToService=2`` returns a DOWN node), ``none`` (needs hardware:
  it stays drained);
- after the action it is re-verified, one verify a run; it is resumed only after
  :attr:`Config.passes` (at least 2) passing verifies in a row; after
  :attr:`Config.max_failed_verifies` failed ones it stays drained "needs hardware";
- a node resumed by the loop that clusterctl drains again within :attr:`Config.window_s` is
  quarantined (stays drained, reason ``clusterctl: quarantined: ...``, history kept);
- at most ``floor(share x nodes)`` nodes of any partition are being remediated at once;
- drains of a running ``clusterctl reconfigure`` (``clusterctl: reconfigure ...``), burn-in
  (``clusterctl: burn-in``) and quarantine are left as they are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from clusterctl.analysis.severity import remedy_for

PREFIX = "clusterctl:"
QUARANTINED_PREFIX = "clusterctl: quarantined"
BURN_IN_PREFIX = "clusterctl: burn-in"
REMEDIATING_PREFIX = "clusterctl: remediating"
NEEDS_HARDWARE_PREFIX = "clusterctl: needs hardware"
ROLLOUT_PREFIX = "clusterctl: reconfigure"
REASON_MAX = 200

#: the lifecycle states ``clusterctl nodes`` shows
IN_SERVICE, DRAINED, REMEDIATING, QUARANTINED, BURN_IN, ADMIN_DRAINED = (
    "in_service", "drained", "remediating", "quarantined", "burn_in", "admin_drained")
STATES = (IN_SERVICE, DRAINED, REMEDIATING, QUARANTINED, BURN_IN, ADMIN_DRAINED)

#: record phases; IN_FLIGHT count against the share limit
REBOOTING, VERIFYING, NEEDS_HARDWARE = "rebooting", "verifying", "needs_hardware"
IN_FLIGHT = (REBOOTING, VERIFYING)

#: action kinds :func:`decide` and :func:`after` return
REBOOT, GPU_RESET, VERIFY, RESUME, QUARANTINE, GIVE_UP, WAIT, FORGET = (
    "reboot", "gpu_reset", "verify", "resume", "quarantine", "give_up", "wait", "forget")
#: actions that change a node in Slurm or on the node (only ever on a node drained by clusterctl)
TOUCHING = (REBOOT, GPU_RESET, RESUME, QUARANTINE, GIVE_UP)

_OUT = ("DRAIN", "DOWN", "FAIL")
_BUSY = ("ALLOCATED", "MIXED", "COMPLETING")
_NOT_BACK = ("REBOOT", "POWER", "NOT_RESPONDING", "UNKNOWN", "FUTURE")


@dataclass(frozen=True)
class Config:
    """The loop's limits (role ``slurm_controller``'s ``remediate`` variables, or the command line)."""

    #: share of each partition's nodes that may be remediated at once (floor: 0.25 of 8 nodes = 2)
    share: float = 0.25
    #: seconds after the loop resumed a node in which a new clusterctl drain quarantines it
    window_s: float = 86400.0
    #: passing verifies in a row before a remediated node is resumed (at least 2)
    passes: int = 2
    #: failed verifies after the action before the node is left "needs hardware"
    max_failed_verifies: int = 3
    #: seconds a reboot may take before the node is left "needs hardware"
    reboot_timeout_s: float = 1800.0

    def __post_init__(self) -> None:
        if not 0 < self.share <= 1:
            raise ValueError(f"share {self.share!r}: must be above 0 and at most 1")
        if self.passes < 2:
            raise ValueError(f"passes {self.passes!r}: at least 2")
        if self.window_s < 0 or self.max_failed_verifies < 1 or self.reboot_timeout_s <= 0:
            raise ValueError("window_s >= 0, max_failed_verifies >= 1, reboot_timeout_s > 0")


@dataclass(frozen=True)
class NodeView:
    """A node as Slurm shows it now (``scontrol show node``)."""

    name: str
    state: str  # e.g. IDLE+DRAIN, DOWN+DRAIN+REBOOT_ISSUED, MIXED
    reason: str = ""
    partitions: tuple[str, ...] = ()
    boot_time: str = ""

    @property
    def flags(self) -> list[str]:
        return [w.rstrip("*~#!%$@^-") for w in self.state.upper().split("+")]

    @property
    def out_of_service(self) -> bool:
        """DRAIN flag, DOWN or FAIL: takes no new job."""
        return any(w.startswith(_OUT) for w in self.flags)

    @property
    def ours(self) -> bool:
        return self.reason.startswith(PREFIX)

    @property
    def idle(self) -> bool:
        """No job on it (drained, not draining)."""
        return not any(w.startswith(_BUSY) for w in self.flags) and "DRAINING" not in self.flags

    @property
    def back(self) -> bool:
        """Registered after a reboot: responding, no reboot pending or issued."""
        return not self.state.endswith("*") and not any(w.startswith(_NOT_BACK) for w in self.flags)


@dataclass
class Record:
    """What the loop remembers of one node (JSON in the state folder)."""

    phase: str = ""  # "", rebooting, verifying, needs_hardware, quarantined
    remedy: str = ""
    cause: str = ""  # the clusterctl drain reason that started the remediation
    rule: str = ""  # the severity rule (or check) the remedy was read from
    since: float = 0.0  # when the current phase began
    boot_before: str = ""
    passes: int = 0
    failures: int = 0
    resumed: list[float] = field(default_factory=list)  # when the loop resumed it
    history: list[dict[str, Any]] = field(default_factory=list)  # past causes and outcomes
    evidence: str = ""  # the last evidence (file or text)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Record:
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


@dataclass(frozen=True)
class Action:
    """One thing to do to one node; ``reason`` is the Slurm reason it sets, ``why`` the evidence."""

    kind: str
    node: str
    reason: str = ""
    why: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def one_line(text: str, limit: int = REASON_MAX) -> str:
    """``text`` as a Slurm reason Ansible's ad-hoc templating and ``scontrol`` take: one line, no quotes,
    braces or ``%``/``#``."""
    return re.sub(r"\s+", " ", re.sub(r"[\"'{}%#]", "", text)).strip()[:limit]


def cause_word(reason: str) -> str:
    """The rule or check a ``clusterctl:`` reason names: ``clusterctl: gpu_row_remap gpu3: ...`` ->
    ``gpu_row_remap``; ``clusterctl: node-check: xid.fallen_off_bus gpu0 ...`` -> ``xid.fallen_off_bus``."""
    words = reason[len(PREFIX):].split() if reason.startswith(PREFIX) else []
    if words and words[0].rstrip(":") == "node-check":
        words = words[1:]
    return words[0].rstrip(":") if words else ""


def remedy_of(reason: str) -> tuple[str, str]:
    """(remedy, rule) for a clusterctl drain reason, from the severity table; ``none`` for a reason that
    names no failed rule."""
    return remedy_for(cause_word(reason))


def classify(view: NodeView, rec: Record | None) -> str:
    """The lifecycle state of a node."""
    if not view.out_of_service:
        return IN_SERVICE
    if not view.ours:
        return ADMIN_DRAINED
    if view.reason.startswith(QUARANTINED_PREFIX) or (rec is not None and rec.phase == QUARANTINED):
        return QUARANTINED
    if view.reason.startswith(BURN_IN_PREFIX):
        return BURN_IN
    if rec is not None and rec.phase in IN_FLIGHT:
        return REMEDIATING
    return DRAINED


def share_limit(size: int, share: float) -> int:
    """Nodes of a partition of ``size`` that may be remediated at once: ``floor(share x size)``."""
    return math.floor(share * size + 1e-9)


def _partition_sizes(views: Iterable[NodeView]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for v in views:
        for p in v.partitions:
            sizes[p] = sizes.get(p, 0) + 1
    return sizes


def in_flight(views: Mapping[str, NodeView], records: Mapping[str, Record]) -> set[str]:
    """Nodes being remediated: an in-flight record and still drained by clusterctl."""
    return {n for n, r in records.items()
            if r.phase in IN_FLIGHT and n in views and views[n].out_of_service and views[n].ours}


def decide(views: Iterable[NodeView], records: Mapping[str, Record], cfg: Config, now: float) -> list[Action]:
    """What to do this run, node by node (in name order)."""
    by_name = {v.name: v for v in views}
    sizes = _partition_sizes(by_name.values())
    busy = in_flight(by_name, records)
    used: dict[str, int] = {}
    for n in busy:
        for p in by_name[n].partitions:
            used[p] = used.get(p, 0) + 1
    out: list[Action] = []
    for name in sorted(set(records) - set(by_name)):
        out.append(Action(FORGET, name, why="no longer a Slurm node"))
    for name in sorted(by_name):
        v, rec = by_name[name], records.get(name)
        if not v.out_of_service:
            if rec is not None and rec.phase:
                out.append(Action(FORGET, name, why=f"in service again ({v.state}) while {rec.phase}: "
                                                    "someone resumed it"))
            continue
        if not v.ours:
            if rec is not None and rec.phase:
                out.append(Action(FORGET, name, why=f"drained by someone else now ({v.reason or v.state}): "
                                                    "left alone"))
            continue
        if v.reason.startswith((QUARANTINED_PREFIX, BURN_IN_PREFIX, ROLLOUT_PREFIX)):
            continue
        if rec is not None and rec.phase == REBOOTING:
            if v.boot_time and v.boot_time != rec.boot_before and v.back:
                out.append(Action(VERIFY, name, why=f"back from the reboot (BootTime {v.boot_time})"))
            elif now - rec.since > cfg.reboot_timeout_s:
                out.append(Action(GIVE_UP, name, _reason(NEEDS_HARDWARE_PREFIX, f"reboot not completed in "
                                                         f"{cfg.reboot_timeout_s:g}s", rec.cause),
                                  why=f"state {v.state}, BootTime {v.boot_time or '?'}"))
            continue
        if rec is not None and rec.phase == VERIFYING:
            out.append(Action(VERIFY, name, why=f"{rec.passes} pass(es) of {cfg.passes}"))
            continue
        if rec is not None and rec.phase in (NEEDS_HARDWARE, QUARANTINED):
            continue  # until someone resumes it (even when the node check drained it again meanwhile)
        # a fresh clusterctl drain (or one the node check made again over ours)
        if rec is not None and rec.resumed and now - rec.resumed[-1] <= cfg.window_s:
            ago = now - rec.resumed[-1]
            out.append(Action(QUARANTINE, name, _reason(QUARANTINED_PREFIX, f"failed again {ago:.0f}s after "
                                                        f"resume ({len(rec.resumed)} resume(s))", v.reason),
                              why=v.reason))
            continue
        if v.reason.startswith(NEEDS_HARDWARE_PREFIX):
            continue
        remedy, rule = remedy_of(v.reason)
        if remedy == "gpu_reset" and rec is not None and rec.history and \
                rec.history[-1].get("event") == "gpu_reset failed":
            remedy = "reboot"
        if remedy == "none":
            continue  # needs hardware or a person: stays drained as it is
        over = [p for p in v.partitions if used.get(p, 0) + 1 > share_limit(sizes[p], cfg.share)]
        if over:
            full = ", ".join(f"{p} {used.get(p, 0)}/{sizes[p]}" for p in over)
            out.append(Action(WAIT, name, why=f"share limit: {full} nodes in remediation (share {cfg.share:g})"))
            continue
        if remedy == "gpu_reset" and not v.idle:
            out.append(Action(WAIT, name, why=f"GPU reset waits for the jobs to end ({v.state})"))
            continue
        for p in v.partitions:
            used[p] = used.get(p, 0) + 1
        kind = GPU_RESET if remedy == "gpu_reset" else REBOOT
        out.append(Action(kind, name, _reason(REMEDIATING_PREFIX, kind.replace("_", " "), v.reason),
                          why=f"{rule}: {v.reason}"))
    return out


def _reason(prefix: str, what: str, cause: str) -> str:
    was = cause[len(PREFIX):].strip() if cause.startswith(PREFIX) else cause
    return one_line(f"{prefix}: {what} (was: {was})")


def after(records: dict[str, Record], action: Action, view: NodeView | None, now: float, *, ok: bool = True,
          evidence: str = "", cfg: Config | None = None) -> list[Action]:
    """Record the outcome of ``action`` (``ok``: it ran, or the verify passed; ``evidence``: what it
    showed); the follow-up actions (a resume after the last needed pass, giving up after the last
    allowed failure)."""
    cfg = cfg or Config()
    name = action.node
    if action.kind == FORGET:
        rec = records.get(name)
        if rec is not None:
            if view is None:
                del records[name]
            else:
                rec.history.append({"time": now, "event": "forgotten", "why": action.why, "phase": rec.phase})
                rec.phase, rec.passes, rec.failures = "", 0, 0
        return []
    rec = records.setdefault(name, Record())
    if evidence:
        rec.evidence = evidence
    if action.kind in (REBOOT, GPU_RESET):
        if not ok:  # the action itself failed: a failed reset falls back to a reboot next run
            rec.history.append({"time": now, "event": f"{action.kind} failed", "why": evidence})
            if action.kind == GPU_RESET:
                rec.phase, rec.remedy = "", "reboot"
            return []
        rec.cause = view.reason if view is not None and view.ours else rec.cause
        rec.rule = remedy_of(rec.cause)[1]
        rec.remedy = action.kind
        rec.phase = REBOOTING if action.kind == REBOOT else VERIFYING
        rec.since, rec.passes, rec.failures = now, 0, 0
        rec.boot_before = view.boot_time if view is not None else ""
        rec.history.append({"time": now, "event": action.kind, "cause": rec.cause})
        return []
    if action.kind == VERIFY:
        if rec.phase == REBOOTING:
            rec.phase, rec.since = VERIFYING, now
        if ok:
            rec.passes += 1
            if rec.passes >= cfg.passes:
                return [Action(RESUME, name, why=f"{rec.passes} passing verifies in a row after {rec.remedy}")]
            return []
        rec.passes = 0
        rec.failures += 1
        if rec.failures >= cfg.max_failed_verifies:
            return [Action(GIVE_UP, name, _reason(NEEDS_HARDWARE_PREFIX, f"{rec.remedy} did not clear it, "
                                                  f"{rec.failures} failed verifies: {evidence}", rec.cause),
                           why=evidence)]
        return []
    if action.kind == RESUME:
        if ok:
            rec.history.append({"time": now, "event": "resumed", "cause": rec.cause, "remedy": rec.remedy})
            rec.resumed.append(now)
            rec.phase, rec.passes, rec.failures, rec.since = "", 0, 0, now
        return []
    if action.kind in (QUARANTINE, GIVE_UP):
        if ok:
            rec.phase = QUARANTINED if action.kind == QUARANTINE else NEEDS_HARDWARE
            rec.since = now
            rec.history.append({"time": now, "event": rec.phase, "reason": action.reason})
        return []
    return []
