"""Validate a loaded inventory: every variable where it is set, then what Ansible combines.

* Each definition (group_vars, host_vars, inline vars, other sources) is checked: cluster-spec keys
  by :mod:`clusterctl.inventory.spec` (and refused outside group ``all`` when they describe the whole
  cluster), role variables by :mod:`clusterctl.inventory.role_vars`, secrets by
  :mod:`clusterctl.inventory.secrets`; no value may carry a line break or control character (every
  value can end up in a configuration file, a unit or a script).
* The combined view: required keys, fabric cross-checks, node groups, host names and addresses,
  partition nodes and topology members naming inventory hosts, topology loops.

Sets and dicts throughout: linear in the number of hosts.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from typing import Any

from clusterctl.inventory import role_vars, secrets, spec
from clusterctl.inventory.loading import gc_paused
from clusterctl.inventory.model import NODE_GROUPS, Definition, Inventory, Problem, VaultValue

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # tab allowed (ssh args), newline not
DEFAULT_FILE = "group_vars/all/cluster.yml"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])"
_SPACE = re.compile(r"\s")  # str.isspace(), character by character (the same Unicode table)
_DIGITS_DOTS = re.compile(r"[0-9.]+")
_IPV4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")  # what ipaddress.IPv4Address accepts (no leading zeros)


#: lookups that run a command on the controller when Ansible templates the value
_COMMAND_LOOKUP = re.compile(r"""\b(?:lookup|query|q)\s*\(\s*['"](?:ansible\.builtin\.)?(pipe|lines)['"]""")


def command_lookups(inv: Inventory) -> list[str]:
    """Warnings for inventory values whose templating runs a command on the controller
    (``lookup('pipe', ...)``, ``lookup('lines', ...)``): Ansible evaluates them when it runs."""
    out = []
    for d in inv.definitions:
        stack: list[tuple[str, Any]] = [(d.shown_key, d.value)]
        while stack:
            path, v = stack.pop()
            if isinstance(v, str):
                m = _COMMAND_LOOKUP.search(v)
                if m:
                    out.append(f"{d.file}: {path}: runs a command on this machine when Ansible templates it "
                               f"(lookup {m.group(1)!r})")
            elif isinstance(v, dict):
                stack.extend((f"{path}.{k}", x) for k, x in v.items())
            elif isinstance(v, list):
                stack.extend((f"{path}[{i}]", x) for i, x in enumerate(v))
    return out


def validate(inv: Inventory) -> list[Problem]:
    """All problems of ``inv``: what loading found plus the rules.

    The garbage collector is paused as while loading: its passes over the heap of a large inventory
    (all of it kept) were a third of the rules' time at 100,000 hosts.
    """
    with gc_paused():
        return _validate(inv)


def _validate(inv: Inventory) -> list[Problem]:
    problems = list(inv.problems)
    if problems or not inv.host_order:
        if not problems:
            problems.append(Problem(inv.hosts_file, "all", None, "the inventory has no hosts"))
        return problems
    problems += _definitions(inv)
    problems += _equal_precedence(inv)
    problems += _equal_groups(inv)
    problems += _combined(inv)
    secret = set(inv.decrypted_files)
    for p in problems:  # a refused value from a vault file is named, never shown
        if p.file.split(" (")[0] in secret:
            p.value = "<vaulted>"
    return problems


def _equal_precedence(inv: Inventory) -> list[Problem]:
    """One cluster-spec key of one group or host set to different values in two of its group_vars/
    host_vars files (equal precedence: the file Ansible reads last wins, by name order, silently)."""
    out: list[Problem] = []
    first: dict[tuple[str, str], Definition] = {}
    for d in inv.definitions:
        if not d.file.startswith(("group_vars/", "host_vars/")) or d.key not in spec.SPEC:
            continue  # cluster-spec keys only: an override file for a connection or role variable is common
        other = first.setdefault((d.owner, d.key), d)
        if other.file != d.file and other.value != d.value:
            shown = "<vaulted>" if d.vaulted or other.vaulted else d.value
            out.append(Problem(d.file, d.shown_key, shown, f"also set, to another value, in {other.file} (files of "
                                                           "equal precedence: which one wins is only file order)"))
    return out


def _equal_groups(inv: Inventory) -> list[Problem]:
    """One variable set to different values by two groups of equal depth and priority that share a
    host (issue 28 class 4): Ansible takes, for that host, the group whose name sorts last, silently.
    Each pair of groups and key is named once, with both files and a host they share."""
    by_group: dict[str, dict[str, Definition]] = {}
    rank = inv.group_rank  # ansible_group_priority counts only in the inventory source, not in group_vars
    for d in inv.definitions:
        kind, _, name = d.owner.partition(":")
        if kind == "group" and name != "all" and d.key != "ansible_group_priority":
            by_group.setdefault(name, {}).setdefault(d.key, d)
    if len(by_group) < 2:
        return []
    member: dict[str, list[str]] = {}
    for g in sorted(by_group):
        for h in inv.groups.get(g, ()):
            member.setdefault(h, []).append(g)
    out: list[Problem] = []
    sets: set[tuple[str, ...]] = set()
    for host, groups in member.items():
        if len(groups) < 2 or tuple(groups) in sets:
            continue
        sets.add(tuple(groups))
        for i, a in enumerate(groups):
            for b in groups[i + 1:]:  # a < b by name: b is the one Ansible takes
                if rank.get(a) != rank.get(b):
                    continue
                for key in sorted(by_group[a].keys() & by_group[b].keys()):
                    da, db = by_group[a][key], by_group[b][key]
                    if da.value == db.value:
                        continue
                    shown = "<vaulted>" if da.vaulted or db.vaulted else db.value
                    out.append(Problem(db.file, db.shown_key, shown, (
                        f"set to another value in {da.file} (group {a}); groups {a} and {b} are of equal depth "
                        f"and priority and both hold host {host}: Ansible takes group {b}'s silently (name "
                        "order). Set it in one place, or give one group ansible_group_priority in the "
                        "inventory file (Ansible ignores it in group_vars)")))
    return out


def _control_chars(d: Definition) -> list[Problem]:
    out = []
    stack: list[tuple[str, Any]] = [(d.shown_key, d.value)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, str):
            if _CONTROL.search(v):
                out.append(Problem(d.file, path, v, "line break or control character in a value (it would be "
                                                    "written into a configuration file, unit or script)"))
        elif isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str) and _CONTROL.search(k):
                    out.append(Problem(d.file, f"{path}.{k}", k, "line break or control character in a key"))
                stack.append((f"{path}.{k}", x))
        elif isinstance(v, list):
            stack.extend((f"{path}[{i}]", x) for i, x in enumerate(v))
    return out


