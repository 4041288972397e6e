"""clusterctl reconfigure: apply one component's change to a live cluster, safely."""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import Annotated

import typer

from clusterctl.app import EXIT_BAD_INPUT, EXIT_HOSTS_FAILED, EXIT_OK, app
from clusterctl.commands.inventory_check import load_and_validate
from clusterctl.commands.provision_cmd import InventoryArg, print_plan, run_site
from clusterctl.display import console, err_console
from clusterctl.inventory import Inventory
from clusterctl.rollout import COMPONENTS, BatchSpecError, batches, disruptive_hosts, held_by_others, wait_fit
from clusterctl.runner import run_module

REASON_PREFIX = "clusterctl:"


class SlurmCtl:
    """Slurm node state changes, run on the controller through Ansible."""

    def __init__(self, inventory: Path, inv: Inventory) -> None:
        self.inventory = inventory
        self.controller = inv.groups["slurm_controller"][0]

    def sh(self, command: str) -> tuple[int, str]:
        res = run_module(self.inventory, self.controller, "ansible.builtin.shell", command).get(self.controller, {})
        return int(res.get("rc", 1)), str(res.get("stdout", "")) + str(res.get("stderr", ""))

    def drain(self, nodes: list[str], reason: str) -> None:
        rc, out = self.sh(f"scontrol update NodeName={','.join(nodes)} State=DRAIN Reason={shlex.quote(reason)}")
        if rc:
            raise RuntimeError(f"draining {','.join(nodes)} failed: {out.strip()}")

    def resume(self, nodes: list[str]) -> None:
        rc, out = self.sh(f"scontrol update NodeName={','.join(nodes)} State=RESUME")
        if rc:
            raise RuntimeError(f"resuming {','.join(nodes)} failed: {out.strip()}")

    def jobs_on(self, nodes: list[str]) -> list[str]:
        rc, out = self.sh(f"squeue -h -w {','.join(nodes)} -o %i")
        if rc:
            raise RuntimeError(f"squeue failed on {self.controller}: {out.strip()}")
        return out.split()

    def node_info(self, nodes: list[str]) -> dict[str, tuple[str, str]]:
        """Node -> (sinfo %T state, %E reason); one line per node even in several partitions."""
        rc, out = self.sh(f"sinfo -h -N -n {','.join(nodes)} -o '%N|%T|%E'")
        if rc:
            raise RuntimeError(f"sinfo failed on {self.controller}: {out.strip()}")
        info: dict[str, tuple[str, str]] = {}
        for line in out.splitlines():
            parts = line.strip().split("|", 2)
            if len(parts) == 3:
                info[parts[0]] = (parts[1], parts[2])
        return info

    def node_states(self, nodes: list[str]) -> dict[str, str]:
        return {n: state for n, (state, _) in self.node_info(nodes).items()}


