"""Parser for ``nvidia-smi -q -x`` (the full per-GPU report as XML), standard library only.

It gives the same normalised shape as :mod:`ccparse.nvidia_smi_q` (the text report), so one set
of checks judges both; the ``nvidia-smi-q`` KIND hands XML to this parser by content (the first
markup character is ``<``), and ``nvidia-smi-q-xml`` is a KIND name of its own for it. Field by
field, the XML element paths map onto the text report's keys::

    gpu@id                                   -> bus_id            (text: the 'GPU <bus id>' header)
    pci/replay_counter                       -> pcie.replays      (text: Replays Since Reset)
    pci/pci_gpu_link_info/pcie_gen/*         -> pcie.gen_*        (max_link_gen, current_link_gen,
                                                                   max_device_link_gen, max_host_link_gen)
    ecc_errors/{volatile,aggregate}/sram_*|dram_*  -> ecc layout sram_dram (sram_uncorrectable,
                                                      _parity and _secded are summed, as in text)
    ecc_errors/{volatile,aggregate}/single_bit|double_bit/total -> layout bit_count
    retired_pages/multiple_single_bit_retirement/retired_count  -> retired_pages.single_bit
    remapped_rows/remapped_row_{corr,unc,pending,failure}, row_remapper_histogram/*
    clocks_event_reasons/clocks_event_reason_* (535+), clocks_throttle_reasons/clocks_throttle_reason_*
    clocks_event_reasons_counters/clocks_event_reasons_counters_*  (values in us)
    temperature/gpu_temp_{max,slow,max_gpu}_threshold          -> shutdown/slowdown/max_operating
    temperature/gpu_temp_tlimit, gpu_temp_{max,slow,max_gpu}_tlimit_threshold -> the *_tlimit keys
    {gpu_,}power_readings/{power_draw|instant_power_draw, average_power_draw, current_power_limit|
                          enforced_power_limit|power_limit, default_power_limit, max_power_limit}

Speed: the sections nothing reads (``supported_clocks``, ``processes``) are cut out as text
before parsing (about half of a report); :func:`ccparse.registry.parse` skips the paste clean-up
for a document that starts with the XML declaration (the tool's own output, nothing pasted).

Safety: the input is bounded (:data:`MAX_BYTES`); the only declaration accepted is nvidia-smi's
own external DTD reference (``<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">``, which
expat never fetches), removed before parsing; any other ``<!DOCTYPE``, an internal subset or an
``<!ENTITY`` is refused before the text reaches the XML parser, so no entity can be declared and
none expanded. Malformed XML (a report cut in transit) raises :class:`ParseError` naming the
line. Text before the document (``WARNING: infoROM is corrupted``, ``Unable to determine the
device handle for GPU ...``) is read as in the text report (``warnings``, ``lost_gpus``).

A well-formed document with fewer ``<gpu>`` elements than ``attached_gpus`` (and no lost GPU
named) was cut by hand, not in transit (the document still closes): it parses with
``excerpt: True``, so the GPU count is not judged from it. So does a paste that starts inside the report
(its first end tags close elements opened before it, e.g. ``</pci>``): those elements are opened before it
inside ``<nvidia_smi_log><gpu>`` and its GPU's fields are read (``cut`` says so; ``bus_id`` None).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from .common import ERROR_TOKENS, FABRIC_HEALTH, ParseError, parser, strip_source_line, to_float, to_int
from .nvidia_smi_table import lost_gpu

TOOL = "nvidia-smi -q -x"

#: an 8-GPU report is about 0.5 MB (the supported clocks lists make most of it); 16 MiB is far past
#: any real one and keeps a pasted runaway file from costing the parser minutes or gigabytes
MAX_BYTES = 16 * 1024 * 1024
#: nvidia-smi's own DTD reference: an external id only (never fetched), no internal subset
_OWN_DOCTYPE = re.compile(r"<!DOCTYPE[ \t\r\n]{1,16}nvidia_smi_log[ \t\r\n]{1,16}SYSTEM[ \t\r\n]{1,16}"
                          r"(?:\"[\w.\-/]{1,128}\"|'[\w.\-/]{1,128}')[ \t\r\n]{0,16}>")
#: any markup declaration but a comment or CDATA section (DOCTYPE, ENTITY, ELEMENT, ATTLIST, ...)
_DECLARATION = re.compile(r"<!(?!--|\[CDATA\[)", re.I)
_NUM = re.compile(r"^(-?\d+(?:\.\d+)?)(?:\s*(\S+))?$")
_GPU_OPEN = re.compile(r"<gpu[\s/>]")

#: sections never read (the supported clock table is half of an H200 report, process lists grow
#: with the load): cut out as text before the XML parser builds them; the declaration check has
#: already seen them
_SKIPPED = ("supported_clocks", "processes", "accounted_processes")

Node = ET.Element


def _cut_unread(doc: str) -> str:
    """``doc`` without the :data:`_SKIPPED` sections (each ``<tag>`` to its ``</tag>``; newlines
    kept, so line numbers stay those of the input). A section without its end tag stays."""
    for tag in _SKIPPED:
        open_, close = f"<{tag}>", f"</{tag}>"
        if open_ not in doc:
            continue
        out: list[str] = []
        i = 0
        while (a := doc.find(open_, i)) >= 0 and (e := doc.find(close, a)) >= 0:
            out.append(doc[i:a])
            out.append("\n" * doc.count("\n", a, e))
            i = e + len(close)
        out.append(doc[i:])
        doc = "".join(out)
    return doc


_TAG = re.compile(r"<(/?)([A-Za-z_][\w.-]{0,80})(?:\s[^<>]{0,400})?(/?)>")


def _close_cut(doc: str) -> tuple[str, list[str]] | None:
    """A document cut before its end (a paste cut in transit) closed after its last whole element: the
    text up to that element's end with the end tags of the elements still open, and their names
    (outermost first); None when nothing was left open or the tags do not nest."""
    last = None
    for m in _TAG.finditer(doc):
        if m.group(1) or m.group(3):
            last = m.end()  # an end tag or an empty element: the last whole element ends here
    if last is None:
        return None
    stack: list[str] = []
    for m in _TAG.finditer(doc, 0, last):
        if m.group(1):
            if not stack or stack[-1] != m.group(2):
                return None
            stack.pop()
        elif not m.group(3):
            stack.append(m.group(2))
    if not stack:
        return None
    return doc[:last] + "".join(f"</{t}>" for t in reversed(stack)), stack


_DOC_START = ("<?xml", "<!DOCTYPE", "<nvidia_smi_log")


def _fragment(doc: str) -> tuple[str, list[str]] | None:
    """A paste that starts inside the report (``</pci>`` closes an element opened before the paste's first
    line) put back into a report: the elements its leading end tags close are opened before it, inside
    ``<nvidia_smi_log><gpu>`` unless one of them is that; None for a document that starts as one does or
    whose tags do not nest."""
    if doc.lstrip().startswith(_DOC_START):
        return None
    stack: list[str] = []
    opened_before: list[str] = []  # innermost first
    for m in _TAG.finditer(doc):
        if m.group(3):
            continue
        if not m.group(1):
            stack.append(m.group(2))
        elif stack:
            if stack[-1] != m.group(2):
                return None
            stack.pop()
        else:
            opened_before.append(m.group(2))
    outer = [t for t in ("nvidia_smi_log", "gpu") if t not in opened_before]
    if "nvidia_smi_log" in opened_before and opened_before[-1] != "nvidia_smi_log":
        return None
    wrap = outer + list(reversed(opened_before))
    body = "".join(f"<{t}>" for t in wrap) + doc
    closed = _close_cut(body)
    return (closed[0] if closed else body), wrap


def _text(el: Node | None) -> str | None:
    """The stripped text of a leaf element (None when absent or a section with children)."""
    if el is None or len(el):
        return None
    return (el.text or "").strip()


def _at(el: Node | None, path: str) -> str | None:
    return _text(el.find(path)) if el is not None else None


def _vgpu_license(g: Node) -> dict[str, str | None] | None:
    """A vGPU guest's licence (``<vgpu_software_licensed_product>``, older ``<grid_licensed_product>``), as ``-q``'s."""
    lic = g.find("vgpu_software_licensed_product")
    if lic is None:
        lic = g.find("grid_licensed_product")
    if lic is None:
        return None
    return {"product": _at(lic, "licensed_product_name"), "status": _at(lic, "license_status")}


def _fabric_health(el: Node | None) -> dict[str, str] | None:
    """The fabric's ``<health>`` under the names ``-q`` gives them (one judgement for both)."""
    if el is None:
        return None
    return {name: v for tag, name in FABRIC_HEALTH.items() if (v := _at(el, tag)) is not None}


