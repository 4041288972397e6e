"""Parsers for Slurm node listings: default ``sinfo`` (KIND ``sinfo``) and ``scontrol show node``
(KIND ``scontrol-node``).

``sinfo`` output::

    {"partitions": [{"partition": "short", "default": True, "avail": "up", "timelimit": "4:00:00",
                     "nodes": 6, "state": "down*", "base_state": "down", "flags": ["not_responding"],
                     "nodelist": "node[4-7,9,17]", "hosts": ["node4", ...], "line": 3}],
     "nodes": {"node4": {"states": ["down*"], "base_states": ["down"], "not_responding": True,
                         "partitions": ["short", "normal"]}}}

Other layouts are read by their header line (any that names ``STATE`` and ``NODELIST`` or
``HOSTNAMES``): node-oriented ``sinfo -N``/``-lNe`` (one node a row, ``REASON`` last, the time line
of ``-l`` above it), ``sinfo -o '%all'`` (``|``-separated) and ``sinfo -R`` (``REASON USER TIMESTAMP
NODELIST``: no STATE column, every node it lists is down, drained, fail or failing: state ``""``, flag
``listed_by_reason``); their rows carry ``reason`` too.
Without any header (``sinfo -h``, as scripts and exporters run it) rows are read by content: the six
default columns, or a node-first custom format (``-o '%n,%T'``, ``-N -O NodeList,...,StateLong``) whose
state is its last field naming a node state; a listing that names no node (``-o '%D,%T'``) is not read.

State suffixes (sinfo(1) "NODE STATE CODES"): ``*`` not responding, ``~`` powered off,
``#`` powering up, ``!``/``%`` powering down, ``$`` maintenance reservation, ``@`` pending
reboot, ``^`` rebooting, ``-`` planned by the backfill scheduler. The NODES column must match the
expanded NODELIST (else ParseError). ``scontrol show node`` output::

    {"nodes": [{"name": "gpu-node-07", "state": "DOWN+DRAIN", "base_state": "DOWN",
                "state_flags": ["DRAIN"], "drain": True, "reason": "clusterctl: ...",
                "reason_user": "root", "reason_time": "2024-11-02T10:05:00",
                "partitions": ["gpu"], "gres": "gpu:h100:8(S:0-1)", "cpu_tot": 192,
                "real_memory_mb": 2063000, "fields": {<every Key=Value as printed>}}]}
"""

from __future__ import annotations

import re
from typing import Any

from . import capture
from .common import ParseError, need_int, parser, to_int
from .hostlist import expand_hostlist

_SINFO_HEADER = ["PARTITION", "AVAIL", "TIMELIMIT", "NODES", "STATE", "NODELIST"]
_STATE_FLAGS = {"*": "not_responding", "~": "powered_off", "#": "powering_up", "!": "powering_down",
                "%": "powering_down", "$": "maintenance", "@": "reboot_pending", "^": "rebooting",
                "-": "planned"}
_BASE_STATES = {"allocated", "alloc", "completing", "comp", "down", "drained", "drain", "draining", "drng",
                "fail", "failing", "failg", "future", "futr", "idle", "inval", "maint", "mixed", "mix",
                "perfctrs", "npc", "planned", "plnd", "power_down", "powered_down", "powering_down",
                "powering_up", "pow_dn", "pow_up", "reboot_issued", "reboot_requested", "reserved",
                "resv", "unknown", "unk", "blocked", "block"}


def _state_and_hosts(state: str, nodelist: str, tool: str, lineno: int) -> tuple[str, list[str], list[str]]:
    """(base state, state flags, host names) of one sinfo row; ParseError for an unknown state or a
    NODELIST that is not a hostlist."""
    if len(state) > 4 and state[:2] in ("**", "__") and state[-2:] == state[:2]:
        state = state[2:-2]  # a state a Markdown page set in bold ('**drain**'); 'drain*' keeps its one '*'
    base, flags = _split_state(state)
    if base.lower() not in _BASE_STATES:
        raise ParseError(tool, f"unknown node state {state!r}", lineno)
    return base, flags, _hosts(nodelist, tool, lineno)


