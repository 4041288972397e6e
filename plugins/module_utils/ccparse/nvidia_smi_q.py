"""Parser for ``nvidia-smi -q`` (the full per-GPU report), drivers 460 to 580.

The report is an indented ``Key : Value`` tree; a line without a colon opens a section. The
parser builds that tree per ``GPU <bus id>`` block, then reads the fields the checks judge into
one normalised shape (the same shape :mod:`ccparse.nvidia_smi_query` gives, so one set of checks
judges both)::

    {"driver_version": "535.183.01", "cuda_version": "12.2", "timestamp": str|None,
     "attached_gpus": 8, "excerpt": False, "warnings": ["WARNING: infoROM is corrupted ..."],
     "lost_gpus": [{"bus_id": "00000000:07:00.0", "error": "Unknown Error"}],   # see nvidia_smi_table.lost_gpu
     "gpus": [{
        "index": 0, "bus_id": "00000000:53:00.0", "name": "NVIDIA H100 80GB HBM3", "uuid": str,
        "serial": str|None, "minor_number": int|None, "persistence_mode": "Enabled"|...,
        "performance_state": "P0", "inforom_image": str|None,
        "utilization_pct": {"gpu": 0.0, "memory": 0.0},
        "temperature_c": {"gpu": 36.0, "memory": 44.0, "shutdown": .., "slowdown": .., "max_operating": ..,
                          "tlimit_headroom": 50.0, "shutdown_tlimit": -8.0, "slowdown_tlimit": -2.0,
                          "max_operating_tlimit": 0.0},
        "power_w": {"draw": 71.97, "average": None, "limit": 700.0, "default_limit": .., "max_limit": ..},
        "pcie": {"gen_current": 5, "gen_max": 5, "gen_device_max": 5, "gen_host_max": None,
                 "width_current": 16, "width_max": 16, "replays": 120},
        "ecc_mode": "Enabled"|"Disabled"|None, "ecc_layout": "sram_dram"|"bit_count"|None,
        "ecc": {"volatile": {"correctable": 0, "uncorrectable": 0, "sram_correctable": 0,
                             "sram_uncorrectable": 0, "dram_correctable": 0, "dram_uncorrectable": 0},
                "aggregate": {...same...}, "sram_threshold_exceeded": False|None,
                "channel_repair_pending": bool|None, "tpc_repair_pending": bool|None,
                "unrepairable_memory": bool|None},
        "retired_pages": {"single_bit": int|None, "double_bit": int|None, "pending": bool|None},
        "remapped_rows": {"correctable": int, "uncorrectable": int, "pending": bool,
                          "failure": bool, "histogram": {"max": 2560, ...}} | None,
        "clocks_event_reasons": {"idle": True, "sw_power_cap": False, "hw_slowdown": False,
                                 "hw_thermal_slowdown": False, "hw_power_brake_slowdown": False,
                                 "sw_thermal_slowdown": False, ...} | None,
        "clocks_event_source": "Clocks Event Reasons" | "Clocks Throttle Reasons" | None,
        "clocks_event_counters_us": {"sw_power_capping": 0, "hw_thermal_slowdown": 0, ...} | None,
        "reset_required": bool|None, "drain_and_reset_recommended": bool|None,
        "recovery_action": str|None, "fabric_state": str|None, "fabric_status": str|None,
        "line": 9}]}

ECC layouts: Ampere+ drivers print ``SRAM``/``DRAM`` ``Correctable``/``Uncorrectable`` counters
(535+ split SRAM uncorrectable into ``Parity`` and ``SEC-DED``, summed here); pre-Ampere drivers
print ``Single Bit``/``Double Bit`` sub-sections with a ``Total``. ``correctable`` and
``uncorrectable`` are the totals in either layout; ``N/A`` everywhere gives None.

Temperatures: drivers before 535 print absolute thresholds (``GPU Slowdown Temp : 89 C``, read
into ``shutdown``/``slowdown``/``max_operating``); 535+ print ``T.Limit`` values instead
(``GPU T.Limit Temp : 47 C`` is the headroom below the GPU's limit, ``GPU Slowdown T.Limit Temp :
-2 C`` a threshold relative to it), read into the ``*_tlimit`` keys and ``tlimit_headroom`` and
never mixed with absolute ones (the absolute keys are then None).

``Clocks Throttle Reasons`` (before driver 535) and ``Clocks Event Reasons`` (535+) are read
into the same ``clocks_event_reasons`` keys (snake_case of the printed names).

``nvidia-smi -q -x`` XML given to this KIND is parsed by :mod:`ccparse.nvidia_smi_xml` (by
content, as ``nccl-tests`` does for its JSON); ``nvidia-smi-q-xml`` is that parser's own KIND.

Excerpts (documentation slices with ``[...]``, a bare ``ECC Errors`` section without a ``GPU``
header, or sections starting at column 0 such as ``GPU Reset Status`` / ``Clocks Throttle Reasons``
as an author quoted them) parse with ``excerpt: True``. Fewer ``GPU`` blocks than ``Attached GPUs``
(``-i``/``-d`` subsets, a cut paste) is judged as it is: ``blocks_missing`` records how many.
``error_fields`` lists ``(path, value)`` of every field that reads an error token
(:data:`ERROR_TOKENS`: ``Unknown Error``, ``ERR!``, ``[GPU requires reset]``, ...).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from . import capture
from .common import (
    _ASCII_BREAKS,
    ERROR_TOKENS,
    ParseError,
    parser,
    selected_index,
    split_lines,
    strip_source_line,
    to_float,
    to_int,
)
from .nvidia_smi_table import lost_gpu, unreachable_driver
from .nvidia_smi_xml import looks_like_xml, parse_nvidia_smi_q_xml

TOOL = "nvidia-smi -q"

_GPU_HEADER = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_KV = re.compile(r"^(\S(?:.*?\S)?)\s*:\s?(.*?)\s*$")
_BANNER = re.compile(r"^=+\s*NVSMI LOG\s*=+$")
#: an elision, and grep's line between two groups of context (``grep -A/-B/-C`` without ``-n``): lines left out
_ELIDED = {"[...]", "...", "[…]", "--"}


def _elided_line(stripped: str) -> bool:
    """An elision line: one of :data:`_ELIDED`, or a paster's note between ellipses (``[... 40 lines ...]``,
    ``...(cutting ...)...``; capture's elision form, read here so that a whole report is not scanned for it)."""
    return stripped in _ELIDED or (stripped[0] in "[.…<(-8" and capture.is_elision(stripped))


