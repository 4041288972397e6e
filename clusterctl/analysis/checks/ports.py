"""Judge RDMA port state from any source of the shared port shape (ibstat, ibstatus, sysfs-ib,
ibv_devinfo): ``{"devices": [{"name", "ca_type", "ports": [{"port", "state", "phys_state",
"rate_gbps", "link_layer", ...}]}], "errors": [...]}``.

Expectations (all optional, from the inventory):

``exclude_devices``
    device names never judged (e.g. the management NIC ``mlx5_an0``/``mlx5_bond_0``); default none.
``fabric``
    ``infiniband``, ``roce`` or ``ethernet``: the link layer every judged port must have
    (InfiniBand for ``infiniband``, Ethernet for the other two). Default: not checked.
``ib_rate_gbps``
    the expected port rate in Gb/s, a number for every judged port or a mapping by link layer
    (``{"infiniband": 400, "ethernet": 200}``). Default (:data:`DEFAULT_RATE`): per link layer and
    HCA model (``ca_type``) the highest rate any ACTIVE port of that model and link layer on the
    same host runs at, i.e. a port that trained below its siblings (HDR port at 100 EDR) is
    flagged without guessing the fabric generation; with no sibling nothing is flagged. A source that
    names no model (``ibstatus``) groups by the vendor prefix of the port's GID/GUID instead.
``rdma_devices_per_node``
    how many HCAs must have an ACTIVE/LinkUp port (of the ``fabric`` link layer when given);
    default :data:`DEFAULT_RDMA_DEVICES` (not checked).

Findings: port not ACTIVE or phys_state not LinkUp (critical: a Down/Polling/Disabled/Init rail;
a source that does not show phys_state, plain ``ibv_devinfo``, is judged on state alone), rate
below expected (critical when under half, else warning), link layer mismatch (critical when the
host has no port of the fabric's link layer; an info note for the other ports of a host that has
fabric ports, e.g. its front-end Ethernet NIC), too few active HCAs (critical),
and tool errors such as ibstat's ``ibpanic`` naming a device it could not read (critical).
Subjects are ``host/<device>/<port>`` (``host/<device>`` for device errors, ``host`` for counts).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clusterctl.analysis.model import NEEDS, NOTHING, CheckResult, Finding, Severity, check
from clusterctl.analysis.severity import sev as rule_sev

#: None = no fixed rate: compare each port with its siblings of the same HCA model and link layer.
DEFAULT_RATE: float | Mapping[str, float] | None = None
#: None = no HCA count requirement unless the inventory sets ``rdma_devices_per_node``.
DEFAULT_RDMA_DEVICES: int | None = None
#: a port below this fraction of the expected rate is critical (e.g. 4X trained as 1X, or
#: HDR running at EDR/2); a milder shortfall is a warning.
RATE_CRITICAL_FRACTION = 0.5

_FABRIC_LINK_LAYER = {"infiniband": "InfiniBand", "ib": "InfiniBand", "roce": "Ethernet",
                      "ethernet": "Ethernet", "eth": "Ethernet"}


def _is_up(port: Mapping[str, Any]) -> bool:
    return port.get("state") == "ACTIVE" and port.get("phys_state") in ("LinkUp", None)


def _expected_rate(exp: Any, link_layer: str | None) -> float | None:
    if exp is None:
        return None
    if type(exp) is float or type(exp) is int:  # the common spec value: no Mapping test (an ABC's, slow)
        return float(exp)
    if isinstance(exp, Mapping):
        for key, val in exp.items():
            if _FABRIC_LINK_LAYER.get(str(key).lower(), str(key)) == link_layer:
                return float(val)
        return None
    return float(exp)


def _nic_key(dev: Mapping[str, Any], port: Mapping[str, Any]) -> tuple[Any, Any, str | None, Any]:
    """The sibling group of a port: (HCA model, link layer, vendor prefix, subnet). A source that names no model
    (``ibstatus``) gives the first three bytes of the port's interface id (its default GID's last 64 bits: the
    port GUID, or the MAC a RoCE GID is built from) instead, so a front-end NIC of another maker (a VM's
    ``02:16:3e`` virtual NIC beside BlueField rails) is not compared with the rails. An InfiniBand port's subnet is
    its SM's LID: one subnet has one master SM, and another subnet's switches may run another speed (EDR ports
    beside FDR ones of an older fabric). The price: where each rail is a subnet of its own, a rail trained slower than
    the others is not caught by its siblings; ``ib_rate_gbps`` in the inventory judges every port against the rate."""
    sm = port.get("sm_lid") if port.get("link_layer") == "InfiniBand" and port.get("sm_lid") else None
    if dev.get("ca_type") is not None:
        return dev.get("ca_type"), port.get("link_layer"), None, sm
    ident = str(port.get("default_gid") or port.get("port_guid") or dev.get("node_guid") or "")
    hexes = ident.replace(":", "").lower().removeprefix("0x")
    vendor = hexes[-16:-10] if len(hexes) >= 16 else None
    return None, port.get("link_layer"), vendor, sm


def judge_ports(host: str, data: Mapping[str, Any], expectations: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    exclude = set(expectations.get("exclude_devices") or ())
    fabric = expectations.get("fabric")
    want_ll = _FABRIC_LINK_LAYER.get(str(fabric).lower()) if fabric else None
    if fabric and want_ll is None:
        raise ValueError(f"expectation fabric={fabric!r}: use infiniband, roce or ethernet")
    rate_exp = expectations.get("ib_rate_gbps", DEFAULT_RATE)
    want_devices = expectations.get("rdma_devices_per_node", DEFAULT_RDMA_DEVICES)

    def add(check_name: str, severity: Severity, subject: str, message: str) -> None:
        res.findings.append(Finding(host, check_name, severity, subject, message))

    if data.get("aborted") and not data.get("devices"):
        # ibstat stopped at its first device (ibpanic) and listed none: no port was read (a device it cannot open,
        # such as a VM's Ethernet VF, ends the whole run)
        errs = data.get("errors") or [{}]
        add("coverage", rule_sev("coverage.nothing_judgeable"), host,
            f"{NOTHING}the port tool stopped at its first error and listed no device: "
            f"{str(errs[0].get('message'))[:160]} (run it per device: ibstat <ca>, or ibstatus)")
        return res
    for err in data.get("errors") or ():
        dev = err.get("device")
        if dev in exclude:
            continue
        add("ib_tool_error", rule_sev("ib_tool_error.error_line"), f"{host}/{dev}" if dev else host,
            f"port tool could not read {dev or 'a device'}: {err.get('message')}")

    devices = [d for d in data.get("devices") or () if d.get("name") not in exclude]
    # Sibling rate per (ca_type, link layer) among active ports: the default expectation.
    sibling: dict[tuple[Any, Any, str | None, Any], float] = {}
    for d in devices:
        for p in d.get("ports") or ():
            if _is_up(p) and p.get("rate_gbps") is not None:
                key = _nic_key(d, p)
                sibling[key] = max(sibling.get(key, 0.0), float(p["rate_gbps"]))

    # ports of another link layer than the fabric's are front-end/storage NICs when the host also
    # has ports of the fabric's link layer (an H100 node: 8 IB rails + an Ethernet ConnectX-6 Dx):
    # noted, not judged. With no port of the fabric's link layer at all, every port is a mismatch.
    if want_ll is None:
        # no fabric in the spec: a host whose active ports are all InfiniBand has an IB fabric (issue 29
        # item 5: the expectation inferred from the capture); its Ethernet ports are the front-end's
        up_lls = {p.get("link_layer") for d in devices for p in d.get("ports") or () if _is_up(p)}
        if up_lls == {"InfiniBand"}:
            want_ll, fabric = "InfiniBand", "infiniband (the host's active ports)"
    has_fabric_port = any(p.get("link_layer") in (want_ll, None) for d in devices for p in d.get("ports") or ())
    active_devices = 0
    any_up = any(_is_up(p) for d in devices for p in d.get("ports") or ())
    for d in devices:
        dev_active = False
        for p in d.get("ports") or ():
            subject = f"{host}/{d['name']}/{p['port']}"
            ll = p.get("link_layer")
            if want_ll and ll and ll != want_ll:
                if has_fabric_port:
                    add("ib_link_layer", rule_sev("ib_link_layer.other_port"), subject,
                        f"link layer {ll}, not a {fabric} fabric port: not judged ({p.get('state')})")
                    continue
                add("ib_link_layer", rule_sev("ib_link_layer.mismatch"), subject,
                    f"link layer {ll}, expected {want_ll} for fabric {fabric}")
            if (not _is_up(p) and p.get("state") == "DOWN" and p.get("phys_state") == "Disabled" and any_up
                    and _virtual_function(d)):
                # SR-IOV: a VF's port follows its vport, down and disabled until a VM or pod takes the VF into use
                # (beside ports that are up; a VF shown alone, or one stuck in INIT, is judged as any port)
                add("ib_port_state", rule_sev("ib_port_state.vf_unused"), subject,
                    f"{d['name']} ({d.get('ca_type')}, a virtual function) port {p['port']} "
                    f"{p.get('state')}/{p.get('phys_state')}: a VF no one uses is down by design; not judged")
                continue
            if not _is_up(p):
                add("ib_port_state", rule_sev("ib_port_state.down"), subject,
                    f"{d['name']} port {p['port']} {p.get('state')}/{p.get('phys_state')}, expected ACTIVE/LinkUp")
                continue
            if not want_ll or ll in (want_ll, None):  # a port tool too old to print the link layer (OFED 1.x)
                dev_active = True
            rate = p.get("rate_gbps")
            if rate is None:
                continue
            expected = _expected_rate(rate_exp, ll)
            by_sibling = expected is None and rate_exp is None
            if by_sibling:
                expected = sibling.get(_nic_key(d, p))
            if expected is not None and float(rate) < expected:
                # where the expectation came from: worded only for a port it flags
                source = (f"the other {d.get('ca_type') or ''} {ll} ports".replace("  ", " ") if by_sibling
                          else "expected")
                sev = rule_sev("ib_port_rate.far_below" if float(rate) < RATE_CRITICAL_FRACTION * expected
                               else "ib_port_rate.below")
                add("ib_port_rate", sev, subject,
                    f"rate {float(rate):g} Gb/s below {expected:g} Gb/s ({source})")
        if dev_active:
            active_devices += 1

    if devices and not data.get("errors") and not any(d.get("ports") for d in devices):
        # a device list with no port section (a paste cut inside the capabilities): no state, rate or
        # link layer was read, so nothing here says healthy (severity.yml coverage.nothing_judgeable)
        cut = " (the capture is cut)" if data.get("truncated") or data.get("cut") else ""
        add("coverage", rule_sev("coverage.nothing_judgeable"), host,
            f"{NOTHING}{len(devices)} device(s) ({', '.join(str(d.get('name')) for d in devices[:4])}) listed "
            f"without a port section{cut}: no port state, rate or link layer read")
    if not devices and not data.get("errors") and want_devices is None:
        # the tool ran and found no RDMA device: a host without HCAs, or one whose driver lost them
        said = f" ({data['message']})" if data.get("message") else ""
        add("ib_hca_count", rule_sev("ib_hca_count.cannot_judge"), host,
            f"{NEEDS}rdma_devices_per_node (the port tool found no RDMA device{said}; the capture does not say "
            "whether this host should have one)")
    if want_devices is not None and active_devices < int(want_devices):
        what = f" {want_ll}" if want_ll else ""
        add("ib_hca_count", rule_sev("ib_hca_count.below"), host,
            f"{active_devices} HCAs with an ACTIVE{what} port, expected {int(want_devices)}"
            + (f" (excluding {', '.join(sorted(exclude))})" if exclude else ""))
    return res


#: the virtual functions' device ids (decimal, as ibstat's ``CA type: MT4124`` and ibv_devinfo's vendor_part_id
#: print them) of NVIDIA/Mellanox adapters: ConnectX-3 VF 0x1004, Connect-IB VF 0x1012, ConnectX-4 0x1014,
#: ConnectX-4 Lx 0x1016, ConnectX-5 0x1018, ConnectX-5 Ex 0x101a, ConnectX-6 0x101c, mlx5 Gen VF (ConnectX-6 Dx
#: and later) 0x101e (the PCI ID repository)
VF_CA_TYPES = frozenset(f"MT{n}" for n in (0x1004, 0x1012, 0x1014, 0x1016, 0x1018, 0x101A, 0x101C, 0x101E))


def _virtual_function(dev: Mapping[str, Any]) -> bool:
    return str(dev.get("ca_type") or "").strip().upper() in VF_CA_TYPES


for _kind in ("ibstat", "ibstatus", "sysfs-ib", "ibv_devinfo"):
    check(_kind)(judge_ports)


@check("ibdev2netdev")
def judge_ibdev2netdev(host: str, data: Mapping[str, Any], expectations: Mapping[str, Any]) -> CheckResult:
    """``ibdev2netdev`` shows each RDMA port's netdev and that netdev's link (Up/Down).

    On a RoCE or Ethernet fabric, or when the fabric is not given, the netdev is the data path:
    a Down one is a down rail (critical, ``host/<device>/<port>``). On an InfiniBand fabric the
    netdev is IPoIB, whose state does not gate RDMA: a Down one is an info note (the IB port
    state comes from ibstat/ibv_devinfo/sysfs). With no fabric given, an IPoIB netdev (``ib0``,
    ``ibs108``, ``ibp12s0``) Down is a down rail only where another IPoIB netdev of the host is Up
    (IPoIB is in use there); when none is Up, IPoIB is not configured on the host and its netdevs'
    state says nothing of the IB ports (a note, rule ``rdma_netdev_link.ipoib_unused``). iproute2's ``rdma link``,
    read under this KIND, shows the RDMA ports' own states: judged as ibstat's ports are (:func:`judge_ports`).
    """
    if data.get("rdma_link"):
        return judge_ports(host, data, expectations)
    res = CheckResult()
    exclude = {str(x) for x in [*(expectations.get("exclude_devices") or []),
                                *(expectations.get("frontend_nics") or [])]}
    ib = str(expectations.get("fabric") or "").lower() in ("infiniband", "ib")
    mappings = [m for m in data.get("mappings") or ()
                if m.get("device") not in exclude and m.get("netdev") not in exclude]
    ipoib_up = any(_IPOIB.match(str(m.get("netdev") or "")) and _is_up_link(m) for m in mappings)
    for m in mappings:
        link = str(m.get("link") or "")
        if _is_up_link(m):
            continue
        where = f"{m.get('netdev')} ({link}) of {m.get('device')} port {m.get('port')}"
        if _virtual_function(m) and any(map(_is_up_link, mappings)):
            # 'ibdev2netdev -v' names the device id: an SR-IOV VF's netdev is down until a VM or pod takes it
            rule, why = "rdma_netdev_link.vf_unused", f" ({m.get('ca_type')}, a virtual function): down by design"
        elif ib:
            rule, why = "rdma_netdev_link.ipoib_down", " (IPoIB, not judged on an InfiniBand fabric)"
        elif not expectations.get("fabric") and _IPOIB.match(str(m.get("netdev") or "")) and not ipoib_up:
            rule, why = ("rdma_netdev_link.ipoib_unused",
                         " (IPoIB; no IPoIB interface of this host is up: IPoIB is not in use here, and the IB "
                         "port's own state is not in this capture: ibstat or ibv_devinfo shows it)")
        else:
            rule, why = "rdma_netdev_link.rail_down", ", expected Up"
        res.findings.append(Finding(host, "rdma_netdev_link", rule_sev(rule),
                                    f"{host}/{m.get('device')}/{m.get('port')}", where + why))
    return res


#: IPoIB netdev names: the kernel's ``ib0``/``ib1.8001`` and systemd's predictable ``ibs108``, ``ibp12s0``
_IPOIB = re.compile(r"ib(?:\d|[ps]\d)")


def _is_up_link(m: Mapping[str, Any]) -> bool:
    return str(m.get("link") or "").lower().startswith("up")
