"""Drain failed nodes in Slurm and return to service only the nodes clusterctl drained.

Every drain clusterctl makes carries a reason starting ``clusterctl:``; :func:`select_resumable`
returns a node to service only when its current reason starts so, so a node an admin drained by
hand (any other reason) is never resumed by clusterctl. The commands run on the Slurm controller
through :class:`clusterctl.slurm.Slurm`; node state is read there with ``scontrol show node``
and parsed by the ``scontrol-node`` parser (``ccparse.slurm``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from clusterctl.analysis.engine import Report
from clusterctl.slurm import PREFIX

REASON_MAX = 200  # Slurm keeps long reasons, but sinfo -R shows ~20 chars by default: keep it short
DRAIN_STATES = ("DRAIN", "DRAINED", "DRAINING", "DRNG", "DRAIN*")


@dataclass(frozen=True)
class NodeState:
    name: str
    state: str  # e.g. "IDLE+DRAIN", "drained"
    reason: str | None

    @property
    def drained(self) -> bool:
        s = self.state.upper()
        return "DRAIN" in s or "DRNG" in s

    @property
    def ours(self) -> bool:
        return (self.reason or "").startswith(PREFIX)


def drain_reason(report: Report, host: str) -> str:
    """``clusterctl: <check> <subject>: <message>`` of the host's top finding, one line, no quotes
    and no braces (Ansible would take ``{{ }}`` in a command argument for a template)."""
    top = report.hosts[host].top()
    text = f"{top.check} {top.subject}: {top.message}" if top else "verification failed"
    text = re.sub(r"\s+", " ", re.sub(r"[\"'{}]", "", text)).strip()
    return f"{PREFIX} {text}"[:REASON_MAX]


def drains(report: Report) -> list[dict[str, str]]:
    """``[{"name": host, "reason": ...}]`` for every failed host of the report."""
    return [{"name": h, "reason": drain_reason(report, h)} for h in sorted(report.failed)]


def _get(d: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if k in d and d[k] not in (None, "", "none", "(null)"):
            return d[k]
    return None


def nodes_from_parsed(data: Any) -> list[NodeState]:
    """NodeStates from the ``scontrol-node`` / ``sinfo`` parser output.

    Accepts ``{"nodes": [...]}`` or a list of node dicts, with the node name under ``name``,
    ``node``, ``node_name`` or ``NodeName``, the state under ``state``/``State`` and the reason
    under ``reason``/``Reason``.
    """
    items = data.get("nodes", []) if isinstance(data, Mapping) else data
    out: list[NodeState] = []
    for n in items or []:
        if not isinstance(n, Mapping):
            continue
        name = _get(n, "name", "node", "node_name", "NodeName", "nodelist")
        if not name:
            continue
        state = _get(n, "state", "State") or ""
        if isinstance(state, list | tuple):
            state = "+".join(map(str, state))
        reason = _get(n, "reason", "Reason")
        names = name if isinstance(name, list) else [name]
        out += [NodeState(str(x), str(state), None if reason is None else str(reason)) for x in names]
    return out


@dataclass
class ResumePlan:
    resume: list[str]
    refused: dict[str, str]  # node -> why it is left alone


def select_resumable(nodes: Iterable[NodeState], requested: Sequence[str] | None = None) -> ResumePlan:
    """Nodes to return to service: drained with a ``clusterctl:`` reason (and in ``requested``)."""
    by_name = {n.name: n for n in nodes}
    wanted = list(requested) if requested else sorted(by_name)
    plan = ResumePlan([], {})
    for name in wanted:
        n = by_name.get(name)
        if n is None:
            plan.refused[name] = "not a Slurm node"
        elif not n.drained:
            if requested:
                plan.refused[name] = f"not drained (state {n.state})"
        elif not n.ours:
            plan.refused[name] = f"drained by someone else (reason {n.reason!r}); resume it by hand"
        else:
            plan.resume.append(name)
    return plan


class SlurmClient(Protocol):
    def drain(self, nodes: Sequence[str], reason: str) -> None: ...
    def resume(self, nodes: Sequence[str]) -> None: ...
    def show_nodes(self) -> str: ...


def drain_failed(slurm: SlurmClient, report: Report) -> list[dict[str, str]]:
    """Drain every failed host of ``report`` with its own ``clusterctl:`` reason; the drains made."""
    todo = drains(report)
    for d in todo:
        slurm.drain([d["name"]], d["reason"])
    return todo


def resume_ours(slurm: SlurmClient, requested: Sequence[str] | None = None) -> ResumePlan:
    """Resume the nodes clusterctl drained (of ``requested``, or all); the plan says what was left alone."""
    from ccparse import registry

    from clusterctl.errors import SlurmError

    if "scontrol-node" not in registry.kinds():
        raise SlurmError("the scontrol-node parser is not available")
    plan = select_resumable(nodes_from_parsed(registry.parse("scontrol-node", slurm.show_nodes())), requested)
    if plan.resume:
        slurm.resume(plan.resume)
    return plan
