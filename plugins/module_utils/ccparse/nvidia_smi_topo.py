"""Parser for ``nvidia-smi topo -m`` (the connection matrix).

Tab- or space-aligned, with or without the ANSI underline nvidia-smi puts on the header when
writing to a terminal, with NIC rows/columns, the ``CPU Affinity``/``NUMA Affinity``/``GPU NUMA
ID`` columns, the legend and the ``NIC Legend`` (``NIC0: mlx5_0``)::

    {"columns": ["GPU0", ..., "NIC0"], "affinity_columns": ["CPU Affinity", "NUMA Affinity"],
     "gpus": [{"name": "GPU0", "index": 0, "links": {"GPU1": "NV18", "NIC0": "PIX"},
               "cpu_affinity": "0-51", "numa_affinity": "0", "gpu_numa_id": None, "line": 3}],
     "nics": [{"name": "NIC0", "device": "mlx5_0", "links": {...}, "line": 12}],
     "legend": {"X": "Self", "SYS": "...", "NV#": "..."}}

Link values are kept as printed (``X``, ``SYS``, ``NODE``, ``PHB``, ``PXB``, ``PIX``, ``NV<n>``);
``nvlinks(value)`` gives the bonded NVLink count of an ``NV<n>`` cell.

Lines before the header that are not matrix rows (an environment report around it: ``vLLM Version :
...``, ``GPU Topology:``, nvidia-smi's ``76 NICs found in the topology, only displaying 56``) are skipped
and counted (``skipped_lines``). An excerpt that starts inside the matrix (rows without the header line)
is read with its columns inferred from the rows (``columns_inferred``: True): a NIC row's ``X`` sits in
column ``<GPU count> + <its index>``, otherwise the GPU columns reach at least each GPU row's ``X`` and
its last ``NV<n>``; the remaining link cells are NICs. A header without any whole row parses with no
rows (``truncated``): nothing to judge, not an error.
"""

from __future__ import annotations

import re
from typing import Any

from . import capture
from .common import ParseError, parser, strip_source_line, to_int

TOOL = "nvidia-smi topo -m"

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: a column of the matrix: a GPU, a NIC (NICn, or an RDMA device name as older drivers print it: mlx5_0,
#: mlx4_0, bnxt_re0, irdma_1, rocep..., efa_0) or the CPU
_DEV = re.compile(r"^(?:(?:GPU|NIC|mlx\d_|CPU)\S*|[a-z][a-z0-9]{1,15}_\d{1,3}|[a-z]{2,8}_re\d{1,3}|rocep\S+)$")
#: the cells of ``nvidia-smi topo -p2p r|w|n|a|p`` (peer-to-peer read/write/NVLink/atomics/prop capability):
#: Status Ok, Chipset/GPU/Topology not supported, Not supported, Unknown
P2P_CELLS = frozenset({"OK", "CNS", "GNS", "TNS", "NS", "U"})
#: a matrix cell: a link type of ``topo -m``, or a capability of ``topo -p2p``
_CELL = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|NV\d+|PSB|SOC|N/A|" + "|".join(sorted(P2P_CELLS)) + r")$")
_AFFINITY_NAMES = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
#: a matrix row's own name (a headerless excerpt is recognised by it)
_ROW = re.compile(r"^(?:GPU|NIC)\d{1,3}$")


#: a paste that lost the tab between two columns (a web page's copy): 'NIC6NIC7' in the header, 'SYSSYS' in a row
_GLUED_DEVS = re.compile(r"(?:GPU|NIC|mlx5_)\d{1,3}")
_GLUED_CELLS = re.compile(r"SYS|NODE|PHB|PXB|PIX|NV\d{1,2}")


def _unglued(token: str, part: re.Pattern[str]) -> list[str]:
    """``token`` as the cells it glues together when it is two or more of ``part`` run together, else itself."""
    if len(token) < 6 or not token[:1].isupper():
        return [token]
    parts = part.findall(token)
    return parts if len(parts) > 1 and "".join(parts) == token else [token]


def nvlinks(value: str | None) -> int:
    m = re.fullmatch(r"NV(\d+)", value or "")
    return (to_int(m.group(1)) or 0) if m else 0


