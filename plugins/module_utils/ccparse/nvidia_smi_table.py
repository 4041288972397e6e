"""Parser for plain ``nvidia-smi`` (the default table), drivers 460 to 580.

Reads the banner (driver and CUDA versions), each GPU's two table rows and the ``WARNING:`` lines
printed under the table (``WARNING: infoROM is corrupted at gpu 0008:00:00.0``)::

    {"driver_version": "550.90.07", "cuda_version": "12.4", "no_devices": False,
     "warnings": ["WARNING: infoROM is corrupted at gpu 0008:00:00.0"],
     "inforom_corrupted": ["00000008:00:00.0"],
     "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "persistence_mode": "On",
               "bus_id": "00000000:19:00.0", "display_active": "Off", "ecc_uncorrected_volatile": 0,
               "fan_pct": None, "temperature_c": {"gpu": 27.0}, "performance_state": "P0",
               "power_w": {"draw": 72.0, "limit": 700.0}, "memory_used_mib": 1, "memory_total_mib": 81559,
               "utilization_pct": {"gpu": 0.0}, "compute_mode": "Default", "mig_mode": "Disabled",
               "inforom_corrupted": False, "error_fields": [], "line": 10}]}

``error_fields`` lists ``(field, value)`` of the cells that read an error token in place of a value
(:data:`ERROR_TOKENS`: ``ERR!``, ``Unknown Error``, ...; ``N/A`` is not one), named as
``--query-gpu`` names them (``fan.speed``, ``power.draw``, ``power.limit``, ...), so the checks judge
them as they judge ``-q`` and ``--query-gpu``: ``|ERR!   38C  P5  49W / 450W |`` gives
``[("fan.speed", "ERR!")]``.

A GPU NVML cannot reach (``Unable to determine the device handle for GPU0000:07:00.0: Unknown
Error``, often nvidia-smi's only output when a GPU fell off the bus) is listed in ``lost_gpus``
(``[{"bus_id": "00000000:07:00.0", "error": "Unknown Error"}]``), not raised.
The ``MIG devices:`` box gives ``mig_devices`` (``{"gpu", "gi", "ci", "mig_dev", "memory_used_mib",
"memory_total_mib", "sm", "ecc_uncorrected_volatile"}`` per instance); pasted alone (no GPU rows) it is
an ``excerpt``. ``No devices were found`` gives ``no_devices: True`` and no GPUs (the checks decide whether that
is wrong); the driver-not-loaded message (``couldn't communicate with the NVIDIA driver``, ``Failed to
initialize NVML``) gives ``driver_unreachable`` (the message) and ``excerpt`` (no count stated). A banner cut
before the first GPU row gives no GPUs, ``excerpt`` and ``cut_before_rows: True``; a capture that ends after a
GPU's first row (cut inside its rows) lists that GPU with ``cut_after_first_row: True`` and no reading, as does a
table trimmed to each GPU's first row (a first row followed by another GPU's first row); a first row followed by
anything else but its second row is still an error. Bus ids are
written with the 8-digit domain the table uses, so warnings printed with a 4-digit domain match. Rows of the processes
box with no banner or GPU row above them (``nvidia-smi | tail -3``) give no GPUs, ``excerpt`` and ``processes_only``
(the count of such rows).
"""

from __future__ import annotations

import re
from typing import Any

from .common import ERROR_TOKENS, ParseError, gpu_selection, need_int, parser, strip_source_line, to_float, to_int

TOOL = "nvidia-smi"

#: the banner; before driver 410 it states no CUDA version (``NVIDIA-SMI 4.310.40  Driver Version: 310.40``)
_BANNER = re.compile(r"NVIDIA-SMI\s+(\S+)\s+(?:Driver|KMD) Version:\s*(\S+)(?:\s+CUDA (?:UMD )?Version:\s*(\S+))?")
#: the first row; the layout of drivers before 319 has no persistence mode in the name cell
#: (``|   0  Tesla C2075         | 0000:02:00.0  Off |          0 |``)
_ROW1 = re.compile(r"^\|\s*(\d+)\s+(.+?)(?:\s+(On|Off|N/A|WDDM|TCC|MCDM))?\s*\|"
                   r"\s*([0-9A-Fa-f]{1,8}:(?:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)?)\s+"
                   r"(\S+)\s*\|\s*(\S+)\s*\|$")