def _hosts(nodelist: str, tool: str, lineno: int) -> list[str]:
    """The host names of a NODELIST (of one cut with ``...``, those it names for sure); ParseError when it is
    not a hostlist."""
    try:
        return expand_hostlist(_uncut_nodelist(nodelist) or _ELIDED_ITEM.sub("", nodelist))
    except ValueError as exc:
        raise ParseError(tool, str(exc), lineno) from None


def _split_state(state: str) -> tuple[str, list[str]]:
    base = state
    flags: list[str] = []
    while base and base[-1] in _STATE_FLAGS:
        flags.insert(0, _STATE_FLAGS[base[-1]])
        base = base[:-1]
    return base, flags


_SINFO_DATE = re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2}\s+\d{1,2} \d{2}:\d{2}:\d{2} \d{4}$")
_HOST_COLS = ("NODELIST", "HOSTNAMES")


def _generic_header(line: str) -> tuple[str | None, list[str]] | None:
    """(separator, column names) of a header that names STATE and the nodes (NODELIST or HOSTNAMES)
    in a layout other than the default one: node-oriented ``sinfo -N``/``-lNe``, ``-o '%all'``
    (``|``-separated); None for the default header (read by :func:`parse_sinfo` itself)."""
    sep = "|" if "|" in line else None
    cols = [c.strip() for c in (line.split(sep) if sep else line.split())]
    if not any(h in cols for h in _HOST_COLS) or ("STATE" not in cols and "REASON" not in cols):
        return None  # 'sinfo -R' (REASON USER TIMESTAMP NODELIST) names no STATE: every node it lists is out
    if sep is None and set(_SINFO_HEADER) <= set(cols) and len(cols) == len(_SINFO_HEADER):
        return None
    return sep, cols


def _generic_row(generic: tuple[str | None, list[str]], line: str, tool: str, lineno: int) -> dict[str, Any]:
    sep, cols = generic
    # whitespace-separated: the last column (REASON, FEATURES) may hold spaces; 'sinfo -R' prints REASON
    # first, so its row is split from the right
    if sep:
        vals = [v.strip() for v in line.split(sep)]
    elif cols[0] == "REASON":
        vals = line.rsplit(None, len(cols) - 1)
    else:
        vals = line.split(None, len(cols) - 1)
    if len(vals) < len(cols) - (0 if sep else 1):
        raise ParseError(tool, f"expected {len(cols)} columns {' '.join(cols)[:60]}, got {line[:60]!r}", lineno)
    row: dict[str, str] = {}
    for c, v in zip(cols, vals):
        row.setdefault(c, v)  # '%all' repeats some names (STATE, PARTITION): the first is the node's
    nodelist = next((row[h] for h in _HOST_COLS if h in row), None)
    if nodelist is None:
        raise ParseError(tool, f"no NODELIST column in {' '.join(cols)[:60]!r}", lineno)
    state = row.get("STATE", "")
    if state:
        base, flags, hosts = _state_and_hosts(state, nodelist, tool, lineno)
    else:  # 'sinfo -R': sinfo(1) lists the reasons of nodes down, drained, fail or failing
        base, flags, hosts = "", ["listed_by_reason"], _hosts(nodelist, tool, lineno)
    part = row.get("PARTITION", "")
    reason = row.get("REASON", "").strip()
    return {"partition": part.rstrip("*"), "default": part.endswith("*"), "avail": row.get("AVAIL", "up"),
            "timelimit": row.get("TIMELIMIT"), "nodes": len(hosts), "state": state, "base_state": base,
            "flags": flags, "nodelist": nodelist, "hosts": hosts, "line": lineno,
            "reason": None if reason in ("", "none", "(null)") else reason}


_AVAIL = {"up", "down", "drain", "inact", "inactive"}


def _field_splits(line: str) -> list[list[str]]:
    """The ways a headerless row may be split, in order: at ``|``, at ``,`` (both outside ``[...]``:
    ``node[1-3,5],idle`` is two fields), at whitespace (``-O`` columns, whose GRES may hold commas)."""
    out_splits: list[list[str]] = []
    for sep in ("|", ","):
        out, depth, start = [], 0, 0
        for i, ch in enumerate(line):  # one linear pass
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth = max(depth - 1, 0)
            elif ch == sep and not depth:
                out.append(line[start:i].strip())
                start = i + 1
        if out:
            out_splits.append([*out, line[start:].strip()])
    return [*out_splits, line.split()]


