"""Parser for Slurm's ``sdiag`` (KIND ``sdiag``): slurmctld's own statistics (issue 26).

The layout (src/sdiag/sdiag.c, ``_print_stats``; the same lines since Slurm 17.02, later versions add
lines such as ``Agent count:``, ``RPC queue enabled:``, ``Job states ts:``, the ``... exit:``
sections)::

    *******************************************************
    sdiag output at Wed Jul 15 17:48:55 2026 (1784137735)     <- the epoch in () since 18.08
    Data since      Wed Jul 15 17:28:49 2026 (1784136529)
    *******************************************************
    Server thread count:  3
    Agent queue size:     0
    ...
    Jobs pending:   4
    Jobs running:   1

    Main schedule statistics (microseconds):
    \tLast cycle:   289
    ...
    Backfilling stats                      <- '(WARNING: data obtained in the middle of ...)' appended
    \tLast cycle when: Wed Jul 15 17:47:21 2026 (1784137641)   <- or N/A
    ...
    Remote Procedure Call statistics by message type
    \tREQUEST_PARTITION_INFO                  ( 2009) count:2662   ave_time:54     total_time:143769
    Remote Procedure Call statistics by user
    \troot            (       0) count:7360   ave_time:235    total_time:1733916
    Pending RPC statistics
    \tNo pending RPCs                       <- or 'REQUEST_... ( id) count:N' lines
    Pending RPCs
    \t 1: REQUEST_TERMINATE_JOB                lab-c[1-2]

Result::

    {"time": 1784137735, "since": 1784136529,              # None where sdiag prints no epoch
     "server": {"server_thread_count": 3, "agent_queue_size": 0, ..., "gettimeofday_latency_us": 18},
     "jobs": {"submitted": 9706, "started": ..., "pending": 4, "running": 1},   # the keys printed
     "main": {"last_cycle": 289, "max_cycle": 1691, "total_cycles": 25, "mean_cycle": 513, ...},
     "backfill": {"total_cycles": 0, "last_cycle_when": 1784137641, "last_cycle": 45, ...,
                  "active": False},
     "main_exit": {...}, "backfill_exit": {...},           # Slurm 23.02+: why cycles ended
     "rpc_types": [{"name": "REQUEST_PARTITION_INFO", "id": 2009, "count": 2662, "ave_time": 54,
                    "total_time": 143769}],
     "rpc_users": [{"user": "root", "uid": 0, "count": 7360, "ave_time": 235, "total_time": 1733916}],
     "rpc_pending": [{"name": "REQUEST_TERMINATE_JOB", "id": 6011, "count": 2}],
     "sections": ["main", "backfill", "rpc_types", "rpc_users", "rpc_pending"],   # as printed
     "excerpt": False}                                      # True: the header is not in the capture

Keys of the statistic lines are the printed names in lower case, runs of other characters as ``_``
(``Total backfilled jobs (since last slurm start)`` -> ``total_backfilled_jobs_since_last_slurm_start``);
times are microseconds as printed. A paste without the header (a thread quoting only the RPC tables,
``...`` for the rest) is read as an excerpt; a number that is not one, a line of another tool or
``No data available`` (slurmctld not answering) is a :class:`ParseError` naming the line.
"""

from __future__ import annotations

import re
from typing import Any

from . import capture
from .common import ParseError, need_int, parser

TOOL = "sdiag"
_STARS = re.compile(r"^\*{10,}$")
_EPOCH = re.compile(r"\((\d{1,20})\)\s*$")
_HEADER = re.compile(r"^(sdiag output at|Data since)\s+(.*)$")
_KV = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 ()*/_.,'-]{0,80}?)\s*:\s*(?P<value>\S.*)?$")
_LATENCY = re.compile(r"^Latency for 1000 calls to gettimeofday\(\):\s*(\d{1,20}) microseconds$")
_RPC = re.compile(r"^(?P<name>\S{1,80})\s*\(\s*(?P<id>\d{1,10})\)\s+count:(?P<count>\d{1,20})"
                  r"(?:\s+ave_time:(?P<ave>\d{1,20})\s+total_time:(?P<total>\d{1,20}))?\s*$")