#: cells hold no ``|`` and a value before `` / `` no ``/``: with ``\S+`` a long run of ``/`` or ``|``
#: could be split between the groups in very many ways (seconds on one long line)
#: a value before `` / `` may itself be ``N/A`` (power draw of a 2014 GeForce: ``N/A /  N/A``); the memory
#: cell is a bare ``N/A`` for a GPU in MIG mode (its memory is per instance, in the MIG devices box)
#: the memory cell of drivers before 319 starts with the share used (``|  0%   10MB /  5375MB |``)
#: (a GPU sharing the host's memory, DGX Spark's GB10, prints 'Not Supported' for its memory usage)
_ROW2 = re.compile(r"^\|\s*([^\s|]+)\s+([^\s|]+)\s+([^\s|]+)\s+(N/A|[^\s|/]+)\s*/\s*([^\s|]+)\s*\|"
                   r"\s*(?:\d{1,3}%\s+)?(?:(N/A|[^\s|/]+)\s*/\s*([^\s|]+)|N/A|Not Supported)\s*\|"
                   r"\s*([^\s|]+)\s+([^|]+?)\s*\|$")
#: the second row's cells in order, named as --query-gpu names them (for ``error_fields``)
_ROW2_FIELDS = ("fan.speed", "temperature.gpu", "pstate", "power.draw", "power.limit", "memory.used", "memory.total",
                "utilization.gpu", "compute_mode")
#: a row of the "MIG devices:" box: GPU, GI, CI, MIG dev | used / total memory | SM count, volatile
#: uncorrectable ECC of the instance (``N/A`` when ECC is off) | shared engines
_MIG_ROW = re.compile(r"^\|\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|"
                      r"\s*(\d+|N/A)\s+(\d+|N/A)\s*\|")
_ROW3 = re.compile(r"^\|\s*\|\s*\|\s*(\S+)\s*\|$")
_BUS_IN_WARNING = re.compile(r"([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)")
#: (the user-space library missing, ``couldn't find libnvidia-ml.so`` or the loader's ``nvidia-smi: error while loading
#: shared libraries: libnvidia-ml.so.1: cannot open shared object file``, and the driver gone by the time nvidia-smi
#: shuts NVML down, ``Failed to properly shut down NVML: Driver Not Loaded``, leave no GPU usable either)
_FATAL = ("NVIDIA-SMI has failed", "couldn't communicate with the NVIDIA driver", "Failed to initialize NVML",
          "NVIDIA-SMI couldn't find libnvidia-ml.so", "Failed to properly shut down NVML: Driver Not Loaded",
          "error while loading shared libraries: libnvidia-ml.so")


_LOST = re.compile(r"Unable to (?:determine|detect) the device handle for (?i:gpu)\s*(?:\d{1,3}:\s*)?"
                   r"([0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*:\s*(.*)$")


def _driver_line(line: str) -> str | None:
    """One line saying nvidia-smi cannot reach the driver (stripped, at most 200 characters), else None."""
    s = line.strip()
    if "Insufficient Permissions" in s:
        return None  # NVML_ERROR_NO_PERMISSION: the account may not open the GPUs, nothing says the driver is gone
    return s[:200] if any(f in s for f in _FATAL) else None


def unreachable_driver(text: str) -> str | None:
    """nvidia-smi's line saying it cannot reach the driver (``Failed to initialize NVML: ...``, ``NVIDIA-SMI has
    failed ...``): its only output then, in every mode (table, ``-q``, ``--query-gpu``); None when there is none."""
    return next((f for f in map(_driver_line, text.splitlines()) if f is not None), None)


