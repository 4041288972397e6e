"""clusterctl init DIR: write a commented starter inventory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clusterctl.app import app, examples
from clusterctl.commands.common import JsonOpt, emit_json, non_empty_path, reports_errors, result_line

INIT_EXAMPLES = """Examples:

  clusterctl init inventories/mycluster

  clusterctl init inventories/mycluster && clusterctl validate inventories/mycluster
"""


@app.command("init", epilog=examples(INIT_EXAMPLES))
@reports_errors
def init_command(
    directory: Annotated[Path, typer.Argument(help="New inventory folder (must not exist, or be empty)",
                                              parser=non_empty_path)],
    as_json: JsonOpt = False,
) -> None:
    """Write a commented starter inventory (hosts.yml, group_vars/all/cluster.yml) that `clusterctl
    validate` accepts. Exit 2, nothing written, when DIR exists and is not empty."""
    from clusterctl.inventory.starter import write_starter

    files = write_starter(directory)
    if as_json:
        emit_json({"inventory": str(directory), "files": [str(f) for f in files]})
    result_line(f"wrote {', '.join(str(f) for f in files)}; next: clusterctl validate {directory}")
