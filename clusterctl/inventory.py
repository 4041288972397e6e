"""Load an Ansible inventory folder (hosts.yml, group_vars/, host_vars/) without contacting hosts.

Only what validation needs is read: groups, hosts (with ``name[01:64]`` ranges expanded as
Ansible does), their variables, and which file and key each value came from, so every error can
name file, key and value. Vault-encrypted files and ``!vault`` values are kept opaque.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

NODE_GROUPS = ("slurm_controller", "slurm_compute", "slurm_login")
KNOWN_GROUPS = (*NODE_GROUPS, "storage_clients")


class VaultValue:
    """An inline ``!vault`` value or a value from an encrypted file: present, never read."""

    def __repr__(self) -> str:
        return "<vaulted>"


class _Loader(yaml.SafeLoader):
    pass


def _vault(loader: yaml.SafeLoader, node: yaml.Node) -> VaultValue:
    return VaultValue()


def _unsafe(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    assert isinstance(node, yaml.ScalarNode)
    return loader.construct_scalar(node)


_Loader.add_constructor("!vault", _vault)
_Loader.add_constructor("!unsafe", _unsafe)


@dataclass
class Problem:
    """One validation error: file (relative to the inventory), key path, value, message."""

    file: str
    key: str
    value: Any
    message: str

    def __str__(self) -> str:
        shown = "<vaulted>" if isinstance(self.value, VaultValue) else repr(self.value)
        return f"{self.file}: {self.key}: {self.message} (value: {shown})"


@dataclass
class Source:
    """Variables of one file, with the file they came from."""

    file: str
    data: dict[str, Any]
    vaulted: bool = False


@dataclass
class Inventory:
    path: Path
    hosts_file: str = "hosts.yml"
    groups: dict[str, list[str]] = field(default_factory=dict)  # group -> hosts (direct and nested)
    host_vars: dict[str, dict[str, Any]] = field(default_factory=dict)  # from hosts.yml + host_vars/
    host_var_files: dict[str, str] = field(default_factory=dict)  # host -> file its vars came from
    group_vars: dict[str, list[Source]] = field(default_factory=dict)  # group -> sources
    children: dict[str, list[str]] = field(default_factory=dict)  # group -> child groups
    problems: list[Problem] = field(default_factory=list)

    @property
    def hosts(self) -> list[str]:
        seen: dict[str, None] = {}
        for members in self.groups.values():
            for h in members:
                seen[h] = None
        return list(seen)

    def spec(self) -> dict[str, Any]:
        """The cluster spec: every variable of group ``all`` merged (later files win)."""
        merged: dict[str, Any] = {}
        for src in self.group_vars.get("all", []):
            merged.update(src.data)
        return merged

    def spec_sources(self) -> dict[str, str]:
        """Key of the cluster spec -> file that set it."""
        out: dict[str, str] = {}
        for src in self.group_vars.get("all", []):
            for k in src.data:
                out[k] = src.file
        return out

    def address(self, host: str) -> str:
        v = self.host_vars.get(host, {})
        return str(v.get("ansible_host", host))


_RANGE = re.compile(r"\[([0-9a-z]+):([0-9a-z]+)(?::(\d+))?\]")


def expand_host_pattern(name: str) -> list[str]:
    """Expand Ansible's ``node[01:64]`` (and ``[a:f]``) host ranges; other names unchanged."""
    m = _RANGE.search(name)
    if not m:
        return [name]
    start, end, step = m.group(1), m.group(2), int(m.group(3) or 1)
    head, tail = name[: m.start()], name[m.end() :]
    if start.isdigit() and end.isdigit():
        width = len(start) if start.startswith("0") or len(start) == len(end) else 0
        items = [str(i).zfill(width) for i in range(int(start), int(end) + 1, step)]
    elif len(start) == 1 and len(end) == 1:
        items = [chr(c) for c in range(ord(start), ord(end) + 1, step)]
    else:
        raise ValueError(f"bad host range [{start}:{end}]")
    out: list[str] = []
    for item in items:
        out.extend(expand_host_pattern(head + item + tail))
    return out


def _read_yaml(path: Path, rel: str, problems: list[Problem]) -> tuple[Any, bool]:
    """(data, vaulted). Problems are recorded, not raised."""
    try:
        text = path.read_text()
    except OSError as exc:
        problems.append(Problem(rel, "(file)", str(path), f"cannot read: {exc.strerror}"))
        return None, False
    if text.startswith("$ANSIBLE_VAULT;"):
        return {}, True
    try:
        return yaml.load(text, Loader=_Loader), False
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(file)"
        reason = getattr(exc, "problem", None) or str(exc)
        problems.append(Problem(rel, where, None, f"not valid YAML: {reason}"))
        return None, False


def _var_files(base: Path, name: str) -> list[Path]:
    """group_vars/<name>.yml|.yaml|no ext, or every file in group_vars/<name>/ (sorted)."""
    out: list[Path] = []
    for ext in ("", ".yml", ".yaml", ".json"):
        p = base / f"{name}{ext}"
        if p.is_file():
            out.append(p)
    d = base / name
    if d.is_dir():
        out.extend(sorted(p for p in d.rglob("*") if p.is_file() and not p.name.startswith(".")))
    return out


