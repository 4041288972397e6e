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

A grep'd excerpt (``lspci -vv -s 01:00.0 | grep -E "LnkSta|LnkCap"``, a probe script's ``Card: 01:00.0 ...``
lines, ``Subsystem:``/``Physical Slot:`` lines) has no device header: its link lines belong to an
``excerpt`` device (``"excerpt": True``) named by the last slot seen on a non-indented line, vendor from
a ``Subsystem:`` line. A shown lspci command line (the capture clean-up keeps it as ``$ lspci ...``)
names the device by its ``-s [[[[domain]:]bus]:][dev][.func]`` selector when that selects one
function (``-vvvs c9:00.0``, ``-s 0000:c9:00.0``, ``-s1:0.0``; see :func:`selected_slot`); a selector
of several (``-s 01:00``, ``-s *:00.0``) names none.

``lspci -t[v]``'s tree (no device header in the list form) is read device by device (:func:`_tree`; the parse then
says ``"tree": True``): slots and, with ``-v``, names, no class and no link.

Devices without a PCIe capability (host bridges, legacy devices) have ``lnkcap``/``lnksta`` None;
``Capabilities: <access denied>`` (lspci run without root) sets ``access_denied``.
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, parser, strip_source_line, to_float, to_int

TOOL = "lspci -vv"

#: a line of capability flags only (``ClockPM- Surprise- LLActRep- BwNot-``)
_FLAGS_LINE = re.compile(r"^(?:[A-Za-z][\w/]{0,24}[+-] ){1,20}[A-Za-z][\w/]{0,24}[+-]$")
#: a slot named anywhere in a non-indented line of an excerpt (``Card: 01:00.0 VGA ...`` of a probe
#: script, ``$ lspci -vv -s 01:00.0 | grep LnkSta``): the device the following link lines belong to
_SLOT_ANY = re.compile(r"(?<![\w:.])((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?![\w.])")
#: the numeric class 'lspci -nn' prints after its name
_CLASS_NUMBER = re.compile(r"\s*\[[0-9a-fA-F]{4}\]$")
#: PCI class codes of the devices judged, as 'lspci -n' prints them alone (PCI Code and ID Assignment spec)
_CLASS_NAMES = {"0108": "Non-Volatile memory controller", "0200": "Ethernet controller",
                "0207": "Infiniband controller", "0280": "Network controller", "0300": "VGA compatible controller",
                "0302": "3D controller"}
#: a device's vendor:device ids ('[10de:2330]' of -nn, '10de:2330' of -n) and the vendors the checks name
_VENDOR_ID = re.compile(r"(?:^|\[)([0-9a-fA-F]{4}):[0-9a-fA-F]{4}(?:\]|\s|$)")
_VENDORS = {"10de": "nvidia", "15b3": "mellanox"}
_HEAD = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+([^:\n]{1,80}):\s*(.*)$")
#: a link field and its value up to the next one, on one line ('LnkCap: Speed 32GT/s, Width x4 LnkSta: ...')
_LINK_FIELD = re.compile(r"\b(LnkCap|LnkSta):((?:(?!\bLnk(?:Cap|Sta):).){0,300})")
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


#: a line of a device's section (searched, so a logger's prefix before it does not matter): capability and
#: register lines, VPD fields (``[SN] Serial number: ...``), the VPD's ``Read-only fields:``
_SECTION = re.compile(r"(?:^|\s)(?:Capabilities: (?:\[[0-9a-f]{2,3}(?: v\d)?\]|<access denied>)"
                      r"|\[[A-Z0-9]{2}\] [A-Z][\w -]{1,40}:|Read-only fields:|Read/write fields:|Product Name:"
                      r"|Control: I/O|Status: Cap|Interrupt: pin|Region \d+:|Kernel driver in use:|Kernel modules:"
                      r"|(?:LnkCtl|LnkCtl2|DevCap|DevCtl|DevSta|UESta|UEMsk|UESvrt|CESta|CEMsk|AERCap):)")
