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

from clusterctl.analysis.model import NOTHING, CheckResult, Finding, Severity, check
from clusterctl.analysis.severity import sev as rule_sev

#: drain/down reasons that name lost or failed hardware (Slurm's own 'gres/gpu count reported lower
#: than configured', 'Low RealMemory', health-check words): the node must not run the next job
LOST_HARDWARE = re.compile(
    r"gres/gpu count|count reported lower|Low (?:RealMemory|socket|CPUs?)|\bXid\b|\bECC\b|"
    r"fallen off|off the bus|\bGPU\s*(?:\d+\s*)?(?:lost|missing|gone|dead|fail|error|down)|"
    r"(?:lost|missing|dead|failed|bad)\s+(?:GPU|HCA|IB|DIMM|memory|NIC)|\b(?:HCA|IB|mlx5_\d+)\b.{0,20}\bdown\b|"
    r"row remap|retired pages|nvlink|"
    # a site health check's tag naming the GPU stack it failed ('health_cuda___nvidia', 'nhc_gpu')
    r"(?:health|nhc)[\W_]{0,4}\w{0,20}?(?:cuda|nvidia|gpu)",
    re.IGNORECASE)
#: the reason slurmctld itself sets on a node it cannot reach ('Not responding'; 'issue-6277 : Not res' where
#: sinfo -R's 20-character REASON column cut an admin's reason with it appended)
_NOT_RESPONDING = re.compile(r"\bNot respond(?:ing)?\b|\bNot res(?:p|po|pon|pond|pondi|pondin)?$", re.IGNORECASE)


def _lost_hardware(reason: str) -> bool:
    """The reason names lost or failed hardware (:data:`LOST_HARDWARE`), also where the admin wrote it with
    underscores for spaces, as a shell argument without quotes needs ('scontrol update ... reason=Xid_79_GPU_lost')."""
    if LOST_HARDWARE.search(reason):
        return True
    return "_" in reason and bool(LOST_HARDWARE.search(reason.replace("_", " ")))


_CRITICAL = {"down", "fail", "failing", "failg"}
_WARNING = {"drain", "drained", "draining", "drng", "inval", "unknown", "unk"}


def _judge(host: str, node: str, base: str, not_responding: bool, detail: str, kind: str,
           noun: str = "node ") -> list[Finding]:
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
    if b in _WARNING and not not_responding and _lost_hardware(detail[:600]):
        sev, why = rule_sev("slurm_node_state.lost_hardware"), f"{b}: the reason names lost or failed hardware"
    return [Finding(host, "slurm_node_state", sev, node, f"{kind}: {noun}{node} {why}{detail}")]


def _aiot_findings(host: str, counts: list[Mapping[str, Any]]) -> list[Finding]:
    """A summary's counts (``sinfo -s`` NODES(A/I/O/T), ``%C`` CPUS(A/I/O/T)): a partition not up, and nodes or CPUs
    counted Other (down, drained or failing: out of service; the format names neither the nodes nor their state)."""
    out = [Finding(host, "slurm_partition", rule_sev("slurm_partition.down"), str(c["partition"]),
                   f"sinfo: partition {c['partition']} is {c['avail']}")
           for c in counts if c.get("avail") and str(c["avail"]).lower() != "up"]
    other = [c for c in counts if c["other"] > 0]
    if other:
        said = ", ".join(f"{c['partition']} {c['allocated']}/{c['idle']}/{c['other']}/{c['total']}" for c in other[:6])
        out.append(Finding(host, "slurm_node_state", rule_sev("slurm_node_state.other_counted"), host,
                           f"sinfo: {sum(c['other'] for c in other)} {other[0]['counted']} counted Other (down, "
                           f"drained or failing: out of service) in {len(other)} partition(s) ({said}; A/I/O/T; "
                           "partitions may share nodes); the format names neither the nodes nor their state: "
                           "'sinfo -R' says which and why"))
    return out


