"""Parser for ``nvidia-smi --query-gpu=... --format=csv`` (with header; units or ``nounits``).

The header names the fields (``power.draw [W]`` when units are on); ``[N/A]``, ``N/A`` and
``[Not Supported]`` become None. Every row gives ``fields`` (the printed names without the unit
suffix, values converted: numbers to float, ``Active``/``Not Active``/``Yes``/``No`` to bool,
hex bit masks to int) and the normalised GPU shape shared with :mod:`ccparse.nvidia_smi_q`::

    {"fields": ["index", "pcie.link.gen.current", ...],
     "gpus": [{"index": 0, "bus_id": .., "name": .., "uuid": .., "driver_version": .., "performance_state": "P8",
               "utilization_pct": {"gpu": .., "memory": ..},
               "temperature_c": {"gpu": .., "memory": ..},
               "power_w": {"draw": .., "limit": ..},
               "pcie": {"gen_current": 1, "gen_max": 4, "width_current": 16, "width_max": 16},
               "ecc": {"volatile": {"uncorrectable": .., "correctable": ..}, "aggregate": {...}},
               "retired_pages": {"single_bit": .., "double_bit": .., "pending": ..} | None,
               "remapped_rows": {"correctable": .., "uncorrectable": .., "pending": .., "failure": ..} | None,
               "clocks_event_reasons": {"idle": .., "sw_power_cap": .., "hw_slowdown": .., ...} | None,
               "fields": {...}, "line": 2}]}

Driver 535 renamed ``clocks_throttle_reasons.*`` to ``clocks_event_reasons.*`` (both are
accepted; ``gpu_idle`` is read as ``idle``). The ``.active`` bit mask is decoded with NVML's
``nvmlClocksEventReason*`` bits when the individual reasons were not queried.

``Unable to determine the device handle for GPU...`` lines (a GPU NVML cannot reach) go to
``lost_gpus`` as in :func:`ccparse.nvidia_smi_table.lost_gpu`; ``#`` comment lines a paster added are
skipped. ``--format=csv,noheader`` output is read with the fields its command names when the capture shows that
command line (``nvidia-smi --query-gpu=a,b --format=csv,noheader``), else with the fields its columns show (an
index, a bus id, a product name, a UUID, a driver version; others ``colN``), and ``"inferred_header": True``. Every
GPU carries ``error_fields``: ``(field, value)`` of the cells that read an error token
(``[Unknown Error]``, ``ERR!``, ``[GPU requires reset]``, ...; ``[N/A]`` is not one).
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from . import capture
from .common import ERROR_TOKENS, FABRIC_HEALTH, ParseError, gpu_selection, parser, to_float, to_int
from .nvidia_smi_table import listed_gpu, lost_gpu, unreachable_driver

TOOL = "nvidia-smi --query-gpu"

_NA = {"[n/a]", "n/a", "[not supported]", "not supported", "[unknown error]", "[insufficient permissions]", ""}
#: a header's unit (``memory.used [MiB]``); no ``[`` inside, so a run of ``[`` is not rescanned from each one
_UNIT_SUFFIX = re.compile(r"\s*\[[^\[\]]*\]\s*$")
_NUM_UNIT = re.compile(r"^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(%|W|MiB|MHz|C|KB/s|GiB|x|us|mV)?$")

#: NVML ``nvmlClocksEventReason*`` bits (nvml.h) -> reason key
REASON_BITS = {
    0x1: "idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
    0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting",
}
#: the fields the GPU checks judge (clusterctl/analysis/checks/gpu.py), for collectors to query.
#: Driver-535+ names; drivers before 535 know only ``clocks_throttle_reasons.active`` (accepted too),
#: and nvidia-smi rejects the whole query when one name is unknown ("is not a valid field").
CHECKED_FIELDS = (
    "index", "pci.bus_id", "name", "utilization.gpu", "temperature.gpu", "power.draw",
    "pcie.link.gen.current", "pcie.link.gen.max", "pcie.link.width.current", "pcie.link.width.max",
    "ecc.errors.uncorrected.volatile.total", "ecc.errors.uncorrected.aggregate.total",
    "clocks_event_reasons.active", "remapped_rows.pending", "remapped_rows.failure", "retired_pages.pending",
)
#: fields kept as text even when they look like numbers (``driver_version`` 535.54)
_TEXT_FIELDS = {"name", "pci.bus_id", "driver_version", "uuid", "serial", "vbios_version", "inforom.img",
                "pstate", "compute_mode", "persistence_mode", "ecc.mode.current", "ecc.mode.pending"}
_REASON_PREFIXES = ("clocks_event_reasons.", "clocks_throttle_reasons.")
#: the --query-gpu fields whose names hold no '.' (nvidia-smi --help-query-gpu); every other field is dotted
_UNDOTTED_FIELDS = frozenset({
    "timestamp", "driver_version", "count", "name", "gpu_name", "serial", "gpu_serial", "uuid", "gpu_uuid",
    "gpu_bus_id", "index", "display_mode", "display_active", "display_attached", "persistence_mode", "addressing_mode",
    "vbios_version", "board_id", "module_id", "pstate", "compute_mode", "compute_cap", "gpu_recovery_action"})
_ALIASES = {"gpu_name": "name", "gpu_bus_id": "pci.bus_id", "gpu_uuid": "uuid", "gpu_serial": "serial",
            "temperature.gpu.tlimit": "temperature.gpu_tlimit"}


def _value(raw: str) -> Any:
    v = raw.strip()
    low = v.lower()
    if low in _NA:
        return None
    if low in ("active", "yes", "true"):
        return True
    if low in ("not active", "no", "false"):
        return False
    if re.fullmatch(r"0x[0-9a-fA-F]+", v):
        return to_int(v, 16)
    m = _NUM_UNIT.match(v)
    if m:
        return to_float(m.group(1))
    return v


def _int(v: Any) -> int | None:
    return to_int(v) if isinstance(v, float | int) else None


def _num(v: Any) -> float | None:
    return to_float(v) if isinstance(v, float | int) else None


def _normalise(index: int, f: dict[str, Any], line: int) -> dict[str, Any]:
    def get(*names: str) -> Any:
        for n in names:
            if f.get(n) is not None:
                return f[n]
        return None

    reasons: dict[str, bool | None] | None = None
    for key, val in f.items():
        for pre in _REASON_PREFIXES:
            if key.startswith(pre):
                name = key[len(pre):]
                if name in ("active", "supported"):
                    continue
                name = "idle" if name == "gpu_idle" else name
                reasons = reasons or {}
                reasons[name] = val if isinstance(val, bool) else None
    mask = get("clocks_event_reasons.active", "clocks_throttle_reasons.active")
    if isinstance(mask, int) and not isinstance(mask, bool):
        reasons = reasons or {}
        for bit, name in REASON_BITS.items():
            reasons.setdefault(name, bool(mask & bit))

    def section(prefix: str, keys: dict[str, str]) -> dict[str, Any] | None:
        if not any(k.startswith(prefix) for k in f):
            return None
        return {out: (f.get(prefix + src) if out in ("pending", "failure") else _int(f.get(prefix + src)))
                for out, src in keys.items()}

    idx = _int(f.get("index"))
    return {
        "index": idx if idx is not None else index,
        "bus_id": f.get("pci.bus_id"),
        "name": f.get("name"),
        "uuid": f.get("uuid"),
        "driver_version": f.get("driver_version"),
        "performance_state": f.get("pstate"),  # as nvidia-smi -q's 'Performance State' ('P8')
        "utilization_pct": {"gpu": _num(f.get("utilization.gpu")), "memory": _num(f.get("utilization.memory"))},
        "temperature_c": {"gpu": _num(f.get("temperature.gpu")), "memory": _num(f.get("temperature.memory"))},
        "power_w": {"draw": _num(get("power.draw", "power.draw.instant", "power.draw.average")),
                    "limit": _num(get("enforced.power.limit", "power.limit")),
                    "default_limit": _num(f.get("power.default_limit")),
                    "requested_limit": _num(f.get("power.limit"))},
        "pcie": {"gen_current": _int(get("pcie.link.gen.current", "pcie.link.gen.gpucurrent")),
                 "gen_max": _int(get("pcie.link.gen.max", "pcie.link.gen.gpumax")),
                 "gen_host_max": _int(f.get("pcie.link.gen.hostmax")),
                 "width_current": _int(f.get("pcie.link.width.current")),
                 "width_max": _int(f.get("pcie.link.width.max"))},
        "ecc_mode": f.get("ecc.mode.current"),
        "persistence_mode": f.get("persistence_mode"),
        "fabric_state": f.get("fabric.state"),
        "fabric_status": f.get("fabric.status"),
        "fabric_health": {name: f[f"fabric.health.{tag}"] for tag, name in FABRIC_HEALTH.items()
                          if f.get(f"fabric.health.{tag}") is not None} or None,
        "recovery_action": f.get("gpu_recovery_action"),
        "ecc": {"volatile": {"uncorrectable": _int(f.get("ecc.errors.uncorrected.volatile.total")),
                             "correctable": _int(f.get("ecc.errors.corrected.volatile.total"))},
                "aggregate": {"uncorrectable": _int(f.get("ecc.errors.uncorrected.aggregate.total")),
                              "correctable": _int(f.get("ecc.errors.corrected.aggregate.total"))},
                # the -q report's 'SRAM Threshold Exceeded' (595's field: Yes/No, read as a bool by _value; [N/A])
                "sram_threshold_exceeded": sram if isinstance(
                    sram := f.get("ecc.errors.uncorrected.aggregate.sram.thresholdExceeded"), bool) else None},
        "retired_pages": section("retired_pages.", {"single_bit": "single_bit_ecc.count",
                                                    "double_bit": "double_bit.count", "pending": "pending"}),
        "remapped_rows": section("remapped_rows.", {"correctable": "correctable", "uncorrectable": "uncorrectable",
                                                    "pending": "pending", "failure": "failure"}),
        "clocks_event_reasons": reasons,
        "fields": f,
        "line": line,
    }


#: a paster's label line above a command or its output: a few words and a colon, no CSV cell
_LABEL = re.compile(r"[A-Za-z][\w .-]{0,40}:")


def _one_field_runs(text: str) -> str | None:
    """Several ``--query-gpu`` runs of one field each, concatenated (a monitoring plugin's sample, an agent's
    per-field calls: ``memory.total`` then its values, ``memory.used`` then its values; or each run's command line
    ``nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0`` then its values), as the one CSV of
    their fields a single query would print; None when ``text`` is not that (two fields at least, each with the same
    number of values, none of them a field name)."""
    fields: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line in ("[...]", "...", "…"):
            continue
        cmd = line[2:] if line.startswith("$ ") else line
        if capture.is_command(cmd, ("nvidia-smi",)):
            asked = _asked_fields(cmd)
            if asked is None or len(asked) != 1:
                return None
            fields.append((asked[0], []))
        elif _LOWER_FIELD.fullmatch(name := _UNIT_SUFFIX.sub("", line).strip()) and (
                "." in name or name in _UNDOTTED_FIELDS):
            fields.append((line, []))  # its header line (--format=csv: 'power.draw [W]')
        elif fields and "," not in line:
            fields[-1][1].append(line)
        else:
            return None
    if len(fields) < 2 or len({len(v) for _n, v in fields}) != 1 or not fields[0][1]:
        return None
    rows = [[n for n, _v in fields]] + [[v[i] for _n, v in fields] for i in range(len(fields[0][1]))]
    return "\n".join(",".join(row) for row in rows) + "\n"


@parser("nvidia-smi-query", commands=gpu_selection)
def parse_nvidia_smi_query(text: str) -> dict[str, Any]:
    if (joined := _one_field_runs(text)) is not None:
        text = joined
    rows: list[tuple[int, list[str]]] = []
    lost: list[dict[str, str]] = []
    asked: list[str] | None = None  # the fields a shown ``--query-gpu=... --format=csv,noheader`` command names
    wrapped: str | None = None  # a shown command line without its --format, which the next line may continue
    for lineno, raw in capture.lines(text):
        if not raw.strip():
            continue
        if raw.strip() in ("[...]", "...", "....", "…"):  # rows the paster cut out
            continue
        if not rows and capture.is_command(raw, ("nvidia-smi",)):  # the command line before the header
            asked = asked or _asked_fields(raw)
            wrapped = raw if asked is None and "--query-gpu" in raw and "--format" not in raw else None
            continue
        if wrapped is not None and not rows and "--format" in raw:
            # the terminal wrapped the command line at its width ('...,utilizat' / 'ion.gpu,power.draw --format=...')
            asked, wrapped = asked or _asked_fields(wrapped.strip() + raw.strip()), None
            continue
        if raw.startswith("$ ") and capture.is_command(raw[2:], ("nvidia-smi",)):
            continue  # a later run's command line, kept by the clean-up ('$ time nvidia-smi ...')
        if not rows and (raw.lstrip()[:1] in ("+", "|") or _TABLE_TIME.match(raw)):
            continue  # the plain nvidia-smi table a job script printed before its query (its time line above it)
        if not rows and raw.lstrip().startswith("GPU ") and listed_gpu(raw):
            continue  # 'nvidia-smi -L' run before the query ('GPU 0: ... (UUID: GPU-...)'): its listing, not CSV
        if raw.lstrip().startswith("#") or _LABEL.fullmatch(raw.strip()):
            continue  # a paster's note ('#  Missing :04:00.0') or label ('command:', 'nvidia-SMI.exe output:')
        # the paster's arrow note: '1, Reset   <= GPU is unusable, reset required'
        raw = capture.ARROW_NOTE.sub("", raw)
        if (gone := lost_gpu(raw)) is not None:
            lost.append(gone)
            continue
        try:
            cells = next(csv.reader(io.StringIO(raw), skipinitialspace=True))
        except (csv.Error, StopIteration) as exc:
            raise ParseError(TOOL, f"not CSV: {exc}", lineno) from exc
        cells = [c.strip() for c in cells]
        if rows and cells == rows[0][1]:
            continue  # a later run's header (two runs pasted one after the other)
        rows.append((lineno, cells))
    if not rows and lost:
        return {"fields": [], "gpus": [], "lost_gpus": lost}
    if not rows or (len(rows) == 1 and len(rows[0][1]) <= 2):
        fatal = unreachable_driver(text)
        if fatal is not None:  # nvidia-smi's only output: no GPU of the node is usable
            return {"fields": [], "gpus": [], "lost_gpus": lost, "driver_unreachable": fatal, "excerpt": True}
    if not rows:
        raise ParseError(TOOL, "empty input (no CSV header)", None)
    head_line, header = rows[0]
    bad_field = re.search(r'Field "([^"]+)" is not a valid field to query', ",".join(header))
    if bad_field:
        hint = (" (drivers before 535 name it clocks_throttle_reasons.*)"
                if bad_field.group(1).startswith("clocks_event_reasons") else "")
        raise ParseError(TOOL, f"this driver does not know the field {bad_field.group(1)!r}{hint}", head_line)
    if any(n in header[0].lower() for n in ("no devices were found", "failed", "error")):
        raise ParseError(TOOL, f"nvidia-smi reported an error: {','.join(header)[:120]!r}", head_line)
    names = [_ALIASES.get(_UNIT_SUFFIX.sub("", h).strip(), _UNIT_SUFFIX.sub("", h).strip()) for h in header]
    inferred = False
    if not all(_FIELD_NAME.fullmatch(n) for n in names) and asked is not None and len(asked) == len(header):
        names, inferred = asked, True  # noheader output of the command shown above it: its own field names
        rows.insert(0, (head_line, names))
    elif not all(_FIELD_NAME.fullmatch(n) for n in names) and (guess := _infer_header(header)) is not None:
        names, inferred = guess, True  # --format=csv,noheader: every row is a GPU
        rows.insert(0, (head_line, names))
    if not all(_FIELD_NAME.fullmatch(n) for n in names) or (len(names) == 1 and "." not in names[0]
                                                            and names[0] not in _UNDOTTED_FIELDS):
        # (a lone word is a field only if nvidia-smi has one so named: a shell loop's 'done' is no header)
        if (fatal := unreachable_driver(text)) is not None:
            # no CSV to read, but nvidia-smi's own words that it cannot reach the driver (a loop over hosts, a
            # wrapper's lines around them): no GPU where it printed them is usable
            return {"fields": [], "gpus": [], "lost_gpus": lost, "driver_unreachable": fatal, "excerpt": True}
        raise ParseError(TOOL, f"first line is not a --query-gpu CSV header (use --format=csv, not noheader): "
                         f"{','.join(header)[:100]!r}", head_line)
    if len(rows) == 1 and lost:
        return {"fields": names, "gpus": [], "lost_gpus": lost}
    if len(rows) == 1:
        raise ParseError(TOOL, "header but no GPU rows (truncated, or no GPU)", head_line)
    gpus = []
    for i, (lineno, cells) in enumerate(rows[1:]):
        if len(cells) != len(names):
            raise ParseError(TOOL, f"row has {len(cells)} values, header has {len(names)} (truncated?)", lineno)
        fields = {n: (c if n in _TEXT_FIELDS and c.lower() not in _NA else _value(c))
                  for n, c in zip(names, cells)}
        gpu = _normalise(i, fields, lineno)
        gpu["error_fields"] = [(n, c) for n, c in zip(names, cells) if c in ERROR_TOKENS]
        gpus.append(gpu)
    out: dict[str, Any] = {"fields": names, "gpus": gpus, "lost_gpus": lost}
    if inferred:
        out["inferred_header"] = True
    return out


_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
#: a field name as nvidia-smi spells it (a lower-case first letter: an InfoROM version 'G001.0000.01.04' is a value)
_LOWER_FIELD = re.compile(r"[a-z_][A-Za-z0-9_.]*")
#: the time line above nvidia-smi's table ('Mon Dec  6 10:11:47 2021')
_TABLE_TIME = re.compile(r"^\s*[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}\s*$")
_QUERY_ARG = re.compile(r"--query-gpu[= ]\s*['\"]?([A-Za-z0-9_.,]+)")
_FORMAT_ARG = re.compile(r"--format[= ]\s*['\"]?([A-Za-z,]+)")


def _asked_fields(line: str) -> list[str] | None:
    """The field names of a shown ``nvidia-smi --query-gpu=a,b --format=csv,noheader`` command line (what
    the header would have named, without units), or None when the line asks with a header or names none."""
    query, fmt = _QUERY_ARG.search(line), _FORMAT_ARG.search(line)
    if query is None or fmt is None or "noheader" not in fmt.group(1).lower().split(","):
        return None
    names = [_ALIASES.get(n.strip(), n.strip()) for n in query.group(1).split(",") if n.strip()]
    return names if names and all(_FIELD_NAME.fullmatch(n) for n in names) else None


_BUS = re.compile(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]")
_DRIVER = re.compile(r"\d{3}\.\d{1,3}(?:\.\d{1,3})?")
#: cells whose unit says what they are (the units form of --format=csv): a performance state, watts, a percentage
_PSTATE = re.compile(r"P\d{1,2}")
_WATTS = re.compile(r"\d{1,4}(?:\.\d{1,2})? W")
_PERCENT = re.compile(r"\d{1,3} %")
_PRODUCT = re.compile(r"(?:NVIDIA|Tesla|Quadro|GeForce|GRID|A\d{1,3}\b|H\d{3}\b)", re.IGNORECASE)


def _infer_header(cells: list[str]) -> list[str] | None:
    """Field names for a ``noheader`` row from what its cells look like (a bus id, a UUID, a product name, a driver
    version, a performance state; watts and percentages in the order nvidia-smi lists their fields: the draw before
    the limit, the GPU's utilisation before its memory's), or None when no cell is a GPU's bus id, UUID or product
    name (then it is not a GPU row)."""
    names: list[str] = []
    for i, c in enumerate(cells):
        if _BUS.fullmatch(c) and "pci.bus_id" not in names:
            names.append("pci.bus_id")
        elif c.startswith("GPU-") and "uuid" not in names:
            names.append("uuid")
        elif _PRODUCT.match(c) and "name" not in names:
            names.append("name")
        elif c.isdigit() and i == 0:
            names.append("index")
        elif _DRIVER.fullmatch(c) and "driver_version" not in names:
            names.append("driver_version")
        elif _PSTATE.fullmatch(c) and "pstate" not in names:
            names.append("pstate")
        elif _WATTS.fullmatch(c) and (shape := next((n for n in ("power.draw", "power.limit") if n not in names),
                                                    None)):
            names.append(shape)  # a query names the draw before the limit (nvidia-smi --help-query-gpu's order)
        elif _PERCENT.fullmatch(c) and (shape := next((n for n in ("utilization.gpu", "utilization.memory")
                                                       if n not in names), None)):
            names.append(shape)
        else:
            names.append(f"col{i}")
    return names if {"pci.bus_id", "uuid", "name"} & set(names) else None
