"""Parser for ``ibdev2netdev`` and ``ibdev2netdev -v`` (MLNX_OFED / DOCA-OFED script) output.

Output::

    {"mappings": [{"device": "mlx5_0", "port": 1, "netdev": "ibp26s0", "link": "Up",
                   "pci": "0000:1a:00.0" | None, "ca_type": "MT4129" | None, "part": str | None,
                   "description": str | None, "fw_version": str | None, "state": "ACTIVE" | None}]}

``link`` is the netdev's operational state as the script prints it (Up/Down); ``state`` the
RDMA port state shown by ``-v`` only.
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, need_int, parser, strip_source_line

TOOL = "ibdev2netdev"

_LINE = re.compile(
    r"^(?:(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+)?"
    r"(?P<device>\S{1,64})\s+"
    r"(?:\((?P<ca_type>\S{1,32})\s+-\s+(?P<part>[^)]{0,64})\)\s+(?P<desc>[^\n]{0,200}?)\s+fw\s+(?P<fw>\S{1,32})\s+)?"
    r"port\s+(?P<port>\d{1,4})(?:\s+\(\s*(?P<state>[A-Za-z_]{1,16})\s*\))?\s+==>\s+"
    # a site's wrapper may print the netdev's address after the state ('(Up) 192.168.100.101')
    r"(?P<netdev>\S{1,64})\s+\((?P<link>[^)]{1,32})\)(?:\s+(?P<addr>[0-9A-Fa-f.:]{2,45}(?:/\d{1,3})?))?\s*(?:#.*)?$"
)


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
        raise ParseError(TOOL, "no '<dev> port <n> ==> <netdev> (<state>)' line found", lineno or None)
    return {"mappings": mappings}