#: first characters of the lines that are not tree lines (banner, elision, warnings)
_RARE_FIRST = frozenset("=[.…WU-<(8")
_SECTION_NAME = re.compile(r"^[A-Za-z][\w .()/+-]*$")
_NUM = re.compile(r"^(-?\d+(?:\.\d+)?)(?:\s*(\S+))?$")
#: sections whose presence makes an indented header-less slice a recognisable excerpt
_KNOWN_SECTIONS = {"ECC Errors", "Retired Pages", "Remapped Rows", "Clocks Event Reasons",
                   "Clocks Throttle Reasons", "Temperature", "PCI", "Power Readings", "GPU Power Readings",
                   "GPU Reset Status", "Clocks", "Max Clocks", "Utilization", "Fabric", "Fan Speed",
                   "Performance State", "ECC Mode", "Product Name", "GPU Recovery Action", "BAR1 Memory Usage",
                   "FB Memory Usage", "vGPU Software Licensed Product", "GRID Licensed Product"}

Tree = dict[str, Any]

#: the names at a GPU block's first level (keys and sections at indent 4), drivers 260 to 580: in a report
#: whose indentation a copy flattened (:func:`_reindented`) such a line closes every open section
_GPU_LEVEL = frozenset({
    "Accounting Mode", "Accounting Mode Buffer Size", "Addressing Mode", "Applications Clocks", "BAR1 Memory Usage",
    "Board ID", "Board Part Number", "Capabilities", "Clock Policy", "Clocks", "Clocks Event Reasons",
    "Clocks Event Reasons Counters", "Clocks Throttle Reasons", "Compute Mode", "Conf Compute Protected Memory Usage",
    "DRAM Encryption Mode", "Default Applications Clocks", "Deferred Clocks", "Display Active", "Display Attached",
    "Display Mode", "Driver Model", "ECC Errors", "ECC Mode", "EDPp Multiplier", "Ecc Mode", "Encoder Stats",
    "FB Memory Usage", "FBC Stats", "FRU Part Number", "Fabric", "Fan Speed", "GPU C2C Mode",
    "GPU Memory Power Readings", "GPU Operation Mode", "GPU PDI", "GPU Part Number", "GPU Power Readings",
    "GPU Recovery Action", "GPU Reset Status", "GPU UUID", "GPU Virtualization Mode", "GRID Licensed Product",
    "GSP Firmware Version", "IBMNPU",
    "Inforom BBX Object Flush", "Inforom Time Data", "Inforom Version", "MIG Device", "MIG Mode", "Max Clocks",
    "Max Customer Boost Clocks", "Minor Number", "Module ID", "Module Power Readings", "MultiGPU Board", "PCI",
    "Performance State", "Persistence Mode", "Platform Info", "Power Readings", "Power Samples", "Power Smoothing",
    "Processes", "Product Architecture", "Product Brand", "Product Name", "Remapped Rows", "Retired Pages",
    "Serial Number", "Sparse Operation Mode", "Temperature", "Utilization", "VBIOS Version", "Voltage",
    "Workload Power Profiles", "vGPU Software Licensed Product"})
#: the sections nested deeper, each with the sections it opens in
_NESTED_IN = {
    "GPU Link Info": ("PCI",), "Bridge Chip": ("PCI",), "PCIe Generation": ("GPU Link Info",),
    "Link Width": ("GPU Link Info",), "Volatile": ("ECC Errors",), "Aggregate": ("ECC Errors",),
    "Aggregate Uncorrectable SRAM Sources": ("ECC Errors",), "Single Bit": ("Volatile", "Aggregate"),
    "Double Bit": ("Volatile", "Aggregate"), "Bank Remap Availability Histogram": ("Remapped Rows",),
    "Health": ("Fabric",), "Device Attributes": ("MIG Device",), "Shared": ("Device Attributes",),
    "Shared FB Memory Usage": ("MIG Device",), "Shared BAR1 Memory": ("MIG Device",),
    "GPU Ceiling Power Limit": ("GPU Power Readings",), "GPU Base Power": ("GPU Power Readings",)}

#: the keys a section prints after one of its nested sections (``Replays Since Reset`` after ``Bridge Chip``)
_KEY_OF = {"Replays Since Reset": "PCI", "Replay Number Rollovers": "PCI", "Tx Throughput": "PCI",
           "Rx Throughput": "PCI", "Atomic Caps Inbound": "PCI", "Atomic Caps Outbound": "PCI",
           "Channel Repair Pending": "ECC Errors", "TPC Repair Pending": "ECC Errors",
           "Min Power Limit": "GPU Power Readings", "Max Power Limit": "GPU Power Readings"}

#: the lines of a report before its GPU blocks (at column 0 in the tool's output)
_REPORT_TOP_KEYS = frozenset({"Timestamp", "Driver Version", "CUDA Version", "Attached GPUs", "DCGM Version",
                              "NVML Version", "KMD Version", "CUDA UMD Version"})
#: :data:`_GPU_HEADER` searched for in a whole text (its trailing blanks stop at the line's end)
_GPU_HEADER_LINE = re.compile(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f][ \t]*$", re.MULTILINE)
_INDENTED_LINE = re.compile(r"^[ \t]+\S", re.MULTILINE)
#: a line of a report or excerpt at column 0 followed by one more at column 0 (no indentation anywhere near)
_FLAT_PAIR = re.compile(r"^[A-Za-z][^\n:]{1,60}:[^\n]*\n[A-Za-z][^\n:]{1,60}:", re.MULTILINE)