@parser("nvidia-smi-topo")
def parse_nvidia_smi_topo(text: str) -> dict[str, Any]:
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    lines = [(n, _ANSI.sub("", raw).rstrip())
             for n, raw in enumerate(strip_source_line(text).splitlines(), start=1 + offset)]
    columns: list[str] | None = None
    aff_cols: list[str] = []
    gpus: list[dict[str, Any]] = []
    nics: list[dict[str, Any]] = []
    legend: dict[str, str] = {}
    nic_names: dict[str, str] = {}
    section = "matrix"
    last = 0
    truncated = False
    skipped = 0
    first_skipped: tuple[int, str] | None = None
    headless: list[tuple[int, list[str]]] = []
    final = max((n for n, ln in lines if ln.strip()), default=0)
    for lineno, line in lines:
        s = line.strip()
        if not s:
            continue
        if columns is None and capture.is_command(s, ("nvidia-smi",)):
            continue
        last = lineno
        if s.startswith("NIC Legend"):
            section = "nic_legend"
            continue
        if s.startswith("Legend"):
            section = "legend"
            continue
        if section == "legend":
            m = re.match(r"^(\S+)\s*=\s*(.+)$", s)
            if m:
                legend[m.group(1)] = m.group(2).strip()
            continue
        if section == "nic_legend":
            m = re.match(r"^(NIC\d+)\s*:\s*(\S+)$", s)
            if m:
                nic_names[m.group(1)] = m.group(2)
            continue
        if columns is None:
            head = s
            aff = []
            for name in _AFFINITY_NAMES:
                if name in head:
                    aff.append(name)
            for name in aff:
                head = head.replace(name, " ")
            cols = [part for c in head.split() for part in _unglued(c, _GLUED_DEVS)]
            if cols and all(_DEV.match(c) for c in cols):
                columns, aff_cols = cols, sorted(aff, key=line.find)
                continue
            toks = s.split()
            if _ROW.match(toks[0]) and len(toks) > 2 and _CELL.match(toks[1]) and _CELL.match(toks[2]):
                headless.append((lineno, toks))  # an excerpt that starts inside the matrix
            elif headless:
                break  # the headerless rows ended
            else:
                skipped += 1  # an environment report's lines around the matrix
                first_skipped = first_skipped or (lineno, s)
            continue
        tokens = [part for c in s.split() for part in _unglued(c, _GLUED_CELLS)]
        label = tokens[0]
        if not _DEV.match(label):
            raise ParseError(TOOL, f"matrix row does not start with a device name: {s[:80]!r}", lineno)
        cells = tokens[1:1 + len(columns)]
        if len(cells) < len(columns) and lineno == final and all(_CELL.match(c) for c in cells):
            truncated = True  # the capture ends inside this row: keep what is complete
            break
        if len(cells) < len(columns) or not all(_CELL.match(c) for c in cells):
            raise ParseError(TOOL, f"row {label}: expected {len(columns)} link cells (X, SYS, NODE, PHB, PXB, PIX, "
                             f"NV#), got {' '.join(tokens[1:])[:80]!r} (truncated?)", lineno)
        _row(label, tokens, columns, aff_cols, lineno, gpus, nics)
    inferred = False
    if columns is None and headless:
        columns, inferred = _infer_columns([t for _lineno, t in headless]), True
        for lineno, toks in headless:
            cells = [c for c in toks[1:1 + len(columns)] if _CELL.match(c)]
            if len(cells) < len(columns):
                truncated = True
                continue
            _row(toks[0], toks, columns, [], lineno, gpus, nics)
    if columns is None:
        if first_skipped:
            raise ParseError(TOOL, f"not a topo -m header (expected GPU0 GPU1 ... columns): {first_skipped[1][:80]!r}",
                             first_skipped[0])
        raise ParseError(TOOL, "empty input (no matrix header)", last or None)
    want_gpus = [c for c in columns if c.startswith("GPU")]
    if not gpus:
        truncated = True  # a header whose rows the capture does not hold: nothing to judge
    if len(gpus) < len(want_gpus):
        truncated = True  # a capture cut before the last GPU rows: the rows present are judged
    for n in nics:
        n["device"] = nic_names.get(n["name"], n["name"] if not n["name"].startswith("NIC") else None)
    seen_cells = {v for g in gpus for v in (g.get("links") or {}).values()}
    p2p = bool(seen_cells) and seen_cells <= P2P_CELLS  # a topo -p2p matrix: capabilities, not link types
    return {"columns": columns, "affinity_columns": aff_cols, "gpus": gpus, "nics": nics, "legend": legend,
            "truncated": truncated, "skipped_lines": skipped, "columns_inferred": inferred, "p2p": p2p}


def _row(label: str, tokens: list[str], columns: list[str], aff_cols: list[str], lineno: int,
         gpus: list[dict[str, Any]], nics: list[dict[str, Any]]) -> None:
    """One matrix row (its link cells already checked) into ``gpus`` or ``nics``."""
    cells = tokens[1:1 + len(columns)]
    rest = tokens[1 + len(columns):]
    links = {c: v for c, v in zip(columns, cells) if c != label}
    row: dict[str, Any] = {"name": label, "links": links, "line": lineno}
    affinity = dict(zip(aff_cols, rest))
    if label.startswith("GPU"):
        row["index"] = to_int(label[3:]) if label[3:].isdigit() else None
        row["cpu_affinity"] = affinity.get("CPU Affinity")
        numa = affinity.get("NUMA Affinity")
        row["numa_affinity"] = None if numa in (None, "N/A") else numa
        gnuma = affinity.get("GPU NUMA ID")
        row["gpu_numa_id"] = None if gnuma in (None, "N/A") else gnuma
        gpus.append(row)
    else:
        nics.append(row)


def _infer_columns(rows: list[list[str]]) -> list[str]:
    """The column names of matrix rows pasted without their header (see the module docstring)."""
    links = max(sum(1 for _cell in _leading_cells(t[1:])) for t in rows)
    n_gpus = 0
    for toks in rows:
        cells = list(_leading_cells(toks[1:]))
        idx = to_int(toks[0][3:]) or 0
        if toks[0].startswith("NIC") and "X" in cells:
            n_gpus = max(n_gpus, cells.index("X") - idx)
        elif toks[0].startswith("GPU"):
            nv = [i for i, c in enumerate(cells) if c.startswith("NV")]
            n_gpus = max(n_gpus, idx + 1, (nv[-1] + 1) if nv else 0)
    n_gpus = min(n_gpus, links)
    return [f"GPU{i}" for i in range(n_gpus)] + [f"NIC{i}" for i in range(links - n_gpus)]


def _leading_cells(tokens: list[str]) -> Any:
    """The link cells a row starts with (``N/A`` ends them: it is the GPU NUMA ID column)."""
    for t in tokens:
        if t == "N/A" or not _CELL.match(t):
            return
        yield t
