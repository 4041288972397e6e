"""Step 3 of verify: act on the judgement. Drain the failed nodes in Slurm (each with its own
``clusterctl:`` reason), return to service the nodes clusterctl drained, and the quick verify a
rollout runs on a batch after its change."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from clusterctl.analysis.engine import analyze_dir
from clusterctl.analysis.expectations import build
from clusterctl.inventory import Inventory, load_checked
from clusterctl.slurm_drain import ResumePlan, SlurmClient, drain_failed, resume_ours
from clusterctl.verify.analyse import Verification
from clusterctl.verify.collect import collect, plan


def _slurm(inventory: Path) -> SlurmClient:
    from clusterctl.slurm import Slurm

    return Slurm(inventory)


def drain(v: Verification, slurm: SlurmClient | None = None) -> list[dict[str, str]]:
    """Drain every failed node of the report (``slurm``: default the inventory's controller);
    the drains made, also kept in ``v.drained``. Nothing is asked of Slurm when none failed."""
    if v.report.failed:
        v.drained = drain_failed(slurm or _slurm(v.collection.plan.inventory), v.report)
    return v.drained


def resume(inventory: Path, nodes: Sequence[str] | None = None, slurm: SlurmClient | None = None) -> ResumePlan:
    """Return to service the nodes clusterctl drained (of ``nodes``, default all of them); nodes an
    admin drained are left alone and named in the plan."""
    load_checked(inventory)
    return resume_ours(slurm or _slurm(inventory), list(nodes) if nodes else None)


def quick_verify(inventory: Path, inv: Inventory, nodes: list[str]) -> dict[str, str]:
    """``clusterctl verify --level quick`` on ``nodes`` only: node -> why it failed ({} if none did).

    A node without evidence (collection failed, unreachable) fails too. Run after a batch's reboot.
    """
    p = plan(inventory, hosts=",".join(nodes), limit=",".join(nodes), inv=inv,
             name=f"reconfigure-{time.strftime('%Y%m%dT%H%M%S')}-{nodes[0]}")
    col = collect(p, label="reconfigure-verify")
    report = analyze_dir(col.evidence, build(inv.spec()))
    out: dict[str, str] = {}
    for n in nodes:
        host = report.hosts.get(n)
        if host is None:
            out[n] = f"no evidence collected (see {col.evidence})"
        elif host.status == "failed":
            why = "; ".join(f"{f.check}: {f.message}" for f in host.findings if f.severity == "critical")
            out[n] = why[:300] or "failed"
    return out