def _first(el: Node | None, *paths: str) -> str | None:
    for p in paths:
        v = _at(el, p)
        if v is not None:
            return v
    return None


def _num(value: str | None) -> float | None:
    """``"71.97 W"`` -> 71.97, ``"16x"`` -> 16, ``"N/A"`` -> None."""
    if value is None:
        return None
    v = value.strip()
    if v.endswith("x") and v[:-1].isdigit():
        return to_float(v[:-1])
    m = _NUM.match(v)
    return to_float(m.group(1)) if m else None


def _int(value: str | None) -> int | None:
    return to_int(_num(value))


def _bool(value: str | None) -> bool | None:
    if value is None:
        return None
    v = value.strip().lower()
    if v in ("yes", "active", "enabled", "true"):
        return True
    if v in ("no", "not active", "disabled", "false", "none"):
        return False
    return None


def _section(el: Node | None, *names: str) -> Node | None:
    """The first of ``names`` under ``el`` that is a section (has children)."""
    if el is None:
        return None
    for n in names:
        s = el.find(n)
        if s is not None and len(s):
            return s
    return None


def _ecc_counts(sec: Node | None) -> dict[str, int | None]:
    out: dict[str, int | None] = {"correctable": None, "uncorrectable": None, "sram_correctable": None,
                                  "sram_uncorrectable": None, "dram_correctable": None,
                                  "dram_uncorrectable": None}
    if sec is None:
        return out

    def total(tags: list[str]) -> int | None:
        nums = [n for n in (_int(_at(sec, t)) for t in tags) if n is not None]
        return sum(nums) if nums else None

    tags = [c.tag for c in sec]
    if any(t.startswith(("sram_", "dram_")) for t in tags):
        out["sram_correctable"] = total(["sram_correctable"])
        out["sram_uncorrectable"] = total([t for t in tags if t.startswith("sram_uncorrectable")])
        out["dram_correctable"] = total(["dram_correctable"])
        out["dram_uncorrectable"] = total(["dram_uncorrectable"])
        for field, parts in (("correctable", ("sram_correctable", "dram_correctable")),
                             ("uncorrectable", ("sram_uncorrectable", "dram_uncorrectable"))):
            known = [out[p] for p in parts if out[p] is not None]
            out[field] = sum(n for n in known if n is not None) if known else None
        return out
    for tag, field in (("single_bit", "correctable"), ("double_bit", "uncorrectable")):
        sub = sec.find(tag)
        if sub is None:
            continue
        if len(sub):
            t = _int(_at(sub, "total"))
            if t is None:
                nums = [n for n in (_int(_text(c)) for c in sub) if n is not None]
                t = sum(nums) if nums else None
            out[field] = t
        else:
            out[field] = _int(_text(sub))
    return out