def _headerless_row(line: str, tool: str, lineno: int) -> dict[str, Any] | None:
    """A row of ``sinfo -h`` (``--noheader``), as monitoring scripts and exporters run it: the default
    six columns, or a node-first custom format (``-o '%n,%T'``, ``-N -O NodeList,...,StateLong``) whose
    state is the last field naming a Slurm node state. None when the line is neither."""
    return next((r for vals in _field_splits(line) if (r := _headerless_fields(vals, tool, lineno)) is not None),
                None)


def _headerless_fields(vals: list[str], tool: str, lineno: int) -> dict[str, Any] | None:
    if (row := _default_row(vals, tool, lineno)) is not None:
        return row
    if len(vals) == 6 and vals[1].lower() in _AVAIL and vals[3].isdigit():
        return None  # the six default columns, but not a readable state or node list
    states = [i for i, v in enumerate(vals) if i and len(v) < 40 and _is_state(v)]
    if len(vals) < 2 or not states or not re.search(r"[A-Za-z]", vals[0]) or "/" in vals[0] \
            or len(vals[0].split()) != 1:
        return None
    try:
        base, flags, hosts = _state_and_hosts(vals[states[-1]], vals[0], tool, lineno)
    except ParseError:
        return None
    return _row("", "up", None, vals[states[-1]], base, flags, vals[0], hosts, lineno)


def _row(part: str, avail: str, limit: str | None, state: str, base: str, flags: list[str], nodelist: str,
         hosts: list[str], lineno: int, said: int | None = None) -> dict[str, Any]:
    """One row; ``said``: its NODES column, kept as ``nodes_said`` where it disagrees with the NODELIST (a wrapped
    or edited row: its named nodes are judged, the gap is said as coverage)."""
    return {"partition": part.rstrip("*"), "default": part.endswith("*"), "avail": avail, "timelimit": limit,
            "nodes": len(hosts), "state": state, "base_state": base, "flags": flags, "nodelist": nodelist,
            "hosts": hosts, "line": lineno, **({"nodes_said": said} if said is not None and said != len(hosts) else {})}


def _default_row(vals: list[str], tool: str, lineno: int) -> dict[str, Any] | None:
    """The one reader of the six default columns ``PARTITION AVAIL TIMELIMIT NODES STATE NODELIST``
    without their header (``sinfo -h``, or rows pasted without it): AVAIL a partition availability,
    NODES a number, STATE a known node state, NODELIST a non-empty hostlist. None if the fields are
    not such a row; ParseError if they are but NODES disagrees with the expanded NODELIST."""
    if len(vals) != 6 or vals[1].lower() not in _AVAIL or not vals[3].isdigit() or not _is_state(vals[4]):
        return None
    part, avail, limit, count_s, state, nodelist = vals
    try:
        base, flags, hosts = _state_and_hosts(state, nodelist, tool, lineno)
    except ParseError:
        return None
    if not hosts:
        return None
    return _row(part, avail, limit, state, base, flags, nodelist, hosts, lineno, int(count_s))


def _is_state(tok: str) -> bool:
    return _split_state(tok)[0].lower() in _BASE_STATES


def _headerless_tokens(tok: list[str], tool: str, lineno: int) -> dict[str, Any] | None:
    """A sinfo row pasted without its header line, its columns told by their content: the default
    six columns (:func:`_default_row`) or a ``-o`` subset ending in the node list (``%D %t %N``:
    ``4  maint c[005,011]``; ``%t %N``); the state is the last known node state before the node list,
    a NODES count must match it. None if the line is not such a row."""
    if len(tok) == 6:
        return _default_row(tok, tool, lineno)
    if not (2 <= len(tok) <= 3 and _is_state(tok[-2]) and (len(tok) == 2 or tok[0].isdigit())):
        return None
    count_s, state, nodelist = (tok[0] if len(tok) == 3 else ""), tok[-2], tok[-1]
    try:
        base, flags, hosts = _state_and_hosts(state, nodelist, tool, lineno)
    except ParseError:
        return None
    if not hosts or (count_s and int(count_s) != len(hosts)):
        return None
    return _row("", "up", None, state, base, flags, nodelist, hosts, lineno)