def _definitions(inv: Inventory) -> list[Problem]:
    out: list[Problem] = []
    plain = secrets.plain_names(inv.definitions)
    for d in inv.definitions:
        key, value, where = d.key, d.value, d.shown_key
        out += _control_chars(d)
        if key in spec.SPEC:
            if key in spec.CLUSTER_WIDE and d.owner != "group:all":
                out.append(Problem(d.file, where, value, f"{key} describes the whole cluster: set it for group "
                                                         "all (group_vars/all), not for one group or host"))
            else:
                out += spec.SPEC[key](d.file, where, value)
        elif role_vars.owner(key):
            out += role_vars.check(d.file, key, value, where)
        elif d.owner == "group:all" and not role_vars.is_known_prefix(key):
            near = difflib.get_close_matches(key, list(spec.SPEC), n=1)
            hint = f"; did you mean '{near[0]}'?" if near else ""
            out.append(Problem(d.file, key, value, f"unknown key in the cluster spec{hint}"))
        elif key == "ansible_host":
            out += _ansible_host(d)
        elif key in _CONNECTION_VARS:
            out += _connection_var(d)
        if not d.file.startswith("-e") and not d.vaulted:  # -e values never reach a process list
            out += secrets.check(d, plain)                   # (clusterctl.runner); a vault file is vaulted
    return out


