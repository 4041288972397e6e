"""NVIDIA PCI functions (GPUs, NVSwitches) read from a sysfs PCI tree, as the kernel lays it out.

Kernel paths read (drivers/pci/pci-sysfs.c):

``<root>/bus/pci/devices/<dom:bus:dev.fn>``
    symlink to the function's directory under ``devices/pci<dom>:<bus>/...``.
``<fn>/vendor``, ``<fn>/device``
    ``0x%04x\\n`` (``vendor_show``/``device_show``).
``<fn>/class``
    ``0x%06x\\n``: base class, sub-class, programming interface (``class_show``).
``<fn>/numa_node``
    ``%d\\n``; ``-1`` when the platform has none.

Classification (facts, with sources):

* NVIDIA's PCI vendor id is 0x10de.
* An NVSwitch is an NVIDIA function of class 0x0680 ("Bridge [0680]", PCI "other bridge"): an HGX
  H100/H200 board lists four as ``Bridge [0680]: NVIDIA Corporation GH100 [H100 NVSwitch]
  [10de:22a3]`` (lspci -nn in github.com/bigstack-oss/cubecos issue 259), and NCCL's topology dump of
  a DGX A100 names the NVSwitch targets ``tclass="0x068000"`` (github.com/NVIDIA/nccl issue 1505).
* A GPU is an NVIDIA function of base class 0x03 (display): 0x0302 "3D controller" on data-centre
  boards (the same two captures: ``3D controller [0302] ... [10de:2335]`` H200,
  ``class="0x030200" ... device="0x20b0"`` A100), 0x0300 "VGA compatible controller" on others.

Only the class decides; device ids are reported as read (new switch generations get new ids).
"""

from __future__ import annotations

import os
import re
from typing import Any

from .common import ParseError

TOOL = "sysfs-pci"
NVIDIA_VENDOR = 0x10DE
#: PCI class (base + sub-class) of an NVSwitch: bridge, "other".
NVSWITCH_CLASS = 0x0680
#: PCI base class of display controllers (GPUs).
DISPLAY_BASE_CLASS = 0x03

_HEX = re.compile(r"^\s*0x([0-9a-fA-F]+)\s*$")
_ADDR = re.compile(r"^[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


def parse_hex(text: str, what: str) -> int:
    """The value of a ``0x...`` sysfs attribute; ParseError naming ``what`` otherwise."""
    m = _HEX.match(text)
    if not m:
        raise ParseError(TOOL, f"{what}: expected 0x<hex>, got {text.strip()!r}")
    return int(m.group(1), 16)


def parse_function(address: str, attrs: dict[str, str | None]) -> dict[str, Any]:
    """One PCI function from its attribute texts (``vendor``, ``device``, ``class``, ``numa_node``)."""
    if not _ADDR.match(address):
        raise ParseError(TOOL, f"bus/pci/devices/{address}: not a PCI address (dom:bus:dev.fn)")
    out: dict[str, Any] = {"pci": address.lower()}
    for key in ("vendor", "device", "class"):
        text = attrs.get(key)
        if text is None:
            raise ParseError(TOOL, f"bus/pci/devices/{address}/{key}: missing")
        out[key] = parse_hex(text, f"bus/pci/devices/{address}/{key}")
    numa = (attrs.get("numa_node") or "-1").strip()
    if not re.fullmatch(r"-?\d+", numa):
        raise ParseError(TOOL, f"bus/pci/devices/{address}/numa_node: expected an integer, got {numa!r}")
    out["numa_node"] = int(numa)
    return out


def kind_of(fn: dict[str, Any]) -> str | None:
    """``nvswitch``, ``gpu`` or None (not an NVIDIA GPU or switch)."""
    if fn["vendor"] != NVIDIA_VENDOR:
        return None
    if fn["class"] >> 8 == NVSWITCH_CLASS:
        return "nvswitch"
    if fn["class"] >> 16 == DISPLAY_BASE_CLASS:
        return "gpu"
    return None


def read_pci_root(sysfs_root: str) -> dict[str, Any]:
    """``{status, gpus, nvswitches}`` of the tree under ``sysfs_root``.

    status: ``no_pci_bus`` (no ``bus/pci/devices``: sysfs not mounted or no PCI), ``no_nvidia_devices``
    (PCI present, no NVIDIA GPU or switch) or ``ok``. Malformed attributes raise ParseError.
    """
    base = os.path.join(sysfs_root, "bus", "pci", "devices")
    if not os.path.isdir(base):
        return {"status": "no_pci_bus", "gpus": [], "nvswitches": []}
    gpus: list[dict[str, Any]] = []
    switches: list[dict[str, Any]] = []
    for address in sorted(os.listdir(base)):
        attrs: dict[str, str | None] = {}
        for key in ("vendor", "device", "class", "numa_node"):
            try:
                with open(os.path.join(base, address, key), encoding="ascii", errors="replace") as fh:
                    attrs[key] = fh.read()
            except OSError:
                attrs[key] = None
        fn = parse_function(address, attrs)
        kind = kind_of(fn)
        if kind is None:
            continue
        entry = {"pci": fn["pci"], "vendor": f"0x{fn['vendor']:04x}", "device": f"0x{fn['device']:04x}",
                 "class": f"0x{fn['class']:06x}", "numa_node": fn["numa_node"]}
        (switches if kind == "nvswitch" else gpus).append(entry)
    status = "ok" if gpus or switches else "no_nvidia_devices"
    return {"status": status, "gpus": gpus, "nvswitches": switches}