def _flattened(body: str) -> bool:
    """Whether the report's indentation, which nests its sections, was dropped by a copy (a web page's, a
    pastebin's): the line after its first ``GPU <bus id>`` header starts at column 0, or (an excerpt without
    a header) no line is indented and a line names a section or key of a GPU block."""
    h = _GPU_HEADER_LINE.search(body)
    if h is None:
        if _INDENTED_LINE.search(body) is not None or _FLAT_PAIR.search(body) is None:
            return False
        return any(ln.strip() in _NESTED_IN or ln.partition(":")[0].strip() in _GPU_LEVEL for ln in body.split("\n"))
    after = body[h.end():h.end() + 400].lstrip("\n")
    return bool(after) and not after[0].isspace() and _GPU_HEADER_LINE.match(after) is None


def _reindented(body: str) -> str:
    """A flattened report (:func:`_flattened`) indented again as nvidia-smi prints it: inside a GPU block a
    first-level name (:data:`_GPU_LEVEL`) at indent 4, a nested section (:data:`_NESTED_IN`) inside the open
    section it belongs to, any other line inside the innermost open section. Lines before the first block stay."""
    out: list[str] = []
    stack: list[str] = []
    in_gpu = _GPU_HEADER_LINE.search(body) is None  # an excerpt: one GPU's lines from the start
    for ln in body.split("\n"):
        s = ln.strip()
        if not s or (not in_gpu and not s.startswith("GPU ")) or s.partition(":")[0].strip() in _REPORT_TOP_KEYS \
                or s[:1] in "=[.…":
            out.append(ln)
            continue
        if s.startswith("GPU ") and _GPU_HEADER.match(s):
            in_gpu, stack = True, []
            out.append(s)
            continue
        name, colon, value = s.partition(":")
        name = name.strip()
        section = not colon or (not value.strip() and s.endswith(":") and name not in _GPU_LEVEL)
        if name in _GPU_LEVEL:
            stack = []
        elif section and name in _NESTED_IN:
            while stack and stack[-1] not in _NESTED_IN[name]:
                stack.pop()
        elif _KEY_OF.get(name) in stack:
            del stack[stack.index(_KEY_OF[name]) + 1:]
        out.append("    " * (len(stack) + 1) + s)
        if section:
            stack.append(name)
    return "\n".join(out)


def _num(value: Any) -> float | None:
    """``"71.97 W"`` -> 71.97, ``"16x"`` -> 16, ``"N/A"`` -> None."""
    return _num_text(value) if isinstance(value, str) else None


# The value texts repeat across GPUs and nodes ("0", "N/A", "No", "16x"): the conversions of a
# text are cached (pure functions of the string).
@lru_cache(maxsize=8192)
def _num_text(value: str) -> float | None:
    v = value.strip()
    if v.endswith("x") and v[:-1].isdigit():
        return to_float(v[:-1])
    m = _NUM.match(v)
    return to_float(m.group(1)) if m else None


def _int(value: Any) -> int | None:
    return _int_text(value) if isinstance(value, str) else None


@lru_cache(maxsize=8192)
def _int_text(value: str) -> int | None:
    return to_int(_num_text(value))


def _bool(value: Any) -> bool | None:
    return _bool_text(value) if isinstance(value, str) else None


@lru_cache(maxsize=1024)
def _bool_text(value: str) -> bool | None:
    v = value.strip().lower()
    if v in ("yes", "active", "enabled", "true"):
        return True
    if v in ("no", "not active", "disabled", "false", "none"):
        return False
    head, _sep, rest = v.partition(" ")
    if head in ("yes", "no") and rest and not rest[0].isalnum():  # 'Yes <===' (a runbook's marker)
        return head == "yes"
    return None


def error_fields(tree: Tree, prefix: str = "") -> list[tuple[str, str]]:
    """``(path, value)`` of every field of a GPU tree that holds an :data:`ERROR_TOKENS` value."""
    out: list[tuple[str, str]] = []
    for k, v in tree.items():
        if isinstance(v, dict):
            out += error_fields(v, f"{prefix}{k}/")
        elif v in ERROR_TOKENS:
            out.append((f"{prefix}{k}", v))
    return out


@lru_cache(maxsize=4096)
def _snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _get(tree: Tree, *path: str) -> Any:
    node: Any = tree
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _sec(tree: Any, key: str) -> Tree:
    """The sub-section ``key`` of ``tree`` ({} when absent or a plain value such as ``N/A``)."""
    v = tree.get(key) if isinstance(tree, dict) else None
    return v if isinstance(v, dict) else {}


def _first(tree: Tree, *paths: tuple[str, ...]) -> Any:
    for p in paths:
        v = _get(tree, *p)
        if v is not None:
            return v
    return None


#: what the parser reads of one line (see :func:`_pieces`)
_Pieces = tuple[int, int, str, str, str, str, str, str]
#: _Pieces[0]: a line of the common kind (indented, not rare, a ``Key : Value`` line or a section
#: name): inside a ``GPU <bus id>`` block it goes straight into the tree (the loop's fast path);
#: 2 for a ``Key : Value`` line (3 when the value is an error token), 1 for a section name, 0 for
#: any other line
_TREE_VALUE, _TREE_SECTION, _TREE_ERROR = 2, 1, 3


