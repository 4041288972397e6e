"""clusterctl analyze EVIDENCE_DIR: judge captured outputs laid out as <host>/<KIND>.txt."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from clusterctl.app import EXIT_BAD_INPUT, EXIT_HOSTS_FAILED, EXIT_OK, app, examples
from clusterctl.display import console

ANALYZE_EXAMPLES = """Examples:

  clusterctl analyze ./evidence

  clusterctl analyze ./evidence -i inventories/prod --html report.html

  clusterctl analyze ./evidence --json | jq '.hosts | keys'
"""


@app.command("analyze", epilog=examples(ANALYZE_EXAMPLES))
def analyze_command(
    evidence_dir: Annotated[Path, typer.Argument(help="Folder of <host>/<KIND>.txt captured outputs")],
    inventory: Annotated[Path | None, typer.Option(
        "--inventory", "-i", help="Inventory whose cluster spec gives the expected values")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON instead of a table")] = False,
    html: Annotated[Path | None, typer.Option("--html", help="Also write a self-contained HTML report here")] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Parser processes (large evidence folders)")] = 1,
    all_hosts: Annotated[bool, typer.Option("--all", help="List healthy hosts too on large clusters")] = False,
) -> None:
    """Judge EVIDENCE_DIR/<host>/<KIND>.txt. Exit 0 when no host failed, 3 when any did, 2 on bad input."""
    from clusterctl.analysis.engine import analyze_dir
    from clusterctl.analysis.expectations import from_inventory
    from clusterctl.report_table import findings_table, summary_line, write_outputs

    if not evidence_dir.is_dir():
        sys.stderr.write(f"clusterctl analyze: {evidence_dir} is not a folder\n")
        raise typer.Exit(EXIT_BAD_INPUT)
    if inventory is not None and not inventory.is_dir():
        sys.stderr.write(f"clusterctl analyze: inventory {inventory} is not a folder\n")
        raise typer.Exit(EXIT_BAD_INPUT)
    report = analyze_dir(evidence_dir, from_inventory(inventory), jobs=jobs)
    if not report.hosts:
        sys.stderr.write(f"clusterctl analyze: no <host>/ folders in {evidence_dir}\n")
        raise typer.Exit(EXIT_BAD_INPUT)
    write_outputs(report, None, html, title=f"clusterctl analyze {evidence_dir}")
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), separators=(",", ":")) + "\n")
    else:
        console.print(findings_table(report, f"analysis of {evidence_dir}", all_hosts=all_hosts))
        for s in report.stragglers:
            console.print(f"[yellow]straggler[/] {s.host}: {s.message()}", markup=True)
        console.print(summary_line(report))
        if html is not None:
            console.print(f"HTML report: {html}")
    raise typer.Exit(EXIT_HOSTS_FAILED if report.failed else EXIT_OK)
