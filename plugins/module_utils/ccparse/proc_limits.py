"""Parse ``/proc/<pid>/limits`` (KIND ``proc-limits``): a process's resource limits.

The kernel prints (fs/proc/base.c, ``proc_pid_limits``) a header and one row per limit::

    Limit                     Soft Limit           Hard Limit           Units
    Max locked memory         8388608              8388608              bytes

columns at fixed widths (25, 20, 20 characters), ``unlimited`` for RLIM_INFINITY and no unit
for the nice/realtime priorities. Rows grep'd without the header (``cat /proc/<pid>/limits | grep locked``)
are read as rows (``"excerpt": True``); any other first line is a ParseError.
The collector may put a comment line first naming the process
(``# process: slurmd pid 812``; fabric_evidence does, since the file does not say whose it is).

A shell's ``ulimit -a`` (the limits the shell, and what it starts, runs with) is read too: bash's rows
(``max locked memory       (kbytes, -l) 64``) and zsh's or busybox ash's (``-l: locked-in-memory size (kbytes) 64``);
its ``-l`` row becomes ``max_locked_memory`` in bytes (the shell prints KiB), the soft limit
(``ulimit -a`` prints the soft ones; ``ulimit -Ha`` the hard ones: the paste does not say which, so both
are the value shown), with ``"shell": True``; so is the bare value ``ulimit -l`` prints (KiB or ``unlimited``)
under its command line, which the capture clean-up keeps for this KIND (``$ ulimit -l``).

Result::

    {"process": "slurmd", "pid": 812 | None,
     "limits": {"max_locked_memory": {"soft": 8388608 | None, "hard": 8388608 | None, "unit": "bytes"},
                ...}}

``None`` means unlimited; the key is the limit's name in snake case.
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, need_int, parser, strip_source_line, to_int

TOOL = "/proc/<pid>/limits"
_HEADER = re.compile(r"^Limit\s+Soft Limit\s+Hard Limit\s+Units\s*$")
#: a row; one blank between its cells where a web page's copy collapsed the kernel's column padding
_ROW = re.compile(r"^(Max [a-z]{1,20}(?: [a-z]{1,20}){0,6}?)\s+(unlimited|\d{1,20})\s+(unlimited|\d{1,20})"
                  r"(?:\s+([a-z]{1,20}))?\s*$")
#: bash: 'max locked memory       (kbytes, -l) 64', 'open files                      (-n) 1024'
_SHELL_BASH = re.compile(r"^([a-zA-Z][a-zA-Z -]{0,40}?)\s*\((?:([a-z0-9 ]{1,16}), )?-([a-zA-Z])\)"
                         r"\s+(unlimited|\d{1,20})\s*$")
#: zsh / busybox ash: '-l: locked-in-memory size (kbytes) 64', '-n: file descriptors 1024'
_SHELL_ZSH = re.compile(r"^-([a-zA-Z]): ([a-zA-Z][a-zA-Z -]{0,40}?)(?: \(([a-z0-9 ]{1,16})\))?"
                        r"\s+(unlimited|\d{1,20})\s*$")
#: bytes per unit of the shell's -l row
_SHELL_UNIT = {"kbytes": 1024, "kb": 1024, "bytes": 1, "": 1024}
_PROCESS = re.compile(r"^#\s*process:\s*(\S+)(?:\s+pid\s+(\d+))?")


def _value(text: str, lineno: int) -> int | None:
    return None if text == "unlimited" else need_int(text, TOOL, lineno, "limit")


def _locked(value: str, per: int, lineno: int) -> dict[str, Any]:
    """The ``max_locked_memory`` entry of a shell's locked-memory value (``per`` bytes a unit; soft and hard: the
    shell shows one of them)."""
    v = _value(value, lineno)
    size = None if v is None else v * per
    return {"soft": size, "hard": size, "unit": "bytes"}


def _shell_row(line: str) -> tuple[str, str, str, str] | None:
    """(flag, name, unit, value) of a ``ulimit -a`` row, or None."""
    m = _SHELL_BASH.match(line)
    if m:
        return m.group(3), m.group(1).strip(), m.group(2) or "", m.group(4)
    m = _SHELL_ZSH.match(line)
    if m:
        return m.group(1), m.group(2).strip(), m.group(3) or "", m.group(4)
    return None


def _parse_shell(lines: list[str], first: int, out: dict[str, Any]) -> dict[str, Any]:
    """``ulimit -a`` rows from line ``first`` (1-based) on."""
    for n, raw in enumerate(lines[first - 1:], first):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        row = _shell_row(line)
        if row is None:
            raise ParseError(TOOL, f"not a 'ulimit -a' row: {line!r}", n)
        flag, name, unit, value = row
        if flag != "l":
            out["limits"][name.lower().replace(" ", "_").replace("-", "_")] = {
                "soft": _value(value, n), "hard": _value(value, n), "unit": unit}
            continue
        per = _SHELL_UNIT.get(unit)
        if per is None:
            raise ParseError(TOOL, f"unknown unit {unit!r} of the locked-memory row", n)
        out["limits"]["max_locked_memory"] = _locked(value, per, n)
    return out  # a listing trimmed to other rows has no 'max_locked_memory': the check says it cannot judge


#: the command line the capture clean-up keeps (``$ ulimit -l``): a bare value after it is the locked-memory limit
_ULIMIT_L = re.compile(r"^\$ (?:\S*/)?ulimit\s+(?:-[SH]\s+)?-[SH]?l\s*$")


def _commands_read(lines: list[str], out: dict[str, Any]) -> list[str]:
    """``lines`` with the kept command lines (``$ cat /proc/812/limits``, ``$ ulimit -a``) blanked; the bare
    value printed under a ``$ ulimit -l`` (KiB, or ``unlimited``) read into ``out`` as the locked-memory limit."""
    kept = list(lines)
    for i, raw in enumerate(lines):
        if not raw.startswith("$ "):
            continue
        kept[i] = ""
        if _ULIMIT_L.match(raw.strip()):
            nxt = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
            value = lines[nxt].strip() if nxt is not None else ""
            if nxt is not None and (value == "unlimited" or value.isdigit()):
                out["limits"]["max_locked_memory"] = _locked(value, _SHELL_UNIT["kbytes"], nxt + 1)
                out["shell"] = True
                kept[nxt] = ""
    return kept


@parser("proc-limits")
def parse_proc_limits(text: str) -> dict[str, Any]:
    lines = strip_source_line(text).splitlines()
    out: dict[str, Any] = {"process": None, "pid": None, "limits": {}}
    lines = _commands_read(lines, out)
    if out.get("shell") and not any(ln.strip() and not ln.lstrip().startswith("#") for ln in lines):
        return out  # 'ulimit -l' alone
    header = False
    for n, raw in enumerate(lines, 1):
        line = raw.strip()  # a paste indented as a block (columns are read by runs of blanks)
        if not line:
            continue
        m = _PROCESS.match(line)
        if m and not header:
            out["process"], out["pid"] = m.group(1), to_int(m.group(2)) if m.group(2) else None
            continue
        if line.startswith("#") and not header:
            continue
        if not header:
            header = True
            if _HEADER.match(line):
                continue
            if not _ROW.match(line) and _shell_row(line):
                out["shell"] = True  # a shell's 'ulimit -a'
                return _parse_shell(lines, n, out)
            if not _ROW.match(line):
                raise ParseError(TOOL, f"expected the header 'Limit  Soft Limit  Hard Limit  Units', got {line!r}", n)
            out["excerpt"] = True  # rows grep'd without the header ('... /limits | grep locked'): read as rows
        r = _ROW.match(line)
        if not r:
            raise ParseError(TOOL, f"not a limit row: {line!r}", n)
        key = r.group(1).strip().lower().replace(" ", "_")
        out["limits"][key] = {"soft": _value(r.group(2), n), "hard": _value(r.group(3), n), "unit": r.group(4) or ""}
    if not header:
        raise ParseError(TOOL, "no header line: empty or not a limits file", None)
    return out
