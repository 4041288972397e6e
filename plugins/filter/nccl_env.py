"""Filter ``nccl_env``: NCCL environment derived from rdma_facts, with where each value came from.

Pure Python (no Ansible import needed to test it). Returns an ordered list of
``{"key": ..., "value": ..., "source": ...}``; the nccl role renders it to /etc/nccl.conf
(``KEY=VALUE``) and /etc/profile.d/nccl.sh (``export KEY=VALUE``) with the source as a comment.

Derivation:

* NCCL_IB_HCA - ``=dev:port,...`` (the leading ``=`` makes NCCL match names exactly, so
  ``mlx5_1`` does not also select ``mlx5_10``) of every ACTIVE port whose link layer belongs to the
  fabric (InfiniBand for ``infiniband``, Ethernet for ``roce``), minus front-end/storage NICs named
  by device or netdev in ``frontend_nics``.
* NCCL_IB_GID_INDEX (roce) - the RoCE v2 GID index with an IPv4 address those ports share (the most
  common one if they differ, and the comment says which ports differ).
* NCCL_IB_TC (roce) - ``roce_dscp << 2`` (DSCP in the upper six bits of the traffic class).
* NCCL_SOCKET_IFNAME - the bootstrap/socket interface given (the host's default-route interface).
* NCCL_NET_GDR_LEVEL - GPUDirect RDMA level for RDMA fabrics when GPUs are present.
* NCCL_IB_DISABLE=1 (ethernet) - socket transport only.

Every key can be replaced or (value ``None``) removed with ``overrides``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

FABRICS = ("infiniband", "roce", "ethernet")
_LINK_LAYER = {"infiniband": "InfiniBand", "roce": "Ethernet"}


def _natural(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def _entry(key: str, value: Any, source: str) -> dict[str, Any]:
    """One setting; ``value`` None means "left unset" and is rendered as a comment only."""
    return {"key": key, "value": None if value is None else str(value), "source": source}


def _select(rdma: dict[str, Any], fabric: str, frontend: set[str]) -> tuple[list[tuple], list[str]]:
    chosen: list[tuple] = []
    skipped: list[str] = []
    for dev in rdma.get("devices") or []:
        for port in dev.get("ports") or []:
            tag = f"{dev['name']}:{port['port']}"
            if dev["name"] in frontend or (port.get("netdev") and port["netdev"] in frontend):
                skipped.append(f"{tag} front-end")
            elif port.get("link_layer") != _LINK_LAYER[fabric]:
                skipped.append(f"{tag} {port.get('link_layer')}")
            elif port.get("state") != "ACTIVE":
                skipped.append(f"{tag} {port.get('state')}")
            else:
                chosen.append((dev["name"], port))
    chosen.sort(key=lambda c: (_natural(c[0]), c[1]["port"]))
    return chosen, skipped


def nccl_env(
    rdma: dict[str, Any] | None,
    fabric: str,
    frontend_nics: list[str] | None = None,
    overrides: dict[str, Any] | None = None,
    roce_dscp: int | None = None,
    socket_ifname: str | None = None,
    gdr_level: str | None = "PHB",
    gpus_present: bool = True,
) -> list[dict[str, Any]]:
    """The NCCL settings for one node; see the module docstring for the rules."""
    if fabric not in FABRICS:
        raise ValueError(f"nccl_env: fabric must be one of {', '.join(FABRICS)}, got {fabric!r}")
    rdma = rdma or {}
    env: list[dict[str, Any]] = []
    if fabric == "ethernet":
        env.append(_entry("NCCL_IB_DISABLE", 1, "fabric=ethernet: socket transport only"))
    else:
        chosen, skipped = _select(rdma, fabric, set(frontend_nics or []))
        if chosen:
            hca = "=" + ",".join(f"{name}:{port['port']}" for name, port in chosen)
            why = f"rdma_facts: ACTIVE {_LINK_LAYER[fabric]} ports"
            if skipped:
                why += f"; skipped {', '.join(skipped)}"
            env.append(_entry("NCCL_IB_HCA", hca, why))
        else:
            env.append(_entry("NCCL_IB_HCA", None, f"rdma_facts: no ACTIVE {_LINK_LAYER[fabric]} port found"))
        if fabric == "roce":
            env.extend(_roce_entries(chosen, roce_dscp))
        if gpus_present and gdr_level:
            env.append(_entry("NCCL_NET_GDR_LEVEL", gdr_level, "nccl_gdr_level (GPUs present)"))
    if socket_ifname:
        env.append(_entry("NCCL_SOCKET_IFNAME", socket_ifname, "default-route interface (nccl_socket_ifname)"))
    for key, value in (overrides or {}).items():
        env = [e for e in env if e["key"] != key]
        if value is not None:
            if isinstance(value, bool):
                value = int(value)
            env.append(_entry(str(key), value, "nccl_overrides (inventory)"))
    return env


def _roce_entries(chosen: list[tuple], roce_dscp: int | None) -> list[dict[str, Any]]:
    out = []
    found = {f"{n}:{p['port']}": p.get("roce_v2_gid_index") for n, p in chosen}
    indexes = Counter(v for v in found.values() if v is not None)
    if indexes:
        index, _count = indexes.most_common(1)[0]
        odd = sorted((k for k, v in found.items() if v != index), key=_natural)
        why = "rdma_facts: RoCE v2 GID with IPv4 address"
        if odd:
            why += f"; differs on {', '.join(odd)}"
        out.append(_entry("NCCL_IB_GID_INDEX", index, why))
    else:
        out.append(_entry("NCCL_IB_GID_INDEX", None, "rdma_facts: no RoCE v2 GID with an IPv4 address"))
    if roce_dscp is not None:
        dscp = int(roce_dscp)
        if not 0 <= dscp <= 63:
            raise ValueError(f"nccl_env: roce_dscp must be 0..63, got {dscp}")
        out.append(_entry("NCCL_IB_TC", dscp << 2, f"roce_dscp={dscp} << 2"))
    return out


def fabric_ports(
    rdma: dict[str, Any] | None, fabric: str, frontend_nics: list[str] | None = None, active_only: bool = True
) -> list[dict[str, Any]]:
    """``[{"device", "port", "netdev"}]`` of the fabric's ports outside ``frontend_nics`` (roce_qos uses it)."""
    if fabric not in _LINK_LAYER:
        raise ValueError(f"fabric_ports: fabric must be infiniband or roce, got {fabric!r}")
    frontend = set(frontend_nics or [])
    out = []
    for dev in (rdma or {}).get("devices") or []:
        for port in dev.get("ports") or []:
            if dev["name"] in frontend or port.get("netdev") in frontend:
                continue
            if port.get("link_layer") != _LINK_LAYER[fabric] or (active_only and port.get("state") != "ACTIVE"):
                continue
            out.append({"device": dev["name"], "port": port["port"], "netdev": port.get("netdev")})
    out.sort(key=lambda e: (_natural(e["device"]), e["port"]))
    return out


class FilterModule:
    """Ansible filter plugin entry point."""

    def filters(self) -> dict[str, Any]:
        return {"nccl_env": nccl_env, "fabric_ports": fabric_ports}
