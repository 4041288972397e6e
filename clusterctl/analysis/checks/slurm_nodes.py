"""Slurm node states as ``sinfo`` and ``scontrol show node`` report them (issue 14: a KIND that
carries a state is judged).

Names every node that cannot take jobs: down, failed or not responding (``*``) nodes are
critical; drained/draining nodes (an admin's or a health check's decision, reason shown) and
nodes in an unknown/invalid state are warnings, unless the reason names lost or failed hardware
(:data:`LOST_HARDWARE`: ``gres/gpu count reported lower than configured``, Xid, ECC, a GPU or HCA
lost or down; severity.yml ``slurm_node_state.lost_hardware``), which is critical; a partition
whose AVAIL is not ``up`` is a warning. Allocated, mixed, idle, completing, reserved and powered-off
cloud nodes (``idle~``) are normal. State names and suffixes: sinfo(1) "NODE STATE CODES", scontrol(1) ``State=``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clusterctl.analysis.model import CheckResult, Finding, Severity, check
from clusterctl.analysis.severity import sev as rule_sev

#: drain/down reasons that name lost or failed hardware (Slurm's own 'gres/gpu count reported lower
#: than configured', 'Low RealMemory', health-check words): the node must not run the next job
LOST_HARDWARE = re.compile(
    r"gres/gpu count|count reported lower|Low (?:RealMemory|socket|CPUs?)|\bXid\b|\bECC\b|"
    r"fallen off|off the bus|\bGPU\s*(?:\d+\s*)?(?:lost|missing|gone|dead|fail|error|down)|"
    r"(?:lost|missing|dead|failed|bad)\s+(?:GPU|HCA|IB|DIMM|memory|NIC)|\b(?:HCA|IB|mlx5_\d+)\b.{0,20}\bdown\b|"
    r"row remap|retired pages|nvlink",
    re.IGNORECASE)

_CRITICAL = {"down", "fail", "failing", "failg"}
_WARNING = {"drain", "drained", "draining", "drng", "inval", "unknown", "unk"}


def _judge(host: str, node: str, base: str, not_responding: bool, detail: str, kind: str) -> list[Finding]:
    b = base.lower()
    sev: Severity | None = None
    why = ""
    if b in _CRITICAL:
        sev, why = rule_sev("slurm_node_state.down"), f"{b}: takes no jobs"
    elif not_responding:
        sev, why = rule_sev("slurm_node_state.not_responding"), f"{b} and not responding (slurmd unreachable)"
    elif b in _WARNING:
        sev, why = rule_sev("slurm_node_state.drain"), f"{b}: takes no new jobs"
    if sev is None:
        return []
    if b in _WARNING and not not_responding and LOST_HARDWARE.search(detail[:600]):
        sev, why = rule_sev("slurm_node_state.lost_hardware"), f"{b}: the reason names lost or failed hardware"
    return [Finding(host, "slurm_node_state", sev, node, f"{kind}: node {node} {why}{detail}")]


@check("sinfo")
def judge_sinfo(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    for r in data.get("partitions") or []:
        if str(r.get("avail", "up")).lower() != "up":
            res.findings.append(Finding(host, "slurm_partition", rule_sev("slurm_partition.down"),
                                        str(r.get("partition")),
                                        f"sinfo: partition {r.get('partition')} is {r.get('avail')}"))
    for node, n in sorted((data.get("nodes") or {}).items()):
        states = ", ".join(x for x in n.get("states") or [] if x)
        lists = [x for x in n.get("nodelists") or [] if x != node]
        # 'sinfo -R' names no state: sinfo(1) lists only nodes down, drained, fail or failing (judged as drained
        # at least; its reason can still name lost hardware)
        detail = (f" (sinfo state {states}" if states else " (listed by sinfo -R: down, drained, fail or failing") + (
            f", NODELIST {', '.join(lists)}" if lists else "") + (
            f", reason {'; '.join(n['reasons'])}" if n.get("reasons") else "") + ")"
        for base in n.get("base_states") or []:
            found = _judge(host, node, base or "drain", bool(n.get("not_responding")), detail, "sinfo")
            if found:
                res.findings += found
                break
        else:
            if n.get("not_responding"):
                res.findings += _judge(host, node, "", True, detail, "sinfo")
    return res


@check("scontrol-node")
def judge_scontrol_node(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    for n in data.get("nodes") or []:
        state = n.get("state")
        if not state:
            continue  # a grep'd excerpt without State=
        base = str(n.get("base_state") or "")
        first = state.split("+", 1)[0]
        not_responding = first.endswith("*") or "NOT_RESPONDING" in (n.get("state_flags") or [])
        reason = f", reason: {n['reason']}" if n.get("reason") else ""
        found = _judge(host, str(n.get("name")), base, not_responding, f" (State={state}{reason})", "scontrol")
        if not found and n.get("drain"):
            found = _judge(host, str(n.get("name")), "drain", False, f" (State={state}{reason})", "scontrol")
        res.findings += found
    return res
