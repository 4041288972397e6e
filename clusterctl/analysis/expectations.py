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
