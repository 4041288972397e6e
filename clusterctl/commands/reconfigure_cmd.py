"""clusterctl reconfigure: apply one component's change to a live cluster, safely."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clusterctl.app import app, examples
from clusterctl.commands.common import (
    InventoryArg,
    JsonOpt,
    ansible_command,
    choices,
    emit_json,
    result_dict,
    result_line,
)
from clusterctl.commands.provision_cmd import print_plan, run_site
from clusterctl.display import console, err_console
from clusterctl.errors import EXIT_OK
from clusterctl.inventory import Inventory, load_checked
from clusterctl.rollout import COMPONENTS, Rollout, batches, plan_rollout
from clusterctl.runner import RunResult, inventory_lock
from clusterctl.slurm import Slurm

if TYPE_CHECKING:  # a choice of values known at run time
    Component = enum.Enum
else:
    Component = choices("Component", COMPONENTS)

EXAMPLES = """Examples:

  clusterctl reconfigure inventories/prod --component nccl

  clusterctl reconfigure inventories/prod --component slurm --batch 25% --plan

  clusterctl reconfigure inventories/prod --component roce --batch 2 --drain-timeout 1800 --json

  clusterctl reconfigure inventories/prod --component gpu --batch 2 -e nvidia_gpu_allow_driver_change=true
"""


@app.command(epilog=examples(EXAMPLES))
@ansible_command
def reconfigure(
    inventory: InventoryArg,
    component_: Annotated[Component, typer.Option("--component", "-c", help="The component whose roles run")],
    batch: Annotated[str | None, typer.Option("--batch", help="Hosts drained at a time: N or P% (default 1)")] = None,
    drain_timeout: Annotated[int, typer.Option(help="Seconds to wait for a drained batch's jobs to end")] = 3600,
    dry_run: Annotated[bool, typer.Option("--plan", help="Only show what would change and how it would roll out")]
    = False,
    as_json: JsonOpt = False,
) -> None:
    """Apply only COMPONENT's roles. Disruptive changes roll out in drained batches; others in place.

    A change is disruptive when its task or handler declares a change kind (docs/CHANGE_KINDS.md).
    Nodes drained or down for another reason are changed with their batch but neither drained nor resumed.
    """
    component = component_.value
    inv = load_checked(inventory)
    batches(inv.groups.get("slurm_compute", []), batch)  # a bad --batch is refused before anything runs
    if dry_run:
        _reconfigure(inventory, inv, component, batch, drain_timeout, dry_run, as_json)
        return
    with inventory_lock(inventory, f"reconfigure --component {component}"):  # once the input is checked
        _reconfigure(inventory, inv, component, batch, drain_timeout, dry_run, as_json)


def _reconfigure(inventory: Path, inv: Inventory, component: str, batch: str | None, drain_timeout: int,
                 dry_run: bool, as_json: bool) -> None:
    comp = COMPONENTS[component]
    compute = inv.groups.get("slurm_compute", [])
    plan = run_site(inventory, label=f"plan-{component}", tags=comp.tags, check=True, diff=True)
    out: dict[str, object] = {"component": component, "plan": result_dict(plan)}
    if plan.exit_code:
        print_plan(plan)
        err_console.print("clusterctl: the plan failed or is incomplete; nothing was changed")
        if as_json:
            emit_json({**out, "done": False}, exit_code=plan.exit_code)
        raise typer.Exit(plan.exit_code)
    print_plan(plan)
    if not plan.changes:
        result_line(f"reconfigure {component}: nothing to change")
        if component == "gpu":
            console.print("  (a driver version change needs nvidia_gpu_allow_driver_change=true, a kernel not yet "
                          "installed nvidia_gpu_allow_kernel_change=true, in the inventory or with -e; without it "
                          "the role keeps the installed driver and kernel pin)")
        if as_json:
            emit_json({**out, "done": True}, exit_code=EXIT_OK)
        raise typer.Exit(EXIT_OK)
    rollout = plan_rollout(component, plan.changed_at, compute, batch)
    out["rollout"] = rollout.to_dict()
    console.print(f"reconfigure {component}: {comp.why}")
    console.print(f"  in place (no drain): {', '.join(rollout.in_place) or '-'}")
    for i, b in enumerate(rollout.batches, 1):
        console.print(f"  batch {i}/{len(rollout.batches)} (drain): {', '.join(b)}")
        for h in b:
            console.print(f"    {h}: {'; '.join(map(str, rollout.disruptive[h]))}", markup=False)
    if dry_run:
        if as_json:
            emit_json({**out, "done": False}, exit_code=EXIT_OK)
        raise typer.Exit(EXIT_OK)
    if rollout.in_place:
        res = run_site(inventory, label=f"reconfigure-{component}", tags=comp.tags, limit=",".join(rollout.in_place))
        if res.exit_code:
            err_console.print(f"clusterctl: in-place change failed on {', '.join(res.problem_hosts)}; "
                          "no batch was drained; fix and re-run")
            if as_json:
                emit_json({**out, "in_place_run": result_dict(res), "done": False}, exit_code=res.exit_code)
            raise typer.Exit(res.exit_code)

    def apply(nodes: list[str], index: int) -> RunResult:
        return run_site(inventory, label=f"reconfigure-{component}-b{index}", tags=comp.tags, limit=",".join(nodes))

    if rollout.batches:
        from clusterctl.verify import quick_verify

        Rollout(Slurm(inventory), component, apply, lambda line: console.print(line, markup=False),
                drain_timeout=drain_timeout, verify=lambda nodes: quick_verify(inventory, inv, nodes)).run(rollout)
    result_line(f"reconfigure {component}: done")
    if as_json:
        emit_json({**out, "done": True}, exit_code=EXIT_OK)

