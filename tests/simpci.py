#!/usr/bin/env python3
"""Build a simulated sysfs PCI tree from a YAML description (for gpu_facts and molecule/nvidia_gpu).

Usage: ``python tests/simpci.py DESC.yml OUTDIR`` (or :func:`build`). OUTDIR becomes the sysfs root
(pass it as ``sysfs_root``). Layout mirrored (drivers/pci/pci-sysfs.c, drivers/pci/probe.c)::

    devices/pci<dom>:<bus>/<dom:bus:dev.fn>/{vendor,device,class,numa_node}
    bus/pci/devices/<dom:bus:dev.fn> -> ../../../devices/pci<dom>:<bus>/<dom:bus:dev.fn>

Attribute texts are the kernel's: ``0x%04x`` vendor/device, ``0x%06x`` class, ``%d`` numa_node.
Description: ``functions: [{pci: "0000:05:00.0", vendor: "0x10de", device: "0x22a3",
class: "0x068000", numa_node: 0}, ...]`` (all keys but pci required; numa_node defaults to -1).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import yaml


def load(path: str | Path) -> dict[str, Any]:
    return yaml.safe_load(Path(path).read_text()) or {}


def build(desc: dict[str, Any], out: str | Path) -> Path:
    root = Path(out)
    (root / "bus" / "pci" / "devices").mkdir(parents=True, exist_ok=True)
    for fn in desc.get("functions", []):
        addr = str(fn["pci"]).lower()
        dom, bus = addr.split(":")[:2]
        d = root / "devices" / f"pci{dom}:{bus}" / addr
        d.mkdir(parents=True, exist_ok=True)
        (d / "vendor").write_text(f"0x{int(str(fn['vendor']), 16):04x}\n")
        (d / "device").write_text(f"0x{int(str(fn['device']), 16):04x}\n")
        (d / "class").write_text(f"0x{int(str(fn['class']), 16):06x}\n")
        (d / "numa_node").write_text(f"{int(fn.get('numa_node', -1))}\n")
        link = root / "bus" / "pci" / "devices" / addr
        if not link.is_symlink():
            os.symlink(f"../../../devices/pci{dom}:{bus}/{addr}", link)
    return root


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: simpci.py DESC.yml OUTDIR")
    build(load(sys.argv[1]), sys.argv[2])
