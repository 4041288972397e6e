#!/usr/bin/env python3
"""Build a simulated sysfs (+ configfs) tree of an RDMA fabric node from a YAML description.

Usage: ``python tests/simfabric.py DESC.yml OUTDIR`` (or :func:`build` from Python). OUTDIR becomes
the sysfs root (pass it as ``sysfs_root``); configfs is laid at ``OUTDIR/kernel/config`` as on a
host (``/sys/kernel/config``), and the emulated QoS state read by the fake ``mlnx_qos``/``dcb``
binaries (tests/fakebin) is written to ``OUTDIR/qos-state.json``.

Layout mirrored (the kernel's, see drivers/infiniband/core/sysfs.c, net/core/net-sysfs.c,
drivers/infiniband/core/cma_configfs.c, and the MLNX OFED mlx5 ``tc``/``ecn`` attributes):

    devices/pci<dom>:<bus>/<pci>/{numa_node,vendor,device}
    devices/pci<dom>:<bus>/<pci>/infiniband/<dev>/{fw_ver,node_guid,hca_type,board_id,node_type}
    devices/pci<dom>:<bus>/<pci>/infiniband/<dev>/device -> ../../../<pci>
    devices/pci<dom>:<bus>/<pci>/infiniband/<dev>/ports/<n>/{state,phys_state,rate,link_layer}
    devices/.../infiniband/<dev>/ports/<n>/{gids/<i>,gid_attrs/types/<i>,gid_attrs/ndevs/<i>}
    devices/.../infiniband/<dev>/ports/<n>/counters/<name>                  (the PMA counters, ib_core)
    devices/.../infiniband/<dev>/tc/<n>/traffic_class                     (MLNX OFED only)
    devices/pci<dom>:<bus>/<pci>/net/<if>/{dev_port,mtu,operstate,address}
    devices/pci<dom>:<bus>/<pci>/net/<if>/device -> ../../../<pci>
    devices/.../net/<if>/ecn/{roce_np,roce_rp}/enable/<prio>                (mlx5, RoCE netdevs)
    devices/virtual/net/<bond>/...                                          (bond netdevs)
    class/infiniband/<dev> -> ../../devices/.../infiniband/<dev>
    class/net/<if> -> ../../devices/.../net/<if>
    bus/pci/devices/<pci> -> ../../../devices/pci<dom>:<bus>/<pci>
    kernel/config/rdma_cm/<dev>/ports/<n>/{default_roce_mode,default_roce_tos}

Unused GID table entries read as all zeros; their gid_attrs files (which fail with EINVAL on a
host) are simply absent. Description keys (all but ``devices[].name`` optional)::

    devices:
      - name: mlx5_0
        pci: "0000:0c:00.0"      # default 0000:<0x10+i>:00.0
        numa_node: 0
        hca_type: MT4129
        fw_ver: 28.41.1000
        board_id: MT_0000000838
        node_guid: "946d:ae03:00cd:e72c"
        tc: true                 # MLNX OFED traffic_class files (default true)
        ports:
          - port: 1
            link_layer: InfiniBand | Ethernet
            state: ACTIVE         # or DOWN/INIT/ARMED
            phys_state: LinkUp    # or Polling/Disabled/...
            rate: 400             # Gb/s of the port; width 4 by default; speed derived per lane
            width: 4
            speed: NDR            # overrides the derived speed word
            netdev: eth2          # created under the PCI function (or devices/virtual for bond*)
            mtu: 9000
            operstate: up
            ipv4: 10.1.0.11       # RoCE: adds IPv4-mapped GIDs (RoCE v1 at 2, RoCE v2 at 3)
            faults: [port_down, port_polling, rate_degraded, no_roce_v2_gid, pfc_off, ecn_off]
            counters: {port_rcv_data: 1000}   # PMA counter values (each of COUNTERS is laid, default 0)
    configfs: populated | empty | absent   # rdma_cm/<dev> made (as after mkdir), bare, or none
    infiniband_class: true                 # false: no class/infiniband at all (ib_core not loaded)
    qos:                                   # initial emulated backend state per netdev
      eth2: {trust: pcp, pfc: [0, 0, 0, 0, 0, 0, 0, 0]}
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

#: Per-lane Gb/s of each IB speed word (the kernel's ib_speed_enum strings).
LANE_SPEED = {2.5: "SDR", 5.0: "DDR", 10.0: "QDR", 14.0: "FDR", 25.0: "EDR", 50.0: "HDR", 100.0: "NDR"}
STATE_NUM = {"NOP": 0, "DOWN": 1, "INIT": 2, "ARMED": 3, "ACTIVE": 4, "ACTIVE_DEFER": 5}
#: The kernel's phys_state words (phys_state_to_str), indexed by number.
PHYS_KERNEL = [
    "<unknown>",
    "Sleep",
    "Polling",
    "Disabled",
    "PortConfigurationTraining",
    "LinkUp",
    "LinkErrorRecovery",
    "Phy Test",
]
PHYS_NUM = {w.replace(" ", ""): i for i, w in enumerate(PHYS_KERNEL)} | {"Unknown": 0}
FAULTS = {"port_down", "port_polling", "rate_degraded", "no_roce_v2_gid", "pfc_off", "ecn_off"}
GID_TABLE_LEN = 8
#: the PMA port counters ib_core lays under ports/<n>/counters/ (drivers/infiniband/core/sysfs.c
#: pma_table/pma_table_ext), the files node_exporter's infiniband collector reads
COUNTERS = ("excessive_buffer_overrun_errors", "link_downed", "link_error_recovery", "local_link_integrity_errors",
            "port_rcv_constraint_errors", "port_rcv_data", "port_rcv_errors", "port_rcv_packets",
            "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_constraint_errors",
            "port_xmit_data", "port_xmit_discards", "port_xmit_packets", "port_xmit_wait", "symbol_error",
            "VL15_dropped", "multicast_rcv_packets", "multicast_xmit_packets", "unicast_rcv_packets",
            "unicast_xmit_packets")


def _fmt_rate(gbps: float) -> str:
    return str(int(gbps)) if float(gbps).is_integer() else f"{gbps:g}"


def rate_text(rate: float, width: int, speed: str | None = None) -> str:
    """The kernel's rate file: ``"%d%s Gb/sec (%dX%s)"``; SDR has no speed word."""
    if speed is None:
        speed = LANE_SPEED.get(round(rate / width, 4), "")
    word = "" if speed in ("", "SDR") else f" {speed}"
    return f"{_fmt_rate(rate)} Gb/sec ({width}X{word})"


