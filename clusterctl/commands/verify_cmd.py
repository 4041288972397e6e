"""clusterctl verify (collect evidence, analyse, optionally drain) and clusterctl resume."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from clusterctl.app import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_HOSTS_FAILED, EXIT_OK, app, examples
from clusterctl.commands.common import JsonOpt, ansible_command, print_json, result_dict
from clusterctl.display import console

VERIFY_EXAMPLES = """Examples:

  clusterctl verify inventories/prod

  clusterctl verify inventories/prod --level full --drain

  clusterctl verify inventories/prod --limit 'gpu[01:08]' --json > verify.json
"""

RESUME_EXAMPLES = """Examples:

  clusterctl resume inventories/prod               # every node clusterctl drained

  clusterctl resume inventories/prod gpu07 gpu12 --json
"""

InventoryArg = Annotated[Path, typer.Argument(help="Inventory folder (hosts.yml, group_vars/, host_vars/)")]


@app.command("verify", epilog=examples(VERIFY_EXAMPLES))
@ansible_command
def verify_command(
    inventory: InventoryArg,
    level: Annotated[str, typer.Option("--level", help="quick: passive reads; full: + dcgmi diag, nccl-tests, "
                                                       "ib_write_bw on idle nodes")] = "quick",
    drain: Annotated[bool, typer.Option("--drain", help="Drain failed nodes in Slurm (reason 'clusterctl: ...')")]
    = False,
    limit: Annotated[str | None, typer.Option("--limit", "-l", help="Ansible host pattern")] = None,
    forks: Annotated[int | None, typer.Option("--forks", "-f", min=1)] = None,
    hosts: Annotated[str, typer.Option("--hosts", help="Ansible pattern of the nodes to verify (pair tests "
                                                       "over them; 2-node nccl-tests only on slurm_compute)")]
    = "slurm_compute",
    as_json: JsonOpt = False,
) -> None:
    """Collect evidence on every compute node, judge it, write JSON + HTML. Exit 0 healthy, 3 any failed."""
    from clusterctl.analysis.engine import analyze_dir
    from clusterctl.analysis.expectations import build
    from clusterctl.display import RunProgress, print_summary
    from clusterctl.inventory import load_and_validate
    from clusterctl.report_table import findings_table, summary_line, write_outputs
    from clusterctl.runner import run_playbook

    if level not in ("quick", "full"):
        sys.stderr.write(f"clusterctl verify: --level {level!r} must be quick or full\n")
        raise typer.Exit(EXIT_BAD_INPUT)
    inv = load_and_validate(inventory)
    from clusterctl.runner import state_dir

    evidence = state_dir(inventory) / "evidence" / _stamp()
    evidence.mkdir(parents=True, exist_ok=True)
    with RunProgress(len(inv.hosts)) as progress:
        result = run_playbook("verify.yml", inventory, limit=limit, forks=forks, on_event=progress, label="verify",
                              extravars={"clusterctl_evidence_dir": str(evidence), "clusterctl_verify_level": level,
                                         "clusterctl_verify_hosts": hosts})
    print_summary(result, f"verify {inventory} (collection)")
    if not any(evidence.iterdir()):
        sys.stderr.write("clusterctl verify: no evidence was collected (see the failures above)\n")
        raise typer.Exit(EXIT_FAILED)
    exp = build(inv.spec())
    report = None
    if level == "full":
        verified = [h for h in inv.hosts if (evidence / h).is_dir()]
        slurm_nodes = set(inv.groups.get("slurm_compute", []))
        report = _pairwise(inventory, evidence, {"ib_write_bw": verified,
                                                 "nccl-tests": [h for h in verified if h in slurm_nodes]}, exp, forks)
    if report is None:
        report = analyze_dir(evidence, exp)
    out_dir = result.artifacts_dir
    write_outputs(report, out_dir / "verify-report.json", out_dir / "verify-report.html",
                  title=f"clusterctl verify {inventory} ({level})")
    console.print(findings_table(report, f"verify {inventory}"))
    console.print(summary_line(report))
    console.print(f"evidence: {evidence}\nreport: {out_dir / 'verify-report.json'}  {out_dir / 'verify-report.html'}")
    drained: list[dict[str, str]] = []
    if drain and report.failed:
        from clusterctl.slurm import Slurm
        from clusterctl.slurm_drain import drain_failed

        drained = drain_failed(Slurm(inventory), report)
        for d in drained:
            console.print(f"drained {d['name']}: {d['reason']}", markup=False)
    unreachable = [h for h, s in result.hosts.items() if s.unreachable] + list(result.not_reached)
    if as_json:
        print_json({"report": report.to_dict(), "collection": result_dict(result), "evidence": str(evidence),
                    "report_json": str(out_dir / "verify-report.json"), "drained": drained})
    if report.failed or unreachable:
        raise typer.Exit(EXIT_HOSTS_FAILED)
    raise typer.Exit(EXIT_OK)


@app.command("resume", epilog=examples(RESUME_EXAMPLES))
@ansible_command
def resume_command(
    inventory: InventoryArg,
    nodes: Annotated[list[str] | None, typer.Argument(help="Nodes to resume (default: every node clusterctl "
                                                            "drained)")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Return to service nodes drained by clusterctl (reason 'clusterctl: ...'), never admin-drained ones."""
    from clusterctl.inventory import load_and_validate
    from clusterctl.slurm import Slurm
    from clusterctl.slurm_drain import resume_ours

    load_and_validate(inventory)
    plan = resume_ours(Slurm(inventory), nodes or None)
    for name, why in sorted(plan.refused.items()):
        console.print(f"left alone {name}: {why}", markup=False)
    if as_json:
        print_json({"resumed": plan.resume, "left_alone": dict(sorted(plan.refused.items()))})
    console.print(f"resumed: {', '.join(plan.resume)}" if plan.resume else "nothing to resume")
    raise typer.Exit(EXIT_OK)


def _pairwise(inventory: Path, evidence: Path, hosts: dict[str, list[str]], exp: dict, forks: int | None) -> Any:
    """Pairwise ib_write_bw and 2-node nccl-tests rounds between the nodes that can run them; the
    final report when the rounds' own judgement is final (no pass 2), else None."""
    from clusterctl.display import print_summary
    from clusterctl.pairwise import Round, run_pairwise
    from clusterctl.runner import run_playbook

    def run_round(rnd: Round, label: str) -> int:
        console.print(f"{label}: " + "; ".join(f"{t} " + ", ".join(f"{a}<->{b}" for a, b in ps)
                                               for t, ps in rnd.items()), markup=False)
        r = run_playbook("pairtest.yml", inventory, forks=forks, label=label, record_failures=False,
                         extravars={"clusterctl_pair_round": [list(p) for p in rnd.get("ib_write_bw", [])],
                                    "clusterctl_pair_nccl_round": [list(p) for p in rnd.get("nccl-tests", [])],
                                    "clusterctl_evidence_dir": str(evidence)})
        if r.rc != 0:
            print_summary(r, f"verify {inventory} ({label})")
        return r.rc

    run = run_pairwise(evidence, hosts, exp, run_round)
    for line in run.lines():
        console.print(line, markup=False)
    return run.report


def _stamp() -> str:
    import time

    return time.strftime("%Y%m%d-%H%M%S")
