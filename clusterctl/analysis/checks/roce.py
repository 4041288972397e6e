"""Judge what RoCE v2 needs beyond a port being up: a RoCE v2 GID with an IPv4 address on every
RDMA port NCCL will use, and the netdev MTU the fabric is built for.

Sources: ``sysfs-ib`` (ports carry ``roce_v2_gid_index`` and ``netdev_mtu``), ``show_gids``
(one row per GID with ``roce_version`` and ``ipv4``) and ``ip-link`` (``mtu`` per interface).

Expectations:

``fabric``
    only ``roce`` is judged here (InfiniBand has no GID types to check; ``ethernet`` uses sockets).
``mtu``
    the netdev MTU of the RoCE interfaces (inventory ``mtu``); default: not checked. A RoCE netdev
    below it cannot carry 4096-byte RoCE frames (path MTU falls to 1024 at MTU 1500).
``frontend_nics`` / ``exclude_devices``
    device or netdev names never judged (front-end and storage NICs).
``rdma_netdevs``
    netdevs whose MTU ``ip-link`` evidence is judged against ``mtu``; default: none (the sysfs
    check already knows which netdev belongs to which RDMA port).

Findings: ``roce_v2_gid`` (critical: NCCL_IB_GID_INDEX has nothing to point at, RDMA CM
connections fail) and ``mtu`` (``mtu.below_expected`` in severity.yml: failed, RoCE path MTU falls to 1024 and
jobs tuned for 4096 fail or crawl); ``ip-link`` also reports a fabric netdev without carrier, and (``netdev_counters``)
any link whose ``ip -s [-s] link`` counters show receive loss or damaged frames above :data:`COUNTER_MIN` and a share
of the packets received (:data:`RX_LOSS_SHARE`, :data:`RX_DAMAGE_SHARE`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from clusterctl.analysis.model import Finding, check
from clusterctl.analysis.severity import sev as rule_sev

DEFAULTS: dict[str, Any] = {
    "rdma_netdevs": [],  # judge no ip-link interface unless named: sysfs-ib maps netdevs to ports itself
}


def _excluded(exp: Mapping[str, Any]) -> set[str]:
    return {str(x) for x in [*(exp.get("frontend_nics") or []), *(exp.get("exclude_devices") or [])]}


def _mtu_finding(host: str, subject: str, netdev: str, mtu: Any, exp: Mapping[str, Any]) -> Finding | None:
    want = exp.get("mtu")
    if not isinstance(want, int) or not isinstance(mtu, int) or mtu >= want:
        return None
    return Finding(host, "mtu", rule_sev("mtu.below_expected"), subject,
                   f"{netdev} MTU {mtu} below the fabric's {want} (RoCE path MTU falls to 1024 at MTU 1500)")


@check("sysfs-ib")
def sysfs_roce(host: str, data: Any, exp: Mapping[str, Any]) -> Iterable[Finding]:
    if exp.get("fabric") != "roce":
        return []
    skip = _excluded(exp)
    out: list[Finding] = []
    for dev in data.get("devices", []):
        for port in dev.get("ports", []):
            netdev = port.get("netdev")
            if dev["name"] in skip or (netdev and netdev in skip) or port.get("link_layer") != "Ethernet":
                continue
            if port.get("state") != "ACTIVE":
                continue  # ports.py reports the port itself
            subject = f"{host}/{dev['name']}/{port['port']}"
            if port.get("roce_v2_gid_index") is None:
                out.append(Finding(host, "roce_v2_gid", rule_sev("roce_v2_gid.missing_on_fabric"), subject,
                                   f"no RoCE v2 GID with an IPv4 address on {netdev or 'its netdev'}: "
                                   "give the netdev its fabric address"))
            f = _mtu_finding(host, subject, netdev or dev["name"], port.get("netdev_mtu"), exp)
            if f:
                out.append(f)
    return out


def _routable_v2(g: Mapping[str, Any]) -> bool:
    """A RoCE v2 GID NCCL can use across subnets (:func:`_routable`)."""
    return g.get("roce_version") == 2 and _routable(g)


def _routable(g: Mapping[str, Any]) -> bool:
    """A GID with an address routed across subnets: IPv4-mapped with its address, or a global IPv6
    (not link-local fe80::/10; an IPv6-only fabric uses those with NCCL_IB_ADDR_FAMILY=AF_INET6)."""
    if g.get("ipv4"):
        return True
    gid = str(g.get("gid") or "").lower()
    return bool(gid) and not gid.startswith("fe8") and not gid.startswith("0000:0000:0000:0000:0000:ffff") \
        and gid.strip("0:") != ""


@check("show_gids")
def show_gids_roce(host: str, data: Any, exp: Mapping[str, Any]) -> Iterable[Finding]:
    """Every RoCE port needs a routable v2 GID. Fabric ``roce``: a port without one is critical.
    No fabric given: the capture states RoCE when some port has a routable v2 GID; then each other
    port with a netdev (Ethernet) that has none is a warning (``roce_v2_gid.missing``: it may be a
    port that is down, which show_gids cannot tell); IB ports (no netdev) are not judged."""
    fabric = exp.get("fabric")
    if fabric is None and any(_routable_v2(g) for g in data.get("gids", [])):
        return _inferred_roce(host, data, exp)
    if fabric != "roce":
        return []
    skip = _excluded(exp)
    ports: dict[tuple[str, int], dict[str, Any]] = {}
    for g in data.get("gids", []):
        key = (g["device"], g["port"])
        p = ports.setdefault(key, {"netdev": g.get("netdev"), "v2": False, "unversioned": False, "v1": False})
        p["netdev"] = p["netdev"] or g.get("netdev")
        if _routable_v2(g):
            p["v2"] = True
        elif _routable(g):
            # a routable address whose RoCE version the table does not say (an old show_gids/kernel: no VER), or v1
            p["unversioned" if g.get("roce_version") is None else "v1"] = True
    out: list[Finding] = []
    if not ports and not data.get("truncated"):
        out.append(Finding(host, "roce_v2_gid", rule_sev("roce_v2_gid.missing_on_fabric"), host,
                           "show_gids lists no GID at all (n_gids_found=0): no RDMA netdev has an address"))
    # the last device of a paste cut inside the table may have lost its v2 rows: not judged
    cut = set(data.get("cut_devices") or []) | ({list(ports)[-1][0]} if ports and data.get("truncated") else set())
    for (dev, port), p in sorted(ports.items()):
        if dev in skip or (p["netdev"] and p["netdev"] in skip) or p["v2"] or dev in cut or p["unversioned"]:
            continue  # (a routable GID of a version the table does not print may be v2: not judged)
        if p["v1"] and dev.startswith("mlx4"):
            out.append(Finding(host, "roce_v2_gid", rule_sev("roce_v2_gid.v1_generation"), f"{host}/{dev}/{port}",
                               f"show_gids lists routable RoCE v1 GIDs only on {p['netdev'] or dev}: a ConnectX-3 "
                               "(mlx4) port, whose generation runs RoCE v1; jobs address it by its v1 GID index"))
            continue
        out.append(Finding(host, "roce_v2_gid", rule_sev("roce_v2_gid.missing_on_fabric"), f"{host}/{dev}/{port}",
                           f"show_gids lists no routable RoCE v2 GID (IPv4 or global IPv6) on {p['netdev'] or dev}"))
    return out


#: a netdev of an RDMA-capable NIC port: the ``np<N>`` phys_port_name suffix mlx5/bnxt/irdma give their
#: uplinks (``ens4np0``, ``enp83s0f0np0``); IPoIB interfaces are judged by link type
_RDMA_NETDEV = re.compile(r"np\d{1,2}$")


def _fabric_netdev(link: Mapping[str, Any], names: set[str], skip: set[str], fabric: str) -> bool:
    name = str(link.get("ifname") or "")
    if name in skip or link.get("kind") in ("vlan", "macvlan", "veth", "bridge"):
        return False
    if name in names:
        return True
    if names:
        return False  # the inventory named its RDMA netdevs: only those
    if fabric == "roce":
        return bool(_RDMA_NETDEV.search(name))
    return fabric == "infiniband" and link.get("link_type") == "infiniband"


def _inferred_roce(host: str, data: Any, exp: Mapping[str, Any]) -> list[Finding]:
    skip = _excluded(exp)
    ports: dict[tuple[str, int], dict[str, Any]] = {}
    for g in data.get("gids", []):
        p = ports.setdefault((g["device"], g["port"]), {"netdev": None, "v2": False})
        p["netdev"] = p["netdev"] or g.get("netdev")
        p["v2"] = p["v2"] or _routable_v2(g)
    cut = set(data.get("cut_devices") or [])
    rows = list(data.get("gids") or [])
    if rows and data.get("truncated") and _routable(rows[-1]) and rows[-1].get("roce_version") == 1:
        # the paste ends on a routable v1 row without its trailer: show_gids prints the same address's v2 row
        # right after it, so the last device's v2 GID is the part cut off, not missing
        cut.add(rows[-1]["device"])
    good = sorted(d for (d, _p), v in ports.items() if v["v2"])
    return [Finding(host, "roce_v2_gid", rule_sev("roce_v2_gid.missing"), f"{host}/{dev}/{port}",
                    f"show_gids lists no routable RoCE v2 GID on {p['netdev']} while {', '.join(good)} have one: "
                    "RoCE cannot use this port (or it is down)")
            for (dev, port), p in sorted(ports.items())
            if p["netdev"] and not p["v2"] and dev not in cut and dev not in skip and p["netdev"] not in skip]


#: a link's receive counters (``ip -s [-s] link``) judged only above both a count and a share of what it
#: received (counters run since boot; a few are history, not a fault)
COUNTER_MIN = 100
#: frames the NIC dropped for want of a free receive buffer (missed, overrun, fifo) per frame received
RX_LOSS_SHARE = 1e-4
#: frames received damaged (CRC, framing, length) per frame received: a clean link has next to none
RX_DAMAGE_SHARE = 1e-6


def _counter_findings(host: str, link: Mapping[str, Any]) -> list[Finding]:
    """Receive loss and damaged frames in an ``ip -s [-s] link`` entry's counters."""
    rx = (link.get("stats") or {}).get("rx") or {}
    packets = rx.get("packets") or 0
    name = str(link.get("ifname") or "")
    if not packets or link.get("link_type") == "loopback":
        return []
    lost = {k: rx[k] for k in ("missed", "overrun", "fifo") if rx.get(k)}
    damaged = {k: rx[k] for k in ("crc", "frame", "length") if rx.get(k)} if "crc" in rx else \
        ({"errors": rx["errors"]} if rx.get("errors") else {})
    out = []
    for rule, counts, share, what, todo in (
            ("netdev_counters.rx_loss", lost, RX_LOSS_SHARE, "dropped received frames for want of receive buffers",
             "the host does not drain its receive rings under load; check ring sizes (ethtool -g), IRQ/RSS placement "
             "and CPU"),
            ("netdev_counters.rx_errors", damaged, RX_DAMAGE_SHARE, "received damaged frames",
             "check the cable or transceiver and the peer port; clear the counters and watch whether they grow")):
        n = sum(counts.values())
        if n >= COUNTER_MIN and n / packets >= share:
            out.append(Finding(host, "netdev_counters", rule_sev(rule), f"{host}/{name}",
                               f"{name} {what} (" + ", ".join(f"{k} {v}" for k, v in counts.items())
                               + f" of {packets} packets, {n / packets:.4%}): {todo}"))
    return out


