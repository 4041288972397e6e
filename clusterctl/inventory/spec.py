"""Rules for the values of the cluster spec, wherever they are set (group_vars, host_vars, inline).

Every rule returns :class:`~clusterctl.inventory.model.Problem` objects naming file, key and value.
Cross-references (partition nodes, topology members) are checked against the inventory's hosts
in :mod:`clusterctl.inventory.validation`. Nothing here contacts a host.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from clusterctl.inventory import tokens
from clusterctl.inventory.model import Problem

FABRICS = ("infiniband", "roce", "ethernet")
IB_MTUS = (256, 512, 1024, 2048, 4096)  # IB MTU (ibv_mtu enum values)
ETH_MTU_RANGE = (1280, 9216)  # Ethernet/RoCE netdev MTU accepted by mlx5 and common switches
STORAGE_TYPES = ("juicefs", "lustre")
# Slurm NodeName: a short hostname (no dots: Slurm matches NodeName to `hostname -s`).
SLURM_HOSTNAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9-]{0,62}$")
SLURM_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")  # ClusterName / partition names
# A value that ends up in a shell, Slurm or systemd file must be one such token (shlex's safe
# characters, plus '^' for NCCL's exclusion lists such as NCCL_SOCKET_IFNAME=^docker0,lo).
SAFE_TOKEN = re.compile(r"[A-Za-z0-9_@%+=:,./^-]{1,512}")
HOSTLIST = re.compile(r"[A-Za-z0-9_.,\[\]-]{1,4096}")  # a Slurm hostlist: gpu[001-016],login01
Validator = Callable[[str, str, Any], list[Problem]]


def _int_range(lo: int, hi: int) -> Validator:
    def check(file: str, key: str, v: Any) -> list[Problem]:
        if isinstance(v, bool) or not isinstance(v, int):
            return [Problem(file, key, v, f"must be an integer {lo}-{hi}")]
        if not lo <= v <= hi:
            return [Problem(file, key, v, f"out of range, must be {lo}-{hi}")]
        return []

    return check


def _positive_number(file: str, key: str, v: Any) -> list[Problem]:
    if isinstance(v, bool) or not isinstance(v, int | float) or v <= 0:
        return [Problem(file, key, v, "must be a positive number")]
    return []


def _choice(options: tuple[str, ...]) -> Validator:
    def check(file: str, key: str, v: Any) -> list[Problem]:
        if v not in options:
            return [Problem(file, key, v, f"must be one of {', '.join(options)}")]
        return []

    return check


def _str_list(file: str, key: str, v: Any) -> list[Problem]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        return [Problem(file, key, v, "must be a list of non-empty strings")]
    return []


def _bool(file: str, key: str, v: Any) -> list[Problem]:
    return [] if isinstance(v, bool) else [Problem(file, key, v, "must be true or false")]


def _cluster_name(file: str, key: str, v: Any) -> list[Problem]:
    if not isinstance(v, str) or not SLURM_NAME.fullmatch(v):
        return [Problem(file, key, v, "must be lower-case letters, digits, '-' or '_', starting with a letter, "
                                      "at most 40 characters (Slurm ClusterName)")]
    return []


def _hostname(v: Any) -> bool:
    return isinstance(v, str) and SLURM_HOSTNAME.fullmatch(v) is not None


def _nccl_overrides(file: str, key: str, v: Any) -> list[Problem]:
    if not isinstance(v, dict):
        return [Problem(file, key, v, "must be a mapping of NCCL_* variable to value")]
    out = []
    for k, val in v.items():
        if not isinstance(k, str) or not re.match(r"^NCCL_[A-Z0-9_]+$", k):
            out.append(Problem(file, f"{key}.{k}", k, "keys must be NCCL environment variables (NCCL_[A-Z0-9_]+)"))
        elif val is None:
            continue  # removes the derived setting
        elif not isinstance(val, str | int | float) or isinstance(val, bool):
            out.append(Problem(file, f"{key}.{k}", val, "value must be a string or a number"))
        elif not SAFE_TOKEN.fullmatch(str(val)):
            out.append(Problem(file, f"{key}.{k}", val,
                               "value must be one token of letters, digits and _@%+=:,./^- (it is written "
                               "to nccl.conf and exported in every Slurm task)"))
    return out


def _partitions(file: str, key: str, v: Any) -> list[Problem]:
    if not isinstance(v, list) or not v:
        return [Problem(file, key, v, "must be a non-empty list of partitions")]
    out: list[Problem] = []
    names: set[str] = set()
    defaults = 0
    for i, p in enumerate(v):
        k = f"{key}[{i}]"
        if not isinstance(p, dict):
            out.append(Problem(file, k, p, "a partition must be a mapping with at least 'name'"))
            continue
        for extra in set(p) - {"name", "nodes", "default", "max_time", "options"}:
            out.append(Problem(file, f"{k}.{extra}", p[extra],
                               "unknown partition key (expected name, nodes, default, max_time, options)"))
        name = p.get("name")
        if not isinstance(name, str) or not SLURM_NAME.fullmatch(name):
            out.append(Problem(file, f"{k}.name", name, "partition name must be lower-case letters, digits, '-', '_'"))
        elif name in names:
            out.append(Problem(file, f"{k}.name", name, "duplicate partition name"))
        else:
            names.add(name)
        if p.get("default") is True:
            defaults += 1
        mt = p.get("max_time")
        if mt is not None and not (
            mt == "UNLIMITED" or (isinstance(mt, str) and re.fullmatch(r"(\d+-)?\d+(:\d{2}){0,2}", mt))
        ):
            out.append(Problem(file, f"{k}.max_time", mt, "must be UNLIMITED or a Slurm time like 2-00:00:00"))
    if defaults > 1:
        out.append(Problem(file, key, [p.get("name") for p in v if isinstance(p, dict) and p.get("default")],
                           "only one partition can be the default"))
    return out


def mountpoint_problem(mp: str) -> str | None:
    """Why ``mp`` (already a plain absolute path) cannot be a mountpoint; None when it can. The one
    table of system paths is the collection's plugins/filter/tokens.py, which the storage roles'
    input checks apply too (filter ``clusterctl.hpc.mount_problems``)."""
    problem: str | None = tokens.rules().mountpoint_problem(mp)
    return problem


def _storage(file: str, key: str, v: Any) -> list[Problem]:
    if not isinstance(v, list):
        return [Problem(file, key, v, "must be a list of mounts")]
    out: list[Problem] = []
    points: set[str] = set()
    names: set[str] = set()
    for i, m in enumerate(v):
        k = f"{key}[{i}]"
        if not isinstance(m, dict):
            out.append(Problem(file, k, m, "a mount must be a mapping with type, name and mountpoint"))
            continue
        if m.get("type") not in STORAGE_TYPES:
            out.append(Problem(file, f"{k}.type", m.get("type"), f"must be one of {', '.join(STORAGE_TYPES)}"))
        if not isinstance(m.get("name"), str) or not m.get("name"):
            out.append(Problem(file, f"{k}.name", m.get("name"), "a mount needs a name"))
        elif m["name"] in names:
            out.append(Problem(file, f"{k}.name", m["name"], "two mounts with one name (one unit file each)"))
        else:
            names.add(m["name"])
        mp = m.get("mountpoint")
        if isinstance(mp, str) and len(mp) > 1:
            mp = mp.rstrip("/") or "/"  # /data/ is /data
        if not isinstance(mp, str) or not mp.startswith("/") or mp == "/":
            out.append(Problem(file, f"{k}.mountpoint", mp, "must be an absolute path other than /"))
        elif any(part in ("..", ".") for part in mp.split("/")) or not SAFE_TOKEN.fullmatch(mp):
            out.append(Problem(file, f"{k}.mountpoint", mp,
                               "must be a plain absolute path: no '..' or '.' parts, no spaces or control characters"))
        elif mountpoint_problem(mp):
            out.append(Problem(file, f"{k}.mountpoint", m.get("mountpoint"), str(mountpoint_problem(mp))))
        elif mp in points:
            out.append(Problem(file, f"{k}.mountpoint", m.get("mountpoint"), "two mounts on the same mountpoint"))
        else:
            points.add(mp)
        if m.get("type") == "lustre" and not (isinstance(m.get("mgs"), str) and m.get("mgs")):
            out.append(Problem(file, f"{k}.mgs", m.get("mgs"), "a lustre mount needs its MGS NID (e.g. 10.0.0.1@o2ib)"))
    return out


def _topology(file: str, key: str, v: Any) -> list[Problem]:
    if not isinstance(v, dict) or not isinstance(v.get("switches"), list):
        return [Problem(file, key, v, "must be a mapping with a list 'switches' of {name, nodes|switches}")]
    out: list[Problem] = []
    names: set[str] = set()
    for i, s in enumerate(v["switches"]):
        k = f"{key}.switches[{i}]"
        if not isinstance(s, dict) or not isinstance(s.get("name"), str):
            out.append(Problem(file, k, s, "a switch needs a name"))
            continue
        if not SLURM_HOSTNAME.fullmatch(s["name"]):
            out.append(Problem(file, f"{k}.name", s["name"], "switch name: letters, digits and '-'"))
        elif s["name"] in names:
            out.append(Problem(file, f"{k}.name", s["name"], "two switches with the same name"))
        names.add(s["name"])
        if ("nodes" in s) == ("switches" in s):
            out.append(Problem(file, k, s.get("name"), "a switch lists either nodes (leaf) or switches (spine)"))
        for member in ("nodes", "switches"):
            if member in s and not ((isinstance(s[member], str) and HOSTLIST.fullmatch(s[member]))
                                    or (isinstance(s[member], list) and all(isinstance(x, str) for x in s[member]))):
                out.append(Problem(file, f"{k}.{member}", s[member], "must be a Slurm hostlist or a list of names"))
    return out


def _then_tokens(rule: Validator) -> Validator:
    """``rule``, then (when the shape is right) the single-token rules of the values roles render."""

    def check(file: str, key: str, v: Any) -> list[Problem]:
        return rule(file, key, v) or tokens.check(file, key.rsplit(".", 1)[-1], v, key)

    return check


SPEC: dict[str, Validator] = {
    "cluster_name": _cluster_name,
    "fabric": _choice(FABRICS),
    "rdma_devices_per_node": _int_range(0, 32),
    "ib_rate_gbps": _positive_number,
    "pfc_priority": _int_range(0, 7),
    "roce_dscp": _int_range(0, 63),
    "mtu": _int_range(256, 9216),  # refined by fabric in cross_checks
    "frontend_nics": _then_tokens(_str_list),
    "gpus_per_node": _int_range(0, 16),
    "gpu_model": lambda f, k, v: [] if isinstance(v, str) and v and "\n" not in v else [
        Problem(f, k, v, "must be a one-line string")],
    "gpu_persistence_required": _bool,
    "nccl_busbw_floor_GBps": _positive_number,
    "gemm_floor_tflops": _positive_number,
    "gemm_floor_fraction": lambda f, k, v: [] if isinstance(v, (int, float)) and not isinstance(v, bool)
    and 0 < v <= 1 else [Problem(f, k, v, "must be a number in (0, 1]")],
    "nccl_overrides": _nccl_overrides,
    "slurm_partitions": _then_tokens(_partitions),
    "slurm_topology": _topology,
    "storage_mounts": _then_tokens(_storage),
}
REQUIRED = ("cluster_name", "fabric")
# Keys that describe the whole cluster: Ansible would let a group or a host override them, which
# would give nodes different views of one cluster. They belong to group all only.
CLUSTER_WIDE = ("cluster_name", "fabric", "slurm_partitions", "slurm_topology")


def cross_checks(spec: dict[str, Any], where: dict[str, str], default_file: str) -> list[Problem]:
    out: list[Problem] = []
    fabric, mtu = spec.get("fabric"), spec.get("mtu")
    if isinstance(mtu, int) and not isinstance(mtu, bool):
        f = where.get("mtu", default_file)
        if fabric == "infiniband" and mtu not in IB_MTUS:
            out.append(Problem(f, "mtu", mtu, f"InfiniBand MTU must be one of {', '.join(map(str, IB_MTUS))}"))
        elif fabric in ("roce", "ethernet") and not ETH_MTU_RANGE[0] <= mtu <= ETH_MTU_RANGE[1]:
            out.append(Problem(f, "mtu", mtu, f"Ethernet MTU must be {ETH_MTU_RANGE[0]}-{ETH_MTU_RANGE[1]}"))
    if fabric == "roce":
        for key in ("pfc_priority", "roce_dscp"):
            if key not in spec:
                out.append(Problem(where.get("fabric", default_file), key, None,
                                   "required when fabric is roce (lossless RoCE v2 needs it)"))
    if fabric == "ethernet" and spec.get("rdma_devices_per_node"):
        out.append(Problem(where.get("rdma_devices_per_node", default_file), "rdma_devices_per_node",
                           spec["rdma_devices_per_node"], "must be 0 when fabric is ethernet"))
    return out