def lost_gpu(line: str) -> dict[str, str] | None:
    """``Unable to determine the device handle for GPU0000:07:00.0: Unknown Error`` (a GPU NVML cannot
    reach: fallen off the bus, Xid 79) -> ``{"bus_id": "00000000:07:00.0", "error": "Unknown Error"}``.
    nvidia-smi prints it in every mode (table, ``-q``, ``--query-gpu``), often as its only output."""
    m = _LOST.search(line)
    return {"bus_id": norm_bus_id(m.group(1)), "error": m.group(2).strip()} if m else None


def norm_bus_id(bus: str) -> str:
    """``0008:00:00.0`` and ``00000008:00:00.0`` -> ``00000008:00:00.0`` (upper-case hex)."""
    dom, _colon, rest = bus.partition(":")
    n = to_int(dom, 16)
    return f"{n:08X}:{rest.upper()}" if n is not None else bus.upper()


def _num(v: str | None) -> float | None:
    m = re.match(r"^(-?\d+(?:\.\d+)?)", v) if v is not None else None
    return to_float(m.group(1)) if m else None


def _add_second_row(gpu: dict[str, Any], cells: tuple[str | None, ...]) -> dict[str, Any]:
    """``gpu`` (its first row's fields) completed with its second row's, read from ``cells`` (the groups of
    :data:`_ROW2`, in :data:`_ROW2_FIELDS`' order). A GPU whose second row the capture does not hold gets
    ``None`` cells: every field the same key, no reading (so a cut GPU and a full one cannot differ in keys)."""
    fan, temp, perf, pdraw, pcap, mused, mtot, util, cmode = cells
    gpu.update({"fan_pct": _num(fan), "temperature_c": {"gpu": _num(temp)}, "performance_state": perf,
                "power_w": {"draw": _num(pdraw), "limit": _num(pcap)},
                "memory_used_mib": _num(mused), "memory_total_mib": _num(mtot),
                "utilization_pct": {"gpu": _num(util)}, "compute_mode": cmode.strip() if cmode is not None else None,
                "mig_mode": None, "inforom_corrupted": False,
                "error_fields": [(n, c.strip()) for n, c in zip(_ROW2_FIELDS, cells)
                                 if c is not None and c.strip() in ERROR_TOKENS]})
    token = gpu.pop("ecc_error_token")
    if token is not None:
        gpu["error_fields"].insert(0, ("ecc.errors.uncorrected.volatile.total", token))
    return gpu


#: the cells of a second row the capture does not hold
_NO_SECOND_ROW: tuple[str | None, ...] = (None,) * len(_ROW2_FIELDS)


#: a line of ``nvidia-smi -L``: ``GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-3ede3ca0-...)`` (the UUID may be cut or
#: removed)
_LISTED = re.compile(r"^(?:>\s?)?GPU (\d{1,3}): (.{1,120}?)\s*(?:\(UUID: ?(GPU-[0-9A-Fa-f-]{1,64}|[^)]{0,64})\)?)?\s*$")


def listed_gpu(line: str) -> bool:
    """``line`` is one of ``nvidia-smi -L`` with its UUID (``GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)``)."""
    m = _LISTED.match(line.strip())
    return bool(m and (m.group(3) or "").startswith("GPU-"))


#: a row of the processes box: '|    0   N/A  N/A      18096      C   ./gpu.exe          4234MiB |' (GPU, GI, CI, PID,
#: type, name, memory; drivers before 450 print no GI/CI)
_PROCESS_ROW = re.compile(r"^\|\s+\d{1,3}\s+(?:(?:N/A|\d{1,3})\s+(?:N/A|\d{1,3})\s+)?(?:N/A|\d{1,10})\s+[CGM+]{1,3}\s+"
                          r".{1,200}?\s(?:\d{1,9}MiB|N/A)\s*\|$")