_PENDING_DUMP = re.compile(r"^\d{1,6}:\s+\S{1,80}(?:\s+\S.*)?$")
#: section titles (as printed, without a trailing ':' or the backfill WARNING) -> result key
_SECTIONS = {
    "Main schedule statistics (microseconds)": "main",
    "Main scheduler exit": "main_exit",
    "Backfilling stats": "backfill",
    "Backfilling scheduler exit": "backfill_exit",
    "Remote Procedure Call statistics by message type": "rpc_types",
    "Remote Procedure Call statistics by user": "rpc_users",
    "Pending RPC statistics": "rpc_pending",
    "Pending RPCs": "rpc_dump",
}
#: statistic lines whose value is a time (``<ctime> (<epoch>)``, or N/A), not a number
_TIME_KEYS = frozenset({"last_cycle_when", "job_states_ts"})
_ELISIONS = frozenset({"...", "[...]", "…"})


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _epoch(value: str) -> int | None:
    m = _EPOCH.search(value)
    return int(m.group(1)) if m else None


def _section(line: str) -> tuple[str, bool] | None:
    """(result key, backfill active) of a section title line, or None."""
    title = line.rstrip(":").strip()
    active = False
    if title.startswith("Backfilling stats") and "WARNING" in title:
        title, active = "Backfilling stats", True
    key = _SECTIONS.get(title)
    return (key, active) if key else None


@parser("sdiag")
def parse_sdiag(text: str) -> dict[str, Any]:
    """Parse ``sdiag`` (default ``--all`` output)."""
    out: dict[str, Any] = {"time": None, "since": None, "server": {}, "jobs": {}, "main": {}, "backfill": {},
                           "main_exit": {}, "backfill_exit": {}, "rpc_types": [], "rpc_users": [],
                           "rpc_pending": [], "sections": [], "excerpt": True}
    section = "server"
    read = 0  # statistic lines read
    lineno = 0
    for lineno, raw in capture.lines(text):
        line = raw.strip()
        if not line or line in _ELISIONS or _STARS.match(line):
            continue
        if line.startswith("No data available"):
            raise ParseError(TOOL, "slurmctld gave no statistics ('No data available')", lineno)
        if (h := _HEADER.match(line)) is not None:
            out["time" if h.group(1).startswith("sdiag") else "since"] = _epoch(h.group(2))
            out["excerpt"] = False
            continue
        if capture.is_command(line, ("sdiag",)):
            continue  # the pasted prompt and command
        if (s := _section(line)) is not None:
            section = s[0]
            out["sections"].append(section)
            if section == "backfill":
                out["backfill"]["active"] = s[1]
            continue
        if (lat := _LATENCY.match(line)) is not None:
            out["server"]["gettimeofday_latency_us"] = int(lat.group(1))
            read += 1
            continue
        if section in ("rpc_types", "rpc_users", "rpc_pending"):
            if section == "rpc_pending" and line == "No pending RPCs":
                continue
            m = _RPC.match(line)
            if m is None or (section != "rpc_pending" and m.group("ave") is None):
                raise ParseError(TOOL, f"expected an RPC statistics line 'NAME (id) count:N ...', got {line[:60]!r}",
                                 lineno)
            row: dict[str, Any] = {"user" if section == "rpc_users" else "name": m.group("name"),
                                   "uid" if section == "rpc_users" else "id": int(m.group("id")),
                                   "count": int(m.group("count"))}
            if section != "rpc_pending":
                row["ave_time"], row["total_time"] = int(m.group("ave")), int(m.group("total"))
            out[section].append(row)
            read += 1
            continue
        if section == "rpc_dump":
            if not _PENDING_DUMP.match(line):
                raise ParseError(TOOL, f"expected a pending RPC line 'N: NAME hosts', got {line[:60]!r}", lineno)
            continue
        kv = _KV.match(line)
        if kv is None or kv.group("value") is None:
            raise ParseError(TOOL, f"expected 'Name: value' or a section title, got {line[:60]!r}", lineno)
        key, value = _key(kv.group("key")), kv.group("value").strip()
        if key in _TIME_KEYS:
            stamp: int | None = None if value == "N/A" else _epoch(value)
            target = out["jobs"] if key == "job_states_ts" else out[section]
            target[key] = stamp
            read += 1
            continue
        number = need_int(value, TOOL, lineno, kv.group("key"))
        if section == "server" and key.startswith("jobs_"):
            out["jobs"][key[5:]] = number
        else:
            out[section][key] = number
        read += 1
    if not read:
        raise ParseError(TOOL, "no sdiag statistics found (empty input?)", lineno or None)
    return out