def _physical(link: Mapping[str, Any]) -> bool:
    """A hardware netdev: an ether/infiniband link without a parent or peer (``vlan2@bond0``, a veth pair's
    ``vetha@vethb``: virtual), or (its ``link/`` line not pasted) one without a parent whose queueing discipline
    is ``mq``, which the kernel attaches only to multi-queue devices."""
    if link.get("parent"):
        return False
    if link.get("link_type") is not None:
        return link.get("link_type") in ("ether", "infiniband")
    return link.get("qdisc") == "mq"


def _bond_without_carrier(link: Mapping[str, Any]) -> bool:
    """A bond master (the MASTER flag, or ``bond`` in ``ip -d``'s details) administratively up without carrier."""
    bond = "MASTER" in (link.get("flags") or ()) or link.get("kind") == "bond"
    return bond and link.get("carrier") is False and "UP" in (link.get("flags") or ())


@check("ip-link")
def ip_link_mtu(host: str, data: Any, exp: Mapping[str, Any]) -> Iterable[Finding]:
    """MTU and carrier of the fabric netdevs: those named in ``rdma_netdevs``, else (fabric ``roce``)
    netdevs named like an RDMA NIC uplink (``np<N>`` suffix), (fabric ``infiniband``) IPoIB links."""
    names = set(exp.get("rdma_netdevs") or DEFAULTS["rdma_netdevs"])
    fabric = str(exp.get("fabric") or "")
    skip = _excluded(exp)
    out: list[Finding] = []
    links = list(data.get("links", []))
    # the operator singled these netdevs out (`ip a s X`, or lines picked from a listing: no loopback,
    # which every whole-host listing starts with)
    selected = len(links) == 1 or not any(
        link.get("ifname") == "lo" or "LOOPBACK" in (link.get("flags") or ()) for link in links)
    for link in links:
        if link.get("stats") and str(link.get("ifname") or "") not in skip:
            out.extend(_counter_findings(host, link))
        if link.get("vfs_assigned") and "UP" not in (link.get("flags") or ()) \
                and str(link.get("ifname") or "") not in skip:
            # an SR-IOV physical function left administratively down under VFs given a MAC (handed out): every VF
            # under it (link-state auto) is down; VFs just created (all-zero MACs) are not in use yet
            out.append(Finding(host, "netdev_link", rule_sev("netdev_link.sriov_pf_down"), f"{host}/{link['ifname']}",
                               f"{link['ifname']} carries {link['vfs_assigned']} SR-IOV virtual function(s) with a MAC "
                               "but is "
                               f"administratively down (no UP flag, state {link.get('state')}): the VFs given to pods "
                               "or VMs have no link; bring the PF up (ip link set dev ... up)"))
            continue
        if not _fabric_netdev(link, names, skip, fabric) and _bond_without_carrier(link) \
                and str(link.get("ifname") or "") not in skip:
            out.append(Finding(host, "netdev_link", rule_sev("netdev_link.bond_no_carrier"),
                               f"{host}/{link['ifname']}",
                               f"bond {link['ifname']} is up but has no carrier (NO-CARRIER, state "
                               f"{link.get('state')}): none of its members has a link; check which ports should be "
                               "enslaved and their cables"))
            continue
        if not _fabric_netdev(link, names, skip, fabric):
            # a physical netdev the operator singled out that is administratively up without carrier:
            # its cable, transceiver or peer is down
            # (or, in a whole-host listing, a member of a bond: enslaved on purpose, so cabled on purpose; a spare
            # port up without carrier is common there and not judged)
            member = bool(link.get("master")) and "SLAVE" in (link.get("flags") or ())
            if ((selected or member) and link.get("carrier") is False and "UP" in (link.get("flags") or ())
                    and _physical(link) and not link.get("kind")
                    and str(link.get("ifname") or "") not in skip):
                leg = f" (a member of {link['master']}: the bond runs without this leg)" if member else ""
                out.append(Finding(host, "netdev_link", rule_sev("netdev_link.no_carrier"),
                                   f"{host}/{link['ifname']}",
                                   f"{link['ifname']} is up but has no carrier (NO-CARRIER, state "
                                   f"{link.get('state')}){leg}: check the cable, transceiver and the peer port"))
            continue
        subject = f"{host}/{link['ifname']}"
        f = _mtu_finding(host, subject, link["ifname"], link.get("mtu"), exp)
        if f:
            out.append(f)
        if link.get("link_type") == "infiniband" and "UP" not in (link.get("flags") or ()):
            # an IPoIB netdev never brought up (no UP flag, qdisc noop): its state does not gate RDMA, and an
            # InfiniBand port under it comes up without it (UP without carrier is the port down: below)
            out.append(Finding(host, "rdma_netdev_link", rule_sev("rdma_netdev_link.ipoib_down"), subject,
                               f"{link['ifname']} (IPoIB) is administratively down (state {link.get('state')}): "
                               "IP over InfiniBand is not configured; RDMA does not use this netdev"))
        elif link.get("carrier") is False or link.get("state") == "DOWN":
            out.append(Finding(host, "rdma_netdev_link", rule_sev("rdma_netdev_link.down"), subject,
                               f"{link['ifname']} {'has no carrier' if link.get('carrier') is False else 'is down'} "
                               f"(state {link.get('state')}): the fabric port is down"))
    return out