def _state_counts(numbered: list[tuple[int, str]]) -> list[dict[str, Any]] | None:
    """``sinfo -h -o %D,%T`` (or ``'%D %T'``, ``%T|%D``): every line a node count and a node state and nothing else
    (no node names: the nodes are counted, not named); None when any line is not one."""
    out: list[dict[str, Any]] = []
    for lineno, raw in numbered:
        line = raw.strip()
        if not line or capture.is_command(line, ("sinfo",)):
            continue
        vals = next((v for v in _field_splits(line) if len(v) == 2), None)
        if vals is None:
            return None
        count, state = (vals[0], vals[1]) if vals[0].isdigit() else (vals[1], vals[0])
        if not count.isdigit() or not _is_state(state):
            return None
        base, flags = _split_state(state)
        out.append({"count": int(count), "state": state, "base_state": base, "flags": flags, "line": lineno})
    return out or None


def _default_header(tok: list[str]) -> bool:
    return "PARTITION" in tok and "NODELIST" in tok


def _row_shaped(tok: list[str]) -> bool:
    """A row of the default layout (PARTITION AVAIL TIMELIMIT NODES STATE NODELIST; 5 fields for a partition
    without nodes)."""
    return len(tok) in (5, 6) and tok[3].isdigit()


def _tables_end(toks: list[list[str]]) -> int:
    """How many of the lines (``toks``: each line's tokens) to read: all but a last paragraph (after a blank line)
    that holds no header and no row of the default layout while the lines above it hold rows (a wrapper's closing
    note)."""
    blanks = [i for i, t in enumerate(toks) if not t]
    if not blanks:
        return len(toks)
    last = blanks[-1]
    tail = [t for t in toks[last + 1:] if t]
    if not tail or any(_row_shaped(t) or _default_header(t) for t in tail):
        return len(toks)
    above = toks[:last]
    if any(_default_header(t) for t in above) and any(_row_shaped(t) for t in above):
        return last
    return len(toks)


#: a 'sinfo -R' row: the reason (words), the user, the time it was set (or 'Unknown'), the nodes
_REASON_ROW = re.compile(r"^\S.{0,200}?\s+\S{1,64}\s+(?:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}|Unknown)\s+\S{1,4000}$")
_FRAME = re.compile(r"^[ \t]*(?:-{10,}|={10,})[ \t]*$")


def _open_nodelist(line: str) -> bool:
    """The line's last field is a NODELIST cut by a wrap: a ``[`` not closed, or a trailing ``,``."""
    last = line.rsplit(None, 1)[-1] if line.strip() else ""
    return last.count("[") > last.count("]") or (last.endswith(",") and len(last) > 1)


