"""What a node's own services and mounts are: KINDs ``proc-mounts`` and ``systemctl-show``
(read by the node check, clusterctl/lifecycle/nodecheck.py).

``proc-mounts``: ``/proc/mounts`` (``/proc/self/mounts``), one mount a line, six fields (fs/proc_namespace.c,
``show_vfsmnt``: device, mount point, type, options, 0, 0), white space in a path written as octal escapes
(``\\040``)::

    {"mounts": [{"device": "JuiceFS:vol", "mountpoint": "/mnt/jfs", "fstype": "fuse.juicefs",
                 "options": ["rw", "relatime", ...], "line": 12}]}

``systemctl-show``: ``systemctl show --property=Id,LoadState,ActiveState,SubState UNIT...``, one
``Key=Value`` block per unit, blocks separated by a blank line::

    {"units": [{"id": "nvidia-fabricmanager.service", "load_state": "loaded", "active_state": "active",
                "sub_state": "running"}]}
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, parser, strip_source_line

_OCTAL = re.compile(r"\\([0-7]{3})")


def _unescape(path: str) -> str:
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), path)


@parser("proc-mounts")
def parse_proc_mounts(text: str) -> dict[str, Any]:
    tool = "/proc/mounts"
    mounts = []
    for lineno, line in enumerate(strip_source_line(text).splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 6 or not fields[1].startswith("/") or not fields[4].isdigit() or not fields[5].isdigit():
            raise ParseError(tool, f"expected 'device mountpoint type options 0 0', got {line[:80]!r}", lineno)
        mounts.append({"device": _unescape(fields[0]), "mountpoint": _unescape(fields[1]), "fstype": fields[2],
                       "options": fields[3].split(","), "line": lineno})
    if not mounts:
        raise ParseError(tool, "no mount lines (empty input?)")
    return {"mounts": mounts}


_KEYS = {"Id": "id", "LoadState": "load_state", "ActiveState": "active_state", "SubState": "sub_state"}


@parser("systemctl-show")
def parse_systemctl_show(text: str) -> dict[str, Any]:
    tool = "systemctl show"
    units: list[dict[str, Any]] = []
    cur: dict[str, Any] = {}
    for lineno, line in enumerate(strip_source_line(text).splitlines(), start=1):
        if not line.strip():
            if cur:
                units.append(cur)
                cur = {}
            continue
        key, sep, value = line.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9]{0,63}", key):
            raise ParseError(tool, f"expected 'Key=Value', got {line[:80]!r}", lineno)
        if key in _KEYS:
            cur[_KEYS[key]] = value.strip()
    if cur:
        units.append(cur)
    if not units or not all("id" in u and "active_state" in u for u in units):
        raise ParseError(tool, "expected blocks with Id= and ActiveState= (systemctl show --property=Id,LoadState,"
                               "ActiveState,SubState)")
    return {"units": units}
