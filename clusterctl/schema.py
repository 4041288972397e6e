"""Rules for the cluster spec (group_vars/all) and the host layout of an inventory.

Every rule returns :class:`~clusterctl.inventory.Problem` objects naming file, key and value.
Nothing here contacts a host.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Callable
from typing import Any

from clusterctl import role_vars
from clusterctl.inventory import NODE_GROUPS, Inventory, Problem, VaultValue

FABRICS = ("infiniband", "roce", "ethernet")
IB_MTUS = (256, 512, 1024, 2048, 4096)  # IB MTU (ibv_mtu enum values)
ETH_MTU_RANGE = (1280, 9216)  # Ethernet/RoCE netdev MTU accepted by mlx5 and common switches
STORAGE_TYPES = ("juicefs", "lustre")
# Slurm NodeName: a short hostname (no dots: Slurm matches NodeName to `hostname -s`).
SLURM_HOSTNAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9-]{0,62}$")
SLURM_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")  # ClusterName / partition names
# Keys holding secrets: must be vaulted (!vault, an encrypted file) or a Jinja reference to one.
SECRET_KEYS = re.compile(r"(^|_)(password|passwd|secret|token|munge_key|access_key|secret_key|metaurl)($|_)")
# Role-prefixed variables are checked against the roles' meta/argument_specs.yml (clusterctl.role_vars:
# known name, type, choices); the roles validate their values in depth when they run.
ROLE_PREFIXES = (
    "munge_", "slurm_common_", "slurm_controller_", "slurm_compute_", "slurm_dbd_", "rdma_", "roce_qos_",
    "nccl_", "juicefs_", "lustre_client_", "node_health_", "nvidia_gpu_", "gpu_tools_", "ansible_", "clusterctl_",
    "vault_",
)

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


def _cluster_name(file: str, key: str, v: Any) -> list[Problem]:
    if not isinstance(v, str) or not SLURM_NAME.match(v):
        return [Problem(file, key, v, "must be lower-case letters, digits, '-' or '_', starting with a letter, "
                                      "at most 40 characters (Slurm ClusterName)")]
    return []


def _nccl_overrides(file: str, key: str, v: Any) -> list[Problem]:
    if not isinstance(v, dict):
        return [Problem(file, key, v, "must be a mapping of NCCL_* variable to value")]
    out = []
    for k, val in v.items():
        if not isinstance(k, str) or not re.match(r"^NCCL_[A-Z0-9_]+$", k):
            out.append(Problem(file, f"{key}.{k}", k, "keys must be NCCL environment variables (NCCL_[A-Z0-9_]+)"))
        elif not isinstance(val, str | int | float) or isinstance(val, bool):
            out.append(Problem(file, f"{key}.{k}", val, "value must be a string or a number"))
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
        if not isinstance(name, str) or not SLURM_NAME.match(name):
            out.append(Problem(file, f"{k}.name", name, "partition name must be lower-case letters, digits, '-', '_'"))
        elif name in names:
            out.append(Problem(file, f"{k}.name", name, "duplicate partition name"))
        else:
            names.add(name)
        if p.get("default") is True:
            defaults += 1
        mt = p.get("max_time")
        if mt is not None and not (
            mt == "UNLIMITED" or (isinstance(mt, str) and re.match(r"^(\d+-)?\d+(:\d{2}){0,2}$", mt))
        ):
            out.append(Problem(file, f"{k}.max_time", mt, "must be UNLIMITED or a Slurm time like 2-00:00:00"))
    if defaults > 1:
        out.append(Problem(file, key, [p.get("name") for p in v if isinstance(p, dict) and p.get("default")],
                           "only one partition can be the default"))
    return out


def _storage(file: str, key: str, v: Any) -> list[Problem]:
    if not isinstance(v, list):
        return [Problem(file, key, v, "must be a list of mounts")]
    out: list[Problem] = []
    points: set[str] = set()
    for i, m in enumerate(v):
        k = f"{key}[{i}]"
        if not isinstance(m, dict):
            out.append(Problem(file, k, m, "a mount must be a mapping with type, name and mountpoint"))
            continue
        if m.get("type") not in STORAGE_TYPES:
            out.append(Problem(file, f"{k}.type", m.get("type"), f"must be one of {', '.join(STORAGE_TYPES)}"))
        if not isinstance(m.get("name"), str) or not m.get("name"):
            out.append(Problem(file, f"{k}.name", m.get("name"), "a mount needs a name"))
        mp = m.get("mountpoint")
        if not isinstance(mp, str) or not mp.startswith("/") or mp == "/":
            out.append(Problem(file, f"{k}.mountpoint", mp, "must be an absolute path other than /"))
        elif mp in points:
            out.append(Problem(file, f"{k}.mountpoint", mp, "two mounts on the same mountpoint"))
        else:
            points.add(mp)
        if m.get("type") == "lustre" and not (isinstance(m.get("mgs"), str) and m.get("mgs")):
            out.append(Problem(file, f"{k}.mgs", m.get("mgs"), "a lustre mount needs its MGS NID (e.g. 10.0.0.1@o2ib)"))
        for sk, sv in m.items():
            out.extend(_secret(file, f"{k}.{sk}", sk, sv))
    return out


def _topology(file: str, key: str, v: Any) -> list[Problem]:
    if not isinstance(v, dict) or not isinstance(v.get("switches"), list):
        return [Problem(file, key, v, "must be a mapping with a list 'switches' of {name, nodes|switches}")]
    out: list[Problem] = []
    for i, s in enumerate(v["switches"]):
        k = f"{key}.switches[{i}]"
        if not isinstance(s, dict) or not isinstance(s.get("name"), str):
            out.append(Problem(file, k, s, "a switch needs a name"))
        elif ("nodes" in s) == ("switches" in s):
            out.append(Problem(file, k, s.get("name"), "a switch lists either nodes (leaf) or switches (spine)"))
    return out


SPEC: dict[str, Validator] = {
    "cluster_name": _cluster_name,
    "fabric": _choice(FABRICS),
    "rdma_devices_per_node": _int_range(0, 32),
    "ib_rate_gbps": _positive_number,
    "pfc_priority": _int_range(0, 7),
    "roce_dscp": _int_range(0, 63),
    "mtu": _int_range(256, 9216),  # refined by fabric in _cross_checks
    "frontend_nics": _str_list,
    "gpus_per_node": _int_range(0, 16),
    "gpu_model": lambda f, k, v: [] if isinstance(v, str) and v else [Problem(f, k, v, "must be a string")],
    "nccl_busbw_floor_GBps": _positive_number,
    "nccl_overrides": _nccl_overrides,
    "slurm_partitions": _partitions,
    "slurm_topology": _topology,
    "storage_mounts": _storage,
}
REQUIRED = ("cluster_name", "fabric")


def _is_vaulted_ref(v: Any) -> bool:
    return isinstance(v, VaultValue) or (isinstance(v, str) and "{{" in v and "vault" in v)


def _secret(file: str, keypath: str, name: str, v: Any) -> list[Problem]:
    if not isinstance(name, str) or not SECRET_KEYS.search(name) or v in (None, ""):
        return []
    if name.endswith("_secret") and isinstance(v, str) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", v):
        return []  # the *name* of a vaulted variable, not the secret itself
    if _is_vaulted_ref(v):
        return []
    return [Problem(file, keypath, "<redacted>",
                    "secret given in plain text: use ansible-vault (!vault or an encrypted file) or a "
                    "'{{ vault_... }}' reference")]


def validate(inv: Inventory) -> list[Problem]:
    """All problems of ``inv``: what loading found plus the schema and layout rules."""
    problems = list(inv.problems)
    problems += _validate_spec(inv)
    problems += _validate_layout(inv)
    return problems


def _validate_spec(inv: Inventory) -> list[Problem]:
    out: list[Problem] = []
    sources = inv.group_vars.get("all", [])
    for src in sources:
        for key, value in src.data.items():
            if key in SPEC:
                out += SPEC[key](src.file, key, value)
            elif isinstance(key, str) and key.startswith(ROLE_PREFIXES):
                out += role_vars.check(src.file, key, value)
            else:
                near = difflib.get_close_matches(str(key), list(SPEC), n=1)
                hint = f"; did you mean '{near[0]}'?" if near else ""
                out.append(Problem(src.file, str(key), value, f"unknown key in the cluster spec{hint}"))
            out += _secret(src.file, str(key), str(key), value)
    spec, where = inv.spec(), inv.spec_sources()
    default_file = "group_vars/all/cluster.yml"
    for key in REQUIRED:
        if key not in spec:
            out.append(Problem(default_file, key, None, "required key missing from the cluster spec"))
    out += _cross_checks(spec, where, default_file)
    for group, srcs in inv.group_vars.items():
        if group == "all":
            continue
        for src in srcs:
            for key, value in src.data.items():
                out += _secret(src.file, str(key), str(key), value)
                if key not in SPEC:
                    out += role_vars.check(src.file, str(key), value)
    for host, hv in inv.host_vars.items():
        for key, value in hv.items():
            hfile = inv.host_var_files.get(host, inv.hosts_file)
            out += _secret(hfile, f"{host}.{key}", str(key), value)
            if key not in SPEC:
                out += role_vars.check(hfile, str(key), value, f"{host}.{key}")
    return out


def _cross_checks(spec: dict[str, Any], where: dict[str, str], default_file: str) -> list[Problem]:
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


def _validate_layout(inv: Inventory) -> list[Problem]:
    out: list[Problem] = []
    hf = inv.hosts_file
    if not inv.groups.get("slurm_controller"):
        out.append(Problem(hf, "all.children.slurm_controller", None, "the inventory needs one controller host"))
    elif len(inv.groups["slurm_controller"]) > 2:
        out.append(Problem(hf, "all.children.slurm_controller", inv.groups["slurm_controller"],
                           "at most two controllers (primary and backup)"))
    if not inv.groups.get("slurm_compute"):
        out.append(Problem(hf, "all.children.slurm_compute", None, "the inventory needs at least one compute host"))
    owner: dict[str, str] = {}
    for group in NODE_GROUPS:
        for h in inv.groups.get(group, []):
            if h in owner:
                out.append(Problem(hf, f"all.children.{group}.hosts.{h}", h,
                                   f"host is in two node groups ({owner[h]} and {group})"))
            else:
                owner[h] = group
    addresses: dict[str, str] = {}
    for h in inv.hosts:
        if not SLURM_HOSTNAME.match(h):
            out.append(Problem(hf, f"hosts.{h}", h, "hostname not valid for Slurm: letters, digits and '-', "
                                                    "starting with a letter, no dots, at most 63 characters"))
        addr = inv.address(h)
        if addr in addresses:
            out.append(Problem(inv.host_var_files.get(h, hf), f"{h}.ansible_host", addr,
                               f"duplicate address: also used by {addresses[addr]}"))
        else:
            addresses[addr] = h
        raw = inv.host_vars.get(h, {}).get("ansible_host")
        if isinstance(raw, str) and re.match(r"^[0-9.]+$", raw):
            try:
                ipaddress.IPv4Address(raw)
            except ValueError:
                out.append(Problem(inv.host_var_files.get(h, hf), f"{h}.ansible_host", raw, "not a valid IPv4 address"))
    return out