def load(path: Path) -> Inventory:
    """Read the inventory folder at ``path``. Structural problems land in ``inv.problems``."""
    inv = Inventory(path=path)
    if not path.is_dir():
        inv.problems.append(Problem(str(path), "(inventory)", str(path), "inventory folder not found"))
        return inv
    hosts_file = next((path / n for n in ("hosts.yml", "hosts.yaml") if (path / n).is_file()), None)
    if hosts_file is None:
        inv.problems.append(Problem(str(path), "hosts.yml", None, "no hosts.yml in the inventory folder"))
        return inv
    inv.hosts_file = hosts_file.name
    data, _ = _read_yaml(hosts_file, hosts_file.name, inv.problems)
    if data is None:
        return inv
    if not isinstance(data, dict) or "all" not in data:
        inv.problems.append(Problem(hosts_file.name, "all", data, "top level must be a mapping with key 'all'"))
        return inv
    _walk_group(inv, "all", data["all"], "all", hosts_file.name)
    _resolve_children(inv)
    _load_var_dirs(inv)
    return inv


def _resolve_children(inv: Inventory) -> None:
    """Give every group the hosts of its child groups, transitively (groups are global in Ansible)."""

    def members(group: str, seen: frozenset[str]) -> list[str]:
        out = list(inv.groups.get(group, []))
        for child in inv.children.get(group, []):
            if child not in seen:
                out += [h for h in members(child, seen | {child}) if h not in out]
        return out

    inv.groups = {g: members(g, frozenset({g})) for g in inv.groups}


def _walk_group(inv: Inventory, group: str, node: Any, keypath: str, rel: str) -> list[str]:
    members: list[str] = []
    if node is None:
        node = {}
    if not isinstance(node, dict):
        inv.problems.append(Problem(rel, keypath, node, "a group must be a mapping (hosts/children/vars)"))
        return members
    for key in node:
        if key not in ("hosts", "children", "vars"):
            inv.problems.append(Problem(rel, f"{keypath}.{key}", node[key],
                                        "unknown key in a group (expected hosts, children or vars)"))
    hosts = node.get("hosts") or {}
    if not isinstance(hosts, dict):
        inv.problems.append(Problem(rel, f"{keypath}.hosts", hosts, "hosts must be a mapping of name: vars"))
        hosts = {}
    for pattern, hvars in hosts.items():
        try:
            names = expand_host_pattern(str(pattern))
        except ValueError as exc:
            inv.problems.append(Problem(rel, f"{keypath}.hosts.{pattern}", pattern, str(exc)))
            continue
        if hvars is not None and not isinstance(hvars, dict):
            inv.problems.append(Problem(rel, f"{keypath}.hosts.{pattern}", hvars, "host vars must be a mapping"))
            hvars = None
        for h in names:
            members.append(h)
            if hvars:
                inv.host_vars.setdefault(h, {}).update(hvars)
                inv.host_var_files.setdefault(h, rel)
    gvars = node.get("vars")
    if gvars:
        if isinstance(gvars, dict):
            inv.group_vars.setdefault(group, []).append(Source(f"{rel} ({keypath}.vars)", gvars))
        else:
            inv.problems.append(Problem(rel, f"{keypath}.vars", gvars, "vars must be a mapping"))
    children = node.get("children") or {}
    if not isinstance(children, dict):
        inv.problems.append(Problem(rel, f"{keypath}.children", children, "children must be a mapping"))
        children = {}
    for child, cnode in children.items():
        inv.children.setdefault(group, []).append(str(child))
        members.extend(_walk_group(inv, str(child), cnode, f"{keypath}.children.{child}", rel))
    existing = inv.groups.setdefault(group, [])
    for h in members:
        if h not in existing:
            existing.append(h)
    return members


def _load_var_dirs(inv: Inventory) -> None:
    gdir, hdir = inv.path / "group_vars", inv.path / "host_vars"
    for group in [*inv.groups]:
        for f in _var_files(gdir, group):
            rel = str(f.relative_to(inv.path))
            data, vaulted = _read_yaml(f, rel, inv.problems)
            if data is None and not vaulted:
                continue
            if not isinstance(data, dict):
                inv.problems.append(Problem(rel, "(file)", data, "group vars file must be a mapping"))
                continue
            inv.group_vars.setdefault(group, []).append(Source(rel, data, vaulted))
    if gdir.is_dir():
        for f in sorted(gdir.iterdir()):
            stem = f.stem if f.is_file() else f.name
            if stem not in inv.groups:
                inv.problems.append(Problem(str(f.relative_to(inv.path)), "(group)", stem,
                                            "group_vars for a group that no host belongs to"))
    for host in inv.hosts:
        for f in _var_files(hdir, host):
            rel = str(f.relative_to(inv.path))
            data, _vaulted = _read_yaml(f, rel, inv.problems)
            if isinstance(data, dict):
                inv.host_vars.setdefault(host, {}).update(data)
                inv.host_var_files[host] = rel
    if hdir.is_dir():
        known = set(inv.hosts)
        for f in sorted(hdir.iterdir()):
            stem = f.stem if f.is_file() else f.name
            if stem not in known:
                inv.problems.append(Problem(str(f.relative_to(inv.path)), "(host)", stem,
                                            "host_vars for a host that is not in the inventory"))


class InventoryError(Exception):
    """The inventory was rejected; ``problems`` says why."""

    def __init__(self, path: Path, problems: list[Problem]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: {len(problems)} problem(s)")


def load_checked(path: Path) -> Inventory:
    """Load and validate; raise :class:`InventoryError` listing every problem."""
    from clusterctl.schema import validate

    inv = load(path)
    problems = validate(inv)
    if problems:
        raise InventoryError(path, problems)
    return inv


def load_and_validate(path: Path) -> Inventory:
    """For CLI commands: print every problem to stderr and exit with status 2 on bad input."""
    import sys

    import typer

    try:
        return load_checked(path)
    except InventoryError as exc:
        print(f"clusterctl: inventory {path} rejected ({len(exc.problems)} problem(s)); nothing was run:",
              file=sys.stderr)
        for p in exc.problems:
            print(f"  {path}/{p}", file=sys.stderr)
        raise typer.Exit(2) from None
