"""Shared pieces of every parser: the error type and the KIND registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ParserFn = Callable[[str], Any]

#: KIND name (as used by ``clusterctl parse KIND`` and evidence files ``<KIND>.txt``) -> parser.
PARSERS: dict[str, ParserFn] = {}


class ParseError(ValueError):
    """Input that is not what the named tool prints. Names the tool and the 1-based line."""

    def __init__(self, tool: str, message: str, line: int | None = None) -> None:
        self.tool = tool
        self.line = line
        self.reason = message
        where = f" at line {line}" if line is not None else ""
        super().__init__(f"{tool}: cannot parse input{where}: {message}")


def parser(kind: str) -> Callable[[ParserFn], ParserFn]:
    """Register ``fn`` as the parser of ``kind``."""

    def wrap(fn: ParserFn) -> ParserFn:
        if kind in PARSERS and PARSERS[kind] is not fn:
            raise RuntimeError(f"parser kind {kind!r} registered twice")
        PARSERS[kind] = fn
        return fn

    return wrap


def strip_source_line(text: str) -> str:
    """Drop a fixture's provenance line (``# source: ...``) if present; parsers accept both."""
    if text.startswith("# source:") or text.startswith("#source:"):
        return text.split("\n", 1)[1] if "\n" in text else ""
    return text