#: XML names of the clock event reasons -> the text report's names (snake case)
_REASON_NAMES = {"gpu_idle": "idle", "display_clocks_setting": "display_clock_setting"}
#: XML names of the clock event counters -> the text report's names (snake case)
_COUNTER_NAMES = {"sw_power_cap": "sw_power_capping", "sw_therm_slowdown": "sw_thermal_slowdown",
                  "hw_therm_slowdown": "hw_thermal_slowdown", "hw_power_brake": "hw_power_braking"}


def _strip_prefix(tag: str, prefixes: tuple[str, ...]) -> str:
    for p in prefixes:
        if tag.startswith(p):
            return tag[len(p):]
    return tag


def _gpu_fields(index: int, g: Node, line: int) -> dict[str, Any]:
    ecc = _section(g, "ecc_errors")
    vol, agg = _section(ecc, "volatile"), _section(ecc, "aggregate")
    vtags = [c.tag for c in vol] if vol is not None else []
    if any(t.startswith(("sram_", "dram_")) for t in vtags):
        layout: str | None = "sram_dram"
    elif "single_bit" in vtags or "double_bit" in vtags:
        layout = "bit_count"
    else:
        layout = None
    ecc_out = {
        "volatile": _ecc_counts(vol),
        "aggregate": _ecc_counts(agg),
        "sram_threshold_exceeded": _bool(_at(agg, "sram_threshold_exceeded")),
        "channel_repair_pending": _bool(_at(ecc, "channel_repair_pending")),
        "tpc_repair_pending": _bool(_at(ecc, "tpc_repair_pending")),
        "unrepairable_memory": _bool(_at(ecc, "unrepairable_memory")),
    }

    rp = _section(g, "retired_pages")
    retired = None
    if rp is not None:
        retired = {"single_bit": _int(_first(rp, "multiple_single_bit_retirement/retired_count",
                                             "multiple_single_bit_retirement")),
                   "double_bit": _int(_first(rp, "double_bit_retirement/retired_count", "double_bit_retirement")),
                   "pending": _bool(_first(rp, "pending_blacklist", "pending_retirement"))}

    rr = _section(g, "remapped_rows")
    remapped = None
    if rr is not None:
        hist = _section(rr, "row_remapper_histogram")
        remapped = {
            "correctable": _int(_at(rr, "remapped_row_corr")),
            "uncorrectable": _int(_at(rr, "remapped_row_unc")),
            "pending": _bool(_at(rr, "remapped_row_pending")),
            "failure": _bool(_at(rr, "remapped_row_failure")),
            "histogram": ({_strip_prefix(c.tag, ("row_remapper_histogram_",)): _int(_text(c)) for c in hist}
                          if hist is not None else None),
        }

    reasons = None
    source = None
    for tag, name, prefix in (("clocks_event_reasons", "Clocks Event Reasons", "clocks_event_reason_"),
                              ("clocks_throttle_reasons", "Clocks Throttle Reasons", "clocks_throttle_reason_")):
        sec = _section(g, tag)
        if sec is not None:
            source = name
            reasons = {}
            for c in sec:
                if len(c):
                    continue
                key = _strip_prefix(c.tag, (prefix,))
                reasons[_REASON_NAMES.get(key, key)] = _bool(_text(c))
            break

    counters = _section(g, "clocks_event_reasons_counters")
    event_us: dict[str, int | None] | None = None
    if counters is not None:
        counts: dict[str, int | None] = {}
        for c in counters:
            key = _strip_prefix(c.tag, ("clocks_event_reasons_counters_",))
            counts[_COUNTER_NAMES.get(key, key)] = _int(_text(c))
        event_us = counts or None

    temp = _section(g, "temperature")
    power = _section(g, "gpu_power_readings", "power_readings")
    link = _section(_section(g, "pci"), "pci_gpu_link_info")
    gen = _section(link, "pcie_gen")
    width = _section(link, "link_widths")
    util = _section(g, "utilization")
    fabric = _section(g, "fabric")
    reset = _section(g, "gpu_reset_status")
    return {
        "index": index,
        "bus_id": g.get("id") or _at(g, "pci/pci_bus_id"),
        "name": _at(g, "product_name"),
        "uuid": _at(g, "uuid"),
        "serial": _at(g, "serial"),
        "minor_number": _int(_at(g, "minor_number")),
        "persistence_mode": _at(g, "persistence_mode"),
        "vgpu_license": _vgpu_license(g),
        "performance_state": _at(g, "performance_state"),
        "inforom_image": _at(g, "inforom_version/img_version"),
        "utilization_pct": {"gpu": _num(_at(util, "gpu_util")), "memory": _num(_at(util, "memory_util"))},
        "temperature_c": {
            "gpu": _num(_at(temp, "gpu_temp")),
            "memory": _num(_at(temp, "memory_temp")),
            "shutdown": _num(_at(temp, "gpu_temp_max_threshold")),
            "slowdown": _num(_at(temp, "gpu_temp_slow_threshold")),
            "max_operating": _num(_at(temp, "gpu_temp_max_gpu_threshold")),
            "tlimit_headroom": _num(_at(temp, "gpu_temp_tlimit")),
            "shutdown_tlimit": _num(_at(temp, "gpu_temp_max_tlimit_threshold")),
            "slowdown_tlimit": _num(_at(temp, "gpu_temp_slow_tlimit_threshold")),
            "max_operating_tlimit": _num(_at(temp, "gpu_temp_max_gpu_tlimit_threshold")),
        },
        "power_w": {
            "draw": _num(_first(power, "power_draw", "instant_power_draw")),
            "average": _num(_at(power, "average_power_draw")),
            "limit": _num(_first(power, "current_power_limit", "enforced_power_limit", "power_limit")),
            "requested_limit": _num(_first(power, "requested_power_limit", "power_limit")),
            "default_limit": _num(_at(power, "default_power_limit")),
            "max_limit": _num(_at(power, "max_power_limit")),
        },
        "module_power": _section(g, "module_power_readings") is not None,
        "pcie": {
            "gen_current": _int(_at(gen, "current_link_gen")),
            "gen_max": _int(_at(gen, "max_link_gen")),
            "gen_device_max": _int(_at(gen, "max_device_link_gen")),
            "gen_host_max": _int(_at(gen, "max_host_link_gen")),
            "width_current": _int(_at(width, "current_link_width")),
            "width_max": _int(_at(width, "max_link_width")),
            "replays": _int(_at(g, "pci/replay_counter")),
        },
        "ecc_mode": _at(g, "ecc_mode/current_ecc"),
        "ecc_layout": layout,
        "ecc": ecc_out,
        "retired_pages": retired,
        "remapped_rows": remapped,
        "clocks_event_reasons": reasons,
        "clocks_event_source": source,
        "clocks_event_counters_us": event_us,
        "reset_required": _bool(_at(reset, "reset_required")),
        "drain_and_reset_recommended": _bool(_at(reset, "drain_and_reset_recommended")),
        "recovery_action": _at(g, "gpu_recovery_action"),
        "fabric_state": _at(fabric, "state"),
        "fabric_status": _at(fabric, "status"),
        "fabric_health": _fabric_health(_section(fabric, "health")),
        "error_fields": [(el.tag, (el.text or "").strip()) for el in g.iter()
                         if el.text and el.text.strip() in ERROR_TOKENS],
        "line": line,
    }


