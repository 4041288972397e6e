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


def _show(text: str) -> str:
    """The expression for a message: at most 80 characters of it (a message must stay readable)."""
    return repr(text) if len(text) <= 80 else repr(text[:80]) + f"... ({len(text)} characters)"


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
                raise HostlistError(f"unbalanced ']' in {_show(text)}")
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise HostlistError(f"unbalanced '[' in {_show(text)}")
    parts.append("".join(cur).strip())
    if not skip_empty and any(not p for p in parts):
        raise HostlistError(f"empty host name in {_show(text)}")
    return [p for p in parts if p]


def _ranges(body: str, expr: str) -> list[tuple[int, int, int, str]]:
    """The (first, last, zero-padded width, single number as written or '') ranges of one bracket's
    body, checked, not expanded."""
    out: list[tuple[int, int, int, str]] = []
    for piece in body.split(","):
        piece = piece.strip()
        if not piece:
            raise HostlistError(f"empty range item in {_show(expr)}")
        lo, sep, hi = piece.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise HostlistError(f"bad range {_show(piece)} in {_show(expr)}")
        if len(lo) > 18 or len(hi) > 18:
            raise HostlistError(f"range {_show(piece)} is too large in {_show(expr)}")
        a = int(lo)
        b = int(hi) if sep else a
        if b < a:
            raise HostlistError(f"range {_show(piece)} runs backwards in {_show(expr)}")
        if b - a >= MAX_EXPAND:
            raise HostlistError(f"range {_show(piece)} is too large in {_show(expr)}")
        out.append((a, b, len(lo) if sep and lo.startswith("0") and len(lo) > 1 else 0, "" if sep else lo))
    return out


def _items(ranges: list[tuple[int, int, int, str]]) -> list[str]:
    items: list[str] = []
    for a, b, width, single in ranges:
        if single:
            items.append(single)  # a single number is kept as written (node[01] is node01)
        else:
            items.extend(str(n).zfill(width) for n in range(a, b + 1))
    return items


def expand_one(expr: str) -> list[str]:
    """Expand one name (no top-level comma) with any number of bracket groups.

    Iterative, and the size of the product is checked before anything is built: a name of many
    bracket groups neither recurses once per group nor builds a product larger than MAX_EXPAND.
    """
    literals: list[str] = []
    bodies: list[str] = []
    pos = 0
    for m in _BRACKET_RE.finditer(expr):
        literals.append(expr[pos:m.start()])
        bodies.append(m.group(1))
        pos = m.end()
    literals.append(expr[pos:])
    if any("[" in lit or "]" in lit for lit in literals):
        raise HostlistError(f"unbalanced brackets in {_show(expr)}")
    if not bodies:
        return [expr]
    parsed = [_ranges(body, expr) for body in bodies]
    total = 1
    for ranges in parsed:
        total *= sum(r[1] - r[0] + 1 for r in ranges)
        if total > MAX_EXPAND:
            raise HostlistError(f"expansion of {_show(expr)} is too large (more than {MAX_EXPAND} names)")
    names = [literals[0]]
    for i, ranges in enumerate(parsed):
        lit = literals[i + 1]
        names = [f"{n}{item}{lit}" for n in names for item in _items(ranges)]
    return names


def expand_hostlist(expr: str, *, skip_empty: bool = False) -> list[str]:
    """Every host name of ``expr`` in order (duplicates kept, as Slurm prints them)."""
    hosts: list[str] = []
    for part in split_hostlist(expr, skip_empty=skip_empty):
        hosts.extend(expand_one(part))
        if len(hosts) > MAX_EXPAND:
            raise HostlistError(f"expansion of {_show(expr)} is too large (more than {MAX_EXPAND} names)")
    return hosts
