"""Parser for ``ibstat`` (infiniband-diags) text output.

Output shape (the shared port shape, see ``ccparse.ibport``)::

    {"devices": [{"name": "mlx5_0", "ca_type": "MT4129", "fw_version": "28.39.1002",
                  "hw_version": "0", "node_guid": "0x...", "sys_image_guid": "0x...", "num_ports": 1,
                  "ports": [{"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 400.0,
                             "link_layer": "InfiniBand", "netdev": None, "base_lid": 75, "sm_lid": 334,
                             "lmc": 0, "capability_mask": "0xa751e848", "port_guid": "0x..."}]}],
     "errors": [{"line": 140, "device": "mlx5_8", "message": "ibpanic: ..."}]}

``errors`` holds the ``ibpanic:``/``ibwarn:`` lines ibstat prints when it cannot read a device
(it then exits non-zero after printing the devices it could read); the checks report them.
Every port must show State, Physical state, Rate and Link layer, and every CA as many ports as
its "Number of ports" says, otherwise the input is taken as truncated (ParseError).
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, parser, strip_source_line
from .ibport import new_device, new_port, norm_link_layer, norm_phys_state, norm_state

TOOL = "ibstat"

_CA = re.compile(r"^CA '([^']+)'\s*$")
_PORT = re.compile(r"^Port (\d+):\s*$")
_KV = re.compile(r"^([A-Za-z][A-Za-z ]*?):\s*(.*?)\s*$")
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


def _port_value(key: str, value: str, lineno: int) -> Any:
    if key == "state":
        state = norm_state(value)
        if state is None:
            raise ParseError(TOOL, f"unknown port state {value!r}", lineno)
        return state
    if key == "phys_state":
        phys = norm_phys_state(value)
        if phys is None:
            raise ParseError(TOOL, f"unknown physical state {value!r}", lineno)
        return phys
    if key == "link_layer":
        ll = norm_link_layer(value)
        if ll is None:
            raise ParseError(TOOL, f"unknown link layer {value!r}", lineno)
        return ll
    if key == "rate_gbps":
        try:
            return float(value)
        except ValueError:
            raise ParseError(TOOL, f"rate is not a number: {value!r}", lineno) from None
    if key in ("base_lid", "sm_lid", "lmc"):
        try:
            return int(value, 0)
        except ValueError:
            raise ParseError(TOOL, f"{key} is not a number: {value!r}", lineno) from None
    return value


def _finish_port(port: dict[str, Any] | None, dev: dict[str, Any], lineno: int) -> None:
    if port is None:
        return
    missing = [k for k in _REQUIRED_PORT_KEYS if port.get(k) is None]
    if missing:
        raise ParseError(
            TOOL, f"{dev['name']} port {port['port']} lacks {', '.join(missing)} (truncated?)", lineno
        )


def _finish_device(dev: dict[str, Any] | None, lineno: int) -> None:
    if dev is None:
        return
    if not dev["ports"]:
        raise ParseError(TOOL, f"CA {dev['name']} has no ports (truncated?)", lineno)
    n = dev.get("num_ports")
    if isinstance(n, int) and n != len(dev["ports"]):
        raise ParseError(
            TOOL, f"CA {dev['name']} says {n} ports but shows {len(dev['ports'])} (truncated?)", lineno
        )


@parser("ibstat")
def parse_ibstat(text: str) -> dict[str, Any]:
    """Parse ``ibstat`` output into the shared port shape."""
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    body = strip_source_line(text)
    devices: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    dev: dict[str, Any] | None = None
    port: dict[str, Any] | None = None
    lineno = offset
    for lineno, raw in enumerate(body.splitlines(), start=1 + offset):
        line = raw.rstrip()
        if not line.strip():
            continue
        stripped = line.strip()
        diag = _DIAG.match(stripped)
        if diag:
            m = _DIAG_DEV.search(diag.group(2))
            errors.append({"line": lineno, "device": m.group(1) if m else None, "message": stripped})
            continue
        ca = _CA.match(line)
        if ca:
            if dev is not None:
                _finish_port(port, dev, lineno)
                _finish_device(dev, lineno)
            dev = new_device(ca.group(1))
            dev.update({"hw_version": None, "node_guid": None, "sys_image_guid": None, "num_ports": None})
            devices.append(dev)
            port = None
            continue
        if dev is None or line[0] not in " \t":
            raise ParseError(TOOL, f"expected \"CA '<name>'\", got {stripped[:60]!r}", lineno)
        pm = _PORT.match(stripped)
        if pm:
            _finish_port(port, dev, lineno)
            port = new_port(int(pm.group(1)))
            port.update({"base_lid": None, "sm_lid": None, "lmc": None,
                         "capability_mask": None, "port_guid": None})
            dev["ports"].append(port)
            continue
        kv = _KV.match(stripped)
        if not kv:
            raise ParseError(TOOL, f"expected 'Key: value', got {stripped[:60]!r}", lineno)
        key, value = kv.group(1), kv.group(2)
        if port is not None and key in _PORT_KEYS:
            port[_PORT_KEYS[key]] = _port_value(_PORT_KEYS[key], value, lineno)
        elif port is None and key in _DEVICE_KEYS:
            field = _DEVICE_KEYS[key]
            if field == "num_ports":
                if not value.isdigit():
                    raise ParseError(TOOL, f"Number of ports is not a number: {value!r}", lineno)
                dev[field] = int(value)
            else:
                dev[field] = value
        else:
            # Keys added by later ibstat versions are kept, not fatal.
            target = port if port is not None else dev
            target.setdefault("extra", {})[key] = value
    if dev is not None:
        _finish_port(port, dev, lineno)
    _finish_device(dev, lineno)
    if not devices:
        if errors:
            raise ParseError(TOOL, f"no CA listed, only: {errors[0]['message']}", errors[0]["line"])
        raise ParseError(TOOL, "no \"CA '<name>'\" section found (empty input?)", lineno or None)
    return {"devices": devices, "errors": errors}