def _continues(line: str, nxt: str) -> str | None:
    """How ``nxt`` joins ``line`` when it is the rest of a table line a mail or a narrow terminal wrapped (None when
    not): a row's rest opens no cell but closes one (``|   0  ... Off |   00000000:1B:00.0 Off |`` + ``N/A |``); a
    frame's rest is frame only (``+------`` + ``------+``)."""
    head, rest = line.lstrip()[:1], nxt.strip()
    if not rest or rest[0] in "|+":
        if head == "+" and rest[:1] == "+" and len(rest) > 1 and not rest.strip("-=+") and line.rstrip()[-1:] in "-=":
            return ""  # '+----' + '+----...' (a frame cut at its column's corner)
        return None
    if head == "|" and rest[-1] == "|":
        return " "
    if head == "+" and not rest.strip("-=+") and rest[-1] == "+":
        return ""
    return None


def _unwrapped(lines: list[str], first: int) -> list[tuple[int, str]]:
    """(line number, line) with each table line a mail or a narrow terminal wrapped onto further lines joined back
    (:func:`_continues`), numbered by its first line."""
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        start = i
        while i + 1 < len(lines) and i - start < 2 and (glue := _continues(line, lines[i + 1])) is not None:
            line = line + glue + lines[i + 1].strip()
            i += 1
        out.append((first + start, line))
        i += 1
    return out


