"""validate, plan and provision."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer

from clusterctl.app import app, examples
from clusterctl.commands.common import (
    InventoryArg,
    JsonOpt,
    VaultOpt,
    ansible_command,
    emit_json,
    reports_errors,
    result_dict,
    result_line,
    use_vault_password,
)
from clusterctl.display import RunProgress, console, err_console, print_summary
from clusterctl.errors import UsageError
from clusterctl.inventory import hosts_matching, load_checked, require_decrypted
from clusterctl.runner import RunResult, inventory_lock, read_last_failed, run_playbook

LimitOpt = Annotated[str | None, typer.Option("--limit", "-l", help="Ansible host pattern to limit the run to")]
TagsOpt = Annotated[str | None, typer.Option("--tags", "-t", help="Only run tasks with these tags (comma list)")]
ForksOpt = Annotated[int | None, typer.Option("--forks", "-f", min=1, help="Parallel hosts (default from ansible.cfg)")]

VALIDATE_EXAMPLES = """Examples:

  clusterctl validate inventories/prod

  clusterctl validate inventories/prod --json | jq .hosts
"""

PROVISION_EXAMPLES = """Examples:

  clusterctl provision inventories/prod

  clusterctl provision inventories/prod --limit 'gpu[01:04]' --tags slurm

  clusterctl provision inventories/prod --retry            # only the hosts that failed last time

  clusterctl provision inventories/prod -e slurm_common_install_packages=false --vault-password-file ~/.vault-pass
"""

PLAN_EXAMPLES = """Examples:

  clusterctl plan inventories/prod

  clusterctl plan inventories/prod --tags nccl --json
"""


@app.command(epilog=examples(VALIDATE_EXAMPLES))
@reports_errors
def validate(inventory: InventoryArg, as_json: JsonOpt = False, vault_password_file: VaultOpt = None) -> None:
    """Check an inventory without contacting any host. Exit 2 if it is rejected."""
    from clusterctl.inventory.safeyaml import VAULT_PASSWORD

    token = use_vault_password(vault_password_file)
    try:
        inv = load_checked(inventory)
    finally:
        if token is not None:
            VAULT_PASSWORD.reset(token)
    for w in inv.warnings:
        err_console.print(f"warning: {w}", markup=False)
    if inv.vaulted_files:
        err_console.print(f"warning: not checked (vault-encrypted; give --vault-password-file to check them): "
                          f"{', '.join(inv.vaulted_files)}", markup=False)
    groups = {g: len(h) for g, h in sorted(inv.groups.items()) if g != "all"}
    if as_json:
        emit_json({"inventory": str(inventory), "valid": True, "hosts": len(inv.hosts), "groups": groups,
                   "warnings": list(inv.warnings), "not_checked": list(inv.vaulted_files)})
        return
    shown = ", ".join(f"{g}={n}" for g, n in groups.items())
    result_line(f"inventory {inventory} is valid: {len(inv.hosts)} hosts ({shown})")


def run_site(inventory: Path, *, label: str, limit: str | None = None, tags: str | None = None,
             check: bool = False, diff: bool = False, forks: int | None = None,
             playbook: str = "site.yml", extravars: dict[str, object] | None = None,
             summary: bool = True, lock: str | None = None) -> RunResult:
    """Validate, then run a playbook with live progress; print the summary table. ``lock``: the
    command that takes the inventory's lock for the run, once the input is checked."""
    inv = load_checked(inventory)
    require_decrypted(inv)
    if limit and inv.match is not None and not hosts_matching(inv, limit):
        raise UsageError(f"--limit {limit!r} matches no host of inventory {inventory}; nothing was run")
    with inventory_lock(inventory, lock) if lock else contextlib.nullcontext(), \
            RunProgress(len(inv.hosts)) as progress:
        result = run_playbook(playbook, inventory, limit=limit, tags=tags, check=check, diff=diff,
                              forks=forks, extravars=extravars, on_event=progress, label=label)
    if summary:
        print_summary(result, f"{label} {inventory}", command=label.split("-", 1)[0], inventory=inventory)
    return result


