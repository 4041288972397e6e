"""Parser for ``show_gids`` (MLNX_OFED script) output.

Output::

    {"gids": [{"device": "mlx5_0", "port": 1, "index": 3,
               "gid": "0000:...:ffff:0a00:0b15", "ipv4": "10.0.11.21" | None,
               "version": "v2" | "v1" | None, "roce_version": 2 | 1 | None, "netdev": "eth2" | None}],
     "n_gids_found": 7}

The script always ends with ``n_gids_found=N``; it must be there and match the rows read (else
the input is taken as truncated).
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, need_int, parser, strip_source_line, to_int

TOOL = "show_gids"

_GID = re.compile(r"^[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}$")
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_VER = re.compile(r"^[vV](\d)$")
_COUNT = re.compile(r"^n_gids_found=(\d+)$")


def _wrapped_rest(tok: list[str], gids: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The fields of a row's wrapped tail (``[IPv4] v1|v2 [netdev]``) when the row before ended at its GID."""
    if not gids or gids[-1]["version"] is not None or gids[-1]["ipv4"] is not None or gids[-1]["netdev"] is not None:
        return None
    rest = list(tok)
    ipv4 = rest.pop(0) if rest and _IPV4.match(rest[0]) else None
    vm = _VER.match(rest[0]) if rest else None
    if vm is None or len(rest) > 2:
        return None
    return {"ipv4": ipv4, "version": rest[0].lower(), "roce_version": to_int(vm.group(1)),
            "netdev": rest[1] if len(rest) > 1 else None}


@parser("show_gids")
def parse_show_gids(text: str) -> dict[str, Any]:
    """Parse the show_gids table into one dict per GID.

    A paste cut inside the table (a last row shorter than a GID row, no ``n_gids_found=`` line,
    or a count that does not match) sets ``truncated`` and names the device whose row was cut in
    ``cut_devices``; rows that are not GID rows are skipped. ParseError when no header and no GID
    row is found.
    """
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    gids: list[dict[str, Any]] = []
    count: int | None = None
    header = False
    cut: list[str] = []
    last_bad: tuple[int, str] | None = None
    lineno = offset
    for lineno, raw in enumerate(strip_source_line(text).splitlines(), start=1 + offset):
        line = raw.strip()
        if not line:
            continue
        last_bad = None
        if line.split()[:3] == ["DEV", "PORT", "INDEX"]:
            header = True
            continue
        if set(line.replace("\t", "").replace(" ", "")) <= {"-"}:
            continue
        cm = _COUNT.match(line)
        if cm:
            count = to_int(cm.group(1)) if len(cm.group(1)) < 7 else None
            continue
        tok = line.split()[:12]
        wrap = _wrapped_rest(tok, gids)
        if wrap is not None:
            # a mail or a narrow terminal wrapped the row after its GID: '[IPv4] v2 [netdev]' on the next line
            gids[-1].update(wrap)
            continue
        if len(tok) < 4 or not tok[1].isdigit() or not tok[2].isdigit() or not _GID.match(tok[3]) \
                or len(tok[1]) > 4 or len(tok[2]) > 6:
            last_bad = (lineno, tok[0] if tok else "")
            continue
        rest = tok[4:]
        ipv4 = rest.pop(0) if rest and _IPV4.match(rest[0]) else None
        ver = rest.pop(0) if rest and _VER.match(rest[0]) else None
        vm = _VER.match(ver) if ver else None
        gids.append({
            "device": tok[0],
            "port": need_int(tok[1], TOOL, lineno, "port"),
            "index": need_int(tok[2], TOOL, lineno, "index"),
            "gid": tok[3].lower(),
            "ipv4": ipv4,
            "version": ver.lower() if ver else None,
            "roce_version": to_int(vm.group(1)) if vm else None,
            "netdev": rest[0] if rest else None,
        })
    if not gids and not header:
        raise ParseError(TOOL, "no show_gids header or GID rows found", lineno or None)
    truncated = count is None or count != len(gids) or last_bad is not None
    if last_bad is not None and last_bad[1]:
        cut.append(last_bad[1])
    return {"gids": gids, "n_gids_found": count, "truncated": truncated, "cut_devices": cut}