_REV_FF = re.compile(r"\(rev ff\)(?:\s*\(prog-if ff\b[^)]*\)?)?\s*$", re.IGNORECASE)
#: the rest of a device's header line that a mail or a terminal wrapped onto the next line at column 0
#: ('Mobile] (rev ff) (prog-if ff)', 'decode])')
_HEAD_TAIL = re.compile(r"^[^:]{0,120}?(?:\((?:rev|prog-if) [0-9a-f]{2}\b[^)]*\)?\s*)+$|^[\w ]{0,40}\]\)\s*$",
                        re.IGNORECASE)
#: lspci's line for a device whose config space header reads as all ones (no device answers at the address)
_HEADER_ALL_ONES = re.compile(r"!!! Unknown header type 7f", re.IGNORECASE)


#: lspci options that take an argument (``-s`` handled apart): after one, the rest of the word is its argument
_ARG_OPTS = frozenset("dipAOHF")
#: where a shown command's own words end (a pipe, a list, a redirection, a comment after it)
_CMD_END = frozenset({"|", "||", "&&", ";", ">", ">>", "2>", "2>&1", "#"})


def _selector(cmd: str) -> str | None:
    """The argument of the ``-s`` option of the lspci command ``cmd`` (``-s X``, ``-sX``, ``-vvvs X``),
    or None when it has none."""
    words = cmd.split()
    start = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] == "lspci"), None)
    if start is None:
        return None
    i = start + 1
    while i < len(words) and words[i] not in _CMD_END and words[i][:1] not in ("|", ";", "("):
        w = words[i]
        i += 1
        if w[:1] != "-" or w[:2] == "--" or len(w) < 2:
            continue
        for k, ch in enumerate(w[1:], start=2):
            if ch == "s":
                arg = w[k:] or (words[i] if i < len(words) else "")
                return arg.split("|", 1)[0].strip("'\"")
            if ch in _ARG_OPTS:
                i += 0 if w[k:] else 1  # its argument is the next word
                break
    return None


def selected_slot(cmd: str) -> str | None:
    """``domain:bus:dev.func`` of the one function the ``-s`` selector of lspci command ``cmd`` selects
    (pciutils' ``[[[[<domain>]:]<bus>]:][<slot>][.[<func>]]``, hex, a missing domain read as 0000), or None:
    no ``-s``, a wildcard or a missing part (several functions), or not a selector at all."""
    sel = _selector(cmd)
    if not sel:
        return None
    parts = sel.split(":")
    if len(parts) not in (2, 3):
        return None  # no bus given: every bus
    dom, bus = (parts[0], parts[1]) if len(parts) == 3 else ("0", parts[0])
    dev, dot, fn = parts[-1].partition(".")
    try:
        d, b, s, f = (int(x, 16) if x and len(x) <= 8 and x.isalnum() else -1 for x in (dom, bus, dev, fn))
    except ValueError:
        return None
    if not dot or min(d, b, s, f) < 0 or b > 0xFF or s > 0x1F or f > 7:
        return None
    return f"{d:04x}:{b:02x}:{s:02x}.{f:x}"


def _vendor_named(low: str) -> str | None:
    """``nvidia`` or ``mellanox`` where a device's lower-cased name says so (the list form's description, the tree's
    name), else None."""
    return "nvidia" if "nvidia" in low else "mellanox" if ("mellanox" in low or "connectx" in low) else None


#: a node of ``lspci -t[v]``'s tree: a bus (``[0000:00]`` at a root, ``[01]`` or ``[11-12]`` behind a bridge) or a
#: device (``00.0``, with ``-v`` its name after two blanks), each after the tree's ``-``
_TREE_NODE = re.compile(r"(?<=-)(?:\[(?:(?P<dom>[0-9a-fA-F]{4}):)?(?P<bus>[0-9a-fA-F]{2})(?:-[0-9a-fA-F]{2})?\]"
                        r"|(?P<dev>[0-9a-fA-F]{2}\.[0-7])(?:  (?P<name>\S.*))?)")