def retry_limit(inventory: Path, limit: str | None) -> str | None:
    """The ``--limit`` of ``--retry``: the hosts recorded last time; None when there are none."""
    if limit:
        raise UsageError("--retry and --limit cannot be combined")
    load_checked(inventory)
    last = read_last_failed(inventory)
    return ",".join(sorted(last)) if last else None


@app.command(epilog=examples(PROVISION_EXAMPLES))
@ansible_command
def provision(
    inventory: InventoryArg,
    limit: LimitOpt = None,
    tags: TagsOpt = None,
    check: Annotated[bool, typer.Option("--check", help="Change nothing; report what would change")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Show file and setting differences")] = False,
    forks: ForksOpt = None,
    retry: Annotated[bool, typer.Option("--retry", help="Only hosts that failed, were unreachable or "
                                                        "never reached last time")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Configure every host of INVENTORY (playbooks/site.yml). Exit 0 ok, 2 bad input, 3 failed, 4 unreachable."""
    if retry:
        limit = retry_limit(inventory, limit)
        if limit is None:
            console.print("no failed hosts recorded for this inventory; nothing to retry")
            if as_json:
                emit_json({"retry": []}, exit_code=0)
            raise typer.Exit(0)
        console.print(f"retrying {len(limit.split(','))} host(s): {limit}")
    result = run_site(inventory, label="provision", limit=limit, tags=tags, check=check, diff=diff, forks=forks,
                      lock="provision")
    result_line(run_line("provision", result))
    if as_json:
        emit_json(result_dict(result), exit_code=result.exit_code)
    raise typer.Exit(result.exit_code)


@app.command(epilog=examples(PLAN_EXAMPLES))
@ansible_command
def plan(
    inventory: InventoryArg,
    limit: LimitOpt = None,
    tags: TagsOpt = None,
    forks: ForksOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show what provision would change, per host, changing nothing (check mode + diff).

    Exit 0 when every host answered, 3 when a host failed, 4 when a host was unreachable (its
    changes are then unknown: the plan says so instead of "no changes").
    """
    result = run_site(inventory, label="plan", limit=limit, tags=tags, check=True, diff=True, forks=forks)
    print_plan(result)
    if as_json:
        emit_json(plan_dict(result), exit_code=result.exit_code)
    raise typer.Exit(result.exit_code)


def run_line(label: str, result: RunResult) -> str:
    """The one-line result of a run (``-q``)."""
    n = {k: sum(getattr(s, k) > 0 for s in result.hosts.values()) for k in ("changed", "failed", "unreachable")}
    return (f"{label}: {result.status}: {len(result.hosts) + len(result.not_reached)} host(s), "
            f"{n['changed']} changed, {n['failed']} failed, {n['unreachable']} unreachable, "
            f"{len(result.not_reached)} not reached (exit {result.exit_code})")


def plan_dict(result: RunResult) -> dict[str, Any]:
    d = result_dict(result)
    d["complete"] = not result.problem_hosts
    d["diffs"] = {h: [{"task": t, "diff": x} for t, x in items] for h, items in sorted(result.diffs.items())}
    return d


def print_plan(result: RunResult) -> None:
    total = sum(len(v) for v in result.changes.values())
    unknown = result.unreached
    if unknown:
        console.print(f"plan: incomplete: {len(unknown)} host(s) unreachable or not reached, their changes are "
                      f"unknown: {', '.join(sorted(unknown))}")
    if result.failed_hosts:
        console.print(f"plan: incomplete: the plan failed on {', '.join(sorted(result.failed_hosts))}")
    if not total:
        result_line("plan: incomplete" if result.problem_hosts else "plan: no changes")
        return
    for host in sorted(result.changes):
        console.print(f"[bold]{host}[/bold]")
        diffs = dict(result.diffs.get(host, []))
        for task in result.changes[host]:
            console.print(f"  ~ {task}", markup=False)
            if diffs.get(task):
                for line in diffs[task].splitlines()[:40]:
                    console.print(f"      {line}", markup=False)
    result_line(f"plan: {total} change(s) on {len(result.changes)} host(s)")