def _pieces(raw: str) -> _Pieces:
    """What the parser reads of one line: whether it is a common tree line (and which), its
    indent, the name it has in the tree (the key, or the section name), the value, then the
    stripped line, whether it has a colon, the key before it (right-stripped) and the line as a
    section name (``Clocks:`` -> ``Clocks``)."""
    stripped = raw.strip()
    key, colon, value = stripped.partition(":")
    key = key.rstrip()
    value = value.strip()
    section = stripped.rstrip(":").strip()
    indent = len(raw) - len(raw.lstrip())
    tree = 0
    if stripped and indent > 0 and stripped[0] not in _RARE_FIRST and (colon or _SECTION_NAME.match(stripped)):
        tree = _TREE_VALUE if colon and key and stripped[-1] != ":" else _TREE_SECTION
        if tree == _TREE_VALUE and value in ERROR_TOKENS:
            tree = _TREE_ERROR
    name = key if tree >= _TREE_VALUE else section
    return tree, indent, name, value, stripped, colon, key, section


#: line -> _pieces(line): the lines of nvidia-smi -q repeat across the GPUs of a report and the nodes
#: of a fleet (keys, sections and most values), so each distinct line is taken apart once; bounded
_LINES: dict[str, _Pieces] = {}
_LINES_MAX = 50_000


class _TreeBuilder:
    """One GPU block's indented ``Key : Value`` tree (nested dicts) and the open sections.

    ``indents``/``dicts`` are the stack of open sections (the root at indent -1); a line pops
    every section at its indent or deeper and lands in the one left on top. A section line
    (no value) opens a child section; a ``Key : Value`` line is stored in the top section (the
    first value wins), and deeper lines under a valued key (``HW Slowdown : Not Active`` then
    ``HW Thermal Slowdown``) join that same section as siblings. ``Key : Value`` is split at the
    first colon (keys never hold one; values may: bus ids, times). The loop that fills it is
    inlined in :func:`parse_nvidia_smi_q`, which runs it for every line of every node's report.
    """

    __slots__ = ("dicts", "errors", "indents", "root")

    def __init__(self) -> None:
        self.root: Tree = {}
        self.indents: list[int] = [-1]
        self.dicts: list[Tree] = [self.root]
        #: (key, value) of the fields that read an error token, found while the tree is built
        self.errors: list[tuple[str, str]] = []


#: a piece of a text taken apart whole: before every line at indent 0 or exactly 4 (a line of a
#: ``GPU`` block's top level); the deeper lines (and blank ones) stay with the line before them
_PIECE = re.compile(r"\n(?=    \S|\S)")
#: the indent of the first line of a piece that is put into the tree whole (a top-level section of
#: a GPU block); every line after the piece has an indent of 0 or 4, so it closes the section
_CHUNK_INDENT = 4
#: piece text -> what :func:`_chunk` made of it (``()`` where the piece must go line by line); the
#: sections of a GPU block repeat across the GPUs of a report and the nodes of a fleet (ECC
#: counters, throttle reasons, remapped rows, clocks limits); bounded, as :data:`_LINES`
_CHUNKS: dict[str, tuple[Any, ...]] = {}
_CHUNKS_MAX = 4096
#: hashes of the pieces seen once (a piece is taken apart whole the second time it is seen: the
#: temperatures, power draws and bus ids of one GPU seldom come back)
_SEEN: set[int] = set()
_SEEN_MAX = 1 << 16


class _Shared(dict[str, Any]):
    """A section that :data:`_CHUNKS` holds: shared by every tree it went into, never changed (a
    section reopened by a later line of the same name is replaced by a copy first); ``memo`` holds
    what :func:`_gpu_fields` read of it (see :func:`_part`)."""

    __slots__ = ("memo",)

    def __init__(self) -> None:
        super().__init__()
        self.memo: dict[Any, Any] = {}


def _unshare(tree: Tree) -> Tree:
    return {k: _unshare(v) if isinstance(v, dict) else v for k, v in tree.items()}


def _plain_newlines(text: str) -> bool:
    """Whether ``text.split("\n")`` gives the lines ``splitlines`` gives (see ``split_lines``)."""
    return text.isascii() and not any(c in text for c in _ASCII_BREAKS)


def _chunk(piece: str) -> tuple[Any, ...]:
    """``(name, section, errors, lines)``: the section that the lines of ``piece`` (a section line at
    indent 4, then deeper or blank lines) build inside a GPU block, line by line as
    :func:`parse_nvidia_smi_q` does it, the ``(key, value)`` error fields found in that order, and
    the number of lines; ``()`` when any line would do anything else there (a warning, an elision,
    a banner, a line that is neither ``Key : Value`` nor a section name, an indent of 4 or less)."""
    lines = piece.split("\n")
    tree, indent, name, _value, _stripped, _colon, _key, _section = _pieces(lines[0])
    if tree != _TREE_SECTION or indent != _CHUNK_INDENT:
        return ()
    root = _Shared()
    errors: list[tuple[str, str]] = []
    indents: list[int] = [indent]
    dicts: list[Tree] = [root]
    cache = _LINES
    for raw in lines[1:]:
        try:
            pieces = cache[raw]
        except KeyError:
            pieces = cache[raw] = _pieces(raw)
        common, indent, _name, value, stripped, colon, key, section = pieces
        if not stripped:
            continue
        if indent <= _CHUNK_INDENT:
            return ()
        if not common:
            first = stripped[0]
            if first in _RARE_FIRST and ((first == "=" and _BANNER.match(stripped)) or _elided_line(stripped)
                                         or stripped.startswith(("WARNING:", "Unable to determine",
                                                                 "Unable to detect"))):
                return ()
            if not colon and not _SECTION_NAME.match(stripped):
                return ()
        while indent <= indents[-1]:
            indents.pop()
            dicts.pop()
        parent = dicts[-1]
        if colon and key and stripped[-1] != ":":
            if key not in parent:
                parent[key] = value
                if value in ERROR_TOKENS:
                    errors.append((key, value))
        else:
            child = parent.get(section)
            if not isinstance(child, dict):
                child = parent[section] = {}
            indents.append(indent)
            dicts.append(child)
    return name, root, tuple(errors), len(lines)


