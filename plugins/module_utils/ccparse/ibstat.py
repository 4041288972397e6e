"""Parser for ``ibstat`` (infiniband-diags) text output.

Output shape (the shared port shape, see ``ccparse.ibport``)::

    {"devices": [{"name": "mlx5_0", "ca_type": "MT4129", "fw_version": "28.39.1002",
                  "hw_version": "0", "node_guid": "0x...", "sys_image_guid": "0x...", "num_ports": 1,
                  "ports": [{"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 400.0,
                             "link_layer": "InfiniBand", "netdev": None, "base_lid": 75, "sm_lid": 334,
                             "lmc": 0, "capability_mask": "0xa751e848", "port_guid": "0x..."}]}],
     "errors": [{"line": 140, "device": "mlx5_8", "message": "ibpanic: ..."}]}

``errors`` holds the ``ibpanic:``/``ibwarn:`` lines ibstat prints when it cannot read a device
(it then exits non-zero after printing the devices it could read); the checks report them. An ibpanic before any
device (ibstat aborts at the first device it cannot open) gives no device and ``aborted: True``.
A port missing Physical state, Rate or Link layer, or a CA with fewer ports than its "Number of
ports", sets ``truncated``; the ports shown are still judged.
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, need_int, parser, split_lines, strip_source_line, to_float, to_int
from .ibport import link_layer_value, new_device, new_port, norm_state, phys_state_value

TOOL = "ibstat"

_CA = re.compile(r"^CA '([^'\n]{1,64})'")
_PORT = re.compile(r"^Port (\d{1,4}):\s*$")
_KV = re.compile(r"^([A-Za-z][A-Za-z ]{0,40}?):\s*(.{0,400}?)\s*$")
_NUM = re.compile(r"^(\d{1,6}(?:\.\d{1,6})?)")
_INT = re.compile(r"^(0x[0-9a-fA-F]{1,16}|\d{1,12})\b")
_DIAG = re.compile(r"^(ibpanic|ibwarn|iberror):\s*(.*)$")
_DIAG_DEV = re.compile(r"device '([^']+)'")

_DEVICE_KEYS = {
    "CA type": "ca_type",
    "Number of ports": "num_ports",
    "Firmware version": "fw_version",
    "Hardware version": "hw_version",
    "Node GUID": "node_guid",
    "System image GUID": "sys_image_guid",
}
_PORT_KEYS = {
    "State": "state",
    "Physical state": "phys_state",
    "Rate": "rate_gbps",
    "Base lid": "base_lid",
    "LMC": "lmc",
    "SM lid": "sm_lid",
    "Capability mask": "capability_mask",
    "Port GUID": "port_guid",
    "Link layer": "link_layer",
}
_REQUIRED_PORT_KEYS = ("state", "phys_state", "rate_gbps", "link_layer")


def _port_value(key: str, value: str) -> Any:
    """A port field from its text; elided ("...") or unreadable values are None, never an error."""
    if value in ("", "...") or value.startswith("..."):
        return None
    if key == "state":
        return norm_state(value) or value.upper()[:32]
    if key == "phys_state":
        return phys_state_value(value)
    if key == "link_layer":
        return link_layer_value(value)
    if key == "rate_gbps":
        m = _NUM.match(value)
        return to_float(m.group(1)) if m else None
    if key in ("base_lid", "sm_lid", "lmc"):
        m = _INT.match(value)
        return to_int(m.group(1), 0) if m else None
    return value


_SKIP, _DIAG_LINE, _CA_LINE, _PORT_LINE, _KV_LINE, _OTHER = range(6)
#: raw line -> :func:`_classify` of it: ibstat's lines repeat across the ports of a node and the
#: nodes of a fleet (states, rates, link layers), so each distinct line is taken apart once; bounded
_LINES: dict[str, tuple[Any, ...]] = {}
_LINES_MAX = 20_000


def _classify(raw: str) -> tuple[Any, ...]:
    """What the parser's loop reads of one line (a pure function of the line): ``(_SKIP,)``,
    ``(_DIAG_LINE, tag, device, stripped)``, ``(_CA_LINE, name)``, ``(_PORT_LINE, number text)``,
    ``(_KV_LINE, key, value, port field value)`` or ``(_OTHER,)``; each pattern only where the line
    starts as it must (one regex a line, not four)."""
    stripped = raw.strip()
    if not stripped or stripped.startswith("..."):
        return (_SKIP,)
    diag = _DIAG.match(stripped) if stripped.startswith("ib") else None
    if diag:
        m = _DIAG_DEV.search(diag.group(2)[:400])
        return (_DIAG_LINE, diag.group(1), m.group(1) if m else None, stripped)
    ca = _CA.match(stripped) if stripped.startswith("CA '") else None
    if ca:
        return (_CA_LINE, ca.group(1))
    pm = _PORT.match(stripped) if stripped.startswith("Port ") else None
    if pm:
        return (_PORT_LINE, pm.group(1))
    kv = _KV.match(stripped)
    if not kv:
        return (_OTHER,)
    key, value = kv.group(1), kv.group(2)
    field = _PORT_KEYS.get(key)
    return (_KV_LINE, key, value, _port_value(field, value) if field is not None else None)


def _finish_port(port: dict[str, Any] | None, dev: dict[str, Any], truncated: list[bool]) -> None:
    """A port cut before its State line is dropped (nothing to judge); the input is marked truncated."""
    if port is None:
        return
    if port.get("state") is None:
        dev["ports"].remove(port)
        truncated[0] = True
    elif any(port.get(k) is None for k in _REQUIRED_PORT_KEYS):
        truncated[0] = True


def _finish_device(dev: dict[str, Any] | None, truncated: list[bool]) -> None:
    if dev is None:
        return
    n = dev.get("num_ports")
    if not dev["ports"] or (isinstance(n, int) and n != len(dev["ports"])):
        truncated[0] = True


@parser("ibstat")
def parse_ibstat(text: str) -> dict[str, Any]:
    """Parse ``ibstat`` output into the shared port shape.

    Takes what people paste: indentation lost or changed, values elided with ``...``, ``ibwarn``
    debug lines, a port block without its CA line (device name None), a paste cut anywhere
    (``truncated`` is then True and the last incomplete port is kept if its State is shown).
    Raises ParseError only when no CA or port section is found at all.
    """
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    body = strip_source_line(text)
    devices: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    dev: dict[str, Any] | None = None
    port: dict[str, Any] | None = None
    truncated = [False]
    other = 0
    lineno = offset
    cache = _LINES
    if len(cache) > _LINES_MAX:
        cache.clear()
    for lineno, raw in enumerate(split_lines(body), start=1 + offset):
        line = cache.get(raw)
        if line is None:
            line = cache[raw] = _classify(raw)
        what = line[0]
        if what == _SKIP:
            continue
        if what == _KV_LINE:
            if dev is None:
                other += 1
                continue
            key, value = line[1], line[2]
            if key in _PORT_KEYS and port is not None:
                port[_PORT_KEYS[key]] = line[3]
            elif key in _DEVICE_KEYS:
                field = _DEVICE_KEYS[key]
                if field == "num_ports":
                    m = _INT.match(value)
                    dev[field] = to_int(m.group(1)) if m and len(m.group(1)) < 6 else None
                else:
                    dev[field] = None if value.startswith("...") else value
            else:
                # Keys added by later ibstat versions are kept, not fatal.
                target = port if port is not None else dev
                target.setdefault("extra", {})[key] = value
            continue
        if what == _DIAG_LINE:
            if line[1] != "ibwarn":
                errors.append({"line": lineno, "device": line[2], "message": line[3][:400]})
            continue
        if what == _CA_LINE:
            if dev is not None:
                _finish_port(port, dev, truncated)
            _finish_device(dev, truncated)
            dev = new_device(line[1])
            dev.update({"hw_version": None, "node_guid": None, "sys_image_guid": None, "num_ports": None})
            devices.append(dev)
            port = None
            continue
        if what == _PORT_LINE:
            if dev is None:  # a port block pasted without its CA line
                dev = new_device(None)
                dev.update({"hw_version": None, "node_guid": None, "sys_image_guid": None, "num_ports": None})
                devices.append(dev)
                truncated[0] = True
            _finish_port(port, dev, truncated)
            port = new_port(need_int(line[1], TOOL, lineno, "port number"))
            port.update({"base_lid": None, "sm_lid": None, "lmc": None,
                         "capability_mask": None, "port_guid": None})
            dev["ports"].append(port)
            continue
        other += 1  # _OTHER: a line that is none of the above
    if dev is not None:
        _finish_port(port, dev, truncated)
    _finish_device(dev, truncated)
    devices = [d for d in devices if d["ports"] or d["name"] is not None]
    if not devices:
        if errors:
            # ibstat aborts at a device it cannot open (ibpanic): read, nothing listed (the check says so)
            return {"devices": [], "errors": errors, "truncated": truncated[0], "aborted": True}
        raise ParseError(TOOL, "no \"CA '<name>'\" or 'Port <n>:' section found", lineno or None)
    return {"devices": devices, "errors": errors, "truncated": truncated[0]}
