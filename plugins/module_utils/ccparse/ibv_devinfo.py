"""Parser for ``ibv_devinfo`` and ``ibv_devinfo -v`` (rdma-core) text output.

Output: the shared port shape (see ``ccparse.ibport``). ``ca_type`` is ``"MT<vendor_part_id>"``
for Mellanox/NVIDIA HCAs (vendor_id 0x02c9), as ibstat names them; ``fw_version`` is fw_ver.
``rate_gbps`` = active_width lanes x active_speed per lane, only known with ``-v`` (None
otherwise, like ``phys_state``). Extra port keys: ``max_mtu``/``active_mtu`` (bytes),
``port_lid``, ``sm_lid``, ``active_width``, ``active_speed``, ``gids`` (``-v`` only:
``[{"index": 3, "gid": "::ffff:10.0.0.1", "type": "RoCE v2"}]``, type None on old rdma-core).
"No IB devices found" gives ``{"devices": [], "message": ...}`` (the tool ran and found none).
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, parser, strip_source_line
from .ibport import new_device, new_port, norm_link_layer, norm_phys_state, norm_state

TOOL = "ibv_devinfo"

_HCA = re.compile(r"^hca_id:\s*(\S+)\s*$")
_PORT = re.compile(r"^port:\s*(\d+)\s*$")
_GID = re.compile(r"^GID\[\s*(\d+)\]:\s*([0-9A-Fa-f:.]+)(?:,\s*(.+?))?\s*$")
_KV = re.compile(r"^([A-Za-z_][A-Za-z0-9_ ]*?):\s*(.*?)\s*$")
_MTU = re.compile(r"^(\d+)\s*\(\d+\)$")
_WIDTH = re.compile(r"^(\d+)X\b")
_SPEED = re.compile(r"^(\d+(?:\.\d+)?)\s*Gbps\b")
_NO_DEVICES = re.compile(r"^No IB devices found", re.IGNORECASE)


def _num(value: str) -> int | None:
    try:
        return int(value, 0)
    except ValueError:
        return None


def _set_port_key(port: dict[str, Any], key: str, value: str, lineno: int) -> None:
    if key == "state":
        port["state"] = norm_state(value)
        if port["state"] is None:
            raise ParseError(TOOL, f"unknown port state {value!r}", lineno)
    elif key == "phys_state":
        port["phys_state"] = norm_phys_state(value)
        if port["phys_state"] is None:
            raise ParseError(TOOL, f"unknown phys_state {value!r}", lineno)
    elif key == "link_layer":
        port["link_layer"] = norm_link_layer(value)
        if port["link_layer"] is None:
            raise ParseError(TOOL, f"unknown link_layer {value!r}", lineno)
    elif key in ("max_mtu", "active_mtu"):
        m = _MTU.match(value)
        if not m:
            raise ParseError(TOOL, f"{key} not '<bytes> (<enum>)': {value!r}", lineno)
        port[key] = int(m.group(1))
    elif key in ("sm_lid", "port_lid"):
        port[key] = _num(value)
    elif key == "active_width":
        m = _WIDTH.match(value)
        if not m:
            raise ParseError(TOOL, f"active_width not '<n>X (<enum>)': {value!r}", lineno)
        port["active_width"] = int(m.group(1))
    elif key == "active_speed":
        m = _SPEED.match(value)
        if not m:
            raise ParseError(TOOL, f"active_speed not '<n> Gbps (<enum>)': {value!r}", lineno)
        port["active_speed"] = float(m.group(1))
    else:
        port.setdefault("extra", {})[key] = value


def _finish_port(dev: dict[str, Any], port: dict[str, Any] | None, lineno: int) -> None:
    if port is None:
        return
    for key in ("state", "link_layer"):
        if port.get(key) is None:
            raise ParseError(TOOL, f"{dev['name']} port {port['port']} lacks {key} (truncated?)", lineno)
    if port.get("active_width") is not None and port.get("active_speed") is not None:
        port["rate_gbps"] = float(port["active_width"] * port["active_speed"])
    if dev["_verbose"] and (port["rate_gbps"] is None or port["phys_state"] is None):
        raise ParseError(TOOL, f"{dev['name']} port {port['port']} lacks active_width/active_speed/"
                         "phys_state shown by -v (truncated?)", lineno)


def _finish_device(dev: dict[str, Any] | None, lineno: int) -> None:
    if dev is None:
        return
    n = dev.pop("_port_cnt")
    dev.pop("_verbose")
    if not dev["ports"] or (n is not None and n != len(dev["ports"])):
        raise ParseError(TOOL, f"{dev['name']} phys_port_cnt {n} but {len(dev['ports'])} port sections "
                         "(truncated?)", lineno)


@parser("ibv_devinfo")
def parse_ibv_devinfo(text: str) -> dict[str, Any]:
    """Parse ``ibv_devinfo [-v]`` output into the shared port shape."""
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    body = strip_source_line(text)
    devices: list[dict[str, Any]] = []
    dev: dict[str, Any] | None = None
    port: dict[str, Any] | None = None
    lineno = offset
    for lineno, raw in enumerate(body.splitlines(), start=1 + offset):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        if not devices and _NO_DEVICES.match(stripped):
            return {"devices": [], "errors": [], "message": stripped}
        hca = _HCA.match(line)
        if hca:
            if dev is not None:
                _finish_port(dev, port, lineno)
                _finish_device(dev, lineno)
            dev = new_device(hca.group(1))
            dev.update({"transport": None, "node_guid": None, "sys_image_guid": None, "vendor_id": None,
                        "vendor_part_id": None, "hw_ver": None, "board_id": None,
                        "_port_cnt": None, "_verbose": False})
            devices.append(dev)
            port = None
            continue
        if dev is None or line[0] not in " \t":
            raise ParseError(TOOL, f"expected 'hca_id: <name>', got {stripped[:60]!r}", lineno)
        pm = _PORT.match(stripped)
        if pm:
            _finish_port(dev, port, lineno)
            port = new_port(int(pm.group(1)))
            port.update({"max_mtu": None, "active_mtu": None, "port_lid": None, "sm_lid": None,
                         "active_width": None, "active_speed": None, "gids": []})
            dev["ports"].append(port)
            continue
        if port is not None:
            gm = _GID.match(stripped)
            if gm:
                port["gids"].append({"index": int(gm.group(1)), "gid": gm.group(2), "type": gm.group(3)})
                continue
            kv = _KV.match(stripped)
            if not kv:
                raise ParseError(TOOL, f"expected 'key: value' in port section, got {stripped[:60]!r}", lineno)
            _set_port_key(port, kv.group(1), kv.group(2), lineno)
            continue
        kv = _KV.match(stripped)
        if not kv:
            # -v lists capability flag names, one per line, under the key they belong to.
            if re.fullmatch(r"[A-Z0-9_]+", stripped) or stripped.endswith("not supported"):
                dev["_verbose"] = True
                continue
            raise ParseError(TOOL, f"expected 'key: value', got {stripped[:60]!r}", lineno)
        key, value = kv.group(1), kv.group(2)
        if key == "fw_ver":
            dev["fw_version"] = value
        elif key == "phys_port_cnt":
            dev["_port_cnt"] = _num(value)
        elif key in ("transport", "node_guid", "sys_image_guid", "vendor_id", "hw_ver", "board_id"):
            dev[key] = value
        elif key == "vendor_part_id":
            dev["vendor_part_id"] = _num(value)
        elif key == "Device ports":
            continue
        else:
            dev["_verbose"] = True
    if dev is not None:
        _finish_port(dev, port, lineno)
    _finish_device(dev, lineno)
    if not devices:
        raise ParseError(TOOL, "no 'hca_id:' section found (empty input?)", lineno or None)
    for d in devices:
        if d["vendor_id"] in ("0x02c9", "0x15b3") and d["vendor_part_id"] is not None:
            d["ca_type"] = f"MT{d['vendor_part_id']}"
    return {"devices": devices, "errors": []}
