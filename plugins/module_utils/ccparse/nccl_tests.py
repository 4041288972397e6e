"""Parsers for nccl-tests output: the text table (``nccl-tests``) and the ``-J`` JSON (``nccl-tests-json``).

Text: both column layouts are read from the header line itself, the old one (``size count type
redop time algbw busbw error ...``, nccl-tests < 2.10) and the current one (with ``root`` and
``#wrong``). ``NCCL INFO`` lines interleaved with the table (NCCL_DEBUG=INFO) are set aside and
summarised by :func:`ccparse.nccl_log.summarize` into ``nccl``::

    {"collective": "all_reduce_perf"|None, "nccl_version": "2.16.2", "tests_version": "2.19.6"|None,
     "n_threads": 1, "n_gpus_per_proc": 1, "min_bytes": 33554432, "max_bytes": 1073741824,
     "n_ranks": 16, "hosts": ["host1", "host2"], "devices": [{"rank": 0, "host": .., "device": 0,
                                                            "bus": "0x00", "model": "NVIDIA A100-SXM4-80GB"}],
     "format": "new"|"old",
     "rows": [{"size_bytes": 1073741824, "count": 268435456, "type": "float", "redop": "sum", "root": -1,
               "out_of_place": {"time_us": 11013.0, "algbw_GBps": 97.5, "busbw_GBps": 182.8, "wrong": 0},
               "in_place": {...}, "line": 30}],
     "largest": {...the row at the largest size...}, "busbw_largest_GBps": 182.8,
     "algbw_largest_GBps": 97.5, "wrong_total": 0, "out_of_bounds": 0, "avg_busbw_GBps": 150.209,
     "nccl": {...nccl-log summary...} | None}

``busbw_largest_GBps`` is the out-of-place bus bandwidth at the largest message size (what the
checks judge); ``avg_busbw_GBps`` is nccl-tests' own average over all sizes, kept for reference
only. ``#wrong`` of ``N/A`` (validation off, old layout ``error`` column) is None. ``validation`` is the
parameter line's ``validation:`` (0: nccl-tests did not check the results, so ``#wrong`` 0 proves nothing).

A run that failed is a result: an nccl-tests failure line (``Test NCCL failure``, ``Test CUDA
failure``, ``Test failure``, ``NCCL WARN Cuda failure``) or a launcher failure instead of a result
table (``There are not enough slots available``, ``mpirun noticed that process rank ...``) gives
``failure: {"line": 11, "text": ...}`` (the first such line) with whatever rows came before; the
check reports it as critical. Input without a result header raises :class:`ParseError`; a header with
no row after it (a paste cut there), or nccl-tests' parameter line (``# nThread ... minBytes ...``) and
``#  Rank`` list with no header after them, parses with ``rows: []`` and the cut recorded. What an
operator's paste leaves out is recorded in ``cut`` (a list of sentences, empty for a whole run) and
the rows there are judged: a table cut before nccl-tests' trailer (``# Avg bus bandwidth``), rows
pasted without their header line (the layout is inferred from the row: 13 fields current, 12 old
with ``redop``, 11 old without), a header and trailer pasted without their leading ``#``.
The KIND ``nccl-tests`` also reads
the ``-J`` JSON file (by content); ``nccl-tests-json`` remains its own KIND name.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from .common import ParseError, json_loads, need_int, parser, split_lines, strip_source_line, to_float, to_int
from .nccl_log import summarize

TOOL = "nccl-tests"
TOOL_JSON = "nccl-tests -J"

_NCCL_LINE = re.compile(r"^\S+:\d+:\d+ \[[^\]]*\] (?:[\w./-]+:\d+ )?NCCL (INFO|WARN|TRACE)")
#: nccl-tests' banner lines (parameters, 'Using devices', a rank's device) as a Markdown page shows them: without
#: the '#' it took for a heading mark
_HASHLESS = re.compile(r"^(?:nThread \d+ nGpus \d+ minBytes|Using devices\s*$|Rank\s+\d+ Group\s+\d+ Pid\s+\d)")
_PARAMS = re.compile(r"^#\s*nThread (\d+) nGpus (\d+) minBytes (\d+) maxBytes (\d+)")
_RANK = re.compile(r"^#\s+Rank\s+(\d+)(?:\s+Group\s+\d+)?\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)"
                   r"\s+\[([^\]]*)\]\s*(.*)$")
#: nccl-tests' '-c' setting on its parameter line ('... agg iters: 1 validation: 0 graph: 0'): 0 = results not checked
_VALIDATION = re.compile(r"\bnThread \d+ .{0,200}?\bvalidation: (\d)")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_TESTS_VERSION = re.compile(r"^#\s*nccl-tests version (\S+)")
_COLLECTIVE = re.compile(r"^#\s*Collective test starting: (\S+)")
#: the test's binary ('all_reduce_perf', MPI builds' 'alltoall_perf_mpi')
_BINARY = re.compile(r"\b(\w+?_perf)(?:_mpi)?\b")
_AVG = re.compile(r"^(?:#\s*)?Avg bus bandwidth\s*:\s*(\S+)")
_OOB = re.compile(r"^(?:#\s*)?Out of bounds values\s*:\s*(\d+)")
_MPI_ERRORS = (
    "There are not enough slots available", "mpirun noticed that", "mpirun was unable", "ORTE was unable",
    "PRTE has lost communication", "srun: error", "MPI_ABORT was invoked", "Primary job  terminated normally",
    "mpirun detected that one or more processes exited", "prterun was unable", "PMIX ERROR",
)
#: any of _MPI_ERRORS in a line (one regex search per line, not one substring search per message)
_MPI_ERROR = re.compile("|".join(re.escape(e) for e in _MPI_ERRORS))
_TEST_FAIL = re.compile(r"(Test NCCL failure|Test CUDA failure|Test failure|NCCL failure|Cuda failure)\b.*")
_NUM = re.compile(r"^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
#: _MPI_ERROR or _TEST_FAIL somewhere in a line: one search for the lines that hold neither (nearly all)
_FAILURE_ANY = re.compile(f"{_MPI_ERROR.pattern}|{_TEST_FAIL.pattern}")


def _may_fail(s: str) -> bool:
    """False only where ``_FAILURE_ANY.search(s)`` finds nothing: every text it finds holds one of these
    substrings (each message of _MPI_ERRORS and each failure _TEST_FAIL names holds one), so a line
    holding none of them is not searched (the alternation's search costs about 2 us a line, these
    substring tests a tenth of that)."""
    return "failure" in s or "unable" in s or "mpirun" in s or "slots" in s or "PRTE" in s or "srun" in s \
        or "MPI_ABORT" in s or "Primary job" in s or "PMIX" in s


@lru_cache(maxsize=4096)
def _f(tok: str) -> float | None:
    return to_float(tok) if _NUM.match(tok) else None


@lru_cache(maxsize=4096)
def _wrong(tok: str) -> int | None:
    return to_int(to_float(tok)) if _NUM.match(tok) else None


def _header_columns(line: str) -> list[str] | None:
    toks = line.lstrip("#").split()
    if len(toks) < 8 or toks[0] != "size" or toks[1] != "count":
        return None
    return toks


_TIME_COLS = ("time", "cputime")
_HALF_NEW = ["time", "algbw", "busbw", "#wrong"]
_HALF_OLD = ["time", "algbw", "busbw", "error"]


def _inferred_columns(toks: list[str]) -> list[str] | None:
    """The column names of a result row pasted without its header line (a tail or an excerpt),
    from the row's own shape: 13 fields = current layout (``redop root``), 12 = old layout with
    ``redop``, 11 = old layout without it (all_gather, alltoall); None when it is not one."""
    if len(toks) < 11 or not toks[0].isdigit() or not toks[1].isdigit() or _NUM.match(toks[2]):
        return None
    redop = not _NUM.match(toks[3])
    if len(toks) == 13 and redop and _NUM.match(toks[4]):
        return ["size", "count", "type", "redop", "root", *_HALF_NEW, *_HALF_NEW]
    if len(toks) == 12 and redop:
        return ["size", "count", "type", "redop", *_HALF_OLD, *_HALF_OLD]
    if len(toks) == 11 and not redop:
        return ["size", "count", "type", *_HALF_OLD, *_HALF_OLD]
    return None


_WRONG_COLS = ("#wrong", "error")


@lru_cache(maxsize=64)
def _layout(cols: tuple[str, ...]
            ) -> tuple[list[int], dict[str, int], list[tuple[int, dict[str, int], int | None]], int]:
    """Where a header's columns are: the time columns, the head's name -> index, and for the
    out-of-place and in-place parts (begin, name -> index, index of the ``#wrong``/``error`` value);
    a name that repeats maps to its last column (as a dict built from the pairs would); each part is
    (first column, name -> column, column of the wrong count or None)."""
    n = len(cols)
    starts = [i for i, c in enumerate(cols) if c in _TIME_COLS]
    head = dict(zip(cols[:starts[0]], range(starts[0]))) if starts else {}
    stop2 = cols.index("#iters") if "#iters" in cols else n
    parts = []
    if len(starts) == 2:
        for begin, stop in ((starts[0], starts[1]), (starts[1], stop2)):
            idx = dict(zip(cols[begin:stop], range(begin, stop)))
            parts.append((begin, idx, next((idx[c] for c in _WRONG_COLS if c in idx), None)))
    return starts, head, parts, stop2


def _row(cols: list[str], toks: list[str], lineno: int) -> dict[str, Any]:
    """One result row, read by the header's own column names (old, new, ``#iters`` and
    ``esttime`` layouts); a trailing experiment name after ``#iters`` is allowed."""
    n = len(cols)
    if len(toks) == n - 1 and "redop" in cols and "root" not in cols and len(toks) > 3 and _NUM.match(toks[3]):
        toks = [*toks[:3], "", *toks[3:]]  # alltoall/all_gather print an empty redop in the old layout
    if len(toks) < n or (len(toks) > n and cols[-1] != "#iters"):
        raise ParseError(TOOL, f"result row has {len(toks)} fields, header has {n} (truncated?)", lineno)
    starts, head, parts, stop2 = _layout(tuple(cols))
    if len(starts) != 2:
        raise ParseError(TOOL, f"header has {len(starts)} time columns, expected 2: {' '.join(cols)}", lineno)

    def part(begin: int, idx: dict[str, int], wrong: int | None) -> dict[str, Any]:
        algbw, busbw = idx.get("algbw"), idx.get("busbw")
        return {"time_us": _f(toks[idx[cols[begin]]]), "algbw_GBps": _f(toks[algbw] if algbw is not None else ""),
                "busbw_GBps": _f(toks[busbw] if busbw is not None else ""),
                "wrong": _wrong(toks[wrong]) if wrong is not None else None}

    def at(name: str) -> str | None:
        i = head.get(name)
        return toks[i] if i is not None else None

    root = at("root")
    row: dict[str, Any] = {
        "size_bytes": need_int(toks[head["size"]], TOOL, lineno, "size"), "count": _wrong(at("count") or ""),
        "type": at("type"),
        "redop": at("redop"), "root": _wrong(root) if root is not None else None,
        "out_of_place": part(*parts[0]), "in_place": part(*parts[1]), "line": lineno}
    if "#iters" in cols:
        row["iterations"] = _wrong(toks[stop2])
    if row["out_of_place"]["busbw_GBps"] is None:
        raise ParseError(TOOL, f"result row with a non-numeric busbw: {' '.join(toks)[:80]!r}", lineno)
    return row


