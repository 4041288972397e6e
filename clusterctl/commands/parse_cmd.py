"""clusterctl parse KIND FILE: run one parser on a captured tool output, print normalised JSON."""

from __future__ import annotations

import enum
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clusterctl.app import app, examples
from clusterctl.commands.common import choices, emit_json, reports_errors


def _kinds() -> list[str]:
    from clusterctl.parse_capture import kinds

    try:
        return kinds()
    except Exception:  # pragma: no cover - a broken parser module must not break --help
        return []


#: KIND: the parser registry's kinds, a typed choice (``--help`` and shell completion list them)
if TYPE_CHECKING:  # a choice of values known at run time
    Kind = enum.Enum
else:
    Kind = choices("Kind", _kinds())


PARSE_EXAMPLES = """Examples:

  clusterctl parse ibstat ibstat.txt

  ssh gpu07 nvidia-smi -q | clusterctl parse nvidia-smi-q - --json
"""


@app.command("parse", epilog=examples(PARSE_EXAMPLES),
             help="Parse FILE as the output of KIND and print normalised JSON "
                           "(rates Gb/s, bandwidth GB/s, sizes bytes, temperatures C). "
                           "FILE '-' reads stdin. Exit 2 on unknown KIND or unparseable input.")
@reports_errors
def parse_command(
    kind: Annotated[Kind, typer.Argument(help="Tool output kind", show_choices=True)],
    file: Annotated[Path, typer.Argument(help="Captured output ('-' for stdin)")],
    as_json: Annotated[bool, typer.Option("--json", help="One-line JSON envelope for machines (README "
                                                        "'Machine output')")] = False,
) -> None:
    from clusterctl.parse_capture import parse_capture

    out = parse_capture(kind.value, file)
    if as_json:
        emit_json(out)
    else:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