def _v4_mapped(ip: str) -> str:
    a, b, c, d = (int(x) for x in ip.split("."))
    return f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"


def _link_local(seed: int) -> str:
    return f"fe80:0000:0000:0000:{0x0EC4 + seed:04x}:7aff:fe8e:{seed & 0xFFFF:04x}"


class _Tree:
    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, rel: str, content: str) -> None:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content if content.endswith("\n") or content == "" else content + "\n")

    def link(self, rel: str, target_rel: str, literal: str | None = None) -> None:
        """Symlink ``rel`` -> ``target_rel`` (relative link), or to ``literal`` as the kernel spells it."""
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink() or p.exists():
            return
        p.symlink_to(literal or os.path.relpath(self.root / target_rel, p.parent))


def _check_desc(desc: dict[str, Any]) -> None:
    if not isinstance(desc, dict) or not isinstance(desc.get("devices", []), list):
        raise ValueError("description must be a mapping with a 'devices' list")
    for dev in desc.get("devices", []):
        if "name" not in dev:
            raise ValueError(f"device without name: {dev!r}")
        for port in dev.get("ports", [{"port": 1}]):
            bad = set(port.get("faults", [])) - FAULTS
            if bad:
                raise ValueError(f"{dev['name']}: unknown faults {sorted(bad)}; known: {sorted(FAULTS)}")


