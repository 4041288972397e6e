"""clusterctl parse KIND FILE: run one parser on a captured tool output, print normalised JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from clusterctl.app import app, examples
from clusterctl.commands.common import emit_json, reports_errors


def _kinds_help() -> str:
    from clusterctl.parse_capture import kinds

    try:
        return ", ".join(kinds())
    except Exception as exc:  # pragma: no cover - a broken parser module must not break --help
        return f"(parser registry failed to load: {exc})"


PARSE_EXAMPLES = """Examples:

  clusterctl parse ibstat ibstat.txt

  ssh gpu07 nvidia-smi -q | clusterctl parse nvidia-smi-q - --json
"""


@app.command("parse", epilog=examples(PARSE_EXAMPLES),
             help=f"Parse FILE as the output of KIND and print normalised JSON "
                           f"(rates Gb/s, bandwidth GB/s, sizes bytes, temperatures C). "
                           f"FILE '-' reads stdin. Exit 2 on unknown KIND or unparseable input. "
                           f"KIND is one of: {_kinds_help()}")
@reports_errors
def parse_command(
    kind: Annotated[str, typer.Argument(help="Tool output kind, e.g. ibstat, nvidia-smi-q, nccl-tests")],
    file: Annotated[Path, typer.Argument(help="Captured output ('-' for stdin)")],
    as_json: Annotated[bool, typer.Option("--json", help="One-line JSON envelope for machines (README "
                                                        "'Machine output')")] = False,
) -> None:
    from clusterctl.parse_capture import parse_capture

    out = parse_capture(kind, file)
    if as_json:
        emit_json(out)
    else:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