@app.command()
def reconfigure(
    inventory: InventoryArg,
    component: Annotated[str, typer.Option("--component", "-c", help="nccl, roce, slurm, storage or rdma")],
    batch: Annotated[str | None, typer.Option("--batch", help="Hosts drained at a time: N or P% (default 1)")] = None,
    drain_timeout: Annotated[int, typer.Option(help="Seconds to wait for a drained batch's jobs to end")] = 3600,
    dry_run: Annotated[bool, typer.Option("--plan", help="Only show what would change and how it would roll out")]
    = False,
) -> None:
    """Apply only COMPONENT's roles. Disruptive changes roll out in drained batches; others in place.

    Nodes drained or down for another reason are changed with their batch but neither drained nor resumed.
    """
    comp = COMPONENTS.get(component)
    if comp is None:
        err_console.print(f"clusterctl: --component {component!r}: expected one of {', '.join(COMPONENTS)}")
        raise typer.Exit(EXIT_BAD_INPUT)
    inv = load_and_validate(inventory)
    try:
        batches([], batch)
        batches(inv.groups.get("slurm_compute", []), batch)
    except BatchSpecError as exc:
        err_console.print(f"clusterctl: {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    plan = run_site(inventory, label=f"plan-{component}", tags=comp.tags, check=True, diff=True)
    if plan.exit_code:
        err_console.print("clusterctl: the plan failed; nothing was changed")
        raise typer.Exit(plan.exit_code)
    print_plan(plan)
    if not plan.changes:
        console.print(f"reconfigure {component}: nothing to change")
        raise typer.Exit(EXIT_OK)
    compute = set(inv.groups.get("slurm_compute", []))
    disruptive = {h: t for h, t in disruptive_hosts(comp, plan.changes).items() if h in compute}
    in_place = sorted(h for h in plan.changes if h not in disruptive)
    order = [h for h in inv.groups.get("slurm_compute", []) if h in disruptive]
    rollout = batches(order, batch)
    console.print(f"reconfigure {component}: {comp.why}")
    console.print(f"  in place (no drain): {', '.join(in_place) or '-'}")
    for i, b in enumerate(rollout, 1):
        console.print(f"  batch {i}/{len(rollout)} (drain): {', '.join(b)}")
    if dry_run:
        raise typer.Exit(EXIT_OK)
    if in_place:
        res = run_site(inventory, label=f"reconfigure-{component}", tags=comp.tags, limit=",".join(in_place))
        if res.exit_code:
            err_console.print(f"clusterctl: in-place change failed on {', '.join(res.problem_hosts)}; "
                              "no batch was drained; fix and re-run")
            raise typer.Exit(res.exit_code)
    if rollout:
        _roll(inventory, inv, component, rollout, drain_timeout)
    console.print(f"reconfigure {component}: done")


def _roll(inventory: Path, inv: Inventory, component: str, rollout: list[list[str]], drain_timeout: int) -> None:
    slurm = SlurmCtl(inventory, inv)
    for i, nodes in enumerate(rollout, 1):
        label = f"batch {i}/{len(rollout)} ({', '.join(nodes)})"
        untouched = ", ".join(h for b in rollout[i:] for h in b) or "-"
        drained: list[str] = []
        try:
            _roll_batch(inventory, slurm, component, i, label, nodes, untouched, drain_timeout, drained)
        except RuntimeError as exc:
            err_console.print(f"clusterctl: {label}: {exc}; rollout stopped; drained by this rollout: "
                              f"{', '.join(drained) or 'see sinfo'} (reason '{REASON_PREFIX} ...', "
                              f"`clusterctl resume` returns them); untouched: {untouched}")
            raise typer.Exit(EXIT_HOSTS_FAILED) from None


def _roll_batch(inventory: Path, slurm: SlurmCtl, component: str, index: int, label: str, nodes: list[str],
                untouched: str, drain_timeout: int, drained: list[str]) -> None:
    """Drain, wait, apply, verify, resume one batch (``drained`` gets the nodes this rollout drained);
    ``typer.Exit`` when the rollout must stop, ``RuntimeError`` when a Slurm command failed."""
    reason = f"{REASON_PREFIX} reconfigure {component}"
    held = held_by_others(slurm.node_info(nodes), REASON_PREFIX + " reconfigure")
    ours = [n for n in nodes if n not in held]
    for n, why in held.items():
        console.print(f"{label}: {n} is already out of service ({why}): changed, but neither drained nor resumed "
                      "by this rollout")
    if ours:
        console.print(f"{label}: draining {', '.join(ours)}")
        slurm.drain(ours, reason)
        drained.extend(ours)
    deadline = time.monotonic() + drain_timeout
    jobs = slurm.jobs_on(nodes)
    while jobs and time.monotonic() < deadline:
        console.print(f"{label}: waiting for job(s) {', '.join(jobs)} to end")
        time.sleep(min(10.0, max(1.0, deadline - time.monotonic())))
        jobs = slurm.jobs_on(nodes)
    if jobs:
        if ours:
            slurm.resume(ours)
            drained.clear()
        err_console.print(f"clusterctl: {label}: job(s) {', '.join(jobs)} still running after {drain_timeout}s "
                          f"(--drain-timeout); batch resumed unchanged; rollout stopped; untouched: {untouched}")
        raise typer.Exit(EXIT_HOSTS_FAILED)
    res = run_site(inventory, label=f"reconfigure-{component}-b{index}",
                   tags=COMPONENTS[component].tags, limit=",".join(nodes))
    if res.exit_code:
        err_console.print(f"clusterctl: {label}: apply failed on {', '.join(res.problem_hosts)}; the batch stays "
                          f"drained (reason '{reason}'); rollout stopped; untouched: {untouched}")
        raise typer.Exit(res.exit_code)
    bad = wait_fit(ours, lambda: slurm.node_states(nodes))
    if bad:
        err_console.print(f"clusterctl: {label}: verify failed: "
                          f"{', '.join(f'{n} {s}' for n, s in sorted(bad.items()))}; batch stays drained "
                          f"(reason '{reason}'); rollout stopped; untouched: {untouched}")
        raise typer.Exit(EXIT_HOSTS_FAILED)
    if ours:
        slurm.resume(ours)
        drained.clear()
        bad = wait_fit(ours, lambda: slurm.node_states(nodes))
        if bad:
            err_console.print(f"clusterctl: {label}: resumed, but not fit: "
                              f"{', '.join(f'{n} {s}' for n, s in sorted(bad.items()))}; rollout stopped; "
                              f"untouched: {untouched}")
            raise typer.Exit(EXIT_HOSTS_FAILED)
    console.print(f"{label}: changed, verified, resumed")