def looks_like_xml(text: str) -> bool:
    """True when the first non-blank character after a provenance line and any preamble of
    warning lines opens markup (``<?xml``, ``<!DOCTYPE``, ``<nvidia_smi_log>``)."""
    body = strip_source_line(text)
    # the lines of a growing head of the text, not of all of it (a text report is 1,300 lines and
    # its first line decides): every line of a head but its last is a whole line of the text
    size = 4096
    while True:
        lines = body[:size].splitlines()
        whole = size >= len(body)
        for raw in lines if whole else lines[:-1]:
            s = raw.strip()
            if not s or s.startswith(("WARNING:", "Unable to determine", "Unable to detect")):
                continue
            return s.startswith("<")
        if whole:
            return False
        size *= 8


@parser("nvidia-smi-q-xml")
def parse_nvidia_smi_q_xml(text: str) -> dict[str, Any]:
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    body = strip_source_line(text)
    if len(body) > MAX_BYTES:
        raise ParseError(TOOL, f"input of {len(body)} characters is larger than any report ({MAX_BYTES})", None)
    start = body.find("<")
    if start < 0:
        raise ParseError(TOOL, "no XML document found (empty input or another tool's output)", None)
    warnings: list[str] = []
    lost: list[dict[str, str]] = []
    preamble = body[:start]
    for n, raw in enumerate(preamble.splitlines(), start=1 + offset):
        s = raw.strip()
        if not s:
            continue
        if s.startswith(("WARNING:", "Unable to determine", "Unable to detect")):
            warnings.append(s)
            if (gone := lost_gpu(s)) is not None:
                lost.append(gone)
            continue
        raise ParseError(TOOL, f"text before the XML document: {s[:80]!r}", n)
    first_line = offset + preamble.count("\n") + 1
    doc = body[start:]
    doc = _OWN_DOCTYPE.sub("", doc, count=1)
    if (m := _DECLARATION.search(doc)) is not None:
        line = first_line + doc.count("\n", 0, m.start())
        raise ParseError(TOOL, "markup declaration refused (only nvidia-smi's own "
                         "'<!DOCTYPE nvidia_smi_log SYSTEM \"...dtd\">' is accepted; no DTD subset, no ENTITY)",
                         line)
    cut: list[str] = []
    fragment = False
    try:
        try:
            root = ET.fromstring(_cut_unread(doc))
        except ET.ParseError as exc:
            part = _fragment(doc)  # None for a document that starts as a report does
            if part is not None:
                # a paste that starts inside the report (the thread's copy begins in a <pci> block): the GPU's
                # elements it holds are read, the GPU count is not judged from it
                root, fragment = ET.fromstring(_cut_unread(part[0])), True
                cut.append(f"the XML starts inside <{'>, <'.join(part[1])}> (an excerpt of the report): read "
                           "what it holds")
            else:
                closed = _close_cut(doc)
                if closed is None:
                    raise exc from None
                root = ET.fromstring(_cut_unread(closed[0]))
                cut.append(f"the XML ends inside <{'>, <'.join(closed[1])}> (cut in transit): read up to its "
                           "last whole element")
    except ET.ParseError as exc:
        row = exc.position[0] if getattr(exc, "position", None) else 1
        raise ParseError(TOOL, f"malformed XML (cut in transit?): {exc}", first_line + row - 1) from None
    except (ValueError, RecursionError) as exc:  # e.g. a character XML forbids, a pathological nesting
        raise ParseError(TOOL, f"malformed XML: {str(exc)[:80]}", first_line) from None
    if root.tag != "nvidia_smi_log":
        raise ParseError(TOOL, f"root element is <{str(root.tag)[:40]}>, not <nvidia_smi_log>", first_line)
    starts = [first_line + doc.count("\n", 0, m.start()) for m in _GPU_OPEN.finditer(doc)]
    gpu_elems = root.findall("gpu")
    attached = _int(_at(root, "attached_gpus"))
    if not gpu_elems and _at(root, "driver_version") is None and attached is None:
        raise ParseError(TOOL, "no <gpu> element and no report header (driver_version, attached_gpus)", first_line)
    excerpt = fragment or (attached is not None and len(gpu_elems) + len(lost) < attached)
    gpus = []
    for i, g in enumerate(gpu_elems):
        line = starts[i] if i < len(starts) else first_line
        if not len(g):
            raise ParseError(TOOL, f"GPU {g.get('id')!r} element is empty", line)
        gpus.append(_gpu_fields(i, g, line))
    return {
        "driver_version": _at(root, "driver_version"),
        "cuda_version": _at(root, "cuda_version"),
        "timestamp": _at(root, "timestamp"),
        "attached_gpus": attached,
        "excerpt": excerpt,
        "blocks_missing": max(0, attached - len(gpus) - len(lost)) if attached is not None and not excerpt else 0,
        "warnings": warnings,
        "lost_gpus": lost,
        "gpus": gpus,
        **({"cut": cut} if cut else {}),
    }
