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
from typing import Any

from .common import ParseError, parser, strip_source_line

TOOL = "dcb"


def _objects(text: str) -> list[dict[str, Any]]:
    body = strip_source_line(text).strip()
    if not body:
        raise ParseError(TOOL, "empty input")
    dec = json.JSONDecoder()
    pos, out = 0, []
    while pos < len(body):
        try:
            obj, end = dec.raw_decode(body, pos)
        except json.JSONDecodeError as exc:
            raise ParseError(TOOL, f"invalid JSON: {exc.msg}", body.count("\n", 0, exc.pos) + 1) from exc
        if not isinstance(obj, dict):
            raise ParseError(TOOL, "expected a JSON object")
        out.append(obj)
        pos = end
        while pos < len(body) and body[pos].isspace():
            pos += 1
    return out


@parser("dcb")
def parse_dcb(text: str) -> dict[str, Any]:
    """Merge ``dcb -j`` pfc/app readings; see the module docstring."""
    res: dict[str, Any] = {"pfc_enabled_priorities": None, "pfc_cap": None, "dscp2prio": None, "trust": None}
    for obj in _objects(text):
        if "prio_pfc" in obj:
            pp = obj["prio_pfc"]
            if not isinstance(pp, dict):
                raise ParseError(TOOL, "prio_pfc is not an object keyed by priority")
            res["pfc_enabled_priorities"] = sorted(int(k) for k, v in pp.items() if v is True or v == "on")
        if "pfc_cap" in obj:
            res["pfc_cap"] = int(obj["pfc_cap"])
        if "dscp_prio" in obj:
            table: dict[str, int] = {}
            for entry in obj["dscp_prio"] or []:
                if isinstance(entry, dict):
                    dscp, prio = entry.get("dscp"), entry.get("prio")
                elif isinstance(entry, list) and len(entry) == 2:
                    dscp, prio = entry
                else:
                    raise ParseError(TOOL, f"dscp_prio entry {entry!r} is not a [dscp, prio] pair")
                table[str(int(str(dscp)))] = int(str(prio))
            res["dscp2prio"] = table
            res["trust"] = "dscp" if table else "pcp"
    return res
