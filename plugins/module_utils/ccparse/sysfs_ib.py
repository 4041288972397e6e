"""RDMA devices and ports read from sysfs, exactly as the kernel lays the tree out.

One reader, :func:`read_sysfs`, walks a *view* of a sysfs tree. Two views exist and both go through
the same reader, so captures and live hosts are judged by the same code:

* :class:`DirView` - a real directory (``/sys`` on a host, or a simulated tree from
  ``tests/simfabric.py``), symlinks resolved by the filesystem;
* :class:`MapView` - a virtual tree built from a captured ``{path: content}`` dump
  (:func:`parse_sysfs_ib`, KIND ``sysfs-ib``), with the kernel's symlinks re-created.

Kernel paths mirrored (drivers/infiniband/core/sysfs.c, net/core/net-sysfs.c, drivers/base):

``/sys/class/infiniband/<dev>``
    symlink to ``/sys/devices/pci<dom>:<bus>/.../<pci addr>/infiniband/<dev>`` (class device).
``<dev>/{fw_ver,node_guid,hca_type,board_id,node_type}``
    device attributes (``ib_dev_attrs``; ``fw_ver``/``hca_type``/``board_id`` are driver attributes
    of mlx5 that are laid beside them).
``<dev>/device``
    symlink ``../../../<pci addr>``: the parent PCI function; ``device/numa_node`` is its NUMA node
    (``-1`` when the platform has none) and ``device/net/<ifname>`` lists its netdevs.
``<dev>/ports/<n>/state``
    ``"%d: %s\\n"`` with NOP/DOWN/INIT/ARMED/ACTIVE/ACTIVE_DEFER (``state_show``).
``<dev>/ports/<n>/phys_state``
    ``"%d: %s\\n"`` with <unknown>/Sleep/Polling/Disabled/PortConfigurationTraining/LinkUp/
    LinkErrorRecovery/Phy Test (``phys_state_show``).
``<dev>/ports/<n>/rate``
    ``"%d%s Gb/sec (%dX%s)\\n"``: e.g. ``400 Gb/sec (4X NDR)``, ``2.5 Gb/sec (1X)`` (SDR has no
    speed word) (``rate_show``).
``<dev>/ports/<n>/link_layer``
    ``InfiniBand`` or ``Ethernet`` (``link_layer_show``).
``<dev>/ports/<n>/gids/<i>``
    the GID as 8 groups of 4 hex digits (``%pI6``); unused entries read as all zeros.
``<dev>/ports/<n>/gid_attrs/types/<i>``
    ``IB/RoCE v1`` or ``RoCE v2``; reading an unused entry fails with EINVAL.
``<dev>/ports/<n>/gid_attrs/ndevs/<i>``
    the netdev the GID belongs to (RoCE only; EINVAL on IB ports).
``/sys/class/net/<ifname>/{dev_port,operstate,mtu}``
    net-sysfs attributes; ``dev_port`` is the 0-based port of the netdev on its PCI function, so
    IB port ``n`` is the netdev with ``dev_port == n - 1``.

A port's netdev is taken from ``gid_attrs/ndevs/0`` (RoCE: also finds bonds and VLAN-less parents)
or else from ``<dev>/device/net/*`` matched by ``dev_port`` (IPoIB). The RoCE v2 GID index is the
lowest index whose type is ``RoCE v2`` and whose GID is IPv4-mapped (``::ffff:a.b.c.d``), the one
NCCL_IB_GID_INDEX must name.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from typing import Any, Protocol

from .common import ParseError, json_loads, need_float, need_int, parser, strip_source_line, to_int
from .ibport import PHYS_BY_NUMBER

TOOL = "sysfs-ib"

#: ibstat's words for the kernel's phys_state numbers (ibport's IBA table); 0, which the kernel prints as
#: "<unknown>", is a device that reports no physical state (ibport.phys_state_value): None
PHYS_STATE_WORDS: dict[int, str | None] = {**PHYS_BY_NUMBER, 0: None}

_NUM_TEXT = re.compile(r"^\s*(\d{1,18})\s*:\s*(.*?)\s*$")
_RATE = re.compile(r"^\s*([\d.]+)\s*Gb/sec\s*\((\d+)X\s*([A-Za-z0-9]*)\)\s*$")
_V4_MAPPED = re.compile(r"^0000:0000:0000:0000:0000:ffff:([0-9a-f]{4}):([0-9a-f]{4})$", re.I)
_ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


class SysfsView(Protocol):
    """Read access to a sysfs tree; paths are relative to the sysfs root (``class/infiniband``)."""

    def read(self, rel: str) -> str | None: ...

    def listdir(self, rel: str) -> list[str]: ...

    def target_name(self, rel: str) -> str | None:
        """Last component of the path ``rel`` resolves to (symlinks followed), None if absent."""


class DirView:
    """A real directory tree (``/sys`` or a simulated copy)."""

    def __init__(self, root: str = "/sys") -> None:
        self.root = root

    def _p(self, rel: str) -> str:
        return os.path.join(self.root, rel)

    def read(self, rel: str) -> str | None:
        try:
            with open(self._p(rel), encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            # ENOENT, and EINVAL from unused gid_attrs entries: both mean "no value".
            return None

    def listdir(self, rel: str) -> list[str]:
        try:
            return sorted(os.listdir(self._p(rel)))
        except OSError:
            return []

    def target_name(self, rel: str) -> str | None:
        p = self._p(rel)
        if not os.path.exists(p):
            return None
        return os.path.basename(os.path.realpath(p))


class MapView:
    """A virtual tree: ``files`` maps relative paths to contents, ``links`` relative path -> target."""

    def __init__(self, files: dict[str, str], links: dict[str, str] | None = None) -> None:
        self.files = {posixpath.normpath(k): v for k, v in files.items()}
        self.links = {posixpath.normpath(k): posixpath.normpath(v) for k, v in (links or {}).items()}
        self._dirs: dict[str, set[str]] = {}
        for path in list(self.files) + list(self.links):
            parts = path.split("/")
            for i in range(1, len(parts)):
                self._dirs.setdefault("/".join(parts[:i]), set()).add(parts[i])

    def resolve(self, rel: str) -> str:
        parts = posixpath.normpath(rel).split("/")
        for _depth in range(40):  # symlink depth bound, like the kernel's
            for i in range(len(parts), 0, -1):
                head = "/".join(parts[:i])
                if head in self.links:
                    parts = (self.links[head] + "/" + "/".join(parts[i:])).strip("/").split("/")
                    break
            else:
                return "/".join(parts)
        return "/".join(parts)

    def read(self, rel: str) -> str | None:
        return self.files.get(self.resolve(rel))

    def listdir(self, rel: str) -> list[str]:
        return sorted(self._dirs.get(self.resolve(rel), set()))

    def target_name(self, rel: str) -> str | None:
        path = self.resolve(rel)
        if path in self.files or path in self._dirs:
            return path.rsplit("/", 1)[-1]
        return None


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip()
    return text or None


def _num_text(text: str | None) -> tuple[int | None, str | None]:
    text = _clean(text)
    if text is None:
        return None, None
    m = _NUM_TEXT.match(text)
    if not m:
        return None, text
    return to_int(m.group(1)), m.group(2)


def parse_state(text: str | None) -> tuple[int | None, str | None]:
    """``"4: ACTIVE"`` -> ``(4, "ACTIVE")``."""
    num, word = _num_text(text)
    return num, word.upper() if word else None


def parse_phys_state(text: str | None) -> tuple[int | None, str | None]:
    """``"5: LinkUp"`` -> ``(5, "LinkUp")``; kernel words are mapped to ibstat's CamelCase."""
    num, word = _num_text(text)
    if num is not None and num in PHYS_STATE_WORDS:
        return num, PHYS_STATE_WORDS[num]
    return num, word.replace(" ", "") if word else None