def _join_wrapped_nodelists(numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """A NODELIST a terminal or document wrapped: the line that goes on with ``,host...`` joined to the row above,
    and so is a one-field line after a row whose NODELIST the wrap left open (``r00n[07,11,`` / ``41,44],r01g03``)."""
    out: list[tuple[int, str]] = []
    for n, raw in numbered:
        s = raw.strip()
        prev = out[-1][1] if out else ""
        if len(s.split()) == 1 and prev.strip() and (s.startswith(",") or _open_nodelist(prev)):
            out[-1] = (out[-1][0], prev.rstrip() + s)
            out.append((n, ""))
        else:
            out.append((n, raw))
    return out


#: a NODELIST the paster cut with an ellipsis: ``gra[8,99,211,268,85...`` (its last name may be cut too)
_CUT_LIST = re.compile(r"(?:\.{3}|\u2026)$")
#: a ``...`` item inside a bracket, where a page shortened a long list ('nid[001006,...,002014]'): the numbers
#: around it are the hosts it names for sure
_ELIDED_ITEM = re.compile(r"(?<=\[)(?:\.{3}|\u2026),|,(?:\.{3}|\u2026)(?=[,\]])")


def _uncut_nodelist(nodelist: str) -> str | None:
    """The hosts a NODELIST cut with ``...`` names for sure (its last, maybe cut, element left out; an open
    ``[`` closed); None when it is not cut so."""
    if not _CUT_LIST.search(nodelist):
        return None
    head = _CUT_LIST.sub("", nodelist)
    head = head[:head.rfind(",")] if "," in head else ""
    if head.count("[") > head.count("]"):
        head += "]"
    return head or None


#: commands of other tools that a sinfo paste may go on with (their output follows, not sinfo's)
_OTHER_SLURM_COMMANDS = ("scontrol", "squeue", "sacct", "sacctmgr", "sbatch", "sdiag", "sshare", "sprio",
                         "nvidia-smi", "systemctl", "journalctl")


#: a count of nodes or CPUs by state: 'NODES(A/I/O/T)' (sinfo -s, %F) and 'CPUS(A/I/O/T)' (%C): allocated, idle,
#: other (down, drained, failing: out of service) and total
_AIOT = re.compile(r"(?P<a>\d{1,7})/(?P<i>\d{1,7})/(?P<o>\d{1,7})/(?P<t>\d{1,7})")


def _aiot_counts(numbered: list[tuple[int, str]]) -> list[dict[str, Any]] | None:
    """The rows of a summary table (``sinfo -s``: PARTITION AVAIL TIMELIMIT NODES(A/I/O/T) NODELIST; ``-o "%P %C"``:
    CPUS(A/I/O/T)): each row's partition, AVAIL (where shown), what is counted (``nodes``/``cpus``) and its four
    counts. None when the capture has no such header; the rows after it are read while they have its columns."""
    cols: list[str] | None = None
    out: list[dict[str, Any]] = []
    for lineno, raw in numbered:
        tok = raw.split()
        if cols is None:
            if any(t.endswith("(A/I/O/T)") for t in tok) and "PARTITION" in tok:
                cols = tok
            continue
        if not tok or capture.is_command(raw.strip(), ("sinfo",)):
            continue
        if len(tok) != len(cols):
            break
        row = dict(zip(cols, tok))
        for col, val in row.items():
            if col.endswith("(A/I/O/T)") and (m := _AIOT.fullmatch(val)):
                out.append({"partition": row["PARTITION"].rstrip("*"), "avail": row.get("AVAIL"),
                            "counted": col.split("(")[0].lower(), "allocated": int(m.group("a")),
                            "idle": int(m.group("i")), "other": int(m.group("o")), "total": int(m.group("t")),
                            "nodelist": row.get("NODELIST"), "line": lineno})
    return out if cols is not None and out else None


@parser("sinfo")
def parse_sinfo(text: str) -> dict[str, Any]:
    """Parse default-format ``sinfo`` output (one row per partition and state). A custom format whose header has no
    STATE column gives no rows and ``no_state_column: True``."""
    tool = "sinfo"
    rows: list[dict[str, Any]] = []
    header = headerless = False
    cols: list[str] | None = None
    generic: tuple[str | None, list[str]] | None = None
    lineno = 0
    other = ""
    empty: list[str] = []  # partitions listed with no node
    stateless = False  # the last header read has no STATE column (a custom format)
    # a runbook's frame of dashes or equals signs around the pasted run (sinfo prints no such line): blank
    numbered = _join_wrapped_nodelists([(n, "" if _FRAME.match(raw) else raw) for n, raw in capture.lines(text)])
    toks = [raw.split() for _n, raw in numbered]
    # a title above the first table ('VUW CLUSTER PARTITIONS' of a site's wrapper): skipped where a default header
    # follows; a closing paragraph of prose after the last table (the wrapper's 'NOTE: ...'): not read
    titled = any(map(_default_header, toks))
    body = [raw.strip() for _n, raw in numbered if raw.strip()]
    if not titled and body and (counts := _state_counts(numbered)) is not None:
        # 'sinfo -h -o %D,%T' (exporters, monitoring scripts): a node count and a state per line, no node names
        return {"partitions": [], "nodes": {}, "state_counts": counts}
    if "(A/I/O/T)" in text and "STATE" not in text and (aiot := _aiot_counts(numbered)) is not None:
        # 'sinfo -s' / '%F' / '%C': nodes or CPUs counted allocated/idle/other/total per partition, no state named
        # (a capture with a STATE column names its nodes' states: read by it)
        return {"partitions": [], "nodes": {}, "aiot_counts": aiot}
    if not titled and body and all(_REASON_ROW.match(ln) for ln in body):
        # 'sinfo -R | grep ...': the rows without their REASON USER TIMESTAMP NODELIST header
        header, generic = True, (None, ["REASON", "USER", "TIMESTAMP", "NODELIST"])
    for (lineno, raw), tok in zip(numbered[:_tables_end(toks)], toks):
        line = raw.strip()
        if not line:
            continue
        if line[0] == ">" and "NODELIST" in line:
            line = line.lstrip("> ")  # a header behind a Markdown quote mark its rows lack
            tok = line.split()
        if (rows or generic is not None) and line.startswith("REASON") and "NODELIST" in line \
                and (g := _generic_header(line)):
            header, generic = True, g  # a second table, 'sinfo -R' after 'sinfo': read by its own header
            continue
        if generic is None and ("STATE" in line or "REASON" in line) and not (header and cols is not None) and (
                g := _generic_header(line)) is not None:
            header, generic = True, g  # node-oriented (-N, -lNe) or -o '%all' layout: read by its header
            continue
        if rows and tok[:1] in (["PID"], ["UID"]) and tok[-1] in ("COMMAND", "CMD"):
            # ps's header after the rows (Slurm_tools' psnode: the node's sinfo row, then its processes): not sinfo's
            other = f"line {lineno}: the paste goes on with a process table ({line[:60]!r}), not read"
            break
        if generic is not None:
            if _default_header(tok):  # a second run in the default layout ('sinfo -Nel', then 'sinfo')
                generic, header = None, True
                cols = tok if set(_SINFO_HEADER) <= set(tok) and len(tok) == len(_SINFO_HEADER) else None
                continue
            rows.append(_generic_row(generic, line, tool, lineno))
            continue
        if not header and _SINFO_DATE.match(line):
            continue  # 'sinfo -l' prints the time above its header
        if _default_header(tok):
            # the default header, or another sinfo column order (the man page's '--states' example
            # prints NODES before TIMELIMIT); a summary header (-s: NODES(A/I/O/T)) has no STATE
            header = True
            cols = tok if set(_SINFO_HEADER) <= set(tok) and len(tok) == len(_SINFO_HEADER) else None
            stateless = "STATE" not in tok and not any(t.startswith("NODES(") for t in tok)
            continue
        if capture.is_command(line, ("sinfo",)):
            continue  # the shell prompt and command of a pasted session
        if rows and capture.is_command(line, _OTHER_SLURM_COMMANDS):
            # another tool's command after the rows ('scontrol show node cpu280'): its output is not sinfo's
            other = f"line {lineno}: the paste goes on with another command ({line[:60]!r}), not read"
            break
        if not header and (inferred := _headerless_tokens(tok, tool, lineno)) is not None:
            rows.append(inferred)  # rows grep'd or pasted without their header: columns read by content
            continue
        if not header and titled and not rows:
            continue  # a title above the table
        if not header:
            # 'sinfo -h' prints no header: each row must then be readable by content
            row_h = _headerless_row(line, tool, lineno) if headerless or not rows else None
            if row_h is None:
                raise ParseError(tool, f"expected the header {' '.join(_SINFO_HEADER)!r}, got {line[:60]!r}",
                                 lineno)
            headerless = True
            rows.append(row_h)
            continue
        if cols is None:
            continue  # rows of a summary (sinfo -s) table: no per-state rows to judge
        if len(tok) == 5 and tok[cols.index("NODES")] == "0":
            empty.append(tok[0])  # 'compute* up infinite 0 n/a': a partition without nodes
            continue
        if len(tok) > 6 and cols[-2:] == ["STATE", "NODELIST"] and _is_state(tok[-2]):
            # a site's longer format under the default header (job size, CPUs, S:C:T ... then STATE NODELIST):
            # the partition first, the node count, state and nodes last
            base, flags, hosts = _state_and_hosts(tok[-2], tok[-1], tool, lineno)
            said = int(tok[-3]) if tok[-3].isdigit() else None
            rows.append(_row(tok[0], "up", None, tok[-2], base, flags, tok[-1], hosts, lineno, said))
            continue
        if len(tok) != 6 or not tok[cols.index("NODES")].isdigit():
            raise ParseError(tool, f"expected 6 columns {' '.join(cols)}, got {line[:60]!r}", lineno)
        row = dict(zip(cols, tok))
        part, avail, limit = row["PARTITION"], row["AVAIL"], row["TIMELIMIT"]
        count = need_int(row["NODES"], tool, lineno, "NODES")
        state, nodelist = row["STATE"], row["NODELIST"]
        base, flags, hosts = _state_and_hosts(state, nodelist, tool, lineno)
        rows.append(_row(part, avail, limit, state, base, flags, nodelist, hosts, lineno, count))
    if not header and not rows:
        raise ParseError(tool, "no sinfo header line found (empty input?)", lineno or None)
    if not rows and empty:
        # every partition listed holds no node: nothing to judge (the check says so)
        return {"partitions": [], "nodes": {}, "empty_partitions": empty}
    if not rows and stateless:
        # a custom format ('sinfo -N --format="%N %P %c %G"') that prints no state column: its rows say nothing of
        # the nodes' health (the check says so)
        return {"partitions": [], "nodes": {}, "empty_partitions": [], "no_state_column": True}
    if not rows:
        raise ParseError(tool, "header but no partition rows (truncated?)", lineno)
    nodes: dict[str, dict[str, Any]] = {}
    for r in rows:
        for h in r["hosts"]:
            n = nodes.setdefault(h, {"states": [], "base_states": [], "not_responding": False,
                                     "partitions": []})
            if r["state"] not in n["states"]:
                n["states"].append(r["state"])
            if r["base_state"] not in n["base_states"]:
                n["base_states"].append(r["base_state"])
            n["not_responding"] = n["not_responding"] or "not_responding" in r["flags"]
            if r["partition"] not in n["partitions"]:
                n["partitions"].append(r["partition"])
            if r.get("reason") and r["reason"] not in n.setdefault("reasons", []):
                n["reasons"].append(r["reason"])
            if r["nodelist"] not in n.setdefault("nodelists", []):
                n["nodelists"].append(r["nodelist"])
    cut = [f"line {r['line']}: NODES says {r['nodes_said']} but NODELIST {r['nodelist']!r} names {len(r['hosts'])} "
           "(a wrapped or edited row)" for r in rows if "nodes_said" in r]
    cut += [other] if other else []
    return {"partitions": rows, "nodes": nodes, **({"cut": cut} if cut else {})}


#: a field in Markdown bold: ``**Gres=(null)**`` (a state's own '*', ``State=IDLE*``, stays)
_BOLD = re.compile(r"(?<!\S)\*\*(\S+?)\*\*(?!\S)")
_REST_OF_LINE = ("OS", "Reason", "Comment", "Extra")
#: the time of day of a date/time a custom SLURM_TIME_FORMAT prints after a blank
_CLOCK = re.compile(r"^\d{1,2}:\d{2}(?::\d{2})?(?:[.\w+-]{0,12})$")
#: ``Reason=text [user@time]``; no ``[`` inside the brackets, so a run of ``[`` is not rescanned from each one
_REASON = re.compile(r"^(?P<text>.*?)\s*\[(?P<user>[^@\[\]]+)@(?P<time>[^\[\]]+)\]\s*$")


def _int(v: str | None) -> int | None:
    return to_int(v) if v is not None and v.isdigit() else None


def _finish_node(fields: dict[str, str], tool: str, lineno: int, excerpt: bool = False) -> dict[str, Any]:
    if "State" not in fields and not excerpt:
        raise ParseError(tool, f"node {fields.get('NodeName')} has no State= (truncated?)", lineno)
    state = fields.get("State", "")
    parts = state.split("+")
    base = parts[0].rstrip("*~#!%$@^-")
    reason = fields.get("Reason")
    rm = _REASON.match(reason) if reason else None
    return {
        "name": fields["NodeName"] or None,
        "state": state or None,
        "base_state": base,
        "state_flags": parts[1:],
        "drain": "DRAIN" in parts[1:] or base in ("DRAIN", "DRAINED", "DRAINING"),
        "reason": (rm.group("text") if rm else reason) or None,
        "reason_user": rm.group("user") if rm else None,
        "reason_time": rm.group("time") if rm else None,
        "partitions": [p for p in fields.get("Partitions", "").split(",") if p],
        "gres": fields.get("Gres"),
        "cpu_tot": _int(fields.get("CPUTot")),
        "real_memory_mb": _int(fields.get("RealMemory")),
        "fields": fields,
    }


@parser("scontrol-node")
def parse_scontrol_node(text: str) -> dict[str, Any]:
    """Parse ``scontrol show node [NAME]`` (one or many nodes, blank-line separated), also ``-o`` (one
    line per node, where the OS and Reason text runs on, spaces and all, until the next ``Key=``). A grep'd excerpt
    without ``State=`` is an ``excerpt``; one that starts at ``Reason=`` or ``State=`` (``| grep Reason``) is a node
    whose ``name`` is None."""
    tool = "scontrol-node"
    records: list[tuple[dict[str, str], int]] = []
    fields: dict[str, str] | None = None
    lineno = 0
    for lineno, raw in capture.lines(text):
        line = raw.strip()
        if not line or line in ("...", "[...]", "…"):  # an elision the paster made: judge what is there
            continue
        if re.match(r"^Node \S+ not found", line):
            raise ParseError(tool, line, lineno)
        if line.startswith("NodeName="):
            if fields is not None:
                records.append((fields, lineno))
            fields = {}
        elif fields is None and capture.is_command(line, ("scontrol",)):
            continue  # the pasted command ('adev0: scontrol show node adev1', '$ scontrol ... | grep ...')
        elif fields is None and line.startswith(("Reason=", "State=")):
            # '| grep Reason' (or 'State\|Reason'): the node's state or reason alone, its name not in the excerpt
            fields = {"NodeName": ""}
        elif fields is None:
            raise ParseError(tool, f"expected 'NodeName=...', got {line[:60]!r}", lineno)
        # a paster's arrow note after the fields; Markdown bold around a field ('**Gres=(null)**')
        line = capture.ARROW_NOTE.sub("", line)
        if "**" in line:
            line = _BOLD.sub(r"\1", line)
        key = line.split("=", 1)[0]
        if key in _REST_OF_LINE and "=" in line:
            fields[key] = line.split("=", 1)[1].strip()
            continue
        prev = ""
        for tok in line.split():
            if "=" not in tok:
                if prev in _REST_OF_LINE:  # 'scontrol show nodes -o': OS/Reason text with spaces on one line
                    fields[prev] += " " + tok
                    continue
                if prev.endswith("Time") and _CLOCK.match(tok):
                    # SLURM_TIME_FORMAT with a blank ('%F %T.%Z': 'BootTime=2025-07-21 14:35:22.UTC')
                    fields[prev] += " " + tok
                    continue
                raise ParseError(tool, f"expected Key=Value, got {tok[:40]!r}", lineno)
            prev, v = tok.split("=", 1)
            fields[prev] = v
    if fields is not None:
        records.append((fields, lineno))
    # a grep'd excerpt ('| grep NodeName\\|Extra') has no State= at all: its nodes are kept unjudged;
    # one node without State= among nodes with it is a cut capture
    excerpt = bool(records) and not any("State" in f for f, _lineno in records)
    cut: list[str] = []
    if not excerpt and len(records) > 1 and "State" not in records[-1][0]:
        # the paste ends inside its last node's record, before State=: judge the nodes it holds whole
        last, last_line = records.pop()
        cut.append(f"the capture ends at line {last_line} inside node {last.get('NodeName')}'s record (no State=)")
    nodes = [_finish_node(f, tool, ln, excerpt) for f, ln in records]
    if not nodes:
        raise ParseError(tool, "no 'NodeName=' record found (empty input?)", lineno or None)
    return {"nodes": nodes, "excerpt": excerpt, **({"cut": cut} if cut else {})}
