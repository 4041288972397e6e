"""clusterctl lab up|down|status: the embedded local lab of podman containers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from clusterctl import lab
from clusterctl.app import EXIT_FAILED, app, examples
from clusterctl.commands.common import (
    JsonOpt,
    QuietOpt,
    emit_json,
    inventory_problems,
    problem,
    quiet_mode,
    result_line,
)
from clusterctl.display import err_console, print_table
from clusterctl.inventory import InventoryError

LAB_EXAMPLES = """Examples:

  clusterctl lab up

  clusterctl lab status --json

  clusterctl lab down
"""

lab_app = typer.Typer(help="Create, remove or show the local podman lab (inventories/lab).", no_args_is_help=True,
                      epilog=examples(LAB_EXAMPLES))
app.add_typer(lab_app, name="lab")

InvOpt = Annotated[Path | None, typer.Option("--inventory", "-i", help="Lab inventory (default: inventories/lab)")]


@contextmanager
def _lab_failure(what: str, as_json: bool = False) -> Iterator[None]:
    """A lab or inventory error -> ``clusterctl lab WHAT: message`` on stderr (and the JSON error
    document with ``--json``), exit 1."""
    try:
        yield
    except (lab.LabError, InventoryError) as exc:
        err_console.print(f"clusterctl lab {what}: {exc}")
        if as_json:
            problems = (inventory_problems(exc.problems) if isinstance(exc, InventoryError)
                        else [problem(str(exc))])
            emit_json(None, exit_code=EXIT_FAILED, problems=problems)
        raise typer.Exit(EXIT_FAILED) from None


@lab_app.command("up", epilog=examples("Examples:\n\n  clusterctl lab up\n  clusterctl provision inventories/lab\n"))
def lab_up(inventory: InvOpt = None, quiet: QuietOpt = False) -> None:
    """Create the lab network and containers (idempotent) and wait until they accept SSH."""
    with _lab_failure("up"), quiet_mode(quiet):
        hosts = lab.up(inventory)
    inv = inventory or lab.lab_inventory()
    result_line(f"lab up: {', '.join(h.name for h in hosts)}; next: clusterctl provision {inv}")


@lab_app.command("down", epilog=examples("Examples:\n\n  clusterctl lab down\n"))
def lab_down(inventory: InvOpt = None, quiet: QuietOpt = False) -> None:
    """Remove the lab containers and network (idempotent)."""
    with _lab_failure("down"), quiet_mode(quiet):
        removed = lab.down(inventory)
    result_line(f"lab down: removed {len(removed)} container(s)")


@lab_app.command("status", epilog=examples("Examples:\n\n  clusterctl lab status\n  clusterctl lab status --json\n"))
def lab_status(inventory: InvOpt = None, as_json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Show each lab container and its state."""
    with _lab_failure("status", as_json):
        rows = lab.status(inventory)
    if as_json:
        emit_json({"hosts": rows})
        return
    t = Table(title="lab")
    for col in ("host", "container", "address", "state"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["host"], r["container"], r["address"], r["state"])
    with quiet_mode(quiet):
        print_table(t)
    result_line(f"lab: {sum(r['state'] == 'running' for r in rows)} of {len(rows)} container(s) running")
