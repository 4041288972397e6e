"""clusterctl parse KIND FILE: run one parser on a captured tool output, print normalised JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from clusterctl.app import app, examples
from clusterctl.commands.common import reports_errors
from clusterctl.errors import UsageError


def _kinds() -> list[str]:
    from ccparse import registry

    return registry.kinds()


def _kinds_help() -> str:
    try:
        return ", ".join(_kinds())
    except Exception as exc:  # pragma: no cover - a broken parser module must not break --help
        return f"(parser registry failed to load: {exc})"


def _fail(msg: str) -> NoReturn:
    """Refuse the input: ``clusterctl: parse: msg`` on stderr (plain text), exit 2 (reports_errors)."""
    raise UsageError(f"parse: {msg}")


def to_jsonable(obj: Any) -> Any:
    """Parser results are plain dicts/lists; dataclasses and tuples are converted just in case."""
    import dataclasses

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(dataclasses.asdict(obj))
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set):
        return [to_jsonable(v) for v in obj]
    return obj


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
    as_json: Annotated[bool, typer.Option("--json", help="Compact one-line JSON for machines")] = False,
) -> None:
    from ccparse import registry
    from ccparse.common import ParseError

    known = _kinds()
    if kind not in known:
        _fail(f"unknown KIND {kind!r}; known kinds: {', '.join(known)}")
    try:
        text = sys.stdin.read() if str(file) == "-" else file.read_text(errors="replace")
    except OSError as exc:
        _fail(f"cannot read {file}: {exc.strerror or exc}")
    try:
        data = registry.parse(kind, text)
    except ParseError as exc:
        _fail(f"{file}: {exc}")
    out = to_jsonable(data)
    if as_json:
        sys.stdout.write(json.dumps(out, separators=(",", ":"), sort_keys=False) + "\n")
    else:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