def build(desc: dict[str, Any], outdir: str | Path) -> Path:
    """Lay the tree for ``desc`` under ``outdir``; returns the sysfs root (``outdir``)."""
    _check_desc(desc)
    root = Path(outdir)
    root.mkdir(parents=True, exist_ok=True)
    t = _Tree(root)
    configfs = desc.get("configfs", "populated")
    qos: dict[str, Any] = {k: dict(v) for k, v in (desc.get("qos") or {}).items()}
    if desc.get("infiniband_class", True):  # absent when ib_core is not loaded
        (root / "class/infiniband").mkdir(parents=True, exist_ok=True)
    for i, dev in enumerate(desc.get("devices", [])):
        name = dev["name"]
        pci = dev.get("pci") or f"0000:{0x10 + i:02x}:00.0"
        dom, bus = pci.split(":")[0], pci.split(":")[1]
        pdir = f"devices/pci{dom}:{bus}/{pci}"
        t.write(f"{pdir}/numa_node", str(dev.get("numa_node", -1)))
        t.write(f"{pdir}/vendor", "0x15b3")
        t.link(f"bus/pci/devices/{pci}", pdir)
        ddir = f"{pdir}/infiniband/{name}"
        for attr, key in (("fw_ver", "fw_ver"), ("hca_type", "hca_type"), ("board_id", "board_id")):
            if dev.get(key) is not None:
                t.write(f"{ddir}/{attr}", str(dev[key]))
        t.write(f"{ddir}/node_guid", str(dev.get("node_guid", f"0000:0000:0000:{i:04x}")))
        t.write(f"{ddir}/node_type", "1: CA")
        t.link(f"{ddir}/device", pdir, literal=f"../../../{pci}")
        t.link(f"class/infiniband/{name}", ddir)
        if configfs in ("populated", "empty"):
            (root / "kernel/config/rdma_cm").mkdir(parents=True, exist_ok=True)
        for port in dev.get("ports", [{"port": 1}]):
            _build_port(t, dev, port, pdir, ddir, configfs, qos, i)
    if qos:
        t.write("qos-state.json", json.dumps(qos, indent=1, sort_keys=True))
    return root


