"""clusterctl verify (collect evidence, analyse, optionally drain) and clusterctl resume."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from clusterctl.app import EXIT_OK, app, examples
from clusterctl.commands.common import (
    InventoryArg,
    JsonOpt,
    JunitOpt,
    PromOpt,
    ansible_command,
    choices,
    emit_json,
    result_dict,
    result_line,
    write_exports,
)
from clusterctl.display import console, print_table
from clusterctl.verify.collect import LEVELS

if TYPE_CHECKING:
    from pathlib import Path

    from clusterctl.pairwise import Round
    from clusterctl.runner import RunResult
    from clusterctl.verify import VerifyPlan

if TYPE_CHECKING:  # a choice of values known at run time
    Level = enum.Enum
else:
    Level = choices("Level", LEVELS)
QUICK = Level("quick")

VERIFY_EXAMPLES = """Examples:

  clusterctl verify inventories/prod

  clusterctl verify inventories/prod --level full --drain

  clusterctl verify inventories/prod --limit 'gpu[01:08]' --json > verify.json
"""

RESUME_EXAMPLES = """Examples:

  clusterctl resume inventories/prod               # every node clusterctl drained

  clusterctl resume inventories/prod gpu07 gpu12 --json
"""



@app.command("verify", epilog=examples(VERIFY_EXAMPLES))
@ansible_command
def verify_command(
    inventory: InventoryArg,
    level: Annotated[Level, typer.Option("--level", help="quick: passive reads; full: + dcgmi diag, nccl-tests, "
                                                       "ib_write_bw on idle nodes")] = QUICK,
    drain: Annotated[bool, typer.Option("--drain", help="Drain failed nodes in Slurm (reason 'clusterctl: ...')")]
    = False,
    limit: Annotated[str | None, typer.Option("--limit", "-l", help="Ansible host pattern")] = None,
    forks: Annotated[int | None, typer.Option("--forks", "-f", min=1)] = None,
    hosts: Annotated[str, typer.Option("--hosts", help="Ansible pattern of the nodes to verify (pair tests "
                                                       "over them; 2-node nccl-tests only on slurm_compute)")]
    = "slurm_compute",
    as_json: JsonOpt = False,
    prom: PromOpt = None,
    junit: JunitOpt = None,
) -> None:
    """Collect evidence on every compute node, judge it, write JSON + HTML. Exit 0 healthy, 3 any failed
    (or with no evidence), 4 a node unreachable, 5 a node cannot be judged, 6 the inventory is busy."""
    from clusterctl import verify
    from clusterctl.runner import inventory_lock

    p = verify.plan(inventory, level=level.value, hosts=hosts, limit=limit, forks=forks)
    with inventory_lock(inventory, "verify"):
        _verify(inventory, p, drain, as_json, prom, junit)


def _verify(inventory: Path, p: VerifyPlan, drain: bool, as_json: bool, prom: Path | None,
            junit: Path | None) -> None:
    from clusterctl import verify
    from clusterctl.display import RunProgress, print_summary
    from clusterctl.report_table import findings_table, summary_line

    with RunProgress(len(p.inv.hosts)) as progress:
        col = verify.collect(p, on_event=progress)
    print_summary(col.run, f"verify {inventory} (collection)", command="verify", inventory=inventory)

    def round_start(label: str, rnd: Round) -> None:
        console.print(f"{label}: " + "; ".join(f"{t} " + ", ".join(f"{a}<->{b}" for a, b in ps)
                                               for t, ps in rnd.items()), markup=False)

    def round_failed(label: str, run: RunResult) -> None:
        print_summary(run, f"verify {inventory} ({label})", command="verify", inventory=inventory)

    v = verify.analyse(col, on_round_start=round_start, on_round_failed=round_failed)
    for line in v.pairwise.lines() if v.pairwise else ():
        console.print(line, markup=False)
    print_table(findings_table(v.report, f"verify {inventory}"))
    console.print(f"evidence: {col.evidence}\nreport: {v.report_json}  {v.report_html}")
    if drain:
        for d in verify.drain(v):
            console.print(f"drained {d['name']}: {d['reason']}", markup=False)
    result_line(summary_line(v.report))
    write_exports(v.report, prom, junit, drained=[d["name"] for d in v.drained])
    if prom is not None:
        _prom_on_nodes(p, v.report, col.evidence, [d["name"] for d in v.drained])
    if as_json:
        emit_json({"report": v.report.to_dict(), "collection": result_dict(col.run), "evidence": str(col.evidence),
                   "report_json": str(v.report_json), "drained": v.drained}, exit_code=v.exit_code)
    raise typer.Exit(v.exit_code)


def _prom_on_nodes(p: VerifyPlan, report: Any, evidence: Path, drained: list[str]) -> None:
    """``--prom``: each verified host with monitoring on gets its own part in its textfile folder too."""
    from clusterctl.report import node_textfiles

    folders = node_textfiles.targets(report.hosts, p.inv.host_vars)
    if not folders:
        return
    node_textfiles.write_local(report, folders, evidence / "prom", drained=drained)
    failed = node_textfiles.push(p.inventory, folders, evidence / "prom")
    for host, why in sorted(failed.items()):
        console.print(f"textfile not written on {host}: {why}", markup=False)
    console.print(f"textfile {node_textfiles.prom.TEXTFILE} written on {len(folders) - len(failed)} of "
                  f"{len(folders)} hosts", markup=False)


@app.command("resume", epilog=examples(RESUME_EXAMPLES))
@ansible_command
def resume_command(
    inventory: InventoryArg,
    nodes: Annotated[list[str] | None, typer.Argument(help="Nodes to resume (default: every node clusterctl "
                                                            "drained)")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Return to service nodes drained by clusterctl (reason 'clusterctl: ...'), never admin-drained ones."""
    from clusterctl import verify

    plan = verify.resume(inventory, nodes)
    for name, why in sorted(plan.refused.items()):
        console.print(f"left alone {name}: {why}", markup=False)
    if as_json:
        emit_json({"resumed": plan.resume, "left_alone": dict(sorted(plan.refused.items()))}, exit_code=EXIT_OK)
    result_line(f"resumed: {', '.join(plan.resume)}" if plan.resume else "nothing to resume")
    raise typer.Exit(EXIT_OK)