def _summary(out: dict[str, Any], tool: str, last: int | None) -> dict[str, Any]:
    rows = out["rows"]
    if not rows:
        raise ParseError(tool, "no result rows (the test did not run, or this is not nccl-tests output)", last)
    largest = max(rows, key=lambda r: r["size_bytes"])
    out["largest"] = largest
    out["busbw_largest_GBps"] = largest["out_of_place"]["busbw_GBps"]
    out["algbw_largest_GBps"] = largest["out_of_place"]["algbw_GBps"]
    wrongs = [r[p]["wrong"] for r in rows for p in ("out_of_place", "in_place") if r[p]["wrong"] is not None]
    out["wrong_total"] = sum(wrongs) if wrongs else None
    return out


def _collective_of_commands(out: dict[str, Any], commands: list[str]) -> dict[str, Any]:
    """A command reader (COMMAND_READERS): the collective a shown launch line names ('+ srun ... alltoall_perf_mpi
    -b 4.1M') where the output itself does not."""
    if out.get("collective") is None and (b := next((m for c in commands if (m := _BINARY.search(c))), None)):
        return {**out, "collective": b.group(1)}
    return out


@parser("nccl-tests", commands=_collective_of_commands)
def parse_nccl_tests(text: str) -> dict[str, Any]:
    """nccl-tests' text output, or its ``-J`` JSON file (detected by content: the first non-blank
    character is ``{``); ``nccl-tests-json`` stays a KIND name of its own for the JSON."""
    if strip_source_line(text).lstrip().startswith("{"):
        try:
            return parse_nccl_tests_json(text)
        except ParseError:
            pass  # not nccl-tests' one JSON document (a wrapper's JSON log lines around its text output): read as text
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    out: dict[str, Any] = {"validation": None, "collective": None, "nccl_version": None, "tests_version": None,
                           "n_threads": None,
                           "n_gpus_per_proc": None, "min_bytes": None, "max_bytes": None, "n_ranks": None,
                           "hosts": [], "devices": [], "format": None, "rows": [], "largest": None,
                           "busbw_largest_GBps": None, "algbw_largest_GBps": None, "wrong_total": None,
                           "out_of_bounds": None, "avg_busbw_GBps": None, "nccl": None, "failure": None,
                           "cut": []}
    cols: list[str] | None = None
    nccl_lines: list[tuple[int, str]] = []
    trailer = False
    last_row = 0
    last = 0
    mpi_error: tuple[int, str] | None = None
    for lineno, raw in enumerate(split_lines(strip_source_line(text)), start=1 + offset):
        s = raw.strip()
        if not s:
            continue
        last = lineno
        if _NCCL_LINE.match(s):
            nccl_lines.append((lineno, s))
            continue
        if _may_fail(s) and _FAILURE_ANY.search(s):
            if mpi_error is None and _MPI_ERROR.search(s):
                mpi_error = (lineno, s)
                continue
            fail = _TEST_FAIL.search(s)
            if fail and not s.startswith("#  "):
                if out["failure"] is None:
                    out["failure"] = {"line": lineno, "text": s[:300]}
                continue
        if "validation:" in s and (v := _VALIDATION.search(s)):
            out["validation"] = to_int(v.group(1))  # the parameter line, with or without its '#'
        if s[:1] in ("n", "U", "R") and _HASHLESS.match(s):
            s = "# " + s  # a banner line whose '#' a Markdown page took as a heading mark
        if s.startswith("#") and cols is not None and s[1:].lstrip()[:1].isdigit() \
                and len(s[1:].split()) == len(cols):
            s = s[1:].lstrip()  # a result row behind '#' (a harness that comments the table it relays): a row
        if s.startswith("#"):
            # each pattern below reads '#', blanks, then its own first letter: only the one (or two)
            # of that letter are asked (the first one that matches wins, as in a chain of all six)
            lead = s[1:].lstrip()[:1]
            if lead == "n" and (m := _PARAMS.match(s)):
                out["n_threads"], out["n_gpus_per_proc"] = to_int(m.group(1)), to_int(m.group(2))
                out["min_bytes"], out["max_bytes"] = to_int(m.group(3)), to_int(m.group(4))
            elif lead == "R" and (m := _RANK.match(s)):
                out["devices"].append({"rank": to_int(m.group(1)), "host": m.group(2), "device": to_int(m.group(3)),
                                       "bus": m.group(4), "model": m.group(5).strip()})
            elif lead == "n" and (m := _TESTS_VERSION.match(s)):
                out["tests_version"] = m.group(1)
                lib = re.search(r"nccl-library=(\d+)", s)
                if lib and out["nccl_version"] is None:  # NCCL_VERSION_CODE, e.g. 22809 -> 2.28.9
                    code = to_int(lib.group(1))
                    if code is not None:
                        out["nccl_version"] = f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
            elif lead == "C" and (m := _COLLECTIVE.match(s)):
                out["collective"] = m.group(1)
            elif lead == "A" and (m := _AVG.match(s)) is not None:
                out["avg_busbw_GBps"] = _f(m.group(1))
                trailer = True
            elif lead == "O" and (m := _OOB.match(s)):
                out["out_of_bounds"] = to_int(m.group(1))
            elif (c := _header_columns(s)) is not None:
                cols = c
                out["format"] = "new" if "root" in c else "old"
            continue
        if m := _VERSION.search(s):
            out["nccl_version"] = m.group(1)
            continue
        # the line does not start with '#' (that branch ended above): _header_columns(s) is this split's
        toks = s.split()
        if len(toks) >= 8 and toks[0] == "size" and toks[1] == "count":  # header pasted without its '#'
            cols = toks
            out["format"] = "new" if "root" in toks else "old"
            continue
        if (m := _AVG.match(s)) is not None:
            out["avg_busbw_GBps"] = _f(m.group(1))
            trailer = True
            continue
        if m := _OOB.match(s):
            out["out_of_bounds"] = to_int(m.group(1))
            continue
        if cols is None and (c := _inferred_columns(toks)) is not None:
            cols = c
            out["format"] = "new" if "root" in c else "old"
            out["cut"].append(f"no header line: columns inferred from the row at line {lineno}")
        if cols is not None and toks and toks[0].isdigit():
            row = _row(cols, toks, lineno)
            out["rows"].append(row)
            last_row = lineno
            continue
        if out["collective"] is None and (b := _BINARY.search(s)):
            out["collective"] = b.group(1)
    if mpi_error is not None and not out["rows"] and out["failure"] is None:
        out["failure"] = {"line": mpi_error[0], "text": f"the launcher failed, no results: {mpi_error[1][:260]}"}
    if out["failure"] is not None:
        # a run that failed is a result, not unreadable input: the check reports it (critical)
        out["n_ranks"] = len(out["devices"]) or None
        out["hosts"] = sorted({d["host"] for d in out["devices"]})
        if nccl_lines:
            out["nccl"] = summarize(nccl_lines)
        if out["rows"]:
            _summary(out, TOOL, last or None)
        return out
    if cols is None and (out["min_bytes"] is None or not out["devices"] or out["rows"]):
        first = next((s.strip() for s in text.splitlines() if s.strip() and not s.startswith("# source")), "")
        raise ParseError(TOOL, f"no nccl-tests result header ('#  size  count  type ...'); starts {first[:60]!r}",
                         last or None)
    if not out["rows"]:
        # the header and no row, no failure line: a paste cut after the header (or a run that had not
        # printed a row yet): read, but nothing measured to judge
        # (or the parameter line and the rank list with no column header: a paste cut before the table)
        where = "after the column header" if cols is not None else "before the column header"
        out["cut"].append(f"the capture ends at line {last} {where}: no result row")
        out["n_ranks"] = len(out["devices"]) or None
        out["hosts"] = sorted({d["host"] for d in out["devices"]})
        if nccl_lines:
            out["nccl"] = summarize(nccl_lines)
        return out
    _summary(out, TOOL, last or None)
    if not trailer:
        # a table cut before its trailer (a pasted excerpt, a run still going): judge the rows there are
        out["cut"].append(f"table ends at line {last_row} without nccl-tests' '# Avg bus bandwidth' trailer")
    out["n_ranks"] = len(out["devices"]) or None
    out["hosts"] = sorted({d["host"] for d in out["devices"]})
    if nccl_lines:
        out["nccl"] = summarize(nccl_lines)
        if out["nccl_version"] is None:
            out["nccl_version"] = out["nccl"]["version"]
        if out["n_ranks"] is None:
            out["n_ranks"] = out["nccl"]["n_ranks"]
    if out["collective"] is None:
        out["collective"] = "all_reduce_perf" if out["rows"][0]["redop"] not in (None, "none") else None
    return out