def _tree(body: str, offset: int) -> list[dict[str, Any]]:
    """The devices of an ``lspci -t[v]`` tree (pciutils' ls-tree.c): each bus's devices sit in one column, below the
    bus's first device, so a device's bus is the last one whose first device stood in its column; a bridge's
    secondary bus takes the bridge's domain. Bridges are listed too (no name is printed for them). Names alone: no
    class and no link (``is_gpu`` where an NVIDIA name is no audio, USB or bridge function)."""
    devices: list[dict[str, Any]] = []
    column: dict[int, tuple[str, str]] = {}  # the column of a bus's devices -> (domain, bus)
    for lineno, raw in enumerate(body.splitlines(), start=1 + offset):
        if "lspci" in raw[:200] or not raw.lstrip(" |").startswith(("-", "+-", "\\-")):
            continue
        pending: tuple[str, str] | None = None
        domain = "0000"
        for m in _TREE_NODE.finditer(raw[:600]):
            if m.group("bus"):
                pending = ((m.group("dom") or domain).lower(), m.group("bus").lower())
                continue
            col = m.start()
            if pending is not None:
                column[col] = pending
                pending = None
            where = column.get(col)
            if where is None:
                continue  # a device of no bus read (a tree cut above it)
            domain = where[0]
            name = (m.group("name") or "").strip()
            low = name.lower()
            vendor = _vendor_named(low)
            devices.append({"slot": f"{where[0]}:{where[1]}:{m.group('dev').lower()}", "class": "",
                            "description": name, "vendor": vendor,
                            "is_gpu": vendor == "nvidia" and not any(w in low for w in _NOT_GPU),
                            "is_nic": vendor == "mellanox", "lnkcap": None, "lnksta": None, "access_denied": False,
                            "line": lineno, "config_all_ones": False, "flash_recovery": False})
    return devices


#: words of an NVIDIA function's name that is no GPU (the board's audio, USB-C and bridge functions, NVSwitch)
_NOT_GPU = ("audio", "usb", "bridge", "nvswitch", "serial bus", "ucsi")


