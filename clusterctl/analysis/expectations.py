"""The expectations a run is judged against: the inventory's cluster spec over documented defaults.

Keys are the cluster-spec keys of ``group_vars/all`` (``fabric``, ``rdma_devices_per_node``,
``ib_rate_gbps``, ``pfc_priority``, ``roce_dscp``, ``mtu``, ``frontend_nics``, ``gpus_per_node``,
``gpu_model``, ``nccl_busbw_floor_GBps``, ...) plus the analysis' own knobs below. Check modules
may publish their defaults as a module-level ``DEFAULTS`` dict (each value with a comment saying
where the number comes from); :func:`defaults` merges them, and a check reading a key it did not
get still falls back to its own default.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clusterctl.analysis import stragglers

#: Knobs of the cross-host analysis (engine, stragglers, pairwise blame).
ANALYSIS_DEFAULTS: dict[str, Any] = {
    # fraction below the peers' median that makes a straggler; see stragglers.py for why 25 %
    "straggler_threshold": stragglers.DEFAULT_THRESHOLD,
    "straggler_z_min": stragglers.DEFAULT_Z_MIN,
    "straggler_min_peers": stragglers.DEFAULT_MIN_PEERS,
    # severity given to a straggler finding (a slow node is not broken, but drags every job)
    "straggler_severity": "warning",
    # a pair test below this fraction of the median pair result counts as a bad pair
    "pair_bad_fraction": 0.75,
}


def defaults() -> dict[str, Any]:
    """Analysis knobs plus every check module's ``DEFAULTS`` (checks loaded first)."""
    import sys

    from clusterctl.analysis import checks

    checks.load_all()
    out = dict(ANALYSIS_DEFAULTS)
    prefix = checks.__name__ + "."
    for name, mod in sorted(sys.modules.items()):
        if name.startswith(prefix) and isinstance(getattr(mod, "DEFAULTS", None), dict):
            out.update(mod.DEFAULTS)
    return out


def load_spec(inventory: Path) -> dict[str, Any]:
    """The cluster spec of an inventory, read by :mod:`clusterctl.inventory` (Ansible's precedence).

    Not validated here: a command runs the validator first.
    """
    from clusterctl.inventory import read_spec

    return read_spec(inventory)


def build(spec: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Expectations: defaults overlaid with ``spec`` (keys of the cluster spec win)."""
    out = defaults()
    if spec:
        out.update(spec)
    # the front-end/storage NICs of the spec are not GPU rails: the port checks skip them
    if out.get("frontend_nics") and "exclude_devices" not in out:
        out["exclude_devices"] = list(out["frontend_nics"])
    return out


def from_inventory(inventory: Path | None) -> dict[str, Any]:
    """Expectations for an inventory folder (or only the defaults when ``inventory`` is None)."""
    return build(load_spec(inventory) if inventory is not None else None)


#: KINDs whose parsed data lists RDMA ports with their active rate (``devices`` -> ``ports``)
PORT_RATE_KINDS = frozenset({"ibstat", "ibstatus", "ibv_devinfo", "sysfs-ib"})
_PERFTEST_LINK_LAYER = {"IB": "InfiniBand", "Ethernet": "Ethernet", "ETH": "Ethernet"}


def ib_line_rate_from_ports(exp: Mapping[str, Any], bw: Mapping[str, Any],
                            ports: list[tuple[str, Mapping[str, Any]]]) -> Mapping[str, Any]:
    """The line rate an ``ib_write_bw`` result of a host is judged against when the inventory states
    none (``ib_rate_gbps``): the active rate of the port the test used, as the same host folder's
    port evidence (``ports``: (file, parsed data) of a :data:`PORT_RATE_KINDS` KIND) shows it. The
    port is perftest's device (``-d``) and ``ib_port``; when the test names no device the port
    evidence lists (``ib0``, loopback), the one rate every active port of the test's link layer
    runs at. ``exp`` unchanged when the inventory gives a rate, or the evidence names none, or the
    named device is listed without an active rate (the port check reports that port)."""
    if exp.get("ib_rate_gbps") is not None:
        return exp
    device = bw.get("device")
    want_port = int(exp.get("ib_port", 1))
    link_layer = _PERFTEST_LINK_LAYER.get(str(bw.get("link_type") or ""))
    listed: set[str] = set()
    active: list[tuple[str, str, Mapping[str, Any]]] = []
    for rel, data in ports:
        for d in data.get("devices") or ():
            listed.add(str(d.get("name")))
            for p in d.get("ports") or ():
                if p.get("state") == "ACTIVE" and p.get("phys_state") in ("LinkUp", None) and p.get("rate_gbps"):
                    active.append((rel, str(d.get("name")), p))
    for rel, name, p in active:
        if name == device and p.get("port") == want_port:
            return {**exp, "ib_rate_gbps": float(p["rate_gbps"]),
                    "ib_rate_source": f"the active rate of {name} port {want_port} in {rel}"}
    if device in listed:
        return exp
    same = [(rel, p) for rel, _n, p in active if link_layer is None or p.get("link_layer") in (link_layer, None)]
    rates = {float(p["rate_gbps"]) for _rel, p in same}
    if len(rates) != 1:
        return exp
    rate = rates.pop()
    files = ", ".join(sorted({rel for rel, _p in same}))
    return {**exp, "ib_rate_gbps": rate,
            "ib_rate_source": f"every active {link_layer or 'RDMA'} port in {files} runs at {rate:g} Gb/s"}
