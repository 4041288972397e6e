"""Parser for ``ibv_devinfo`` and ``ibv_devinfo -v`` (rdma-core) text output.

Output: the shared port shape (see ``ccparse.ibport``). ``ca_type`` is ``"MT<vendor_part_id>"``
for Mellanox/NVIDIA HCAs (vendor_id 0x02c9), as ibstat names them; ``fw_version`` is fw_ver.
``rate_gbps`` = active_width lanes x active_speed per lane, only known with ``-v`` (None
otherwise, like ``phys_state``). Extra port keys: ``max_mtu``/``active_mtu`` (bytes),
``port_lid``, ``sm_lid``, ``active_width``, ``active_speed``, ``gids`` (``-v`` only:
``[{"index": 3, "gid": "::ffff:10.0.0.1", "type": "RoCE v2"}]``, type None on old rdma-core).
"No IB devices found" (or "Failed to get IB devices list: ...", the verbs core not loaded) gives ``{"devices": [],
"message": ...}`` (the tool ran and found none).
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, need_int, parser, strip_source_line, to_float, to_int
from .ibport import link_layer_value, new_device, new_port, norm_state, phys_state_value

TOOL = "ibv_devinfo"

_HCA = re.compile(r"^hca_id:\s*(\S{1,64})")
_PORT = re.compile(r"^port:\s*(\d{1,4})\s*$")
_GID = re.compile(r"^\**GID\[\s*(\d{1,5})\]:\s*([0-9A-Fa-f:.]{2,64})(?:,\s*(.{1,40}?))?\s*$")
_KV = re.compile(r"^([A-Za-z_][A-Za-z0-9_ ]{0,60}?):\s*(.{0,400}?)\s*$")
_MTU = re.compile(r"^(\d{1,6})\s*\(\d{1,3}\)")
_WIDTH = re.compile(r"^(\d{1,2})X\b")
_SPEED = re.compile(r"^(\d{1,4}(?:\.\d{1,4})?)\s*Gbps\b")
#: no device to list: none registered, or the verbs core not loaded ('Failed to get IB devices list: Function not
#: implemented')
_NO_DEVICES = re.compile(r"^(?:No IB devices found|Failed to get IB devices list\b)", re.IGNORECASE)
_INT = re.compile(r"^(0x[0-9a-fA-F]{1,16}|\d{1,12})\b")
#: keys that belong to a port section (a grep'd excerpt may show them without the 'port:' line)
_PORT_KEYS = frozenset({"state", "max_mtu", "active_mtu", "sm_lid", "port_lid", "port_lmc", "link_layer",
                        "max_msg_sz", "port_cap_flags", "port_cap_flags2", "max_vl_num", "bad_pkey_cntr",
                        "qkey_viol_cntr", "sm_sl", "pkey_tbl_len", "gid_tbl_len", "subnet_timeout",
                        "init_type_reply", "active_width", "active_speed", "phys_state"})


def _num(value: str) -> int | None:
    m = _INT.match(value)
    return to_int(m.group(1), 0) if m else None


def _set_port_key(port: dict[str, Any], key: str, value: str) -> None:
    """Set one port field; a value that cannot be read is None (never an error)."""
    if key == "state":
        port["state"] = norm_state(value) or (value.upper()[:32] or None)
    elif key == "phys_state":
        port["phys_state"] = phys_state_value(value)
    elif key == "link_layer":
        port["link_layer"] = link_layer_value(value)
    elif key in ("max_mtu", "active_mtu"):
        m = _MTU.match(value)
        port[key] = to_int(m.group(1)) if m else None
    elif key in ("sm_lid", "port_lid"):
        port[key] = _num(value)
    elif key == "active_width":
        m = _WIDTH.match(value)
        port["active_width"] = to_int(m.group(1)) if m else None
    elif key == "active_speed":
        m = _SPEED.match(value)
        port["active_speed"] = to_float(m.group(1)) if m else None
    else:
        port.setdefault("extra", {})[key] = value


def _new_port(n: int) -> dict[str, Any]:
    port = new_port(n)
    port.update({"max_mtu": None, "active_mtu": None, "port_lid": None, "sm_lid": None,
                 "active_width": None, "active_speed": None, "gids": []})
    return port


def _new_device(name: str | None) -> dict[str, Any]:
    dev = new_device(name)
    dev.update({"transport": None, "node_guid": None, "sys_image_guid": None, "vendor_id": None,
                "vendor_part_id": None, "hw_ver": None, "board_id": None, "_port_cnt": None})
    return dev


def _finish(dev: dict[str, Any] | None, truncated: list[bool]) -> None:
    """Close a device: ports cut before their state line are dropped, the input marked truncated."""
    if dev is None:
        return
    kept = []
    for port in dev["ports"]:
        if port.get("active_width") is not None and port.get("active_speed") is not None:
            port["rate_gbps"] = float(port["active_width"] * port["active_speed"])
        if port.get("state") is None:
            truncated[0] = True
            continue
        if port.get("link_layer") is None or (dev.get("_verbose") and (
                port.get("active_width") is None or port.get("phys_state") is None)):
            truncated[0] = True  # -v prints width, speed and phys_state for every port
        kept.append(port)
    dev["ports"] = kept
    dev.pop("_verbose", None)
    n = dev.pop("_port_cnt", None)
    if n is not None and n != len(kept):
        truncated[0] = True


@parser("ibv_devinfo")
def parse_ibv_devinfo(text: str) -> dict[str, Any]:
    """Parse ``ibv_devinfo`` (plain, ``-v``, ``-vv``) into the shared port shape.

    Takes verbose capability lists and other lines that are not ``key: value`` (skipped), tabs or
    spaces or no indentation at all, grep'd excerpts whose port lines come without ``port:``
    (an implicit port is opened), a paste that starts inside a device (the port lines before the
    first ``hca_id`` belong to a device named None) or is cut anywhere (``truncated``). A port
    is reported only when its ``state`` line is shown. Raises ParseError when no ibv_devinfo line
    is found at all.
    """
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    body = strip_source_line(text)
    devices: list[dict[str, Any]] = []
    dev: dict[str, Any] | None = None
    port: dict[str, Any] | None = None
    truncated = [False]
    known = 0
    lineno = offset
    for lineno, raw in enumerate(body.splitlines(), start=1 + offset):
        stripped = raw.strip()
        if not stripped:
            continue
        if not devices and _NO_DEVICES.match(stripped):
            return {"devices": [], "errors": [], "message": stripped[:200], "truncated": False}
        hca = _HCA.match(stripped)
        if hca:
            _finish(dev, truncated)
            dev = _new_device(hca.group(1))
            devices.append(dev)
            port = None
            known += 1
            continue
        pm = _PORT.match(stripped)
        gm = _GID.match(stripped) if pm is None else None
        kv = _KV.match(stripped) if pm is None and gm is None else None
        key = kv.group(1) if kv else None
        if pm is None and gm is None and key not in _PORT_KEYS and (
                key is None or dev is None):
            if key is not None and dev is None and key in ("transport", "fw_ver", "node_guid", "sys_image_guid",
                                                           "vendor_id", "vendor_part_id", "hw_ver",
                                                           "phys_port_cnt", "board_id", "max_qp"):
                dev = _new_device(None)  # a paste that starts inside a device section
                devices.append(dev)
                truncated[0] = True
            else:
                if dev is not None and key is None:
                    dev["_verbose"] = True  # -v capability flag lists
                continue  # capability flags, NO SUPPORT, banners, prose: not key/value data
        if dev is None:
            dev = _new_device(None)
            devices.append(dev)
            truncated[0] = True
        known += 1
        if pm:
            port = _new_port(need_int(pm.group(1), TOOL, lineno, "port number"))
            dev["ports"].append(port)
            continue
        if gm:
            if port is None:
                port = _new_port(len(dev["ports"]) + 1)
                dev["ports"].append(port)
            port["gids"].append({"index": to_int(gm.group(1)), "gid": gm.group(2), "type": gm.group(3)})
            continue
        if kv is None or key is None:
            continue  # not reached: the test above passed over every line that is no key/value pair
        value = kv.group(2)
        if key in _PORT_KEYS:
            if port is None or (key == "state" and port.get("state") is not None):
                port = _new_port(len(dev["ports"]) + 1)  # grep'd excerpt without 'port:' lines
                dev["ports"].append(port)
            _set_port_key(port, key, value)
            continue
        port = None if key in ("hca_id",) else port
        if key == "fw_ver":
            dev["fw_version"] = value
        elif key == "phys_port_cnt":
            n = _num(value)
            dev["_port_cnt"] = n if n is not None and n < 1024 else None
        elif key in ("transport", "node_guid", "sys_image_guid", "vendor_id", "hw_ver", "board_id"):
            dev[key] = value
        elif key == "vendor_part_id":
            dev["vendor_part_id"] = _num(value)
        elif key.startswith("max_"):
            dev["_verbose"] = True  # device limits are printed by -v only
    _finish(dev, truncated)
    if not known:
        raise ParseError(TOOL, "no ibv_devinfo line found ('hca_id:', 'port:', 'state:' ...)", lineno or None)
    devices = [d for d in devices if d["ports"] or d["name"] is not None]
    for d in devices:
        if d["vendor_id"] in ("0x02c9", "0x15b3") and d["vendor_part_id"] is not None:
            d["ca_type"] = f"MT{d['vendor_part_id']}"
    return {"devices": devices, "errors": [], "truncated": truncated[0]}
