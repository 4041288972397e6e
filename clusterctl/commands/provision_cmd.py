"""validate, plan and provision."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clusterctl.app import EXIT_BAD_INPUT, app
from clusterctl.commands.inventory_check import load_and_validate
from clusterctl.display import RunProgress, console, err_console, print_summary
from clusterctl.runner import RunResult, read_last_failed, run_playbook

InventoryArg = Annotated[Path, typer.Argument(help="Inventory folder (hosts.yml, group_vars/, host_vars/)")]
LimitOpt = Annotated[str | None, typer.Option("--limit", "-l", help="Ansible host pattern to limit the run to")]
TagsOpt = Annotated[str | None, typer.Option("--tags", "-t", help="Only run tasks with these tags (comma list)")]
ForksOpt = Annotated[int | None, typer.Option("--forks", "-f", min=1, help="Parallel hosts (default from ansible.cfg)")]


@app.command()
def validate(inventory: InventoryArg) -> None:
    """Check an inventory without contacting any host. Exit 2 if it is rejected."""
    inv = load_and_validate(inventory)
    groups = ", ".join(f"{g}={len(h)}" for g, h in sorted(inv.groups.items()) if g != "all")
    console.print(f"inventory {inventory} is valid: {len(inv.hosts)} hosts ({groups})")


def run_site(inventory: Path, *, label: str, limit: str | None = None, tags: str | None = None,
             check: bool = False, diff: bool = False, forks: int | None = None,
             playbook: str = "site.yml", extravars: dict[str, object] | None = None) -> RunResult:
    """Validate, then run a playbook with live progress; print the summary table."""
    inv = load_and_validate(inventory)
    with RunProgress(len(inv.hosts)) as progress:
        result = run_playbook(playbook, inventory, limit=limit, tags=tags, check=check, diff=diff,
                              forks=forks, extravars=extravars, on_event=progress, label=label)
    print_summary(result, f"{label} {inventory}")
    return result


@app.command()
def provision(
    inventory: InventoryArg,
    limit: LimitOpt = None,
    tags: TagsOpt = None,
    check: Annotated[bool, typer.Option("--check", help="Change nothing; report what would change")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Show file and setting differences")] = False,
    forks: ForksOpt = None,
    retry: Annotated[bool, typer.Option("--retry", help="Only hosts that failed or were unreachable")] = False,
) -> None:
    """Configure every host of INVENTORY (playbooks/site.yml). Exit 0 ok, 2 bad input, 3 failed, 4 unreachable."""
    if retry:
        if limit:
            err_console.print("clusterctl: --retry and --limit cannot be combined")
            raise typer.Exit(EXIT_BAD_INPUT)
        load_and_validate(inventory)
        last = read_last_failed(inventory)
        if not last:
            console.print("no failed hosts recorded for this inventory; nothing to retry")
            raise typer.Exit(0)
        limit = ",".join(sorted(last))
        console.print(f"retrying {len(last)} host(s): {limit}")
    result = run_site(inventory, label="provision", limit=limit, tags=tags, check=check, diff=diff, forks=forks)
    raise typer.Exit(result.exit_code)


@app.command()
def plan(
    inventory: InventoryArg,
    limit: LimitOpt = None,
    tags: TagsOpt = None,
    forks: ForksOpt = None,
) -> None:
    """Show what provision would change, per host, changing nothing (check mode + diff)."""
    result = run_site(inventory, label="plan", limit=limit, tags=tags, check=True, diff=True, forks=forks)
    print_plan(result)
    raise typer.Exit(result.exit_code)


def print_plan(result: RunResult) -> None:
    total = sum(len(v) for v in result.changes.values())
    if not total:
        console.print("plan: no changes")
        return
    console.print(f"plan: {total} change(s) on {len(result.changes)} host(s)")
    for host in sorted(result.changes):
        console.print(f"[bold]{host}[/bold]")
        diffs = dict(result.diffs.get(host, []))
        for task in result.changes[host]:
            console.print(f"  ~ {task}")
            if diffs.get(task):
                for line in diffs[task].splitlines()[:40]:
                    console.print(f"      {line}", markup=False)
