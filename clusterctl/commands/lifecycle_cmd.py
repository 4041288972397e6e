"""clusterctl remediate (the node lifecycle loop) and clusterctl nodes (every node's lifecycle state)."""

from __future__ import annotations

import contextlib
import enum
import time
from typing import TYPE_CHECKING, Annotated

import typer

from clusterctl.app import EXIT_OK, app, examples
from clusterctl.commands.common import InventoryArg, JsonOpt, ansible_command, choices, emit_json, result_line
from clusterctl.display import console
from clusterctl.lifecycle.probes import BURN_IN, REVERIFY

if TYPE_CHECKING:  # a choice of values known at run time
    Reverify = enum.Enum
    BurnInLevel = enum.Enum
else:
    Reverify = choices("Reverify", REVERIFY)
    BurnInLevel = choices("BurnInLevel", BURN_IN)
QUICK = Reverify("quick")
FULL = BurnInLevel("full")

REMEDIATE_EXAMPLES = """Examples:

  clusterctl remediate inventories/prod --once --dry-run     # what it would do now

  clusterctl remediate inventories/prod --once               # what the controller's timer runs

  clusterctl remediate inventories/prod --share 0.1 --window 172800 --interval 300
"""

NODES_EXAMPLES = """Examples:

  clusterctl nodes inventories/prod

  clusterctl nodes inventories/prod --json | jq '.nodes[] | select(.state != "in_service")'
"""


@app.command("remediate", epilog=examples(REMEDIATE_EXAMPLES))
@ansible_command
def remediate_command(
    inventory: InventoryArg,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print (and log) what it would do; change nothing")]
    = False,
    once: Annotated[bool, typer.Option("--once", help="One run of the loop, then exit (the timer's way)")] = False,
    interval: Annotated[int, typer.Option("--interval", min=10, help="Seconds between runs without --once")] = 300,
    share: Annotated[float, typer.Option("--share", min=0.01, max=1.0, help="Share of each partition's nodes "
                                         "remediated at once (floor)")] = 0.25,
    window: Annotated[int, typer.Option("--window", min=0, help="Seconds after a resume in which a new failure "
                                        "quarantines the node")] = 86400,
    reverify: Annotated[Reverify, typer.Option("--reverify", help="node: the node check; quick: the node check "
                                               "and the quick verify")] = QUICK,
    burn_in: Annotated[bool, typer.Option("--burn-in/--no-burn-in", help="The burn-in gate: nodes that join or "
                                          "return with another hardware identity stay drained until verified")]
    = True,
    burn_in_level: Annotated[BurnInLevel, typer.Option(
        "--burn-in-level", help="The burn-in gate's checks: node (the node check), quick (and the quick verify) or "
        "full (and a full verify with a known-good idle partner: DCGM, nccl-tests, pair tests)")]
    = FULL,
    as_json: JsonOpt = False,
) -> None:
    """Drain -> remediate -> re-verify -> resume for nodes clusterctl drained; never touches other drains."""
    from clusterctl.inventory import load_checked
    from clusterctl.lifecycle import core, flow, probes
    from clusterctl.runner import inventory_lock
    from clusterctl.slurm import Slurm

    load_checked(inventory)
    cfg = core.Config(share=share, window_s=float(window))
    store = flow.store_for(inventory)
    verify, reset = probes.node_check_verifier(inventory, level=reverify.value), probes.gpu_resetter(inventory)
    identify = probes.identifier(inventory) if burn_in else None
    burn_verify = probes.burn_in_verifier(inventory, level=burn_in_level.value)
    runs = []
    while True:
        with contextlib.nullcontext() if dry_run else inventory_lock(inventory, "remediate"):  # each run
            report = flow.remediate(Slurm(inventory), store, cfg, verify=verify, reset=reset, identify=identify,
                                    burn_verify=burn_verify, dry_run=dry_run)
        runs.append(report.to_dict())
        for s in report.steps:
            word = "would " + s.action.kind if dry_run else f"{s.action.kind} {s.outcome}"
            console.print(f"{s.action.node}: {word}: {s.action.reason or s.evidence}", markup=False)
        if not report.steps:
            console.print("nothing to do", markup=False)
        if once or dry_run:
            break
        time.sleep(interval)
    result_line(f"remediate: {sum(len(r.get('steps', [])) for r in runs)} step(s); log: {store.actions_file}")
    if as_json:
        emit_json({"runs": runs, "log": str(store.actions_file)}, exit_code=EXIT_OK)
    raise typer.Exit(EXIT_OK)


@app.command("nodes", epilog=examples(NODES_EXAMPLES))
@ansible_command
def nodes_command(inventory: InventoryArg, as_json: JsonOpt = False) -> None:
    """Every Slurm node's lifecycle state (in service, drained by clusterctl and why, remediating,
    quarantined, burn-in, admin-drained) with its last evidence."""
    from clusterctl.inventory import load_checked
    from clusterctl.lifecycle import flow
    from clusterctl.slurm import Slurm

    load_checked(inventory)
    rows = flow.nodes(Slurm(inventory), flow.store_for(inventory))
    if as_json:
        emit_json({"nodes": [r.to_dict() for r in rows]}, exit_code=EXIT_OK)
    for r in rows:
        extra = f" [{r.remedy}]" if r.remedy else ""
        why = f": {r.reason}" if r.reason else ""
        ev = f" (evidence: {r.evidence})" if r.evidence else ""
        result_line(f"{r.name:<20} {r.state:<14} {r.slurm_state}{why}{extra}{ev}")
    raise typer.Exit(EXIT_OK)
