"""Parser for ``lspci -vv`` (or ``-vvv``): PCIe link capability and status per device.

Each device block starts at column 0 with its slot (``0000:19:00.0 3D controller: NVIDIA ...``);
``LnkCap:`` gives the maximum speed and width, ``LnkSta:`` the trained ones (``(downgraded)`` is
kept as a flag where lspci prints it). Speeds are GT/s and the PCIe generation derived from them
(2.5 -> 1, 5 -> 2, 8 -> 3, 16 -> 4, 32 -> 5, 64 -> 6)::

    {"devices": [{"slot": "0000:19:00.0", "class": "3D controller",
                  "description": "NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)",
                  "vendor": "nvidia"|"mellanox"|None, "is_gpu": True, "is_nic": False,
                  "lnkcap": {"speed_gts": 32.0, "gen": 5, "width": 16} | None,
                  "lnksta": {"speed_gts": 2.5, "gen": 1, "width": 16, "speed_downgraded": True,
                             "width_downgraded": False} | None,
                  "access_denied": False, "line": 1}]}

Devices without a PCIe capability (host bridges, legacy devices) have ``lnkcap``/``lnksta`` None;
``Capabilities: <access denied>`` (lspci run without root) sets ``access_denied``.
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, parser, strip_source_line, to_float, to_int

TOOL = "lspci -vv"

_HEAD = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+([^:\n]{1,80}):\s*(.*)$")
_SPEED = re.compile(r"Speed\s+(\d{1,3}(?:\.\d{1,3})?)GT/s(?:\s*\((ok|downgraded)\))?")
_WIDTH = re.compile(r"Width\s+x(\d{1,2})(?:\s*\((ok|downgraded)\))?")
GEN_BY_GTS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}


def _link(text: str) -> dict[str, Any] | None:
    s, w = _SPEED.search(text), _WIDTH.search(text)
    if not s and not w:
        return None
    speed = to_float(s.group(1)) if s else None
    return {"speed_gts": speed, "gen": GEN_BY_GTS.get(speed) if speed is not None else None,
            "width": to_int(w.group(1)) if w else None,
            "speed_downgraded": (s.group(2) == "downgraded") if s and s.group(2) else None,
            "width_downgraded": (w.group(2) == "downgraded") if w and w.group(2) else None}


@parser("lspci")
def parse_lspci(text: str) -> dict[str, Any]:
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    devices: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    last = 0
    for lineno, raw in enumerate(strip_source_line(text).splitlines(), start=1 + offset):
        if not raw.strip() or raw.lstrip().startswith("$ "):
            continue
        last = lineno
        if not raw[0].isspace():
            h = _HEAD.match(raw.strip()[:600])
            if not h:
                cur = None  # a title, prose or another command's output: not a device
                continue
            slot = h.group(1) if h.group(1).count(":") == 2 else f"0000:{h.group(1)}"
            desc = h.group(3).strip()
            low = desc.lower()
            vendor = "nvidia" if "nvidia" in low else "mellanox" if ("mellanox" in low or "connectx" in low) else None
            cls = h.group(2).strip()
            cur = {"slot": slot.lower(), "class": cls, "description": desc, "vendor": vendor,
                   "is_gpu": vendor == "nvidia" and cls in ("3D controller", "VGA compatible controller"),
                   "is_nic": cls in ("Infiniband controller", "Ethernet controller", "Network controller"),
                   "lnkcap": None, "lnksta": None, "access_denied": False, "line": lineno}
            devices.append(cur)
            continue
        if cur is None:
            continue  # indented text outside a device block
        s = raw.strip()[:600]
        if s.startswith("LnkCap:"):
            cur["lnkcap"] = _link(s)
        elif s.startswith("LnkSta:"):
            cur["lnksta"] = _link(s)
        elif "<access denied>" in s:
            cur["access_denied"] = True
    if not devices:
        raise ParseError(TOOL, "no PCI device found (empty input or another tool's output)", last or None)
    return {"devices": devices}
