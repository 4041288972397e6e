"""Parser for the JSON output of the upstream iproute2 ``dcb`` tool (``dcb -j pfc|app show dev X``).

Accepts one JSON object (or several, one per line, as printed by consecutive calls) and merges:

* ``dcb -j pfc show dev X [prio-pfc]`` -> ``{"pfc_cap": 8, ..., "prio_pfc": {"0": false, ...}}``
  (``dcb_pfc_print_prio_pfc``: an object keyed by priority with on/off booleans);
* ``dcb -j app show dev X [dscp-prio]`` -> ``{"dscp_prio": [[26, 3], ...]}`` (pairs of
  DSCP and priority; objects ``{"dscp": 26, "prio": 3}`` are accepted too).

Output: ``{"pfc_enabled_priorities": [3] | None, "pfc_cap": int | None,
"dscp2prio": {"26": 3} | None, "trust": "dscp" | "pcp" | None}``. Upstream mlx5 trusts DSCP exactly
when the APP table holds DSCP entries (mlx5e_dcbnl_ieee_setapp switches trust on the first one), so
``trust`` is ``dscp`` when ``dscp_prio`` is non-empty, ``pcp`` when it was read and empty.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .common import JSON_DECODER, ParseError, parser, strip_source_line, to_int

TOOL = "dcb"


def _objects(text: str) -> list[dict[str, Any]]:
    body = strip_source_line(text).strip()
    if not body:
        raise ParseError(TOOL, "empty input")
    dec = JSON_DECODER
    pos, out = 0, []
    while pos < len(body):
        try:
            obj, end = dec.raw_decode(body, pos)
        except json.JSONDecodeError as exc:
            raise ParseError(TOOL, f"invalid JSON: {exc.msg}", body.count("\n", 0, exc.pos) + 1) from exc
        except RecursionError:
            raise ParseError(TOOL, "JSON nested too deeply") from None
        if not isinstance(obj, dict):
            raise ParseError(TOOL, "expected a JSON object")
        out.append(obj)
        pos = end
        while pos < len(body) and body[pos].isspace():
            pos += 1
    return out


_DSCP_NAMES = {"EF": 46, "BE": 0, "DEFAULT": 0, "LE": 1, "VA": 44}
_DEV = re.compile(r"\bdev\s+(\S{1,64})")
_FOR_IF = re.compile(r"\b(?:for|on)\s+([\w.:-]{1,64}?):?\s*(?:dscp|pcp|$)")
_PRIO_ON = re.compile(r"\b([0-7]|all):(on|off)\b")
_TRUST_ORDER = re.compile(r"trust order on [\w.:-]{1,64}:\s*(dscp|pcp)")


def _dscp(name: str) -> int | None:
    """A DSCP value from ``26``, ``AF31``, ``CS6`` or ``EF`` (iproute2 prints the names)."""
    n = name.upper()
    if n.isdigit() and len(n) <= 2:
        return int(n)
    if n in _DSCP_NAMES:
        return _DSCP_NAMES[n]
    if len(n) == 3 and n.startswith("CS") and n[2].isdigit():
        return 8 * int(n[2])
    if len(n) == 4 and n.startswith("AF") and n[2:].isdigit():
        return 8 * int(n[2]) + 2 * int(n[3])
    return None


def _parse_text(text: str) -> dict[str, Any]:
    """``dcb pfc show`` / ``dcb app show`` text (iproute2 5.x two lines or 6.x one line), also with
    the ``$ dcb ... dev X`` command lines and a tool's log lines around them; the last reading wins."""
    res: dict[str, Any] = {"pfc_enabled_priorities": None, "pfc_cap": None, "dscp2prio": None, "trust": None,
                           "interface": None}
    seen = False
    for raw in strip_source_line(text).splitlines():
        line = raw.strip()[:2000]
        if not line:
            continue
        if line.startswith("$ ") or line.startswith("dcb "):
            m = _DEV.search(line)
            if m:
                res["interface"] = m.group(1)
            continue
        m = _TRUST_ORDER.search(line)
        if m:
            res["trust"] = m.group(1)
            continue
        if line.endswith(":") and " for " in line:
            res["interface"] = line.rsplit(" for ", 1)[1].rstrip(":").strip()[:64] or res["interface"]
            continue
        words = line.split()
        if "pfc-cap" in words:
            i = words.index("pfc-cap")
            if i + 1 < len(words) and words[i + 1].isdigit() and len(words[i + 1]) < 4:
                res["pfc_cap"] = int(words[i + 1])
            seen = True
        if "prio-pfc" in words:
            states = dict(_PRIO_ON.findall(line[line.index("prio-pfc"):]))
            base = states.pop("all", "off")
            res["pfc_enabled_priorities"] = [p for p in range(8) if states.get(str(p), base) == "on"]
            seen = True
            continue
        if words and words[0] == "dscp-prio":
            table: dict[str, int] = {}
            for pair in words[1:64]:
                name, _colon, prio = pair.partition(":")
                d = _dscp(name)
                if d is not None and prio.isdigit() and len(prio) == 1:
                    table[str(d)] = int(prio)
            res["dscp2prio"] = table
            if res["trust"] is None:
                res["trust"] = "dscp" if table else "pcp"
            seen = True
    if not seen:
        raise ParseError(TOOL, "no 'prio-pfc', 'pfc-cap' or 'dscp-prio' line and no JSON object found")
    return res


def _int(value: Any, what: str) -> int:
    out = None if isinstance(value, float) else to_int(str(value))
    if out is None:
        raise ParseError(TOOL, f"{what} is not an integer: {str(value)[:40]!r}")
    if not 0 <= out < 1 << 16:
        raise ParseError(TOOL, f"{what} out of range: {out}")
    return out


@parser("dcb")
def parse_dcb(text: str) -> dict[str, Any]:
    """Merge ``dcb -j`` pfc/app readings, or read ``dcb`` text output; see the module docstring."""
    body = strip_source_line(text).lstrip()
    if not body.startswith("{"):
        return _parse_text(text)
    res: dict[str, Any] = {"pfc_enabled_priorities": None, "pfc_cap": None, "dscp2prio": None, "trust": None,
                           "interface": None}
    for obj in _objects(text):
        if "prio_pfc" in obj:
            pp = obj["prio_pfc"]
            if not isinstance(pp, dict):
                raise ParseError(TOOL, "prio_pfc is not an object keyed by priority")
            res["pfc_enabled_priorities"] = sorted(_int(k, "prio_pfc key") for k, v in pp.items()
                                                   if v is True or v == "on")
        if "pfc_cap" in obj:
            res["pfc_cap"] = _int(obj["pfc_cap"], "pfc_cap")
        if "dscp_prio" in obj:
            table: dict[str, int] = {}
            entries = obj["dscp_prio"] or []
            if not isinstance(entries, list):
                raise ParseError(TOOL, "dscp_prio is not a list")
            for entry in entries:
                if isinstance(entry, dict):
                    dscp, prio = entry.get("dscp"), entry.get("prio")
                elif isinstance(entry, list) and len(entry) == 2:
                    dscp, prio = entry
                else:
                    raise ParseError(TOOL, f"dscp_prio entry {str(entry)[:40]!r} is not a [dscp, prio] pair")
                table[str(_int(dscp, "dscp"))] = _int(prio, "prio")
            res["dscp2prio"] = table
            res["trust"] = "dscp" if table else "pcp"
    return res
