"""One run of the remediation loop against Slurm and the nodes, and the node listing.

:func:`remediate` observes every Slurm node (``scontrol show node`` on the controller), asks
:func:`clusterctl.lifecycle.core.decide` what to do, runs it and records the outcome; every action
(and, with ``dry_run``, every action it would take) is a line in ``actions.jsonl`` of the state
folder. Right before an action that touches a node, the node is read again: if its reason no longer
starts ``clusterctl:`` (an admin took it over meanwhile), nothing is done to it.

:func:`nodes` lists every node's lifecycle state with its last evidence (``clusterctl nodes``).

The side effects come through small protocols (:class:`LoopSlurm`, :data:`Verifier`, :data:`Resetter`)
so the command passes the real ones (Slurm through Ansible, the node check and the quick verify on
the node) and tests pass their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from clusterctl.lifecycle import core
from clusterctl.lifecycle.core import Action, Config, NodeView, Record
from clusterctl.lifecycle.store import Store

#: node -> (passed, evidence: a file or a one-line why)
Verifier = Callable[[str], tuple[bool, str]]
#: the burn-in gate's checks of a node: (node, known-good partners for its pair tests) -> (passed, evidence)
BurnInVerifier = Callable[[str, list[str]], tuple[bool, str]]
#: node -> (done, evidence)
Resetter = Callable[[str], tuple[bool, str]]
#: the hardware identity of every node that answered (clusterctl-node-check --identity)
Identifier = Callable[[], dict[str, dict[str, Any]]]


class LoopSlurm(Protocol):
    """What the loop needs from Slurm (:class:`clusterctl.slurm.Slurm` has it)."""

    def show_nodes(self) -> str: ...
    def drain(self, nodes: Sequence[str], reason: str) -> None: ...
    def resume(self, nodes: Sequence[str]) -> None: ...
    def reboot(self, nodes: Sequence[str], reason: str) -> None: ...
    def fail(self, nodes: Sequence[str], reason: str) -> None: ...


def views_from_text(text: str) -> list[NodeView]:
    """NodeViews from ``scontrol show node`` text (the ``scontrol-node`` parser)."""
    from ccparse import registry

    out = []
    for n in registry.parse("scontrol-node", text)["nodes"]:
        fields = n.get("fields") or {}
        out.append(NodeView(str(n["name"]), str(n.get("state") or ""), str(n.get("reason") or ""),
                            tuple(n.get("partitions") or ()), str(fields.get("BootTime") or "")))
    return out


def store_for(inventory: Path) -> Store:
    from clusterctl.runner import state_dir

    return Store(state_dir(inventory) / "lifecycle")


@dataclass
class Step:
    """One action of a run and what came of it."""

    action: Action
    outcome: str  # done, passed, failed, skipped, would
    evidence: str = ""

    def to_dict(self) -> dict[str, str]:
        return {**self.action.to_dict(), "outcome": self.outcome, "evidence": self.evidence}


@dataclass
class RunReport:
    steps: list[Step] = field(default_factory=list)
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "steps": [s.to_dict() for s in self.steps]}


def remediate(slurm: LoopSlurm, store: Store, cfg: Config, *, verify: Verifier, reset: Resetter,
              identify: Identifier | None = None, burn_verify: BurnInVerifier | None = None,
              dry_run: bool = False, clock: Callable[[], float] = time.time) -> RunReport:
    """One run of the loop (under the store's lock); with ``identify``, then the burn-in gate, whose nodes
    are checked by ``burn_verify`` (with known-good partners, :func:`partners`) or else by ``verify``."""
    report = RunReport(dry_run=dry_run)
    with store.locked():
        records = store.load()
        views = {v.name: v for v in views_from_text(slurm.show_nodes())}
        queue = core.decide(views.values(), records, cfg, clock())
        while queue:
            a = queue.pop(0)
            view = views.get(a.node)
            step = _run(a, view, slurm, verify, reset, dry_run)
            report.steps.append(step)
            if a.kind != core.WAIT or not _same_wait(records.get(a.node), a):
                store.log({**step.to_dict(), "dry_run": dry_run, "state": view.state if view else None,
                           "slurm_reason": view.reason if view else None})
            if dry_run:
                continue
            if a.kind == core.WAIT:
                records.setdefault(a.node, Record()).evidence = a.why
                continue
            if step.outcome == "skipped":
                queue.extend(core.after(records, Action(core.FORGET, a.node, why=step.evidence), view, clock()))
                continue
            ok = step.outcome in ("done", "passed")
            queue.extend(core.after(records, a, view, clock(), ok=ok, evidence=step.evidence, cfg=cfg))
        if not dry_run:
            store.save(records)
        if identify is not None:
            burn = burn_verify or (lambda node, _partners: verify(node))
            _burn_in(slurm, store, cfg, views, identify, burn, dry_run, clock, report)
    return report


def partners(views: Mapping[str, NodeView], node: str, n: int = 1) -> list[str]:
    """Up to ``n`` known-good partners for the pair tests of ``node`` in burn-in: in service, idle (a pair
    test on a node running a job would disturb it and be disturbed), sharing a partition with it, not
    drained by anyone; in name order, so a run is repeatable."""
    me = views.get(node)
    mine = set(me.partitions) if me is not None else set()
    good = [v.name for v in views.values() if v.name != node and not v.out_of_service and v.idle
            and "IDLE" in v.flags and (not mine or mine & set(v.partitions))]
    return sorted(good)[:n]


def _burn_in(slurm: LoopSlurm, store: Store, cfg: Config, views: dict[str, NodeView], identify: Identifier,
             verify: BurnInVerifier, dry_run: bool, clock: Callable[[], float], report: RunReport) -> None:
    from clusterctl.lifecycle import burnin

    acceptance = store.load_acceptance()
    idents = identify()
    for a in burnin.decide(views.values(), idents, acceptance, cfg.share):
        view = views.get(a.node)
        if dry_run:
            step = Step(a, "would", a.why)
        elif a.kind == burnin.ADOPT:
            burnin.accept(acceptance, a.node, idents[a.node], clock(), "adopted")
            step = Step(a, "done", a.why)
        elif a.kind == burnin.BURN_IN_DRAIN:
            slurm.drain([a.node], a.reason)
            step = Step(a, "done", a.why)
        elif a.kind == burnin.BURN_IN_VERIFY:
            ok, evidence = verify(a.node, partners(views, a.node))
            step = Step(a, "passed" if ok else "failed", evidence)
            if ok and _still_ours(slurm, a.node) is not None:
                burnin.accept(acceptance, a.node, idents[a.node], clock(), "burn-in passed", evidence)
                slurm.resume([a.node])
                report.steps.append(step)
                store.log({**step.to_dict(), "dry_run": False, "identity": idents[a.node]})
                step = Step(core.Action(core.RESUME, a.node, why="burn-in passed"), "done", evidence)
        else:
            step = Step(a, "noted", a.why)
        report.steps.append(step)
        store.log({**step.to_dict(), "dry_run": dry_run, "identity": idents.get(a.node),
                   "state": view.state if view else None, "slurm_reason": view.reason if view else None})
    if not dry_run:
        store.save_acceptance(acceptance)


def _same_wait(rec: Record | None, a: Action) -> bool:
    """A wait already logged with the same why (the timer would log it every run)."""
    return rec is not None and rec.evidence == a.why


def _still_ours(slurm: LoopSlurm, node: str) -> NodeView | None:
    fresh = {v.name: v for v in views_from_text(slurm.show_nodes())}.get(node)
    return fresh if fresh is not None and fresh.out_of_service and fresh.ours else None


def _run(a: Action, view: NodeView | None, slurm: LoopSlurm, verify: Verifier, reset: Resetter,
         dry_run: bool) -> Step:
    if a.kind in (core.WAIT, core.FORGET):
        return Step(a, "noted", a.why)
    if dry_run:
        return Step(a, "would", a.why)
    if a.kind in core.TOUCHING and _still_ours(slurm, a.node) is None:
        return Step(a, "skipped", "no longer drained by clusterctl (someone else took it over, or resumed it)")
    if a.kind == core.VERIFY:
        fresh = _still_ours(slurm, a.node)
        if fresh is not None and not {"DRAIN", "FAIL"} & set(fresh.flags):
            # DOWN only: back from a reboot issued before the hold below existed; Slurm's ReturnToService=2
            # would return it to service at its next registration, verified or not
            slurm.fail([a.node], fresh.reason)
        ok, evidence = verify(a.node)
        return Step(a, "passed" if ok else "failed", evidence)
    if a.kind == core.GPU_RESET:
        slurm.drain([a.node], a.reason)
        ok, evidence = reset(a.node)
        return Step(a, "done" if ok else "failed", evidence)
    if a.kind == core.REBOOT:
        # the reboot clears the DRAIN flag, and ReturnToService=2 then returns the DOWN node to service at its
        # next registration, before its verifies: FAIL holds it out of service until the loop resumes it
        slurm.reboot([a.node], a.reason)
        slurm.fail([a.node], a.reason)
        return Step(a, "done", a.why)
    if a.kind == core.RESUME:
        slurm.resume([a.node])
        return Step(a, "done", a.why)
    if a.kind in (core.QUARANTINE, core.GIVE_UP):
        slurm.drain([a.node], a.reason)
        return Step(a, "done", a.why)
    raise AssertionError(f"unknown action {a.kind}")  # pragma: no cover


@dataclass(frozen=True)
class NodeStatus:
    name: str
    state: str  # a lifecycle state (core.STATES)
    slurm_state: str
    reason: str
    remedy: str
    phase: str
    evidence: str
    history: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "state": self.state, "slurm_state": self.slurm_state, "reason": self.reason,
                "remedy": self.remedy, "phase": self.phase, "evidence": self.evidence, "history": self.history}


def nodes(slurm: LoopSlurm, store: Store) -> list[NodeStatus]:
    """Every Slurm node with its lifecycle state, the remedy its reason calls for, and the last
    evidence (from the loop's records and action log)."""
    records = store.load()
    last: dict[str, dict[str, Any]] = {}
    for entry in store.actions():
        if entry.get("evidence") and not entry.get("dry_run"):
            last[str(entry.get("node"))] = entry
    out = []
    for v in sorted(views_from_text(slurm.show_nodes()), key=lambda x: x.name):
        rec = records.get(v.name)
        state = core.classify(v, rec)
        remedy = core.remedy_of(v.reason)[0] if state == core.DRAINED else (rec.remedy if rec else "")
        evidence = (rec.evidence if rec and rec.evidence else "") or str(last.get(v.name, {}).get("evidence") or "")
        out.append(NodeStatus(v.name, state, v.state, v.reason, remedy, rec.phase if rec else "",
                              evidence if state != core.IN_SERVICE or (rec and rec.phase) else "",
                              rec.history[-5:] if rec else []))
    return out
