"""Parser for perftest ``ib_write_bw`` (also ib_read_bw/ib_send_bw) text output.

Handles MB/sec (default; ``MiB/sec`` in later releases, the same 2^20-byte unit) and Gb/sec (``--report_gbits``)
tables, all-sizes runs (``-a``),
duration mode (``-D``: perftest does not measure a peak there and prints ``0.00`` in the peak
column, so ``bw_peak_gbps`` is None), and server/client outputs interleaved in one log. Every
bandwidth is normalised to Gb/s (10^9 bit/s): perftest's MB is 2^20 bytes
(``format_factor = 0x100000`` in perftest_parameters.c), so 1 MB/sec = 0.008388608 Gb/s.

Output::

    {"test": "RDMA_Write BW Test", "device": "ib0", "link_type": "IB", "transport": "IB",
     "connection_type": "RC", "num_qps": 1, "mtu_bytes": 4096, "unit": "MB/sec" | "Gb/sec",
     "mode": "iterations" | "duration",
     "results": [{"bytes": 8388608, "iterations": 20000, "bw_peak_gbps": 201.8 | None,
                  "bw_avg_gbps": 201.8, "msg_rate_mpps": 0.003007, "line": 19, "reports": 2}],
     "max_size_bytes": 8388608, "bw_avg_gbps": 201.8, "bw_peak_gbps": 201.8 | None,
     "errors": ["Couldn't connect to 10.0.0.2:18515", ...],
     "not_run": "Couldn't connect to 10.0.0.2:18515" | None, "gids": ["fe:80:00:...", ...]}

``gids`` are the GIDs of the address exchange (``GID: fe:80:...`` after ``local address``/``remote address``
on RoCE), as printed.

``gpu_mr_failed`` is the line saying perftest could not register its GPU buffer with the HCA (``Couldn't
allocate MR`` after ``initializing CUDA`` / ``cuMemAlloc()``: a ``--use_cuda`` run; ``gpu_buffer`` says the log
showed one): GPUDirect RDMA does not work there; such a log parses without banner or table.

``completion_error`` is perftest's line of a work completion in error while the test ran (``Completion with error
at client``, ``Failed status 4: wr_id 0 syndrom 0x51``): the RDMA transfer failed; such a log parses too.

``device_error`` is perftest's line saying it could not set up its RDMA resources on the device (``Couldn't get device
attributes``, ``Unable to create QP``, ``Couldn't allocate PD``, ``Couldn't create CQ``): the HCA is not usable for
RDMA; such a log parses too.

``cpu_freq_conflict`` is perftest's ``Conflicting CPU frequency values detected: 1600.000000 != 3301.000000``: its
cycle-count clock is not trusted under CPU frequency scaling (old perftests then print 0.00 for every bandwidth).

``not_run`` is perftest's own message when the test never ran: the out-of-band TCP connection between
client and server failed (``Couldn't connect to <host>:<port>``, ``Unable to init the socket
connection``, ``Failed to exchange data between server and clients``; with ``-R`` the RDMA CM connection that was
never set up: ``RDMA CM event error``). Such a log, with or without its
banner, parses (no result rows); a log with neither a banner, a table nor such a message raises.

Result rows pasted without their ``#bytes`` header are read by perftest's five BW columns (sizes and
iterations); their unit (MB/sec, or Gb/sec with ``--report_gbits``) is only in the header, so their
bandwidths are None and ``truncated`` records the cut.

``results`` has one row per message size (the first report seen; ``reports`` counts how many
sides printed it). The headline ``bw_avg_gbps`` is the average at the largest message size.
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, need_float, need_int, parser, strip_source_line, to_int

TOOL = "ib_write_bw"

MB_PER_SEC_TO_GBPS = 1048576 * 8 / 1e9  # perftest MB = 2^20 bytes

_TITLE = re.compile(r"^\s*(\w+ BW Test)\s*$")
_COLS = re.compile(r"#?[A-Za-z_]\w{0,30}(?: [A-Za-z_]\w{0,30})?\[[^\]]{1,16}\]"
                   r"|#?[A-Za-z_]\w{0,30}")
_BANNER_KV = re.compile(r"([A-Za-z][A-Za-z0-9_.* ]{0,40}?)\s*:\s*(\S{1,64})")
_NUM = re.compile(r"^-?\d{1,18}(?:\.\d{1,12})?$")
#: perftest's messages for a test that never ran because client and server could not talk over TCP
#: (perftest_communication.c: the out-of-band exchange before any RDMA traffic)
_NOT_RUN = re.compile(r"Couldn'?t connect to \S+|Unable to init the socket connection|"
                      r"Unable to open file descriptor for socket connection|"
                      r"Failed to exchange data between server and clients|"
                      # -R: the RDMA CM connection was never set up (rejected, unreachable, no route)
                      r"RDMA CM event error|Failed to connect RDMA CM events", re.IGNORECASE)
#: perftest built with CUDA (--use_cuda) reports its GPU buffer ('initializing CUDA', 'cuMemAlloc() of a N bytes
#: GPU buffer', 'allocated GPU buffer address at ...'); registering that buffer with the HCA then fails with
#: "Couldn't allocate MR" / "Failed to create MR" when the GPU memory cannot be pinned for RDMA (no peer memory
#: client: nvidia-peermem not loaded)
_CUDA_BUFFER = re.compile(r"^(?:initializing CUDA|cuMemAlloc\(\)|allocated GPU buffer)", re.IGNORECASE)
_MR_FAILED = re.compile(r"Couldn'?t allocate MR|Failed to create MR|ibv_reg_mr failed", re.IGNORECASE)
#: a work completion in error while the test ran ('Completion with error at client', 'Failed status 4: wr_id 0
#: syndrom 0x51', 'Failed to complete run_iter_bw function successfully'): the RDMA transfer itself failed
_COMPLETION_ERROR = re.compile(r"Completion with error at (?:client|server)|Failed status \d{1,3}: wr_id|"
                               r"Failed to complete run_iter_\w{1,16} function", re.IGNORECASE)
#: perftest could not set up its RDMA resources on the device before any traffic (perftest_resources.c: the device's
#: attributes, a protection domain, a completion queue, the queue pair): the HCA is not usable for RDMA
_DEVICE_ERROR = re.compile(r"Couldn'?t get device attributes|Unable to create QP|Failed to create QP|"
                           r"Couldn'?t allocate PD|Couldn'?t create CQ|Couldn'?t get context for the device|"
                           r"Couldn'?t create IB resources", re.IGNORECASE)
_ERROR = re.compile(r"(couldn'?t|failed|error|unable|conflicting|not supported)", re.IGNORECASE)


def _col_key(name: str) -> tuple[str, str | None]:
    """Map a header column to (result key, unit)."""
    unit_m = re.search(r"\[([^\]]+)\]", name)
    unit = unit_m.group(1) if unit_m else None
    base = name.split("[")[0].strip().lower()
    keys = {"#bytes": "bytes", "#iterations": "iterations", "iterations": "iterations", "#sl": "sl",
            "bw peak": "bw_peak",
            "bw average": "bw_avg", "msgrate": "msg_rate_mpps", "cpu_util": "cpu_util_percent"}
    if base in keys:
        return keys[base], unit
    return re.sub(r"\W+", "_", base).strip("_"), unit


def _to_gbps(value: float, unit: str | None, lineno: int) -> float:
    if unit == "Gb/sec":
        return value
    if unit in ("MB/sec", "MiB/sec"):  # perftest's MB is 2^20 bytes; later releases print it as MiB/sec
        return value * MB_PER_SEC_TO_GBPS
    raise ParseError(TOOL, f"unknown bandwidth unit {unit!r}", lineno)


#: perftest's device option on its command line ('ib_write_bw -d mlx5_0', '--ib-dev=mlx5_1')
_DEV_OPTION = re.compile(r"(?:\s-d\s*|--ib-dev[= ])([\w.-]{1,40})")


def _device_from_commands(out: dict[str, Any], commands: list[str]) -> dict[str, Any]:
    """A log without perftest's banner (it failed before printing it): the device its command line names."""
    if out.get("device") is not None:
        return out
    dev = next((m.group(1) for c in commands if (m := _DEV_OPTION.search(c))), None)
    return {**out, "device": dev} if dev else out