def _build_port(
    t: _Tree,
    dev: dict[str, Any],
    port: dict[str, Any],
    pdir: str,
    ddir: str,
    configfs: str,
    qos: dict[str, Any],
    seed: int,
) -> None:
    n = int(port.get("port", 1))
    faults = set(port.get("faults", []))
    ll = port.get("link_layer", "InfiniBand")
    state = str(port.get("state", "ACTIVE")).upper()
    phys = str(port.get("phys_state", "LinkUp"))
    width = int(port.get("width", 4))
    rate = float(port.get("rate", 400))
    speed = port.get("speed")
    operstate = port.get("operstate", "up")
    if "rate_degraded" in faults:  # a lane pair dropped: 4X -> 2X at the same lane speed
        lane = rate / width
        width = max(1, width // 2)
        rate = lane * width
    if faults & {"port_down", "port_polling"}:
        state, operstate = "DOWN", "down"
        phys = "Polling" if "port_polling" in faults else "Disabled"
        rate, width, speed = 40.0, 4, "QDR"  # what mlx5 reports for a port without link
    prt = f"{ddir}/ports/{n}"
    t.write(f"{prt}/state", f"{STATE_NUM[state]}: {state}")
    t.write(f"{prt}/phys_state", f"{PHYS_NUM[phys]}: {PHYS_KERNEL[PHYS_NUM[phys]]}")
    t.write(f"{prt}/rate", rate_text(rate, width, speed))
    t.write(f"{prt}/link_layer", ll)
    netdev = port.get("netdev")
    gids: dict[int, tuple[str, str, str | None]] = {}
    if ll == "Ethernet":
        ll_gid = _link_local(seed * 16 + n)
        gids[0] = (ll_gid, "IB/RoCE v1", netdev)
        if "no_roce_v2_gid" not in faults:
            gids[1] = (ll_gid, "RoCE v2", netdev)
        if port.get("ipv4"):
            gids[2] = (_v4_mapped(port["ipv4"]), "IB/RoCE v1", netdev)
            if "no_roce_v2_gid" not in faults:
                gids[3] = (_v4_mapped(port["ipv4"]), "RoCE v2", netdev)
    else:
        gids[0] = (_link_local(seed * 16 + n), "IB/RoCE v1", None)
    for idx in range(GID_TABLE_LEN):
        gid, gtype, ndev = gids.get(idx, ("0000:0000:0000:0000:0000:0000:0000:0000", "", None))
        t.write(f"{prt}/gids/{idx}", gid)
        if gtype:
            t.write(f"{prt}/gid_attrs/types/{idx}", gtype)
        if ndev:
            t.write(f"{prt}/gid_attrs/ndevs/{idx}", ndev)
    values = port.get("counters") or {}
    bad = set(values) - set(COUNTERS)
    if bad:
        raise ValueError(f"{dev['name']} port {n}: unknown counters {sorted(bad)}; known: {list(COUNTERS)}")
    for c in COUNTERS:
        t.write(f"{prt}/counters/{c}", str(int(values.get(c, 0))))
    if dev.get("tc", True):
        t.write(f"{ddir}/tc/{n}/traffic_class", "")
    if configfs == "populated":
        cdir = f"kernel/config/rdma_cm/{dev['name']}/ports/{n}"
        t.write(f"{cdir}/default_roce_mode", "RoCE v2")
        t.write(f"{cdir}/default_roce_tos", "0")
    if netdev:
        ndir = f"devices/virtual/net/{netdev}" if netdev.startswith("bond") else f"{pdir}/net/{netdev}"
        t.write(f"{ndir}/dev_port", str(n - 1))
        t.write(f"{ndir}/mtu", str(port.get("mtu", 4092 if ll == "InfiniBand" else 1500)))
        t.write(f"{ndir}/operstate", operstate)
        t.write(f"{ndir}/address", f"0c:42:a1:00:{seed:02x}:{n:02x}")
        t.link(f"class/net/{netdev}", ndir)
        if not netdev.startswith("bond"):
            t.link(f"{ndir}/device", pdir, literal=f"../../../{dev.get('pci') or pdir.rsplit('/', 1)[-1]}")
        if ll == "Ethernet":
            on = "0" if "ecn_off" in faults or port.get("ecn", "off") == "off" else "1"
            for side in ("roce_np", "roce_rp"):
                for prio in range(8):
                    t.write(f"{ndir}/ecn/{side}/enable/{prio}", on)
            state_q = qos.setdefault(netdev, {})
            state_q.setdefault("trust", "pcp")
            state_q.setdefault("pfc", [0] * 8)
            if "pfc_off" in faults:
                state_q["pfc"] = [0] * 8


def bump(root: str | Path, dev: str, port: int, counter: str, by: int) -> int:
    """Move one PMA counter of a built tree by ``by`` (traffic or errors on the port); the new value."""
    if counter not in COUNTERS:
        raise ValueError(f"unknown counter {counter!r}; known: {list(COUNTERS)}")
    p = Path(root) / "class" / "infiniband" / dev / "ports" / str(port) / "counters" / counter
    value = int(p.read_text().strip() or 0) + int(by)
    tmp = p.with_name(f".{counter}.tmp")
    tmp.write_text(f"{value}\n")
    os.replace(tmp, p)
    return value


def load(path: str | Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    return data or {}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__.split("\n\n", 2)[1], file=sys.stderr)
        print("usage: simfabric.py DESC.yml OUTDIR", file=sys.stderr)
        return 2
    try:
        root = build(load(argv[0]), argv[1])
    except (OSError, ValueError, KeyError, yaml.YAMLError) as exc:
        print(f"simfabric: {exc}", file=sys.stderr)
        return 1
    print(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