def _ecc_counts(section: Any) -> dict[str, int | None]:
    """One of the ``Volatile``/``Aggregate`` ECC sub-sections in either layout (a flat section, the
    Ampere+ layout, is read once per distinct content: its counters repeat across GPUs and nodes)."""
    if isinstance(section, dict) and all(isinstance(v, str) for v in section.values()):
        return dict(_ecc_counts_flat(tuple(section.items())))
    return _ecc_counts_of(section)


@lru_cache(maxsize=1024)
def _ecc_counts_flat(items: tuple[tuple[str, str], ...]) -> dict[str, int | None]:
    return _ecc_counts_of(dict(items))


def _ecc_counts_of(section: Any) -> dict[str, int | None]:
    out: dict[str, int | None] = {"correctable": None, "uncorrectable": None, "sram_correctable": None,
                                  "sram_uncorrectable": None, "dram_correctable": None,
                                  "dram_uncorrectable": None}
    if not isinstance(section, dict):
        return out

    def total(keys: list[str]) -> int | None:
        vals = [_int(section.get(k)) for k in keys if k in section]
        nums = [v for v in vals if v is not None]
        return sum(nums) if nums else None

    if any(k.startswith(("SRAM", "DRAM")) for k in section):
        out["sram_correctable"] = total(["SRAM Correctable"])
        out["sram_uncorrectable"] = total([k for k in section if k.startswith("SRAM Uncorrectable")])
        out["dram_correctable"] = total(["DRAM Correctable"])
        out["dram_uncorrectable"] = total(["DRAM Uncorrectable"])
        parts_c = [out["sram_correctable"], out["dram_correctable"]]
        parts_u = [out["sram_uncorrectable"], out["dram_uncorrectable"]]
        out["correctable"] = sum(p for p in parts_c if p is not None) if any(p is not None for p in parts_c) else None
        out["uncorrectable"] = sum(p for p in parts_u if p is not None) if any(p is not None for p in parts_u) else None
        return out
    # pre-Ampere: Single Bit / Double Bit sub-sections, each with a Total
    for key, field in (("Single Bit", "correctable"), ("Double Bit", "uncorrectable")):
        sub = section.get(key)
        if isinstance(sub, dict):
            t = _int(sub.get("Total"))
            if t is None:
                nums = [n for n in (_int(v) for v in sub.values()) if n is not None]
                t = sum(nums) if nums else None
            out[field] = t
        elif isinstance(sub, str):
            out[field] = _int(sub)
    # other spellings: Correctable/Uncorrectable totals directly
    for key, field in (("Correctable", "correctable"), ("Uncorrectable", "uncorrectable")):
        if out[field] is None and key in section:
            out[field] = _int(section.get(key))
    return out


def _ecc_part(ecc: Tree) -> tuple[str | None, dict[str, Any]]:
    """``(ecc_layout, ecc)`` of the ``ECC Errors`` section."""
    vol, agg = ecc.get("Volatile"), ecc.get("Aggregate")
    if isinstance(vol, dict) and any(k.startswith(("SRAM", "DRAM")) for k in vol):
        layout: str | None = "sram_dram"
    elif isinstance(vol, dict) and ("Single Bit" in vol or "Double Bit" in vol):
        layout = "bit_count"
    else:
        layout = None
    agg_d = _sec(ecc, "Aggregate")
    return layout, {
        "volatile": _ecc_counts(vol),
        "aggregate": _ecc_counts(agg),
        "sram_threshold_exceeded": _bool(agg_d.get("SRAM Threshold Exceeded")),
        "channel_repair_pending": _bool(ecc.get("Channel Repair Pending")),
        "tpc_repair_pending": _bool(ecc.get("TPC Repair Pending")),
        "unrepairable_memory": _bool(ecc.get("Unrepairable Memory")),
    }


def _retired_part(rp: Tree) -> dict[str, Any]:
    def _count(v: Any) -> int | None:
        if isinstance(v, dict):  # older drivers: "Single Bit ECC" section with a count inside
            return _int(next(iter(v.values()), None))
        return _int(v)
    pending = _first(rp, ("Pending Page Blacklist",), ("Pending Page Retirement",), ("Pending",))
    return {"single_bit": _count(rp.get("Single Bit ECC")), "double_bit": _count(rp.get("Double Bit ECC")),
            "pending": _bool(pending)}


def _remapped_part(rr: Tree) -> dict[str, Any]:
    hist = rr.get("Bank Remap Availability Histogram")
    return {
        "correctable": _int(rr.get("Correctable Error")),
        "uncorrectable": _int(rr.get("Uncorrectable Error")),
        "pending": _bool(rr.get("Pending")),
        "failure": _bool(rr.get("Remapping Failure Occurred")),
        "histogram": ({_snake(k): _int(v) for k, v in hist.items()} if isinstance(hist, dict) else None),
    }


def _reasons_part(section: Tree) -> dict[str, Any]:
    return {_snake(k): _bool(v) for k, v in section.items() if isinstance(v, str)}


def _counters_part(counters: Tree) -> dict[str, Any] | None:
    return {_snake(k): _int(v) for k, v in counters.items() if isinstance(v, str)} or None


def _temperature_part(temp: Tree) -> dict[str, Any]:
    return {
        "gpu": _num(temp.get("GPU Current Temp") or temp.get("Gpu")),  # 'Gpu : 49 C': drivers before 319
        "memory": _num(temp.get("Memory Current Temp")),
        "shutdown": _num(temp.get("GPU Shutdown Temp")),
        "slowdown": _num(temp.get("GPU Slowdown Temp")),
        "max_operating": _num(temp.get("GPU Max Operating Temp")),
        # 535+ print T.Limit values: headroom below the limit and thresholds relative to it,
        # not absolute temperatures, so they are kept apart
        "tlimit_headroom": _num(temp.get("GPU T.Limit Temp")),
        "shutdown_tlimit": _num(temp.get("GPU Shutdown T.Limit Temp")),
        "slowdown_tlimit": _num(temp.get("GPU Slowdown T.Limit Temp")),
        "max_operating_tlimit": _num(temp.get("GPU Max Operating T.Limit Temp")),
    }


