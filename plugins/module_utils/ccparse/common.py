"""Shared pieces of every parser: the error type, the KIND registry and bounded number helpers."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

ParserFn = Callable[[str], Any]

#: KIND name (as used by ``clusterctl parse KIND`` and evidence files ``<KIND>.txt``) -> parser.
PARSERS: dict[str, ParserFn] = {}
#: KIND -> what the KIND's parser reads off the capture's own command lines (``$ ib_write_bw -d mlx5_0``), given
#: the parse and those commands, returning the parse with it added (``registry.parse`` calls it)
CommandsFn = Callable[[dict[str, Any], list[str]], dict[str, Any]]
COMMAND_READERS: dict[str, CommandsFn] = {}


class ParseError(ValueError):
    """Input that is not what the named tool prints. Names the tool and the 1-based line."""

    def __init__(self, tool: str, message: str, line: int | None = None) -> None:
        self.tool = tool
        self.line = line
        self.reason = message
        where = f" at line {line}" if line is not None else ""
        super().__init__(f"{tool}: cannot parse input{where}: {message}")


def parser(kind: str, commands: CommandsFn | None = None) -> Callable[[ParserFn], ParserFn]:
    """Register ``fn`` as the parser of ``kind``; ``commands`` (optional) reads what the capture's command
    lines add to the parse (see COMMAND_READERS)."""

    def wrap(fn: ParserFn) -> ParserFn:
        if kind in PARSERS and PARSERS[kind] is not fn:
            raise RuntimeError(f"parser kind {kind!r} registered twice")
        PARSERS[kind] = fn
        if commands is not None:
            COMMAND_READERS[kind] = commands
        return fn

    return wrap


#: nvidia-smi's GPU selection on its command line ('nvidia-smi nvlink -s -i 2', '--id=0,1')
_GPU_SELECTION = re.compile(r"\bnvidia-smi\b.{0,200}?(?:\s-i\s*|\s--id[= ])([\w:.,-]{1,80})")


def gpu_selection(out: dict[str, Any], commands: list[str]) -> dict[str, Any]:
    """A command reader (COMMAND_READERS) for nvidia-smi KINDs that list GPUs without stating their count: a
    command that selects GPUs (``-i``) shows only those, so a count of what it lists is not judged (``partial``)."""
    ids = [m.group(1) for c in commands if (m := _GPU_SELECTION.search(c))]
    if not ids:
        return out
    return with_cut(out, f"the command selects GPU(s) -i {', '.join(dict.fromkeys(ids))}: only those are shown",
                    partial=True)


def selected_index(commands: list[str]) -> int | None:
    """The one GPU index that the commands' ``-i``/``--id`` selects (``nvidia-smi -i 1 -q``), else None (none, a
    list, a bus id or a UUID)."""
    ids = list(dict.fromkeys(m.group(1) for c in commands if (m := _GPU_SELECTION.search(c))))
    return int(ids[0]) if len(ids) == 1 and ids[0].isdigit() and len(ids[0]) <= 3 else None


def with_cut(out: dict[str, Any], sentence: str, **more: Any) -> dict[str, Any]:
    """A copy of the parse ``out`` with ``sentence`` added to its ``cut`` (what the capture leaves out, said as the
    engine's coverage note) and the keys of ``more`` set."""
    return {**out, **more, "cut": [*(out.get("cut") or []), sentence]}


def strip_source_line(text: str) -> str:
    """Drop a fixture's provenance line (``# source: ...``) if present; parsers accept both."""
    if text.startswith("# source:") or text.startswith("#source:"):
        return text.split("\n", 1)[1] if "\n" in text else ""
    return text


#: no number any supported tool prints has more characters than this (a 64-bit counter has 20
#: digits, a hex GUID 18); longer text is not a number of that tool. It also keeps every
#: conversion far below Python's int max str digits (4300), where ``int()`` raises ValueError.
MAX_NUMBER_CHARS = 40


#: the line boundaries of ``str.splitlines`` other than ``\n`` that an ASCII text can hold
_ASCII_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")


def split_lines(text: str) -> list[str]:
    """``text.splitlines()``, by ``str.split("\\n")`` where that is certainly the same (an ASCII text,
    ``str.isascii`` being a flag of the string, holding no other boundary ``splitlines`` knows: one
    ``memchr`` each): about 2.5x faster on a 56 kB ``nvidia-smi -q`` report."""
    if text.isascii() and not any(c in text for c in _ASCII_BREAKS):
        lines = text.split("\n")
        if not lines[-1]:
            lines.pop()
        return lines
    return text.splitlines()


def to_int(text: Any, base: int = 10) -> int | None:
    """``int(text, base)`` for captured text, or None when it is not a bounded integer.

    Never raises: an overlong digit string, a sign-only or non-numeric token, ``inf``/``nan`` all
    give None (callers that must have a number use :func:`need_int`). ``bool`` is not a number.
    """
    if text.__class__ is str:  # the parsers' case first: a token of the capture
        s = text.strip()
    else:
        if isinstance(text, bool) or text is None:
            return None
        if isinstance(text, int):
            return text
        if isinstance(text, float):
            return int(text) if math.isfinite(text) and abs(text) < 1e30 else None
        s = str(text).strip()
    if not s or len(s) > MAX_NUMBER_CHARS:
        return None
    try:
        return int(s, base)
    except ValueError:
        return None


def to_float(text: Any) -> float | None:
    """``float(text)`` for captured text, or None when it is not a bounded finite number."""
    if text.__class__ is str:  # the parsers' case first: a token of the capture
        s = text.strip()
    elif isinstance(text, bool) or text is None:
        return None
    elif isinstance(text, (int, float)):
        v = float(text) if not isinstance(text, int) or abs(text) < 10**30 else math.inf
        return v if math.isfinite(v) else None
    else:
        s = str(text).strip()
    if not s or len(s) > MAX_NUMBER_CHARS:
        return None
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def need_int(text: Any, tool: str, line: int | None, what: str, base: int = 10) -> int:
    """:func:`to_int`, raising :class:`ParseError` naming ``what``, the value and the line if none."""
    v = to_int(text, base)
    if v is None:
        raise ParseError(tool, f"{what}: {str(text)[:40]!r} is not a number this tool prints", line)
    return v


def need_float(text: Any, tool: str, line: int | None, what: str) -> float:
    """:func:`to_float`, raising :class:`ParseError` naming ``what``, the value and the line if none."""
    v = to_float(text)
    if v is None:
        raise ParseError(tool, f"{what}: {str(text)[:40]!r} is not a number this tool prints", line)
    return v


def _json_int(digits: str) -> int | float:
    # an overlong integer becomes a float (inf past 1e308): to_int/to_float refuse it later, where
    # json.loads itself would raise a plain ValueError (int max str digits)
    return int(digits) if len(digits) <= MAX_NUMBER_CHARS else float(digits)


#: a JSON decoder for captured text: overlong integers do not raise (see :func:`_json_int`)
JSON_DECODER = json.JSONDecoder(parse_int=_json_int)


def json_loads(text: str) -> Any:
    """``json.loads`` for captured text: only :class:`json.JSONDecodeError` escapes (also for
    overlong integers and for nesting too deep for the decoder)."""
    try:
        return JSON_DECODER.decode(text)
    except RecursionError:
        raise json.JSONDecodeError("JSON nested too deeply", text, 0) from None


#: an NVSwitch fabric's health (driver 550+): the element names of ``nvidia-smi -q -x`` and ``--query-gpu``'s
#: ``fabric.health.<name>`` fields, and the keys ``nvidia-smi -q`` prints under ``Fabric`` / ``Health``
FABRIC_HEALTH = {"summary": "Summary", "bandwidth": "Bandwidth",
                 "route_recovery_in_progress": "Route Recovery in progress",
                 "route_unhealthy": "Route Unhealthy", "access_timeout_recovery": "Access Timeout Recovery",
                 "incorrect_configuration": "Incorrect Configuration", "partition_assigned": "Partition Assigned"}
#: values nvidia-smi prints in place of a reading when NVML cannot read the GPU (``[N/A]``/``N/A`` and
#: ``Not Supported`` are absent features, not errors)
ERROR_TOKENS = frozenset({"Unknown Error", "[Unknown Error]", "ERR!", "[ERR!]", "[GPU requires reset]",
                          "GPU requires reset", "[GPU is lost]", "GPU is lost", "System is not in ready state",
                          "[System is not in ready state]", "Insufficient Permissions", "[Insufficient Permissions]"})


#: a mail client's wrap: the widths it wraps at (Thunderbird 72, mailman 76, RFC 78)
WRAP_WIDTH = (60, 80)
#: the longest line a wrapped paste keeps (a word longer than the width stays whole: a path, a GUID list)
WRAP_UNBROKEN = 160


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def unwrap_log(lines: list[str], is_log_line: Callable[[str], Any]) -> list[str]:
    """``lines`` of a log with a mail client's wrap of its long lines undone: a line that is no log line (no
    time or head: ``is_log_line`` false; indented no deeper than the log line: a whole paste indented keeps
    its wraps, a call trace under a line is not one) after a log line (or its continuation) that a wrap at
    60-80 characters would have cut there (at most 80 characters, and the next line's first word would have
    made it longer than 60) continues it (joined to it; its own place left blank), where at most two lines of
    text, or a quarter, are neither log lines nor such continuations. Unchanged otherwise (a table's row and a
    wrapped line's rest cannot be told apart: only logs are unwrapped)."""
    if max(map(len, lines), default=0) > WRAP_UNBROKEN:
        return lines  # a line no wrap at 80 columns leaves (a long word alone is not this long)
    heads = [bool(is_log_line(ln)) if ln.strip() else None for ln in lines]
    text = [h for h in heads if h is not None]
    loose = text.count(False)
    if loose == 0 or len(text) == loose:
        return lines

    def wrapped(i: int) -> bool:  # line i - 1 ends where a wrap at 60-80 characters would have cut it
        prev, word = lines[i - 1].rstrip(), (lines[i].split(None, 1) or [""])[0]
        return len(prev) <= WRAP_WIDTH[1] and len(prev) + 1 + len(word) > WRAP_WIDTH[0]

    unexplained = sum(1 for i, h in enumerate(heads) if h is False and not (
        i and heads[i - 1] is not None and wrapped(i)))
    if unexplained > max(2, 0.25 * len(text)):
        return lines
    out = list(lines)
    at = -1  # the line a continuation joins
    for i, ln in enumerate(lines):
        if heads[i] is None:
            at = -1
        elif heads[i]:
            at = i
        elif at >= 0 and wrapped(i) and len(_indent(ln)) <= len(_indent(lines[at])):
            out[at] = out[at].rstrip() + " " + ln.strip()
            out[i] = ""
        else:
            at = -1
    return out