@parser("ib_write_bw", commands=_device_from_commands)
def parse_ib_write_bw(text: str) -> dict[str, Any]:
    """Parse a perftest BW log into per-size results in Gb/s."""
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    out: dict[str, Any] = {"test": None, "device": None, "link_type": None, "transport": None,
                           "connection_type": None, "num_qps": None, "mtu_bytes": None, "unit": None,
                           "mode": "iterations", "results": [], "max_size_bytes": None,
                           "bw_avg_gbps": None, "bw_peak_gbps": None, "errors": [], "not_run": None, "gids": [],
                           "gpu_buffer": False, "gpu_mr_failed": None, "completion_error": None,
                           "device_error": None, "cpu_freq_conflict": None}
    cols: list[tuple[str, str | None]] | None = None
    by_size: dict[int, dict[str, Any]] = {}
    lineno = offset
    banner = {"Device": "device", "Link type": "link_type", "Transport type": "transport",
              "Connection type": "connection_type", "Number of qps": "num_qps", "Mtu": "mtu_bytes"}
    truncated = False
    seen = False
    inferred = False  # cols read off a row pasted without its header: the unit is not known
    for lineno, raw in enumerate(strip_source_line(text).splitlines(), start=1 + offset):
        line = raw.strip()
        if not line or set(line) <= {"-", "*"}:
            continue
        if len(line) > 2000:
            continue  # no perftest line is this long
        if line.startswith("#bytes"):
            seen = True
            new_cols = [_col_key(c) for c in _COLS.findall(line)]
            if [c[0] for c in new_cols[:1]] != ["bytes"] or not any(c[0] == "bw_avg" for c in new_cols):
                raise ParseError(TOOL, f"unrecognised result header {line[:80]!r}", lineno)
            if inferred:
                cols, inferred = None, False
                by_size.clear()  # rows before the header were not known to be this table's
            if cols is not None and new_cols != cols:
                raise ParseError(TOOL, "result header changes columns mid-log", lineno)
            cols = new_cols
            out["unit"] = next(u for k, u in cols if k == "bw_avg")
            continue
        tokens = [t.strip("*") for t in line.split()[:32]]  # Markdown bold pasted around a number
        if cols is None and len(tokens) == 5 and all(_NUM.match(t) for t in tokens) and tokens[0].isdigit():
            # result rows pasted without their '#bytes' header: perftest's five BW columns, whose unit
            # (MB/sec by default, Gb/sec with --report_gbits) only the header says: bandwidth not read
            cols = [("bytes", None), ("iterations", None), ("bw_peak", None), ("bw_avg", None),
                    ("msg_rate_mpps", None)]
            seen = inferred = truncated = True
        if tokens and all(_NUM.match(t) for t in tokens) and cols is not None and len(tokens) > 1:
            if len(tokens) != len(cols):
                truncated = True  # a row cut short (the paste ends inside it)
                continue
            row: dict[str, Any] = {}
            for (key, unit), tok in zip(cols, tokens):
                val = need_float(tok, TOOL, lineno, key)
                if key in ("bw_peak", "bw_avg"):
                    row[f"{key}_gbps"] = _to_gbps(val, unit, lineno) if unit or not inferred else None
                elif key in ("bytes", "iterations", "sl"):
                    row[key] = need_int(tok if "." not in tok else val, TOOL, lineno, key)
                else:
                    row[key] = val
            size = row["bytes"]
            if size in by_size:
                by_size[size]["reports"] += 1
            else:
                row["line"] = lineno
                row["reports"] = 1
                by_size[size] = row
            continue
        if out["cpu_freq_conflict"] is None and line.startswith("Conflicting CPU frequency"):
            # perftest's cycle-count clock: the cores report different frequencies (frequency scaling), so it
            # cannot turn its cycle counts into time (an old perftest then prints 0.00 for every bandwidth)
            out["cpu_freq_conflict"] = line
            continue
        if line.startswith("GID:"):
            out["gids"].append(line[4:].strip())  # the local/remote address exchange on RoCE
            continue
        t = _TITLE.match(line)
        if t:
            out["test"] = t.group(1)
            seen = True
            continue
        for key, value in _BANNER_KV.findall(line):
            field = banner.get(key.strip())
            if field is None or out[field] is not None:
                continue
            seen = True
            if field in ("num_qps", "mtu_bytes"):
                m = re.match(r"\d{1,9}", value)
                out[field] = to_int(m.group(0)) if m else None
            else:
                out[field] = value
        if _CUDA_BUFFER.match(line):
            out["gpu_buffer"] = True
            continue
        if _ERROR.search(line) and not line.startswith(("Waiting", "* Waiting")):
            out["errors"].append(line)
            if out["not_run"] is None and _NOT_RUN.search(line):
                out["not_run"] = line
            if out["gpu_buffer"] and out["gpu_mr_failed"] is None and _MR_FAILED.search(line):
                out["gpu_mr_failed"] = line
            if out["completion_error"] is None and _COMPLETION_ERROR.search(line):
                out["completion_error"] = line
            if out["device_error"] is None and _DEVICE_ERROR.search(line):
                out["device_error"] = line
    out["truncated"] = truncated
    if cols is None and not seen:
        if out["not_run"] is not None or out["gpu_mr_failed"] is not None or out["completion_error"] is not None \
                or out["device_error"] is not None:
            out["truncated"] = False
            return out
        if out["errors"]:
            raise ParseError(TOOL, f"no result table; the test reported: {out['errors'][0][:100]}", lineno)
        raise ParseError(TOOL, "no perftest banner or '#bytes ... BW average[...]' result header found",
                         lineno or None)
    if not by_size:
        # a paste cut before the first complete result row: the banner alone is kept, nothing judged
        out["truncated"] = True
        return out
    results = [by_size[s] for s in sorted(by_size)]
    if not inferred and all(r.get("bw_peak_gbps", 0.0) == 0.0 for r in results):
        out["mode"] = "duration"
    for r in results:
        if out["mode"] == "duration" or "bw_peak_gbps" not in r:
            r["bw_peak_gbps"] = None
        for k in ("bw_peak_gbps", "bw_avg_gbps"):
            if r.get(k) is not None:
                r[k] = round(r[k], 6)
    out["results"] = results
    top = results[-1]
    out["max_size_bytes"] = top["bytes"]
    out["bw_avg_gbps"] = top["bw_avg_gbps"]
    out["bw_peak_gbps"] = top["bw_peak_gbps"]
    return out