def _power_part(power: Tree) -> dict[str, Any]:
    return {
        "draw": _num(_first(power, ("Power Draw",), ("Instantaneous Power Draw",))),
        "average": _num(power.get("Average Power Draw")),
        "limit": _num(_first(power, ("Current Power Limit",), ("Enforced Power Limit",), ("Power Limit",))),
        "default_limit": _num(power.get("Default Power Limit")),
        "requested_limit": _num(_first(power, ("Requested Power Limit",), ("Power Limit",))),
        "max_limit": _num(power.get("Max Power Limit")),
    }


def _pcie_part(pci: Tree) -> dict[str, Any]:
    link = _sec(pci, "GPU Link Info")
    gen = _sec(link, "PCIe Generation")
    width = _sec(link, "Link Width")
    return {
        "gen_current": _int(gen.get("Current")),
        "gen_max": _int(gen.get("Max")),
        "gen_device_max": _int(gen.get("Device Max")),
        "gen_host_max": _int(gen.get("Host Max")),
        "width_current": _int(width.get("Current")),
        "width_max": _int(width.get("Max")),
        "replays": _int(pci.get("Replays Since Reset")),
    }


def _utilization_part(util: Tree) -> dict[str, Any]:
    return {"gpu": _num(_first(util, ("Gpu",), ("GPU",))), "memory": _num(util.get("Memory"))}


def _part(section: Tree, read: Any) -> Any:
    """``read(section)``; once per shared section (:class:`_Shared`, whose content never changes):
    the caller copies what it hands out."""
    if isinstance(section, _Shared):  # (a subclass of nothing else: the exact class)
        memo = section.memo
        try:
            return memo[read]
        except KeyError:
            got = memo[read] = read(section)
            return got
    return read(section)


