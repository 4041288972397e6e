"""Parser for ``ibstatus`` (infiniband-diags shell script over sysfs) text output.

Output: the shared port shape (see ``ccparse.ibport``); ``ca_type``/``fw_version`` are None
because ibstatus does not print them. Extra port keys: ``default_gid``, ``base_lid``,
``sm_lid``, ``rate_text`` (e.g. ``"200 Gb/sec (4X HDR)"``), ``width`` (``"4X"``) and ``speed``
(``"HDR"``) when shown. Every port block must show state, phys state, rate and link_layer.
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, parser, strip_source_line
from .ibport import new_device, new_port, norm_link_layer, norm_phys_state, norm_state

TOOL = "ibstatus"

_HEAD = re.compile(r"^Infiniband device '([^']+)' port (\d+) status:\s*$")
_KV = re.compile(r"^([a-z_ ]+?):\s*(.*?)\s*$")
_RATE = re.compile(r"^(\d+(?:\.\d+)?)\s*Gb/sec(?:\s*\((\d+X)\s*([A-Za-z0-9]+)?\))?")
_REQUIRED = ("state", "phys_state", "rate_gbps", "link_layer")


def _check_port(dev: str, port: dict[str, Any] | None, lineno: int) -> None:
    if port is None:
        return
    missing = [k for k in _REQUIRED if port.get(k) is None]
    if missing:
        raise ParseError(TOOL, f"{dev} port {port['port']} lacks {', '.join(missing)} (truncated?)", lineno)


@parser("ibstatus")
def parse_ibstatus(text: str) -> dict[str, Any]:
    """Parse ``ibstatus`` output into the shared port shape."""
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    body = strip_source_line(text)
    devices: dict[str, dict[str, Any]] = {}
    port: dict[str, Any] | None = None
    dev_name = ""
    lineno = offset
    for lineno, raw in enumerate(body.splitlines(), start=1 + offset):
        line = raw.rstrip()
        if not line.strip():
            continue
        head = _HEAD.match(line)
        if head:
            _check_port(dev_name, port, lineno)
            dev_name = head.group(1)
            dev = devices.setdefault(dev_name, new_device(dev_name))
            port = new_port(int(head.group(2)))
            port.update({"default_gid": None, "base_lid": None, "sm_lid": None,
                         "rate_text": None, "width": None, "speed": None})
            dev["ports"].append(port)
            continue
        stripped = line.strip()
        if port is None or line[0] not in " \t":
            raise ParseError(TOOL, f"expected \"Infiniband device '<name>' port N status:\", got "
                             f"{stripped[:60]!r}", lineno)
        kv = _KV.match(stripped)
        if not kv:
            raise ParseError(TOOL, f"expected 'key: value', got {stripped[:60]!r}", lineno)
        key, value = kv.group(1), kv.group(2)
        if key == "state":
            port["state"] = norm_state(value)
            if port["state"] is None:
                raise ParseError(TOOL, f"unknown port state {value!r}", lineno)
        elif key == "phys state":
            port["phys_state"] = norm_phys_state(value)
            if port["phys_state"] is None:
                raise ParseError(TOOL, f"unknown phys state {value!r}", lineno)
        elif key == "rate":
            m = _RATE.match(value)
            if not m:
                raise ParseError(TOOL, f"rate not in Gb/sec: {value!r}", lineno)
            port["rate_gbps"] = float(m.group(1))
            port["rate_text"] = value
            port["width"], port["speed"] = m.group(2), m.group(3)
        elif key in ("link_layer", "link layer"):
            port["link_layer"] = norm_link_layer(value)
            if port["link_layer"] is None:
                raise ParseError(TOOL, f"unknown link layer {value!r}", lineno)
        elif key == "default gid":
            port["default_gid"] = None if value == "unknown" else value
        elif key in ("base lid", "sm lid"):
            try:
                port[key.replace(" ", "_")] = int(value, 0)
            except ValueError:
                raise ParseError(TOOL, f"{key} is not a number: {value!r}", lineno) from None
        else:
            port.setdefault("extra", {})[key] = value
    _check_port(dev_name, port, lineno)
    if not devices:
        raise ParseError(TOOL, "no \"Infiniband device '<name>' port N status:\" block (empty input?)",
                         lineno or None)
    return {"devices": list(devices.values()), "errors": []}
