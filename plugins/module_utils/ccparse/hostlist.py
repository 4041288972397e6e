"""Slurm hostlist expansion, the one implementation (the ``sinfo`` parser and the Ansible
``hostlist_expand``/``hostlist_compress`` filters both use it).

Slurm's rules (slurm/src/common/hostlist.c, hostlist(1)): commas outside brackets separate
names; a bracket holds comma-separated numbers and ``lo-hi`` ranges; a leading zero fixes the
width (``node[001-003]``); several bracket groups in one name are a cartesian product in Slurm's
order (``r[1-2]n[1-2]`` -> r1n1 r1n2 r2n1 r2n2). Malformed input raises :class:`HostlistError`
(a ValueError) naming the expression.
"""

from __future__ import annotations

import re

_BRACKET_RE = re.compile(r"\[([^\[\]]*)\]")
#: refuse expansions larger than this (a typo such as node[1-99999999] must not eat the memory)
MAX_EXPAND = 1_000_000


class HostlistError(ValueError):
    """A malformed hostlist expression."""


def split_hostlist(text: str, *, skip_empty: bool = True) -> list[str]:
    """Split on commas outside brackets: ``a[1,2],b`` -> ``['a[1,2]', 'b']``.

    Empty names (``a,,b``, a trailing comma) are dropped, or with ``skip_empty=False`` an error.
    """
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text.strip():
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError(f"unbalanced ']' in {text!r}")
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise HostlistError(f"unbalanced '[' in {text!r}")
    parts.append("".join(cur).strip())
    if not skip_empty and any(not p for p in parts):
        raise HostlistError(f"empty host name in {text!r}")
    return [p for p in parts if p]


def _range_items(body: str, expr: str) -> list[str]:
    items: list[str] = []
    for piece in body.split(","):
        piece = piece.strip()
        if not piece:
            raise HostlistError(f"empty range item in {expr!r}")
        lo, sep, hi = piece.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise HostlistError(f"bad range {piece!r} in {expr!r}")
        if not sep:
            items.append(lo)
            continue
        if len(lo) > 18 or len(hi) > 18:
            raise HostlistError(f"range {piece[:40]!r} is too large in {expr[:80]!r}")
        a, b = int(lo), int(hi)
        if b < a:
            raise HostlistError(f"range {piece!r} runs backwards in {expr!r}")
        if b - a >= MAX_EXPAND:
            raise HostlistError(f"range {piece!r} is too large in {expr!r}")
        width = len(lo) if lo.startswith("0") and len(lo) > 1 else 0
        items.extend(str(n).zfill(width) for n in range(a, b + 1))
    return items


def expand_one(expr: str) -> list[str]:
    """Expand one name (no top-level comma) with any number of bracket groups."""
    m = _BRACKET_RE.search(expr)
    if m is None:
        if "[" in expr or "]" in expr:
            raise HostlistError(f"unbalanced brackets in {expr!r}")
        return [expr]
    head, tail = expr[: m.start()], expr[m.end():]
    rest = expand_one(tail)
    return [f"{head}{item}{r}" for item in _range_items(m.group(1), expr) for r in rest]


def expand_hostlist(expr: str, *, skip_empty: bool = False) -> list[str]:
    """Every host name of ``expr`` in order (duplicates kept, as Slurm prints them)."""
    hosts: list[str] = []
    for part in split_hostlist(expr, skip_empty=skip_empty):
        hosts.extend(expand_one(part))
        if len(hosts) > MAX_EXPAND:
            raise HostlistError(f"expansion of {expr[:60]!r} is too large")
    return hosts
