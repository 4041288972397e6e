"""Parser for ``ibdev2netdev`` and ``ibdev2netdev -v`` (MLNX_OFED / DOCA-OFED script) output.

Output::

    {"mappings": [{"device": "mlx5_0", "port": 1, "netdev": "ibp26s0", "link": "Up",
                   "pci": "0000:1a:00.0" | None, "ca_type": "MT4129" | None, "part": str | None,
                   "description": str | None, "fw_version": str | None, "state": "ACTIVE" | None}]}

``link`` is the netdev's operational state as the script prints it (Up/Down); ``state`` the
RDMA port state shown by ``-v`` only.

iproute2's ``rdma link [show]`` (where the OFED script is not installed: inbox drivers, containers), one
``link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1np0`` per port (iproute2 before 5.0:
``2/1: mlx5_0/1: state DOWN physical_state DISABLED netdev ens803f0``; an InfiniBand port adds ``subnet_prefix``,
``lid``, ``sm_lid`` and ``lmc``), states the RDMA port's own state, not its netdev's: it is read into the shared port
shape of ibstat (``ccparse.ibport``: ``{"devices": [{"name", "ports": [{"port", "state", "phys_state",
"rate_gbps": None, "link_layer", "netdev"}]}]}``, ``link_layer`` InfiniBand where a ``lid`` is shown, else None) with
``"rdma_link": True`` and no ``mappings``; the checks judge it as they judge ibstat's ports.
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, need_int, parser, strip_source_line
from .ibport import new_device, new_port, norm_state, phys_state_value

TOOL = "ibdev2netdev"

_LINE = re.compile(
    r"^(?:(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+)?"
    r"(?P<device>\S{1,64})\s+"
    r"(?:\((?P<ca_type>\S{1,32})\s+-\s+(?P<part>[^)]{0,64})\)\s+(?P<desc>[^\n]{0,200}?)\s+fw\s+(?P<fw>\S{1,32})\s+)?"
    r"port\s+(?P<port>\d{1,4})(?:\s+\(\s*(?P<state>[A-Za-z_]{1,16})\s*\))?\s+==>\s+"
    # a site's wrapper may print the netdev's address after the state ('(Up) 192.168.100.101')
    r"(?P<netdev>\S{1,64})\s+\((?P<link>[^)]{1,32})\)(?:\s+(?P<addr>[0-9A-Fa-f.:]{2,45}(?:/\d{1,3})?))?\s*(?:#.*)?$"
)


#: a port of ``rdma link [show]``: the device/port, then key-value pairs (the old form numbers it: '2/1: mlx5_0/1:')
#: (its head: the device/port, also what ccparse.detect recognises such rows by)
RDMA_LINK_HEAD = r"(?:link|\d{1,4}/\d{1,4}:)[ \t]+(?P<device>[^\s/]{1,64})/(?P<port>\d{1,4}):?[ \t]+"
_RDMA_LINK = re.compile(r"^" + RDMA_LINK_HEAD + r"(?P<rest>.*)$")


def _rdma_link(lines: list[tuple[int, str]]) -> dict[str, Any] | None:
    """The ports of ``rdma link`` lines in the shared port shape, or None when no line is one."""
    devices: dict[str, dict[str, Any]] = {}
    for lineno, line in lines:
        m = _RDMA_LINK.match(line[:600])
        if m is None:
            continue
        tokens = m.group("rest").split()
        attrs = dict(zip(tokens[0::2], tokens[1::2]))
        if "state" not in attrs:
            continue
        port = new_port(need_int(m.group("port"), TOOL, lineno, "port"))
        port["state"] = norm_state(attrs["state"]) or attrs["state"][:32]
        # an iWARP port reports no physical state: 'physical_state NOP' (0)
        phys = attrs.get("physical_state", "NOP")
        port["phys_state"] = None if phys == "NOP" else phys_state_value(phys)
        port["link_layer"] = "InfiniBand" if "lid" in attrs or "sm_lid" in attrs else None
        port["netdev"] = attrs.get("netdev")
        devices.setdefault(m.group("device"), new_device(m.group("device")))["ports"].append(port)
    return {"devices": list(devices.values()), "rdma_link": True} if devices else None


@parser("ibdev2netdev")
def parse_ibdev2netdev(text: str) -> dict[str, Any]:
    """Parse ``ibdev2netdev [-v]``: one ``<dev> port <n> ==> <netdev> (<Up|Down>)`` per line."""
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    mappings: list[dict[str, Any]] = []
    lineno = offset
    for lineno, raw in enumerate(strip_source_line(text).splitlines(), start=1 + offset):
        line = raw.strip()
        if not line:
            continue
        m = _LINE.match(line[:600])
        if not m:
            continue  # prose, a cut last line, another tool's output: not a mapping
        mappings.append({
            "device": m.group("device"),
            "port": need_int(m.group("port"), TOOL, lineno, "port"),
            "netdev": m.group("netdev"),
            "link": m.group("link").strip(),
            "pci": m.group("pci"),
            "ca_type": m.group("ca_type"),
            "part": m.group("part"),
            "description": m.group("desc"),
            "fw_version": m.group("fw"),
            "state": m.group("state").upper() if m.group("state") else None,
            **({"address": m.group("addr")} if m.group("addr") else {}),
        })
    if not mappings:
        numbered = enumerate(strip_source_line(text).splitlines(), start=1 + offset)
        ports = _rdma_link([(n, ln.strip()) for n, ln in numbered])
        if ports is not None:
            return ports
        raise ParseError(TOOL, "no '<dev> port <n> ==> <netdev> (<state>)' line found", lineno or None)
    return {"mappings": mappings}