@parser("nvidia-smi", commands=gpu_selection)
def parse_nvidia_smi_table(text: str) -> dict[str, Any]:
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    out: dict[str, Any] = {"driver_version": None, "cuda_version": None, "smi_version": None, "no_devices": False,
                           "warnings": [], "inforom_corrupted": [], "lost_gpus": [], "gpus": [], "mig_devices": []}
    pending: dict[str, Any] | None = None
    in_processes = False
    seen_table = False
    trimmed = False  # GPUs listed by their first row only (:data:`_ROW1` after :data:`_ROW1`)
    process_rows = 0  # rows of the processes box read before any banner or GPU row
    last = 0
    rows = strip_source_line(text).splitlines()
    # (a wrapped table: a line that ends in neither '|' nor '+' under a line of the table)
    numbered = _unwrapped(rows, 1 + offset) if any(
        ln.lstrip()[:1] in ("|", "+") and nxt.strip()[-1:] in ("|", "+") and nxt.lstrip()[:1] not in ("|", "+", "")
        for ln, nxt in zip(rows, rows[1:])) else enumerate(rows, start=1 + offset)
    for lineno, raw in numbered:
        line = raw.rstrip()
        s = line.strip()
        if not s:
            continue
        last = lineno
        if (fatal := _driver_line(s)) is not None:
            # nvidia-smi's only output when NVML cannot reach the driver (not loaded, or a library/kernel module
            # version mismatch after an upgrade): no GPU of the node is usable; the count is not stated
            out["driver_unreachable"] = fatal
            out["excerpt"] = True
            return out
        if "No devices were found" in s:
            out["no_devices"] = True
            continue
        b = _BANNER.search(s)
        if b:
            out["smi_version"], out["driver_version"], out["cuda_version"] = b.group(1), b.group(2), b.group(3)
            seen_table = True
            continue
        if s.startswith("WARNING:") or "Unable to determine the device handle" in s:  # (also after prose: '出现Unable')
            out["warnings"].append(s)
            m = _BUS_IN_WARNING.search(s)
            if m and "inforom" in s.lower():
                out["inforom_corrupted"].append(norm_bus_id(m.group(1)))
            if (lost := lost_gpu(s)) is not None:
                out["lost_gpus"].append(lost)
            continue
        if "Processes:" in s or "processes:" in s:  # 'Compute processes:' before driver 319
            in_processes = True
            if out["gpus"]:
                out["whole_table"] = True  # the processes box after the GPUs: the GPU table was printed to its end
            continue
        if not seen_table and (listed := _LISTED.match(s)) and "(UUID" in s:
            entry = {"index": int(listed.group(1)), "name": listed.group(2), "uuid": listed.group(3) or None}
            if not any(g["index"] == entry["index"] and g["uuid"] == entry["uuid"] for g in out.get("listed") or ()):
                # (the same GPU again: 'nvidia-smi -L' run in a loop lists it at each run)
                out.setdefault("listed", []).append({**entry, "line": lineno})
            continue
        if not seen_table and not out["gpus"] and _PROCESS_ROW.match(s):
            process_rows += 1  # a row of the processes box with no table above it ('nvidia-smi | tail -3')
            continue
        if in_processes or not s.startswith("|"):
            continue
        r1 = _ROW1.match(s)
        if r1:
            if pending is not None and "fan_pct" not in pending:
                # a GPU's first row straight after another's: the paster kept each GPU's first row only (its
                # identity); the GPU is listed, with no reading
                out["gpus"].append(_add_second_row(pending, _NO_SECOND_ROW))
                pending["cut_after_first_row"] = trimmed = True
            mode = r1.group(3)
            pending = {"index": need_int(r1.group(1), TOOL, lineno, "GPU index"), "name": r1.group(2).strip(),
                       "persistence_mode": mode if mode in ("On", "Off") else None,
                       "driver_model": mode if mode in ("WDDM", "TCC", "MCDM") else None,
                       "bus_id": norm_bus_id(r1.group(4)), "display_active": r1.group(5),
                       "ecc_uncorrected_volatile": to_int(r1.group(6)) if r1.group(6).isdigit() else None,
                       "ecc_error_token": r1.group(6) if r1.group(6) in ERROR_TOKENS else None,
                       "line": lineno}
            continue
        mig = _MIG_ROW.match(s)
        if mig is not None and (pending is None or "fan_pct" in pending):
            gpu, gi, ci, dev, used, total, sm, unc = mig.groups()
            out["mig_devices"].append({"gpu": int(gpu), "gi": int(gi), "ci": int(ci), "mig_dev": int(dev),
                                       "memory_used_mib": int(used), "memory_total_mib": int(total),
                                       "sm": to_int(sm), "ecc_uncorrected_volatile": to_int(unc), "line": lineno})
            continue
        r2 = _ROW2.match(s)
        if r2 and pending is not None and "fan_pct" not in pending:
            out["gpus"].append(_add_second_row(pending, r2.groups()))
            continue
        r3 = _ROW3.match(s)
        if r3 and pending is not None and pending.get("mig_mode", "") is None:
            pending["mig_mode"] = r3.group(1)
            continue
        if pending is not None and "fan_pct" not in pending:
            raise ParseError(TOOL, f"GPU {pending['index']}: second table row not understood: {s[:100]!r}", lineno)
    if (out["no_devices"] or out["lost_gpus"] or out["mig_devices"]) and not out["gpus"]:
        # a MIG devices box pasted without the GPU table above it: an excerpt, the GPU count is not stated
        out["excerpt"] = bool(out["mig_devices"]) and not out["lost_gpus"]
        return out
    if not seen_table and not out["gpus"] and out.get("listed"):
        # nvidia-smi -L alone: the GPUs the driver lists, by name and UUID; no reading and no health field
        return out
    if not seen_table and not out["gpus"] and process_rows:
        # the processes box alone: which GPU runs what, no GPU row, no reading (the check says so)
        out["excerpt"] = True
        out["processes_only"] = process_rows
        return out
    if not seen_table and not out["gpus"]:
        raise ParseError(TOOL, "no 'NVIDIA-SMI ... Driver Version' banner (not nvidia-smi output)", last or None)
    if not out["gpus"]:
        # the paste was cut after the banner/header (nvidia-smi with no GPU prints 'No devices were found'):
        # an excerpt that states no GPU count and holds nothing to judge
        out["excerpt"] = out["cut_before_rows"] = True
        return out
    if pending is not None and "fan_pct" not in pending:
        if pending["line"] != last and not trimmed:
            raise ParseError(TOOL, f"GPU {pending['index']} row without its second line (truncated)", pending["line"])
        # the capture ends inside the GPU's rows (a paste cut there): the GPU is listed, as one cut between
        # rows would be, with its first row's fields and no reading
        out["gpus"].append(_add_second_row(pending, _NO_SECOND_ROW))
        pending["cut_after_first_row"] = True
    bad = set(out["inforom_corrupted"])
    for g in out["gpus"]:
        g["inforom_corrupted"] = g["bus_id"] in bad
    return out