def _gpu_fields(index: int, bus_id: str | None, t: Tree, line: int,
                errors: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    layout, ecc = _part(_sec(t, "ECC Errors"), _ecc_part)
    ecc_out = {**ecc, "volatile": dict(ecc["volatile"]), "aggregate": dict(ecc["aggregate"])}

    rp = t.get("Retired Pages")
    retired = dict(_part(rp, _retired_part)) if isinstance(rp, dict) else None
    fh = _get(t, "Fabric", "Health")

    rr = t.get("Remapped Rows")
    remapped = None
    if isinstance(rr, dict):
        remapped = dict(_part(rr, _remapped_part))
        if remapped["histogram"] is not None:
            remapped["histogram"] = dict(remapped["histogram"])

    source = next((k for k in ("Clocks Event Reasons", "Clocks Throttle Reasons") if isinstance(t.get(k), dict)), None)
    reasons = None
    if source is not None:
        reasons = dict(_part(t[source], _reasons_part))

    # 550+: time spent in each reason since boot
    event_us = _part(_sec(t, "Clocks Event Reasons Counters"), _counters_part)
    if event_us is not None:
        event_us = dict(event_us)

    power = _sec(t, "GPU Power Readings") or _sec(t, "Power Readings")
    # a vGPU guest's licence (older GRID drivers name the section 'GRID Licensed Product')
    lic = _sec(t, "vGPU Software Licensed Product") or _sec(t, "GRID Licensed Product") or (
        t if "License Status" in t else {})  # the section's keys at the GPU's level: a copy that lost the indentation
    return {
        "index": index,
        "bus_id": bus_id or _get(t, "PCI", "Bus Id"),
        "name": t.get("Product Name"),
        "uuid": t.get("GPU UUID"),
        "serial": t.get("Serial Number"),
        "minor_number": _int(t.get("Minor Number")),
        "persistence_mode": t.get("Persistence Mode"),
        "performance_state": t.get("Performance State"),
        "inforom_image": _get(t, "Inforom Version", "Image Version"),
        "utilization_pct": dict(_part(_sec(t, "Utilization"), _utilization_part)),
        "temperature_c": dict(_part(_sec(t, "Temperature"), _temperature_part)),
        "power_w": dict(_part(power, _power_part)),
        # a module whose power the GPU shares (GH200: the Grace CPU's and the GPU's under one module limit)
        "module_power": isinstance(t.get("Module Power Readings"), dict),
        "pcie": dict(_part(_sec(t, "PCI"), _pcie_part)),
        "ecc_mode": _first(t, ("ECC Mode", "Current"), ("Ecc Mode", "Current")),
        "ecc_layout": layout,
        "ecc": ecc_out,
        "retired_pages": retired,
        "remapped_rows": remapped,
        "clocks_event_reasons": reasons,
        "clocks_event_source": source,
        "clocks_event_counters_us": event_us,
        "reset_required": _bool(_get(t, "GPU Reset Status", "Reset Required")),
        "drain_and_reset_recommended": _bool(_get(t, "GPU Reset Status", "Drain and Reset Recommended")),
        "recovery_action": t.get("GPU Recovery Action"),
        "vgpu_license": {"product": lic.get("Product Name"), "status": lic.get("License Status")} if lic else None,
        "fabric_state": _get(t, "Fabric", "State"),
        "fabric_status": _get(t, "Fabric", "Status"),
        "fabric_health": {k: v for k, v in fh.items() if isinstance(v, str)} if isinstance(fh, dict) else None,
        "error_fields": error_fields(t) if errors is None else errors,
        "line": line,
    }


def _selected(out: dict[str, Any], commands: list[str]) -> dict[str, Any]:
    """A command reader (COMMAND_READERS): the report of the one GPU a shown ``nvidia-smi -i N -q`` selects is GPU
    N's (its block would otherwise take index 0, its place in the report)."""
    idx = selected_index(commands)
    gpus = out.get("gpus") or []
    if idx is None or len(gpus) != 1:
        return out
    return {**out, "gpus": [{**gpus[0], "index": idx}]}


#: an ECC counter line of Ampere+ drivers as ``nvidia-smi -q | grep -i correctable`` leaves it (no section above it)
_ECC_COUNTER = re.compile(r"^[ \t]*(?P<key>[SD]RAM (?:Correctable|Uncorrectable)(?: [\w-]{1,12})?)\s*:\s*"
                          r"(?P<val>\S+)\s*$")


def _grepped_ecc(body: str) -> str | None:
    """``nvidia-smi -q | grep -i correctable`` (and ``| grep -v 0``): ECC counter lines alone, the volatile ones first
    and the aggregate ones after (each counter at most twice, in the report's order), as the ``ECC Errors`` section
    they came from; None for any other text."""
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if not lines or len(lines) > 24:
        return None
    counters = [m for ln in lines if (m := _ECC_COUNTER.match(ln))]
    if len(counters) != len(lines):
        return None
    volatile: dict[str, str] = {}
    aggregate: dict[str, str] = {}
    for m in counters:
        key, line = m.group("key"), f"            {m.group('key')} : {m.group('val')}"
        if key not in volatile:
            volatile[key] = line
        elif key not in aggregate:
            aggregate[key] = line
        else:
            return None  # a third time: not one GPU's two groups
    return "\n".join(["    ECC Errors", "        Volatile", *volatile.values()]
                     + (["        Aggregate", *aggregate.values()] if aggregate else [])) + "\n"


@parser("nvidia-smi-q", commands=_selected)
def parse_nvidia_smi_q(text: str) -> dict[str, Any]:
    """The text report; ``nvidia-smi -q -x`` XML (the first markup character is ``<``) is handed
    to :func:`ccparse.nvidia_smi_xml.parse_nvidia_smi_q_xml`, which gives the same shape."""
    if looks_like_xml(text):
        return parse_nvidia_smi_q_xml(text)
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    body = strip_source_line(text)
    if body[:80].lstrip()[:4] in ("SRAM", "DRAM") and (ecc := _grepped_ecc(body)) is not None:
        body = ecc
    if _flattened(body):
        body = _reindented(body)
    top: dict[str, str] = {}
    warnings: list[str] = []
    lost: list[dict[str, str]] = []
    blocks: list[tuple[str | None, int, _TreeBuilder]] = []
    current: _TreeBuilder | None = None
    excerpt = False
    elided: list[int] = []
    last = 0
    # The hot path at fleet scale (about 1,300 lines per 8-GPU report, one report per node): each
    # line is stripped once, the rare cases (banner, elision, warnings) are gated on the first
    # character, and the tree is built inline on the current block's stack (see _TreeBuilder).
    indents: list[int] = []
    dicts: list[Tree] = []
    cache = _LINES
    if len(cache) > _LINES_MAX:
        cache.clear()
    #: the current block when it is a ``GPU <bus id>`` block: its common lines take the fast path
    #: (a block of its own until the first GPU header: never the current one)
    gpu_block = _TreeBuilder()
    chunks, seen = _CHUNKS, _SEEN
    if len(chunks) > _CHUNKS_MAX:
        chunks.clear()
    if len(seen) > _SEEN_MAX:  # (the sections that repeat stay in _CHUNKS)
        seen.clear()
    # a text whose only line boundary is "\n" is taken in pieces (a line at indent 0 or 4 with the
    # deeper lines after it: one top-level section of a GPU block), so that a section seen before
    # is put into the tree whole (see _chunk); any other text line by line, as split_lines gives it
    parts = _PIECE.split(body) if _plain_newlines(body) else split_lines(body)
    lineno = offset
    for piece in parts:
        if current is gpu_block and "\n" in piece:
            entry = chunks.get(piece)
            if entry is None:
                digest = hash(piece)
                if digest in seen:  # the second time a piece is seen: worth taking apart whole
                    entry = chunks[piece] = _chunk(piece)
                else:
                    seen.add(digest)
            if entry:
                cname, subtree, cerrors, nlines = entry
                while indents[-1] >= _CHUNK_INDENT:
                    indents.pop()
                    dicts.pop()
                parent = dicts[-1]
                if not isinstance(parent.get(cname), dict):
                    # what the lines of the piece would build, one after the other, into a new
                    # section (the line after the piece has an indent of at most 4: it closes it)
                    parent[cname] = subtree
                    if cerrors:
                        gpu_block.errors.extend(cerrors)
                    lineno += nlines
                    continue
                # a section of that name is open already: the lines merge into it, one by one
        for raw in piece.split("\n") if "\n" in piece else (piece,):
            lineno += 1
            try:  # a subscript, not .get(): no method call per line (a miss is a line seen the first time)
                pieces = cache[raw]
            except KeyError:
                pieces = cache[raw] = _pieces(raw)
            common, indent, name, value, stripped, colon, key, section = pieces
            if common and current is gpu_block:
                # the common line inside a GPU block: what the general path below does with it
                while indent <= indents[-1]:
                    indents.pop()
                    dicts.pop()
                parent = dicts[-1]
                if common == _TREE_SECTION:
                    child = parent.get(name)
                    if not isinstance(child, dict):
                        child = parent[name] = {}
                    elif child.__class__ is _Shared:  # a section from _CHUNKS reopened: a copy of its own
                        child = parent[name] = _unshare(child)
                    indents.append(indent)
                    dicts.append(child)
                elif name not in parent:
                    parent[name] = value
                    if common == _TREE_ERROR:
                        gpu_block.errors.append((name, value))
                continue
            if not stripped:
                continue
            first = stripped[0]
            if first in _RARE_FIRST:
                if first == "=" and _BANNER.match(stripped):
                    continue
                if _elided_line(stripped):
                    last = lineno
                    elided.append(lineno)
                    # a report whose header stated its count stays a report: the count is judged, what is
                    # left of the blocks too, and the cut is said; an elision before it makes an excerpt
                    if "Attached GPUs" not in top:
                        excerpt = True
                    continue
                if stripped.startswith(("WARNING:", "Unable to determine", "Unable to detect")):
                    last = lineno
                    warnings.append(stripped)
                    if (gone := lost_gpu(stripped)) is not None:
                        lost.append(gone)
                    continue
            last = lineno
            if indent == 0:
                h = _GPU_HEADER.match(stripped) if stripped.startswith("GPU ") else None
                if h:
                    current = gpu_block = _TreeBuilder()
                    blocks.append((h.group(1), lineno, current))
                    indents, dicts = current.indents, current.dicts
                    continue
                if ":" not in stripped and not top and (not blocks or blocks[-1][0] is None) \
                        and _SECTION_NAME.match(stripped) and not capture.is_command(stripped, ("nvidia-smi",)):
                    # an excerpt whose sections start at column 0 ('Clocks Throttle Reasons' then its
                    # indented lines): one GPU of unknown bus id, read as a tree
                    if current is None:
                        current = _TreeBuilder()
                        blocks.append((None, lineno, current))
                        indents, dicts = current.indents, current.dicts
                    excerpt = True
            if indent == 0 and not (excerpt and current is not None and blocks and blocks[-1][0] is None):
                m = _KV.match(stripped) if ":" in stripped else None
                if not m and capture.is_command(stripped, ("nvidia-smi",)):
                    continue  # the pasted command line ('$ nvidia-smi -q | grep UUID')
                if not m:
                    raise ParseError(TOOL, f"unexpected top-level line {stripped[:80]!r}", lineno)
                top[m.group(1).strip()] = m.group(2).strip()
                current = None
                continue
            if (current is not None and blocks and blocks[-1][0] is None and stripped.startswith("GPU UUID")
                    and "GPU UUID" in current.root):
                current = _TreeBuilder()  # grep'd excerpt: each 'GPU UUID' line is the next GPU
                blocks.append((None, lineno, current))
                indents, dicts = current.indents, current.dicts
            if current is None:
                if blocks:
                    raise ParseError(TOOL, f"indented line outside a GPU block: {stripped[:80]!r}", lineno)
                # a header-less excerpt (documentation slice): one GPU of unknown bus id
                current = _TreeBuilder()
                blocks.append((None, lineno, current))
                indents, dicts = current.indents, current.dicts
                excerpt = True
            if not colon and not _SECTION_NAME.match(stripped):
                raise ParseError(TOOL, f"not a 'Key : Value' line or section name: {stripped[:80]!r}", lineno)
            while indent <= indents[-1]:
                indents.pop()
                dicts.pop()
            parent = dicts[-1]
            if colon and key and stripped[-1] != ":":
                if key not in parent:
                    parent[key] = value
                    if value in ERROR_TOKENS:
                        current.errors.append((key, value))
            else:
                key = section
                child = parent.get(key)
                if not isinstance(child, dict):
                    child = parent[key] = {}
                elif child.__class__ is _Shared:
                    child = parent[key] = _unshare(child)
                indents.append(indent)
                dicts.append(child)
    if not blocks and not top and lost:
        return {"driver_version": None, "cuda_version": None, "timestamp": None, "attached_gpus": None,
                "excerpt": False, "warnings": warnings, "lost_gpus": lost, "gpus": []}
    if not any(k in top for k in ("Driver Version", "Attached GPUs")) and len(body) < 2000 \
            and (fatal := unreachable_driver(body)) is not None:
        # nvidia-smi's only output when it cannot reach the driver (a short paste; as a line of no GPU block or
        # an indented one read as a header-less excerpt)
        return {"driver_version": None, "cuda_version": None, "timestamp": None, "attached_gpus": None,
                "excerpt": True, "warnings": warnings, "lost_gpus": lost, "gpus": [], "driver_unreachable": fatal}
    if not blocks and not top:
        raise ParseError(TOOL, "no nvidia-smi -q report found (empty input or another tool's output)",
                         last or None)
    if not blocks:
        if not any(k in top for k in ("Driver Version", "Attached GPUs")):
            raise ParseError(TOOL, "no 'GPU <bus id>' block and no report header", last or None)
        if top.get("Attached GPUs", "0").strip() not in ("0", "") and not lost:
            raise ParseError(TOOL, f"report says Attached GPUs {top['Attached GPUs']} but has no GPU block "
                             "(truncated?)", last or None)
    if excerpt and any(bus is None for bus, _ln, _block in blocks):
        tree = blocks[0][2].root
        if not (_KNOWN_SECTIONS & set(tree)) and "GPU UUID" not in tree:
            raise ParseError(TOOL, "indented text without a 'GPU <bus id>' header and no known section",
                             blocks[0][1])
    attached = _int(top.get("Attached GPUs"))
    # fewer GPU blocks than 'Attached GPUs': a per-device report (-i) or a cut paste; what is
    # there is judged, the missing blocks are recorded (the count is the header's)
    missing = max(0, attached - len(blocks) - len(lost)) if attached is not None and not excerpt else 0
    gpus = [_gpu_fields(i, bus, b.root, ln, b.errors) for i, (bus, ln, b) in enumerate(blocks)]
    for g, (_bus, ln, b) in zip(gpus, blocks):
        if not b.root:
            raise ParseError(TOOL, f"GPU {g['bus_id']} block is empty (truncated?)", ln)
    out: dict[str, Any] = {
        "driver_version": top.get("Driver Version"),
        "cuda_version": top.get("CUDA Version"),
        "timestamp": top.get("Timestamp"),
        "attached_gpus": attached,
        "excerpt": excerpt,
        "blocks_missing": missing,
        "warnings": warnings,
        "lost_gpus": lost,
        "gpus": gpus,
    }
    if elided and not excerpt:
        out["cut"] = [f"lines elided ('...' at line {', '.join(map(str, elided[:4]))})"]
    return out