def parse_rate(text: str | None) -> dict[str, Any]:
    """``"400 Gb/sec (4X NDR)"`` -> rate_gbps 400.0, width "4X", speed "NDR" (SDR when absent)."""
    text = _clean(text)
    out: dict[str, Any] = {"rate_gbps": None, "width": None, "speed": None, "rate_text": text}
    if text is None:
        return out
    m = _RATE.match(text)
    if not m:
        raise ParseError(TOOL, f"rate {text!r} is not '<n> Gb/sec (<w>X <speed>)'")
    out["rate_gbps"] = need_float(m.group(1), TOOL, None, "rate")
    out["width"] = f"{m.group(2)}X"
    out["speed"] = m.group(3) or "SDR"
    return out


def gid_ipv4(gid: str) -> str | None:
    """The IPv4 address of an IPv4-mapped GID (``...:ffff:0a00:0001`` -> ``10.0.0.1``)."""
    m = _V4_MAPPED.match(gid.strip())
    if not m:
        return None
    hi, lo = need_int(m.group(1), TOOL, None, "GID", 16), need_int(m.group(2), TOOL, None, "GID", 16)
    return f"{hi >> 8}.{hi & 0xFF}.{lo >> 8}.{lo & 0xFF}"


def _int(text: str | None) -> int | None:
    text = _clean(text)
    if text is None:
        return None
    return to_int(text, 0)