def _jnum(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return to_float(v)
    if isinstance(v, str) and _NUM.match(v.strip()):
        return to_float(v)
    return None


@parser("nccl-tests-json")
def parse_nccl_tests_json(text: str) -> dict[str, Any]:
    """nccl-tests ``-J <file>`` output (``src/util.cu``: ``config`` with ``devices``, ``results``
    with ``out_of_place``/``in_place`` objects of ``time``/``alg_bw``/``bus_bw``/``nwrong``,
    ``out_of_bounds``, ``average_bus_bandwidith`` [sic]), normalised to the text parser's shape."""
    body = strip_source_line(text).strip()
    if not body:
        raise ParseError(TOOL_JSON, "empty input", None)
    try:
        doc = json_loads(body)
    except json.JSONDecodeError as exc:
        line = exc.lineno + (1 if text.startswith(("# source:", "#source:")) else 0)
        raise ParseError(TOOL_JSON, f"not JSON (truncated file?): {exc.msg}", line) from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise ParseError(TOOL_JSON, "no 'results' list at the top level (not an nccl-tests -J file)", None)
    cfg: dict[str, Any] = doc["config"] if isinstance(doc.get("config"), dict) else {}
    rows = []
    for i, r in enumerate(doc["results"]):
        if not isinstance(r, dict) or _jnum(r.get("size")) is None:
            raise ParseError(TOOL_JSON, f"results[{i}] has no numeric 'size'", None)

        def part(p: Any) -> dict[str, Any]:
            p = p if isinstance(p, dict) else {}
            w = _jnum(p.get("nwrong"))
            return {"time_us": _jnum(p.get("time", p.get("cpu_time"))), "algbw_GBps": _jnum(p.get("alg_bw")),
                    "busbw_GBps": _jnum(p.get("bus_bw")), "wrong": to_int(w)}

        oop, inp = part(r.get("out_of_place")), part(r.get("in_place"))
        if oop["busbw_GBps"] is None:  # trace replay writes only in-place
            oop = inp
        if oop["busbw_GBps"] is None:
            raise ParseError(TOOL_JSON, f"results[{i}] has no numeric bus_bw", None)
        root = _jnum(str(r.get("root", "")).strip())
        rows.append({"size_bytes": to_int(_jnum(r["size"])) or 0, "count": to_int(_jnum(r.get("count"))) or 0,
                     "type": r.get("type"), "redop": r.get("redop"), "root": to_int(root),
                     "out_of_place": oop, "in_place": inp, "iterations": r.get("actual_iterations"), "line": None})
    devices = [d for d in (cfg.get("devices") or doc.get("devices") or []) if isinstance(d, dict)]
    args = doc.get("args") if isinstance(doc.get("args"), list) else []
    binary = _BINARY.search(str(args[0])) if args else None
    code = _jnum(doc.get("nccl_version"))
    oob: dict[str, Any] = doc["out_of_bounds"] if isinstance(doc.get("out_of_bounds"), dict) else {}
    avg = doc.get("average_bus_bandwidith") or doc.get("average_bus_bandwidth")
    errors = [str(e) for e in (doc.get("errors") or []) if e]
    out: dict[str, Any] = {
        "collective": binary.group(1) if binary else None,
        "nccl_version": (f"{int(code) // 10000}.{int(code) % 10000 // 100}.{int(code) % 100}" if code else None),
        "tests_version": None,
        "n_threads": cfg.get("nthreads"), "n_gpus_per_proc": cfg.get("ngpus"),
        "min_bytes": cfg.get("minimum_bytes"), "max_bytes": cfg.get("maximum_bytes"),
        "n_ranks": len(devices) or None,
        "hosts": sorted({str(d.get("hostname")) for d in devices if d.get("hostname")}),
        "devices": [{"rank": d.get("rank"), "host": d.get("hostname"), "device": d.get("device"),
                     "bus": d.get("device_hex"), "model": d.get("device_info")} for d in devices],
        "format": "json", "rows": rows, "largest": None, "busbw_largest_GBps": None, "algbw_largest_GBps": None,
        "wrong_total": None, "out_of_bounds": _jnum(oob.get("count")),
        "avg_busbw_GBps": _jnum(avg.get("bandwidith", avg.get("bandwidth"))) if isinstance(avg, dict) else None,
        "errors": errors, "nccl": None,
    }
    if not rows and errors:
        raise ParseError(TOOL_JSON, f"nccl-tests reported errors and no results: {errors[0][:160]!r}", None)
    return _summary(out, TOOL_JSON, None)