@check("sinfo")
def judge_sinfo(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    if data.get("empty_partitions") and not data.get("nodes"):
        # 'compute* up infinite 0 n/a': Slurm knows no node in the partition; no node state to judge
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}sinfo: partition(s) {', '.join(data['empty_partitions'])} hold no "
                                    "node: no node state to judge"))
    if data.get("no_state_column"):
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}sinfo: its format prints no STATE column: no node state to judge"))
    for r in data.get("partitions") or []:
        if str(r.get("avail", "up")).lower() != "up":
            res.findings.append(Finding(host, "slurm_partition", rule_sev("slurm_partition.down"),
                                        str(r.get("partition")),
                                        f"sinfo: partition {r.get('partition')} is {r.get('avail')}"))
    for c in data.get("state_counts") or []:
        # 'sinfo -h -o %D,%T': nodes counted by state, not named; each count judged as a node in that state would be
        res.findings += _judge(host, f"{c['count']} node(s)", c["base_state"], "not_responding" in c["flags"],
                               f" (sinfo state {c['state']}; the format names no node)", "sinfo", noun="")
    res.findings += _aiot_findings(host, data.get("aiot_counts") or [])
    for node, n in sorted((data.get("nodes") or {}).items()):
        states = ", ".join(x for x in n.get("states") or [] if x)
        lists = [x for x in n.get("nodelists") or [] if x != node]
        # 'sinfo -R' names no state: sinfo(1) lists only nodes down, drained, fail or failing (judged as drained
        # at least; its reason can still name lost hardware)
        detail = (f" (sinfo state {states}" if states else " (listed by sinfo -R: down, drained, fail or failing") + (
            f", NODELIST {', '.join(lists)}" if lists else "") + (
            f", reason {'; '.join(n['reasons'])}" if n.get("reasons") else "") + ")"
        # sinfo -R shows no state, but a reason of slurmctld's own says the node is not responding
        not_responding = bool(n.get("not_responding")) or (not states and any(
            _NOT_RESPONDING.search(str(r)[:200]) for r in n.get("reasons") or []))
        for base in n.get("base_states") or []:
            found = _judge(host, node, base or "drain", not_responding, detail, "sinfo")
            if found:
                res.findings += found
                break
        else:
            if not_responding:
                res.findings += _judge(host, node, "", True, detail, "sinfo")
    return res


@check("scontrol-node")
def judge_scontrol_node(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    for n in data.get("nodes") or []:
        state = n.get("state")
        if not state and n.get("reason"):
            # a grep'd excerpt without State= but with the node's Reason=: Slurm keeps a reason only on a node down,
            # drained or failing (scontrol(1); resuming it clears the reason): judged as drained at least
            reason = str(n["reason"])
            res.findings += _judge(host, str(n.get("name") or host), "drain",
                                   bool(_NOT_RESPONDING.search(reason[:200])),
                                   f" (no State= in the excerpt; a reason is kept only on a node down, drained or "
                                   f"failing: {reason})", "scontrol")
            continue
        if not state:
            continue  # a grep'd excerpt without State=
        base = str(n.get("base_state") or "")
        first = state.split("+", 1)[0]
        not_responding = first.endswith("*") or "NOT_RESPONDING" in (n.get("state_flags") or [])
        reason = f", reason: {n['reason']}" if n.get("reason") else ""
        name = str(n.get("name") or host)  # a grep'd excerpt names no node: the host it came from
        found = _judge(host, name, base, not_responding, f" (State={state}{reason})", "scontrol")
        if not found and n.get("drain"):
            found = _judge(host, name, "drain", False, f" (State={state}{reason})", "scontrol")
        res.findings += found
    res.findings += _gres_below(host, data.get("nodes") or [], exp)
    return res


#: a GPU GRES of ``Gres=`` (``gpu:h100:8(S:0-1)``, ``gpu:4``, ``gpu:hopper:4(S:0-7)``): its count
_GPU_GRES = re.compile(r"(?:^|,)gpu(?::[A-Za-z_][\w.-]{0,40})?:(\d{1,4})")


def _gpu_gres(gres: Any) -> int:
    return sum(int(n) for n in _GPU_GRES.findall(str(gres or "")))


def _gres_below(host: str, nodes: list[Mapping[str, Any]], exp: Mapping[str, Any]) -> list[Finding]:
    """Nodes whose ``Gres=`` registers fewer GPUs than ``gpus_per_node``: Slurm places no GPU job beyond what the
    node registered (gres.conf / slurm.conf not matching the node). A node with no GPU GRES counts only where no
    node of the capture has one (else it is a CPU node beside GPU nodes)."""
    want = int(exp.get("gpus_per_node") or 0)
    listed = [n for n in nodes if n.get("state") and "Gres" in (n.get("fields") or {})]  # a grep'd excerpt: none
    if want <= 0 or not listed:
        return []
    any_gpu = any(_gpu_gres(n.get("gres")) for n in listed)
    out = []
    for n in listed:
        have = _gpu_gres(n.get("gres"))
        if have < want and (have or not any_gpu):
            name = str(n.get("name") or host)  # a grep'd excerpt names no node: the host it came from
            out.append(Finding(host, "slurm_gres", rule_sev("slurm_gres.gpu_below_expected"), name,
                               f"scontrol: node {name} registers {have} GPU(s) in Slurm "
                               f"(Gres={n.get('gres')}), {want} expected (gpus_per_node): GPU jobs cannot use the "
                               "rest; check gres.conf and the node's Gres in slurm.conf"))
    return out