def _read_gids(view: SysfsView, pdir: str) -> list[dict[str, Any]]:
    gids = []
    for idx in sorted((i for i in view.listdir(f"{pdir}/gids") if i.isdigit() and len(i) < 10), key=int):
        gid = _clean(view.read(f"{pdir}/gids/{idx}"))
        if gid is None or gid == _ZERO_GID:
            continue
        gids.append(
            {
                "index": need_int(idx, TOOL, None, "GID index"),
                "gid": gid,
                "type": _clean(view.read(f"{pdir}/gid_attrs/types/{idx}")),
                "ndev": _clean(view.read(f"{pdir}/gid_attrs/ndevs/{idx}")),
                "ipv4": gid_ipv4(gid),
            }
        )
    return gids


def _port_netdev(view: SysfsView, ddir: str, port: int, gids: list[dict[str, Any]]) -> str | None:
    ndev = _clean(view.read(f"{ddir}/ports/{port}/gid_attrs/ndevs/0"))
    if ndev:
        return ndev
    for g in gids:
        if g["ndev"]:
            return str(g["ndev"])
    names = view.listdir(f"{ddir}/device/net")
    matched = []
    for name in names:
        dev_port = _int(view.read(f"{ddir}/device/net/{name}/dev_port"))
        if (dev_port is None and len(names) == 1) or dev_port == port - 1:
            matched.append(name)
    # Parents before P_Key children (ib0 before ib0.8001).
    matched.sort(key=lambda n: ("." in n, n))
    return matched[0] if matched else None


def _netdev_attr(view: SysfsView, ddir: str, netdev: str, attr: str) -> str | None:
    value = view.read(f"class/net/{netdev}/{attr}")
    if value is None:
        value = view.read(f"{ddir}/device/net/{netdev}/{attr}")
    return _clean(value)


def _read_port(view: SysfsView, ddir: str, port: int) -> dict[str, Any]:
    pdir = f"{ddir}/ports/{port}"
    state_num, state = parse_state(view.read(f"{pdir}/state"))
    phys_num, phys = parse_phys_state(view.read(f"{pdir}/phys_state"))
    gids = _read_gids(view, pdir)
    netdev = _port_netdev(view, ddir, port, gids)
    roce_v2 = [g["index"] for g in gids if g["type"] == "RoCE v2" and g["ipv4"]]
    rec: dict[str, Any] = {
        "port": port,
        "state": state,
        "state_num": state_num,
        "phys_state": phys,
        "phys_state_num": phys_num,
        **parse_rate(view.read(f"{pdir}/rate")),
        "link_layer": _clean(view.read(f"{pdir}/link_layer")),
        "netdev": netdev,
        "netdev_operstate": _netdev_attr(view, ddir, netdev, "operstate") if netdev else None,
        "netdev_mtu": _int(_netdev_attr(view, ddir, netdev, "mtu")) if netdev else None,
        "gids": gids,
        "roce_v2_gid_index": min(roce_v2) if roce_v2 else None,
        "roce_v2_ipv4": next((g["ipv4"] for g in gids if g["index"] == min(roce_v2)), None) if roce_v2 else None,
    }
    return rec