def _ansible_host(d: Definition) -> list[Problem]:
    v = d.value
    if isinstance(v, VaultValue):
        return []
    if not isinstance(v, str) or not v.strip() or _SPACE.search(v):
        return [Problem(d.file, d.shown_key, v, "ansible_host must be one address or host name")]
    if "{{" in v:
        return []
    odd = next((c for c in v if not c.isascii() or not c.isprintable()), None)
    if odd is not None:  # zero-width, full-width, look-alike letters: two spellings of one host
        return [Problem(d.file, d.shown_key, v, f"invisible or look-alike character U+{ord(odd):04X} in an "
                                                "address: ASCII only")]
    if "/" in v:
        return [Problem(d.file, d.shown_key, v, "an address, not a network: no /prefix")]
    if _DIGITS_DOTS.fullmatch(v) and not _IPV4.fullmatch(v):
        try:
            ipaddress.IPv4Address(v)
        except ValueError:
            return [Problem(d.file, d.shown_key, v, "not a valid IPv4 address")]
    return []


def _is_port(v: Any) -> bool:
    digits = isinstance(v, str) and v.isascii() and v.isdigit()
    return not isinstance(v, bool) and (isinstance(v, int) or digits) and 1 <= int(v) <= 65535


_USER_NAME = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]{0,63}")
_PORT = (_is_port, "must be a port number, 1-65535")
_USER = (lambda v: isinstance(v, str) and _USER_NAME.fullmatch(v) is not None,
         "must be one user name (letters, digits, '.', '_', '-', not starting with '-')")
#: how Ansible connects: checked where set (a vaulted value or a bare {{ reference }} is left alone)
_CONNECTION_VARS = {"ansible_port": _PORT, "ansible_ssh_port": _PORT, "ansible_user": _USER, "ansible_ssh_user": _USER}


def _connection_var(d: Definition) -> list[Problem]:
    ok, must = _CONNECTION_VARS[d.key]
    v = d.value
    if isinstance(v, VaultValue) or (isinstance(v, str) and secrets.REFERENCE.fullmatch(v)) or ok(v):
        return []
    return [Problem(d.file, d.shown_key, v, f"{d.key} {must}")]


def _combined(inv: Inventory) -> list[Problem]:
    out: list[Problem] = []
    spec_now, where = inv.spec(), inv.spec_sources()
    for key in spec.REQUIRED:
        if key not in spec_now:
            out.append(Problem(DEFAULT_FILE, key, None, "required key missing from the cluster spec"))
    out += spec.cross_checks(spec_now, where, DEFAULT_FILE)
    out += _layout(inv)
    hosts = set(inv.host_order)
    out += _partition_nodes(spec_now, where.get("slurm_partitions", DEFAULT_FILE), hosts)
    out += _topology(spec_now, where.get("slurm_topology", DEFAULT_FILE), hosts)
    out += _mount_overlap(inv)
    return out


def _mount_overlap(inv: Inventory) -> list[Problem]:
    """A mountpoint or a mount name both in ``storage_mounts`` and in an explicit ``juicefs_volumes``
    list (each host's view): one would hide the other, or both write one unit file."""
    out: list[Problem] = []
    seen: set[tuple[str, Any]] = set()
    for host in inv.host_order:
        hv = inv.host_vars.get(host, {})
        vols, mounts = hv.get("juicefs_volumes"), hv.get("storage_mounts")
        if not isinstance(vols, list) or not isinstance(mounts, list):
            continue
        def norm(m: Any, k: str) -> Any:
            x = m.get(k) if isinstance(m, dict) else None
            return x.rstrip("/") or "/" if isinstance(x, str) and k == "mountpoint" else x
        taken = {(k, norm(m, k)) for m in mounts if isinstance(m, dict) for k in ("mountpoint", "name")}
        for i, vol in enumerate(vols):
            for k in ("mountpoint", "name"):
                if (k, norm(vol, k)) in taken and (k, norm(vol, k)) not in seen:
                    seen.add((k, norm(vol, k)))
                    file = inv.spec_files.get("juicefs_volumes") or inv.host_var_files.get(host, inv.hosts_file)
                    out.append(Problem(file, f"juicefs_volumes[{i}].{k}",
                                       vol.get(k), f"also a {k} of storage_mounts (on host {host})"))
    return out


def _expand(expr: Any) -> list[str]:
    from ccparse import hostlist

    names = expr if isinstance(expr, list) else hostlist.split_hostlist(str(expr))
    out: list[str] = []
    for n in names:
        out.extend(hostlist.expand_one(str(n)))
    return out


