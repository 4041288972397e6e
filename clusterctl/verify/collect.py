"""Step 1 of verify: check the arguments and the inventory, then capture evidence on the nodes.

:func:`plan` refuses bad input before anything runs (:class:`~clusterctl.errors.UsageError`,
:class:`~clusterctl.inventory.InventoryError`); :func:`collect` runs ``playbooks/verify.yml``, which
writes ``<evidence>/<host>/<KIND>.txt`` (+ ``_collect.json``, ``_parsed.json``) on this machine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from clusterctl.errors import UsageError
from clusterctl.inventory import Inventory, hosts_matching, load_checked, require_decrypted
from clusterctl.runner import EventHandler, RunResult, run_playbook, state_dir

#: ``--level``: quick reads passively; full adds dcgmi diag, nccl-tests and the pairwise rounds
LEVELS = ("quick", "full")


@dataclass(frozen=True)
class VerifyPlan:
    """A checked verify run, not started: what is verified and where its evidence goes."""

    inventory: Path
    inv: Inventory
    level: str
    hosts: str  # Ansible pattern of the nodes verified (verify.yml's play hosts)
    evidence: Path  # the capture's folder (made by :func:`collect`)
    limit: str | None = None
    forks: int | None = None


def stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def plan(inventory: Path, *, level: str = "quick", hosts: str = "slurm_compute", limit: str | None = None,
         forks: int | None = None, name: str | None = None, inv: Inventory | None = None) -> VerifyPlan:
    """Check ``level`` and the inventory (``inv`` when the caller loaded it already); the evidence
    folder is ``<state dir>/evidence/<name>`` (default: a time stamp)."""
    if level not in LEVELS:
        raise UsageError(f"verify: --level {level!r} must be quick or full")
    inv = inv if inv is not None else load_checked(inventory)
    require_decrypted(inv)
    if inv.match is not None:  # a pattern that selects nothing runs nothing: exit 2, as --limit does
        selected = set(hosts_matching(inv, hosts, "--hosts"))
        if not selected:
            raise UsageError(f"verify: --hosts {hosts!r} matches no host of inventory {inventory}; nothing was run")
        if limit and not selected & set(hosts_matching(inv, limit)):
            raise UsageError(f"verify: --limit {limit!r} leaves no host of --hosts {hosts!r} in inventory "
                             f"{inventory}; nothing was run")
    evidence = state_dir(inventory) / "evidence" / (name or stamp())
    return VerifyPlan(inventory, inv, level, hosts, evidence, limit, forks)


@dataclass
class Collection:
    """The capture: its plan and the Ansible run that wrote the evidence folder."""

    plan: VerifyPlan
    run: RunResult

    @property
    def evidence(self) -> Path:
        return self.plan.evidence

    @property
    def collected(self) -> bool:
        """Some host wrote evidence (a folder)."""
        return self.evidence.is_dir() and any(self.evidence.iterdir())

    @property
    def verified(self) -> list[str]:
        """Inventory hosts (in inventory order) that have an evidence folder."""
        return [h for h in self.plan.inv.hosts if (self.evidence / h).is_dir()]

    @property
    def targets(self) -> list[str]:
        """Inventory hosts (in inventory order) the plan verifies: ``--hosts``, within ``--limit``."""
        inv, p = self.plan.inv, self.plan
        chosen = set(hosts_matching(inv, p.hosts, "--hosts"))
        if p.limit:
            chosen &= set(hosts_matching(inv, p.limit))
        return [h for h in inv.hosts if h in chosen]

    @property
    def unreachable(self) -> list[str]:
        """Hosts the capture could not reach or never got to."""
        return [h for h, s in self.run.hosts.items() if s.unreachable] + list(self.run.not_reached)


def collect(p: VerifyPlan, *, on_event: EventHandler | None = None, label: str = "verify") -> Collection:
    """Run ``playbooks/verify.yml`` on the plan's hosts; never raises for host failures (they are
    in :attr:`Collection.run`; a host without evidence is judged "no evidence")."""
    p.evidence.mkdir(parents=True, exist_ok=True)
    run = run_playbook("verify.yml", p.inventory, limit=p.limit, forks=p.forks, on_event=on_event, label=label,
                       extravars={"clusterctl_evidence_dir": str(p.evidence), "clusterctl_verify_level": p.level,
                                  "clusterctl_verify_hosts": p.hosts,
                                  "clusterctl_verify_judge": False})  # judged here, after the pair rounds
    return Collection(p, run)
