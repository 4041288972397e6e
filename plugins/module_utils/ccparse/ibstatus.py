"""Parser for ``ibstatus`` (infiniband-diags shell script over sysfs) text output.

Output: the shared port shape (see ``ccparse.ibport``); ``ca_type``/``fw_version`` are None
because ibstatus does not print them. Extra port keys: ``default_gid``, ``base_lid``,
``sm_lid``, ``rate_text`` (e.g. ``"200 Gb/sec (4X HDR)"``), ``width`` (``"4X"``) and ``speed``
(``"HDR"``) when shown. Every port block must show state, phys state, rate and link_layer. On a host with
no RDMA device the script prints ``Fatal error:  device '*': sys files not found (...)``: ``{"devices": [],
"message": <that line>}`` (the tool ran and found none).
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, need_int, parser, strip_source_line, to_float, to_int
from .ibport import link_layer_value, new_device, new_port, norm_state, phys_state_value

TOOL = "ibstatus"

_HEAD = re.compile(r"^Infiniband device '([^'\n]{1,64})' port (\d{1,4}) status:\s*$")
_KV = re.compile(r"^([a-z_ ]{1,30}?):\s*(.{0,300}?)\s*$")
_RATE = re.compile(r"^(\d{1,5}(?:\.\d{1,4})?)\s*Gb/sec(?:\s*\((\d{1,2}X)\s*([A-Za-z0-9]{1,8})?\))?")
_REQUIRED = ("state", "phys_state", "rate_gbps", "link_layer")
#: the script's answer on a host with no RDMA device: "Fatal error:  device '*': sys files not found
#: (/sys/class/infiniband/*/ports)"
#: the script's words when /sys/class/infiniband holds no device (older: "device '*': sys files not found", newer:
#: 'No devices')
_NO_DEVICES = re.compile(r"^Fatal error:\s+(?:device '\*': sys files not found|No devices\b).*$")


def _check_port(dev: str, port: dict[str, Any] | None, lineno: int) -> None:
    if port is None:
        return
    missing = [k for k in _REQUIRED if port.get(k) is None]
    if missing:
        raise ParseError(TOOL, f"{dev} port {port['port']} lacks {', '.join(missing)} (truncated?)", lineno)


@parser("ibstatus")
def parse_ibstatus(text: str) -> dict[str, Any]:
    """Parse ``ibstatus`` output into the shared port shape.

    A block cut short keeps what it shows (``truncated``; a port without its state line is
    dropped, its device stays listed without ports); lines that are not ``key: value`` are skipped. ParseError when no
    ``Infiniband device '<name>' port N status:`` block is found.
    """
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    body = strip_source_line(text)
    devices: dict[str, dict[str, Any]] = {}
    port: dict[str, Any] | None = None
    truncated = False
    lineno = offset
    for lineno, raw in enumerate(body.splitlines(), start=1 + offset):
        stripped = raw.strip()
        if not stripped:
            continue
        if not devices and (fatal := _NO_DEVICES.match(stripped[:300])):
            # the script finds no /sys/class/infiniband/*/ports: no RDMA device registered at all
            return {"devices": [], "errors": [], "message": fatal.group(0), "truncated": False}
        head = _HEAD.match(stripped[:300])
        if head:
            dev = devices.setdefault(head.group(1), new_device(head.group(1)))
            port = new_port(need_int(head.group(2), TOOL, lineno, "port number"))
            port.update({"default_gid": None, "base_lid": None, "sm_lid": None,
                         "rate_text": None, "width": None, "speed": None})
            dev["ports"].append(port)
            continue
        kv = _KV.match(stripped[:400])
        if port is None or not kv:
            continue
        key, value = kv.group(1), kv.group(2)
        if key == "state":
            port["state"] = norm_state(value) or (value.upper()[:32] or None)
        elif key == "phys state":
            port["phys_state"] = phys_state_value(value)
        elif key == "rate":
            m = _RATE.match(value)
            if m:
                port["rate_gbps"] = to_float(m.group(1))
                port["rate_text"] = value
                port["width"], port["speed"] = m.group(2), m.group(3)
        elif key in ("link_layer", "link layer"):
            port["link_layer"] = link_layer_value(value)
        elif key == "default gid":
            port["default_gid"] = None if value == "unknown" else value
        elif key in ("base lid", "sm lid"):
            m = re.match(r"^(0x[0-9a-fA-F]{1,8}|\d{1,9})\b", value)
            port[key.replace(" ", "_")] = to_int(m.group(1), 0) if m else None
        else:
            port.setdefault("extra", {})[key] = value
    for dev in devices.values():
        kept = [p for p in dev["ports"] if p.get("state") is not None]
        truncated = truncated or len(kept) != len(dev["ports"]) or any(
            p.get(k) is None for p in kept for k in _REQUIRED)
        dev["ports"] = kept
    if not devices:
        raise ParseError(TOOL, "no \"Infiniband device '<name>' port N status:\" block", lineno or None)
    # a device whose every port block was cut before its state line stays listed with no port: the
    # ports check then says nothing judgeable was read (as for ibstat/ibv_devinfo cut before the ports)
    return {"devices": list(devices.values()), "errors": [], "truncated": truncated}