def _partition_nodes(s: dict[str, Any], file: str, hosts: set[str]) -> list[Problem]:
    out: list[Problem] = []
    parts = s.get("slurm_partitions")
    if not isinstance(parts, list):
        return out
    for i, p in enumerate(parts):
        if not isinstance(p, dict) or p.get("nodes") in (None, "ALL"):
            continue
        try:
            names = _expand(p["nodes"])
        except ValueError as exc:
            out.append(Problem(file, f"slurm_partitions[{i}].nodes", p["nodes"], f"not a Slurm hostlist: {exc}"))
            continue
        missing = [n for n in names if n not in hosts]
        if missing:
            out.append(Problem(file, f"slurm_partitions[{i}].nodes", p["nodes"],
                               f"names hosts not in the inventory: {', '.join(missing[:5])}"
                               f"{' ...' if len(missing) > 5 else ''}"))
    return out


def _topology(s: dict[str, Any], file: str, hosts: set[str]) -> list[Problem]:
    out: list[Problem] = []
    topo = s.get("slurm_topology")
    if not isinstance(topo, dict) or not isinstance(topo.get("switches"), list):
        return out
    switches = [sw for sw in topo["switches"] if isinstance(sw, dict) and isinstance(sw.get("name"), str)]
    names = {sw["name"] for sw in switches}
    below: dict[str, list[str]] = {}
    for i, sw in enumerate(topo["switches"]):
        if not isinstance(sw, dict) or not isinstance(sw.get("name"), str):
            continue
        k = f"slurm_topology.switches[{i}]"
        for member, known, what in (("nodes", hosts, "hosts not in the inventory"),
                                    ("switches", names, "switches not defined in slurm_topology")):
            if member not in sw:
                continue
            try:
                listed = _expand(sw[member])
            except ValueError as exc:
                out.append(Problem(file, f"{k}.{member}", sw[member], f"not a Slurm hostlist: {exc}"))
                continue
            missing = [n for n in listed if n not in known]
            if missing:
                out.append(Problem(file, f"{k}.{member}", sw[member], f"names {what}: {', '.join(missing[:5])}"))
            if member == "switches":
                if sw["name"] in listed:
                    out.append(Problem(file, f"{k}.switches", sw[member], "a switch cannot contain itself"))
                below[sw["name"]] = [n for n in listed if n in names and n != sw["name"]]
    # loops: a switch reachable from itself through its children (iterative DFS, colours)
    state: dict[str, int] = {}
    for start in below:
        if state.get(start):
            continue
        stack = [(start, iter(below.get(start, [])))]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                loop = [n for n, _ in stack] + [nxt]
                out.append(Problem(file, "slurm_topology.switches", " -> ".join(loop[loop.index(nxt):]),
                                   "switches form a loop"))
                state[nxt] = 2
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(below.get(nxt, []))))
    return out


def _same_address(addr: str) -> str:
    """One spelling per address: IPv6 case and compression, IPv4, a trailing dot and case of a name."""
    try:
        return ipaddress.ip_address(addr.split("%", 1)[0]).compressed
    except ValueError:
        return addr.lower().rstrip(".")


def _layout(inv: Inventory) -> list[Problem]:
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
    groups = set(inv.groups)
    addresses: dict[str, str] = {}
    folded: dict[str, str] = {}
    for h in inv.host_order:
        if h.lower() in folded:
            out.append(Problem(hf, f"hosts.{h}", h, f"host names differ only in case (also {folded[h.lower()]}): "
                                                    "host names are case-insensitive"))
        else:
            folded[h.lower()] = h
        if h.lower() == "localhost" and h in owner:
            out.append(Problem(hf, f"hosts.{h}", h, "a cluster node cannot be named localhost (Slurm and Ansible "
                                                    "mean this machine by it)"))
        if h in groups:
            out.append(Problem(hf, f"hosts.{h}", h, "a host and a group have this name (an Ansible pattern "
                                                    "or --limit naming it would mean both)"))
        if not spec.SLURM_HOSTNAME.fullmatch(h):
            out.append(Problem(hf, f"hosts.{h}", h, "hostname not valid for Slurm: letters, digits and '-', "
                                                    "starting with a letter, no dots, at most 63 characters"))
        addr = _same_address(inv.address(h))
        if addr in addresses:
            out.append(Problem(inv.host_var_files.get(h, hf), f"{h}.ansible_host", inv.address(h),
                               f"duplicate address: also used by {addresses[addr]}"))
        else:
            addresses[addr] = h
    return out