def _natural(name: str) -> list[Any]:
    return [t.zfill(40) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def read_sysfs(view: SysfsView) -> dict[str, Any]:
    """Every RDMA device under ``class/infiniband`` of ``view`` in the shared port shape."""
    devices = []
    for name in sorted(view.listdir("class/infiniband"), key=_natural):
        ddir = f"class/infiniband/{name}"
        ports = [
            _read_port(view, ddir, need_int(p, TOOL, None, "port"))
            for p in sorted((p for p in view.listdir(f"{ddir}/ports") if p.isdigit() and len(p) < 10), key=int)
        ]
        devices.append(
            {
                "name": name,
                "ca_type": _clean(view.read(f"{ddir}/hca_type")),
                "fw_version": _clean(view.read(f"{ddir}/fw_ver")),
                "board_id": _clean(view.read(f"{ddir}/board_id")),
                "node_guid": _clean(view.read(f"{ddir}/node_guid")),
                "pci": view.target_name(f"{ddir}/device"),
                "numa_node": _int(view.read(f"{ddir}/device/numa_node")),
                "ports": ports,
            }
        )
    return {"devices": devices}


def read_sysfs_root(sysfs_root: str = "/sys") -> dict[str, Any]:
    """:func:`read_sysfs` over a real directory."""
    return read_sysfs(DirView(sysfs_root))


# ---------------------------------------------------------------------------------------------
# Captured dumps -> virtual tree
# ---------------------------------------------------------------------------------------------

_PORT_FILES = {"state", "phys_state", "rate", "link_layer"}
_PCI_IB = re.compile(r"^bus/pci/devices/([^/]+)/infiniband/([^/]+)(/.*)?$")
_PCI_NET = re.compile(r"^bus/pci/devices/([^/]+)/net/([^/]+)(/.*)?$")
#: Device name used for a capture of bare port files that does not name its device.
UNNAMED_DEVICE = "unknown"


_LONG_DIGITS = re.compile(r"\d{10}")


def _dump_entries(text: str) -> dict[str, str]:
    body = strip_source_line(text).strip()
    if not body:
        raise ParseError(TOOL, "empty input")
    if body.startswith("{"):
        try:
            data = json_loads(body)
        except json.JSONDecodeError as exc:
            raise ParseError(TOOL, f"invalid JSON dump: {exc.msg}", exc.lineno + 1) from exc
        except RecursionError:
            raise ParseError(TOOL, "JSON dump nested too deeply") from None
        if not isinstance(data, dict):
            raise ParseError(TOOL, "JSON dump is not a {path: content} object")
        loaded = {str(k): str(v) for k, v in data.items()}
        for k in loaded:
            if _LONG_DIGITS.search(k):
                raise ParseError(TOOL, f"path with an absurd number: {k[:80]!r}")
        return loaded
    entries: dict[str, str] = {}
    offset = 1 if strip_source_line(text) != text else 0
    for lineno, line in enumerate(body.splitlines(), start=1 + offset):
        if not line.strip():
            continue
        path, sep, content = line.partition(": ")
        if not sep or " " in path.strip():
            raise ParseError(TOOL, f"expected '<path>: <content>', got {line[:80]!r}", lineno)
        if _LONG_DIGITS.search(path):
            raise ParseError(TOOL, f"path with an absurd number: {path[:80]!r}", lineno)
        entries[path.strip()] = content + "\n"
    return entries


def view_from_dump(text: str) -> MapView:
    """A :class:`MapView` for a captured dump, with the kernel's class/device symlinks re-created.

    Accepted layouts: a JSON object ``{"/sys/...": content}`` (gcm), ``<dev>/ports/<n>/<file>:
    content`` lines relative to ``/sys/class/infiniband`` (gpud), ``/sys/...: content`` lines, and
    bare port files ``state: 4: ACTIVE`` of one unnamed port (device :data:`UNNAMED_DEVICE`, port 1).
    """
    entries = _dump_entries(text)
    files: dict[str, str] = {}
    links: dict[str, str] = {}
    for raw, content in entries.items():
        if raw.startswith("/sys/"):
            rel = raw[len("/sys/") :]
        elif "/" not in raw and raw in _PORT_FILES:
            rel = f"class/infiniband/{UNNAMED_DEVICE}/ports/1/{raw}"
        elif raw.startswith("/"):
            raise ParseError(TOOL, f"path {raw!r} is outside /sys")
        else:
            rel = f"class/infiniband/{raw}"
        files[rel] = content
        m = _PCI_IB.match(rel)
        if m:
            pci, dev = m.group(1), m.group(2)
            base = f"bus/pci/devices/{pci}"
            links[f"class/infiniband/{dev}"] = f"{base}/infiniband/{dev}"
            links[f"{base}/infiniband/{dev}/device"] = base
        m = _PCI_NET.match(rel)
        if m:
            pci, ifname = m.group(1), m.group(2)
            links[f"class/net/{ifname}"] = f"bus/pci/devices/{pci}/net/{ifname}"
    if not any(p.startswith("class/infiniband/") for p in list(files) + list(links)):
        raise ParseError(TOOL, "no /sys/class/infiniband entries in the dump")
    return MapView(files, links)


@parser("sysfs-ib")
def parse_sysfs_ib(text: str) -> dict[str, Any]:
    """A captured sysfs dump, read by the same :func:`read_sysfs` as a live tree."""
    return read_sysfs(view_from_dump(text))