@parser("lspci")
def parse_lspci(text: str) -> dict[str, Any]:
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    devices: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    last = 0
    prev = head_line = -1  # the last non-blank line read, the last device header's line
    slot_hint: str | None = None

    def excerpt_device(lineno: int) -> dict[str, Any]:
        slot = slot_hint or f"device{len(devices) + 1}"
        if slot_hint and slot.count(":") == 1:
            slot = f"0000:{slot}"
        return {"slot": slot.lower(), "class": "", "description": "", "vendor": None, "is_gpu": False,
                "is_nic": False, "lnkcap": None, "lnksta": None, "access_denied": False, "line": lineno,
                "excerpt": True}

    body = strip_source_line(text)
    # a listing whose indentation a web page's copy dropped: every line at column 0, device headers among them;
    # a line that is no device header then belongs to the device above it, as its indentation said
    flat = "\n " not in body and "\n\t" not in body and not body[:1].isspace() and \
        any(_HEAD.match(ln[:600]) for ln in body.split("\n", 400)[:400])
    for lineno, raw in enumerate(body.splitlines(), start=1 + offset):
        if not raw.strip():
            continue
        if flat and cur is not None and not cur.get("excerpt") and not raw.startswith("$ ") \
                and _HEAD.match(raw[:600]) is None:
            raw = "\t" + raw
        if raw.lstrip().startswith("$ ") or "lspci" in raw[:200]:
            if _selector(raw[:600]) is not None:
                slot_hint = selected_slot(raw[:600])  # the -s of the command: its one device, or none
            else:
                m = _SLOT_ANY.search(raw[:600])
                slot_hint = m.group(1) if m else slot_hint
            if cur is not None and cur.get("excerpt"):
                cur = None
            continue
        last = lineno
        s = raw.strip()[:600]
        new_cap = cur is not None and cur.get("excerpt") and s[:7] == "LnkCap:" and cur["lnkcap"] is not None
        if s.startswith(("LnkCap:", "LnkSta:")) and (cur is None or new_cap):
            cur = excerpt_device(lineno)  # a grep'd excerpt: link lines without their device header
            devices.append(cur)
        if cur is not None and not cur.get("excerpt") and head_line == prev and not raw[0].isspace() \
                and _HEAD.match(s) is None and _HEAD_TAIL.match(s):
            # the header wrapped: its description goes on here
            cur["description"] = f"{cur['description']} {s}"
            cur["config_all_ones"] = bool(_REV_FF.search(cur["description"]))
            head_line = prev = lineno
            continue
        prev = lineno
        if not raw[0].isspace() and not s.startswith(("LnkCap:", "LnkSta:", "LnkCap2:", "LnkSta2:", "LnkCtl")):
            h = _HEAD.match(s)
            if not h:
                m = _SLOT_ANY.search(s)
                if m:
                    slot_hint = m.group(1)
                if s.startswith("Subsystem:") and cur is not None and cur.get("excerpt") and "nvidia" in s.lower():
                    cur["vendor"], cur["description"] = "nvidia", s[10:].strip()
                elif s.startswith("Subsystem:") and "nvidia" in s.lower():
                    cur = excerpt_device(lineno)
                    cur["vendor"], cur["description"] = "nvidia", s[10:].strip()
                    devices.append(cur)
                elif cur is not None and cur.get("excerpt") and (s.startswith(
                        ("Physical Slot:", "Kernel driver", "Kernel modules")) or _FLAGS_LINE.match(s)):
                    pass  # also a capability's flag line ('ClockPM- Surprise- ...') a page's copy put at column 0
                else:
                    cur = None  # a title, prose or another command's output: not a device
                continue
            slot = h.group(1) if h.group(1).count(":") == 2 else f"0000:{h.group(1)}"
            if h.group(2).strip() in ("LnkCap", "LnkSta"):
                # condensed by the paster: the address, then its LnkCap and LnkSta fields on the same line
                # ('0002:01:00.0 LnkCap: Speed 32GT/s, Width x4 LnkSta: Speed 32GT/s, Width x2 (downgraded)')
                cur = {**excerpt_device(lineno), "slot": slot.lower()}
                devices.append(cur)
                for field, value in _LINK_FIELD.findall(s[len(h.group(1)):]):
                    cur[field.lower()] = _link(value)
                continue
            desc = h.group(3).strip()
            low = desc.lower()
            vendor = _vendor_named(low)
            # 'lspci -nn' adds the numeric class and ids ('3D controller [0302]: NVIDIA ... [10de:2330]'), 'lspci -n'
            # prints them alone ('0302: 10de:2330 (rev a1)'): the class named by its number, the vendor by its id
            cls = _CLASS_NUMBER.sub("", h.group(2).strip())
            cls = _CLASS_NAMES.get(cls, cls)
            ids = _VENDOR_ID.search(desc) if vendor is None else None
            vendor = _VENDORS.get(ids.group(1).lower()) if ids else vendor
            cur = {"slot": slot.lower(), "class": cls, "description": desc, "vendor": vendor,
                   "is_gpu": vendor == "nvidia" and cls in ("3D controller", "VGA compatible controller"),
                   "is_nic": cls in ("Infiniband controller", "Ethernet controller", "Network controller"),
                   "lnkcap": None, "lnksta": None, "access_denied": False, "line": lineno,
                   # 'rev ff': the revision byte of config space read as all ones: the device does not answer
                   "config_all_ones": bool(_REV_FF.search(desc)),
                   # the adapter's recovery identity ('MT27700 Family [ConnectX-4 Flash Recovery]'): no firmware runs
                   "flash_recovery": vendor == "mellanox" and "flash recovery" in low}
            devices.append(cur)
            head_line = lineno
            continue
        if cur is None:
            continue  # indented text outside a device block
        if s.startswith("LnkCap:"):
            cur["lnkcap"] = _link(s)
        elif s.startswith("LnkSta:"):
            cur["lnksta"] = _link(s)
        elif "<access denied>" in s:
            cur["access_denied"] = True
        elif _HEADER_ALL_ONES.search(s):
            cur["config_all_ones"] = True
    if not devices:
        tree = _tree(body, offset)
        if tree:
            return {"devices": tree, "tree": True}
        inside = sum(1 for ln in strip_source_line(text).splitlines() if _SECTION.search(ln[:600]))
        nonblank = sum(1 for ln in strip_source_line(text).splitlines() if ln.strip())
        if inside and inside * 2 >= nonblank:
            # an excerpt that starts inside a device's section (its VPD, its capabilities; also behind a
            # logger's prefix): lspci output, but no device named and no link read
            return {"devices": [], "cut": [f"an excerpt inside a device section ({inside} of {nonblank} lines): "
                                           "no device header, no LnkCap/LnkSta"]}
        raise ParseError(TOOL, "no PCI device found (empty input or another tool's output)", last or None)
    return {"devices": devices}
