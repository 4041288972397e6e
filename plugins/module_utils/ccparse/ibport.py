"""Helpers shared by every IB/RoCE port-state parser (ibstat, ibstatus, ibv_devinfo, sysfs trees).

They turn the many spellings of a port's logical state, physical state and rate into the one
normalised port shape shared by every port-state source: ``state`` upper-case without the numeric
prefix (``ACTIVE``, ``DOWN``, ``INIT``, ``ARMED``), ``phys_state`` in ibstat's CamelCase words
(``LinkUp``, ``Polling``, ``Disabled``), ``rate_gbps`` a float in Gb/s.
"""

from __future__ import annotations

import re
from typing import Any

from .common import to_int

#: IBA logical port states by number (IBTA spec vol. 1, PortInfo.PortState).
STATE_BY_NUMBER = {0: "NOP", 1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
#: ibstat's words (libibumad/umad port_state_str) and ibv_devinfo's PORT_* names -> normalised.
_STATE_WORDS = {
    "down": "DOWN",
    "initializing": "INIT",
    "init": "INIT",
    "initialize": "INIT",
    "armed": "ARMED",
    "active": "ACTIVE",
    "active_defer": "ACTIVE_DEFER",
    "nop": "NOP",
}
#: IBA physical port states by number (PortInfo.PortPhysicalState), in ibstat's CamelCase.
PHYS_BY_NUMBER = {
    0: "NoStateChange",
    1: "Sleep",
    2: "Polling",
    3: "Disabled",
    4: "PortConfigurationTraining",
    5: "LinkUp",
    6: "LinkErrorRecovery",
    7: "PhyTest",
}
_PHYS_WORDS = {re.sub(r"[^a-z]", "", v.lower()): v for v in PHYS_BY_NUMBER.values()}
_PHYS_WORDS.update({"nostatechange": "NoStateChange", "phytest": "PhyTest", "linkup": "LinkUp"})

_NUM_WORD = re.compile(r"^\s*(\d+)\s*:\s*(\S.*?)\s*$")  # "4: ACTIVE" (ibstatus, sysfs)
_WORD_NUM = re.compile(r"^\s*(\S.*?)\s*\((\d+)\)\s*$")  # "PORT_ACTIVE (4)" (ibv_devinfo)


def _split(value: str) -> tuple[int | None, str]:
    m = _NUM_WORD.match(value)
    if m:
        return to_int(m.group(1)), m.group(2)
    m = _WORD_NUM.match(value)
    if m:
        return to_int(m.group(2)), m.group(1)
    return None, value.strip()


def norm_state(value: str) -> str | None:
    """``Active`` / ``4: ACTIVE`` / ``PORT_ACTIVE (4)`` -> ``ACTIVE``; None if unrecognised."""
    num, word = _split(value)
    key = word.lower().removeprefix("port_")
    if key in _STATE_WORDS:
        return _STATE_WORDS[key]
    if num is not None and num in STATE_BY_NUMBER:
        return STATE_BY_NUMBER[num]
    return None


def norm_phys_state(value: str) -> str | None:
    """``LinkUp`` / ``5: LinkUp`` / ``LINK_UP (5)`` -> ``LinkUp``; None if unrecognised."""
    num, word = _split(value)
    key = re.sub(r"[^a-z]", "", word.lower())
    if key in _PHYS_WORDS:
        return _PHYS_WORDS[key]
    if num is not None and num in PHYS_BY_NUMBER:
        return PHYS_BY_NUMBER[num]
    return None


def phys_state_value(value: str) -> str | None:
    """A port's physical state as a tool printed it -> the normalised word (:func:`norm_phys_state`), else its
    first 32 characters; None where there is none: empty, elided (``...``), or state 0, which a device that
    reports no physical state shows (iWARP adapters such as cxgb3/cxgb4 leave it unset): ibv_devinfo's
    ``invalid physical state (0)``, the kernel's ``0: <unknown>`` (ibstatus, sysfs), ibstat's
    ``No state change``. A port never reports 0 (the IBA's NoStateChange is a value one sets, not a state)."""
    v = value.strip()
    if not v or v.startswith("...") or v.lower().startswith("invalid"):
        return None
    word = norm_phys_state(v)
    if word == PHYS_BY_NUMBER[0] or (word is None and _split(v)[1].lower() == "<unknown>"):
        return None
    return word or v[:32]


def norm_link_layer(value: str) -> str | None:
    v = value.strip().lower()
    if v == "infiniband":
        return "InfiniBand"
    if v == "ethernet":
        return "Ethernet"
    return None


def new_port(number: int) -> dict[str, Any]:
    """A port dict with every key of the shared shape present (None until the tool says)."""
    return {
        "port": number,
        "state": None,
        "phys_state": None,
        "rate_gbps": None,
        "link_layer": None,
        "netdev": None,
    }


def new_device(name: str | None) -> dict[str, Any]:
    return {"name": name, "ca_type": None, "fw_version": None, "ports": []}


def link_layer_value(value: str) -> str | None:
    """The normalised link layer, the raw word for one this module does not know (Thunderbolt),
    or None for a word cut short by a truncated paste (``InfiniBa``)."""
    ll = norm_link_layer(value)
    if ll is not None:
        return ll
    v = value.strip()[:32]
    if not v or any(known.lower().startswith(v.lower()) for known in ("InfiniBand", "Ethernet")):
        return None
    return v
