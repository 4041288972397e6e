"""Parser for ``mlnx_qos -i <netdev>`` (MLNX_OFED / DOCA-OFED) QoS readback.

Output::

    {"interfaces": [<reading>],   # the last reading per interface (what is in force now)
     "readings": [<reading>, ...]}  # every reading in input order
    <reading> = {"interface": "eth4" | None, "line": 5, "dcbx_mode": "OS controlled",
                 "trust": "dscp" | "pcp" | None, "dscp2prio": {"24": 3, ...},
                 "default_priority": int | None, "receive_buffer_bytes": [int] | None,
                 "cable_len": int | None,
                 "pfc": [{"priority": 0, "enabled": False, "buffer": 0 | None}, ...],
                 "pfc_enabled_priorities": [3],
                 "tcs": [{"tc": 0, "ratelimit": "unlimited", "tsa": "vendor", "bw_percent": None,
                          "priorities": [1]}]}

The interface is taken from a preceding command echo (``mlnx_qos -i eth4`` after a ``$``/``+``
prompt or alone, as in a ``set -x`` trace or a collector's header) or a ``# interface: eth4``
line. Lines outside readings (shell trace, prompts, Markdown fences) are skipped; a reading
cut short (PFC table without its ``enabled`` row, or no PFC table at all) is a ParseError.
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, need_int, parser, strip_source_line, to_int

TOOL = "mlnx_qos"

_CMD_IFACE = re.compile(r"^(?:[$#+]\s*)?(?:sudo\s+)?(?:\S{0,200}/)?mlnx_qos\b[^\n]{0,300}?"
                        r"(?:-i\s*|--interface[= ])(\S{1,64})")
_HDR_IFACE = re.compile(r"^#\s*interface:\s*(\S+)\s*$")
_DCBX = re.compile(r"^DCBX mode:\s*(.*?)\s*$")
_TRUST = re.compile(r"^Priority trust (?:state|mode):\s*(\S+)\s*$")
_D2P = re.compile(r"^dscp2prio mapping:\s*$")
_D2P_ROW = re.compile(r"^prio:\s*(\d)\s+dscp:\s*([\d,\s]{0,400}?),?\s*$")
_DEFPRIO = re.compile(r"^default priority:\s*(\d*)\s*$")
_RXBUF = re.compile(r"^Receive buffer size \(bytes\):\s*(.*?)\s*$")
_CABLE = re.compile(r"^Cable len:\s*(\d+)\s*$")
_PFC = re.compile(r"^PFC configuration:\s*$")
_PFC_ROW = re.compile(r"^(priority|enabled|buffer)((?:\s+\d{1,8}){1,16})\s*$")
_TC = re.compile(r"^tc:\s*(\d+)\s+ratelimit:\s*([^,]+?),\s*tsa:\s*(\w+)(?:,\s*bw:\s*(\d+)%)?\s*$")
_TC_PRIO = re.compile(r"^priority:\s*(\d)\s*$")
_STARTERS = (_DCBX, _TRUST, _PFC)


def _new(iface: str | None, lineno: int) -> dict[str, Any]:
    return {"interface": iface, "line": lineno, "dcbx_mode": None, "trust": None, "dscp2prio": {},
            "default_priority": None, "receive_buffer_bytes": None, "cable_len": None, "pfc": [],
            "pfc_enabled_priorities": [], "tcs": [], "_pfc_cols": None, "_pfc_rows": {}}


def _close(r: dict[str, Any], lineno: int) -> dict[str, Any]:
    """Finish a reading. One cut before its PFC ``enabled`` row keeps ``pfc_enabled_priorities``
    None (PFC not shown, not judged) and ``truncated`` True."""
    cols = r.pop("_pfc_cols")
    rows = r.pop("_pfc_rows")
    r["truncated"] = False
    if cols is None or "enabled" not in rows:
        r["truncated"] = True
        r["pfc_enabled_priorities"] = None
        return r
    for name, vals in rows.items():
        if len(vals) != len(cols):
            raise ParseError(TOOL, f"PFC '{name}' row has {len(vals)} values for {len(cols)} priorities",
                             lineno)
    buf = rows.get("buffer")
    r["pfc"] = [{"priority": p, "enabled": bool(rows["enabled"][i]), "buffer": buf[i] if buf else None}
                for i, p in enumerate(cols)]
    r["pfc_enabled_priorities"] = [e["priority"] for e in r["pfc"] if e["enabled"]]
    return r


@parser("mlnx_qos")
def parse_mlnx_qos(text: str) -> dict[str, Any]:
    """Parse one or more ``mlnx_qos`` readings; see the module docstring for the shape."""
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    readings: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    section: str | None = None  # "d2p", "pfc", "tc"
    iface: str | None = None
    lineno = offset
    for lineno, raw in enumerate(strip_source_line(text).splitlines(), start=1 + offset):
        line = raw.strip()[:2000]
        if not line:
            continue
        m = _CMD_IFACE.match(line) or _HDR_IFACE.match(line)
        if m:
            if cur is not None:
                readings.append(_close(cur, lineno))
                cur = None
            iface = m.group(1)
            continue
        starter = next((rx for rx in _STARTERS if rx.match(line)), None)
        if starter is not None and cur is not None and (
            (starter is _DCBX and cur["dcbx_mode"] is not None)
            or (starter is _TRUST and cur["trust"] is not None)
            or (starter is _PFC and cur["_pfc_cols"] is not None)
        ):
            readings.append(_close(cur, lineno))
            cur = None
        if cur is None:
            if starter is None:
                continue  # noise between readings (trace, prompts, fences)
            cur = _new(iface, lineno)
            section = None
        if m := _DCBX.match(line):
            cur["dcbx_mode"] = m.group(1)
        elif m := _TRUST.match(line):
            cur["trust"] = m.group(1).lower()
        elif _D2P.match(line):
            section = "d2p"
        elif section == "d2p" and (m := _D2P_ROW.match(line)):
            prio = need_int(m.group(1), TOOL, lineno, "dscp2prio priority")
            for d in re.findall(r"\d+", m.group(2)):
                dscp = to_int(d)
                if dscp is not None:
                    cur["dscp2prio"][str(dscp)] = prio
        elif m := _DEFPRIO.match(line):
            cur["default_priority"] = to_int(m.group(1)) if m.group(1) else None
        elif m := _RXBUF.match(line):
            cur["receive_buffer_bytes"] = [to_int(x) for x in re.findall(r"(?<![=\w])\d+", m.group(1))]
        elif m := _CABLE.match(line):
            cur["cable_len"] = to_int(m.group(1))
        elif _PFC.match(line):
            section = "pfc"
            cur["_pfc_cols"] = None
        elif section == "pfc" and (m := _PFC_ROW.match(line)):
            vals = [need_int(x, TOOL, lineno, f"PFC {m.group(1)}") for x in m.group(2).split()[:16] if len(x) < 6]
            if m.group(1) == "priority":
                cur["_pfc_cols"] = vals
            elif cur["_pfc_cols"] is None:
                raise ParseError(TOOL, f"PFC '{m.group(1)}' row before the priority header", lineno)
            else:
                cur["_pfc_rows"][m.group(1)] = vals
        elif m := _TC.match(line):
            section = "tc"
            cur["tcs"].append({"tc": need_int(m.group(1), TOOL, lineno, "tc"),
                               "ratelimit": m.group(2), "tsa": m.group(3),
                               "bw_percent": to_int(m.group(4)) if m.group(4) else None, "priorities": []})
        elif section == "tc" and (m := _TC_PRIO.match(line)):
            cur["tcs"][-1]["priorities"].append(need_int(m.group(1), TOOL, lineno, "tc priority"))
        elif section == "pfc" and cur["_pfc_cols"] is not None and "enabled" in cur["_pfc_rows"]:
            # First line that is not mlnx_qos output after a complete PFC table ends the reading.
            readings.append(_close(cur, lineno))
            cur = None
        # any other line (an elision '...', a comment, a log line) is skipped
    if cur is not None:
        readings.append(_close(cur, lineno))
    if not readings:
        raise ParseError(TOOL, "no mlnx_qos reading found (no 'DCBX mode:', 'Priority trust state:' or "
                         "'PFC configuration:' line)", lineno or None)
    last: dict[str | None, dict[str, Any]] = {}
    for r in readings:
        last.pop(r["interface"], None)
        last[r["interface"]] = r
    return {"interfaces": list(last.values()), "readings": readings}
