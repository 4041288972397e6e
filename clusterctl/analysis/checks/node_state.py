"""Judge a node's own services and mounts (KINDs ``systemctl-show``, ``proc-mounts``), as the node
check (clusterctl/lifecycle/nodecheck.py) collects them.

- ``systemctl-show``: every unit the collector asked about must be loaded and active. The collector
  asks for ``nvidia-fabricmanager`` and ``nvidia-persistenced`` on NVSwitch nodes only (NVIDIA Fabric
  Manager user guide: without it CUDA cannot start on an NVSwitch system; persistenced keeps the driver
  state the fabric registration needs).
- ``proc-mounts``: every mount point of the inventory's ``storage_mounts`` must be mounted (a job that
  reads its data or writes its checkpoints there fails, or worse writes to the local disk beneath).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from clusterctl.analysis.model import Finding, check
from clusterctl.analysis.severity import sev as rule_sev


@check("systemctl-show")
def judge_services(host: str, data: Any, exp: Mapping[str, Any]) -> Iterable[Finding]:
    out = []
    for u in data.get("units", []):
        load, active = u.get("load_state", ""), u.get("active_state", "")
        if load != "loaded" or active != "active":
            what = "not installed" if load == "not-found" else f"{active} ({u.get('sub_state', '?')})"
            out.append(Finding(host, "node_service", rule_sev("node_service.inactive"), f"{host}/{u['id']}",
                               f"{u['id']} is {what}: required on this node"))
    return out


@check("proc-mounts")
def judge_mounts(host: str, data: Any, exp: Mapping[str, Any]) -> Iterable[Finding]:
    wanted = [str(m.get("mountpoint")).rstrip("/") or "/" for m in exp.get("storage_mounts") or ()
              if isinstance(m, Mapping) and m.get("mountpoint")]
    present = {str(m["mountpoint"]).rstrip("/") or "/" for m in data.get("mounts", [])}
    return [Finding(host, "node_mount", rule_sev("node_mount.missing"), f"{host}:{mp}",
                    f"{mp} is not mounted (storage_mounts names it)") for mp in wanted if mp not in present]
