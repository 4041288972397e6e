"""clusterctl analyze EVIDENCE_DIR: judge captured outputs laid out as <host>/<KIND>.txt."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from clusterctl.app import EXIT_CANNOT_JUDGE, EXIT_HOSTS_FAILED, EXIT_OK, app, examples
from clusterctl.commands.common import (
    JunitOpt,
    PromOpt,
    emit_json,
    non_empty_path,
    problem,
    reports_errors,
    result_line,
    write_exports,
)
from clusterctl.display import console, print_table

ANALYZE_EXAMPLES = """Examples:

  clusterctl analyze ./evidence

  clusterctl analyze ./evidence -i inventories/prod --html report.html

  clusterctl analyze ./evidence --json | jq '.hosts | keys'

  clusterctl analyze ./evidence --prom /var/lib/prometheus/node-exporter/clusterctl.prom --junit verify.xml
"""


@app.command("analyze", epilog=examples(ANALYZE_EXAMPLES))
@reports_errors
def analyze_command(
    evidence_dir: Annotated[Path, typer.Argument(help="Folder of <host>/<KIND>.txt captured outputs",
                                                 parser=non_empty_path)],
    inventory: Annotated[Path | None, typer.Option(
        "--inventory", "-i", help="Inventory whose cluster spec gives the expected values")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON instead of a table")] = False,
    html: Annotated[Path | None, typer.Option("--html", help="Also write a self-contained HTML report here")] = None,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, help="Parser processes (default: the free cores, from 256 host folders)")] = None,
    all_hosts: Annotated[bool, typer.Option("--all", help="List healthy hosts too on large clusters")] = False,
    prom: PromOpt = None,
    junit: JunitOpt = None,
) -> None:
    """Judge EVIDENCE_DIR/<host>/<KIND>.txt. Exit 0 when every host is healthy or degraded, 3 when any
    failed or had no evidence, 5 when none did but some host could not be judged (its evidence
    unreadable, or a check needed an inventory key), 2 on bad input (a bad --inventory: nothing is read).
    A file not named <KIND>.txt is read as the KIND its content shows, and the report says which.

    Only regular files inside EVIDENCE_DIR are read: symlinks leaving it, fifos and devices are
    refused and named."""
    from clusterctl.report_table import findings_table, read_as_lines, summary_line, write_outputs
    from clusterctl.verify import judge_folder

    report = judge_folder(evidence_dir, inventory, jobs=jobs)
    for line in report.refused:
        sys.stderr.write(f"clusterctl analyze: {evidence_dir}/{line}\n")
    write_outputs(report, None, html, title=f"clusterctl analyze {evidence_dir}")
    write_exports(report, prom, junit)
    code = (EXIT_HOSTS_FAILED if report.failed or report.no_evidence
            else EXIT_CANNOT_JUDGE if report.cannot_judge else EXIT_OK)
    if as_json:
        emit_json(report.to_dict(), exit_code=code,
                  problems=[problem(f"refused: {why}", file=f"{evidence_dir}/{name}")
                            for name, _, why in (ln.partition(": ") for ln in report.refused)])
    else:
        print_table(findings_table(report, f"analysis of {evidence_dir}", all_hosts=all_hosts))
        for line in read_as_lines(report):
            console.print(line, markup=False, highlight=False)
        for s in report.stragglers:
            console.print(f"[yellow]straggler[/] {s.host}: {s.message()}", markup=True)
        if html is not None:
            console.print(f"HTML report: {html}")
        result_line(summary_line(report))
    raise typer.Exit(code)
