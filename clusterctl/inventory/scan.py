"""The light scan done before Ansible sees an inventory: which files there are, each one read safely
(:mod:`clusterctl.inventory.safeyaml`), where each variable is set (for messages naming file and
key), and the checks Ansible does not do: symlinks leaving the inventory, host ranges too large to
expand, a host given vars in two places.

What hosts and groups there are and which value wins is Ansible's answer
(:mod:`clusterctl.inventory.loading`); this module only locates and pre-checks.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusterctl.inventory import safeyaml
from clusterctl.inventory.model import Definition, Problem

MAX_HOSTS_PER_PATTERN = 100_000
YAML_EXTS = (".yml", ".yaml", ".json")
# Ansible's inventory folder rules (INVENTORY_IGNORE_EXTS, hidden files, the vars folders).
_IGNORED_EXTS = (".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig", ".cfg", ".retry")
_VAR_DIRS = ("group_vars", "host_vars")
_RANGE = re.compile(r"\[([0-9a-zA-Z]+):([0-9a-zA-Z]+)(?::(\d+))?\]")


@dataclass
class Scan:
    root: Path
    sources: list[Path] = field(default_factory=list)  # inventory sources Ansible will be given
    data: dict[str, Any] = field(default_factory=dict)  # absolute path -> pre-checked YAML data
    vaulted: list[str] = field(default_factory=list)  # encrypted var files not decrypted (relative)
    decrypted: list[str] = field(default_factory=list)  # encrypted var files decrypted and checked
    definitions: list[Definition] = field(default_factory=list)
    yaml_sources: set[str] = field(default_factory=set)  # relative names of YAML inventory sources
    host_files: dict[str, str] = field(default_factory=dict)  # host -> its host_vars file
    group_files: set[str] = field(default_factory=set)  # group names with group_vars files
    host_var_names: set[str] = field(default_factory=set)  # names of host_vars entries
    problems: list[Problem] = field(default_factory=list)

    def rel(self, p: Path) -> str:
        try:
            return str(p.relative_to(self.root))
        except ValueError:
            return str(p)


def range_size(pattern: str) -> int:
    """How many names ``pattern`` expands to (``gpu[001:064]`` -> 64), without expanding it."""
    total = 1
    for m in _RANGE.finditer(pattern):
        start, end, step = m.group(1), m.group(2), int(m.group(3) or 1)
        if start.isdigit() and end.isdigit():
            count = int(end) - int(start) + 1
        elif len(start) == 1 and len(end) == 1:
            count = ord(end) - ord(start) + 1
        else:
            return -1
        if count <= 0 or step <= 0:
            return -1
        total *= -(-count // step)
    return total


def expand_host_pattern(name: str) -> list[str]:
    """Ansible's ``node[01:64]`` (and ``[a:f]``) ranges, expanded by Ansible; other names unchanged."""
    from ansible.plugins.inventory import expand_hostname_range

    if not _RANGE.search(name):
        return [name]
    size = range_size(name)
    if size < 0 or size > MAX_HOSTS_PER_PATTERN:
        raise ValueError(f"host range {name!r} expands to {size} names (limit {MAX_HOSTS_PER_PATTERN})")
    pending, out = [name], []
    while pending:
        item = pending.pop(0)
        if _RANGE.search(item):
            pending = list(expand_hostname_range(item)) + pending
        else:
            out.append(item)
    return out


def _outside(root: Path, p: Path) -> bool:
    try:
        p.resolve().relative_to(root.resolve())
        return False
    except (ValueError, OSError, RuntimeError):
        return True


def _walk(scan: Scan, folder: Path) -> list[Path]:
    """Files under ``folder`` in name order; symlinks leaving the inventory refused (never read)."""
    out: list[Path] = []
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        scan.problems.append(Problem(scan.rel(folder), "(folder)", None, f"cannot read: {exc.strerror}"))
        return out
    for p in entries:
        if p.name.startswith(".") or p.name.endswith(_IGNORED_EXTS):
            continue
        if p.is_symlink() and _outside(scan.root, p):
            scan.problems.append(Problem(scan.rel(p), "(file)", "<not read>",
                                         "symlink to a file outside the inventory: refused, not read"))
            continue
        if p.is_dir():
            out.extend(_walk(scan, p))
        elif p.is_file():
            out.append(p)
        else:  # a fifo, socket or device: Ansible would read it (and hang); never read
            scan.problems.append(Problem(scan.rel(p), "(file)", "<not read>",
                                         "not a regular file (a fifo, socket or device): refused, not read"))
    return out


def _read(scan: Scan, p: Path) -> tuple[Any, bool] | None:
    try:
        data, vaulted = safeyaml.load_file(p)
    except safeyaml.Refused as exc:
        scan.problems.append(Problem(scan.rel(p), exc.key, None, exc.message))
        return None
    scan.data[str(p.resolve())] = data
    if vaulted:
        (scan.decrypted if safeyaml.VAULT_PASSWORD.get() is not None else scan.vaulted).append(scan.rel(p))
    return data, vaulted


def scan(path: Path) -> Scan:
    """Pre-check the inventory at ``path`` (a folder, or one inventory file).

    The path is made absolute first: Ansible finds ``group_vars``/``host_vars`` beside an inventory
    source by its folder, and a bare ``hosts.yml`` (``clusterctl validate .``) has none."""
    path = Path(os.path.abspath(path))
    root = path if path.is_dir() else path.parent
    s = Scan(root=root)
    if not path.exists():
        s.problems.append(Problem(str(path), "(inventory)", str(path), "inventory not found"))
        return s
    candidates = [path] if path.is_file() else []
    if path.is_dir():
        for p in sorted(path.iterdir()):
            if p.name.startswith(".") or p.name in _VAR_DIRS or p.name == "vars_plugins":
                continue
            if p.name.endswith(_IGNORED_EXTS):
                continue
            if p.is_symlink() and _outside(root, p):
                s.problems.append(Problem(s.rel(p), "(file)", "<not read>",
                                          "symlink to a file outside the inventory: refused, not read"))
                continue
            candidates.extend(_walk(s, p) if p.is_dir() else [p])
    for p in candidates:
        _source(s, p)
    if not s.sources and not s.problems:
        s.problems.append(Problem(s.rel(path), "(inventory)", None,
                                  "no inventory source (hosts.yml, an INI file, a script or a plugin file)"))
    for kind in _VAR_DIRS:
        vdir = root / kind
        if vdir.is_symlink() and _outside(root, vdir):
            s.problems.append(Problem(kind, "(folder)", "<not read>", "symlink leaving the inventory: refused"))
            continue
        if vdir.is_dir():
            _vars_dir(s, vdir, kind)
    return s


def _source(s: Scan, p: Path) -> None:
    rel = s.rel(p)
    s.sources.append(p)
    if os.access(p, os.X_OK) and p.suffix not in YAML_EXTS:
        return  # an inventory script: Ansible runs it
    if p.suffix in YAML_EXTS:
        got = _read(s, p)
        if got is None:
            return
        data, _ = got
        if isinstance(data, dict) and "plugin" not in data:
            s.yaml_sources.add(rel)
            for group, node in data.items():
                _yaml_group(s, rel, str(group), node, str(group), {})
        return
    try:
        text = safeyaml.read_text(p)
    except safeyaml.Refused as exc:
        s.problems.append(Problem(rel, exc.key, None, exc.message))
        return
    _ini_ranges(s, rel, text)


def _ini_ranges(s: Scan, rel: str, text: str) -> None:
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        name = line.split()[0]
        size = range_size(name)
        if size < 0 or size > MAX_HOSTS_PER_PATTERN:
            s.problems.append(Problem(rel, f"line {n}", name,
                                      f"host range expands to {size} names (limit {MAX_HOSTS_PER_PATTERN})"))


def _yaml_group(s: Scan, rel: str, group: str, node: Any, keypath: str, host_vars_seen: dict[str, str]) -> None:
    if node is None:
        return
    if not isinstance(node, dict):
        s.problems.append(Problem(rel, keypath, node, "a group must be a mapping (hosts/children/vars)"))
        return
    for key in node:
        if key not in ("hosts", "children", "vars"):
            s.problems.append(Problem(rel, f"{keypath}.{key}", node[key],
                                      "unknown key in a group (expected hosts, children or vars)"))
    hosts = node.get("hosts") or {}
    if not isinstance(hosts, dict):
        s.problems.append(Problem(rel, f"{keypath}.hosts", hosts, "hosts must be a mapping of name: vars"))
        hosts = {}
    for pattern, hvars in hosts.items():
        pkey = f"{keypath}.hosts.{pattern}"
        size = range_size(str(pattern))
        if size < 0 or size > MAX_HOSTS_PER_PATTERN:
            s.problems.append(Problem(rel, pkey, str(pattern),
                                      f"host range expands to {size} names (limit {MAX_HOSTS_PER_PATTERN})"))
            continue
        if hvars is not None and not isinstance(hvars, dict):
            s.problems.append(Problem(rel, pkey, hvars, "host vars must be a mapping"))
            continue
        if not hvars:
            continue
        names = expand_host_pattern(str(pattern)) if size > 1 else [str(pattern)]
        for h in names:
            if h in host_vars_seen:
                s.problems.append(Problem(rel, pkey, h, f"host given variables twice (also at {host_vars_seen[h]})"))
                continue
            host_vars_seen[h] = pkey
            for k, v in hvars.items():
                s.definitions.append(Definition(rel, f"host:{h}", str(k), v))
    gvars = node.get("vars")
    if gvars is not None:
        if isinstance(gvars, dict):
            for k, v in gvars.items():
                s.definitions.append(Definition(f"{rel} ({keypath}.vars)", f"group:{group}", str(k), v))
        else:
            s.problems.append(Problem(rel, f"{keypath}.vars", gvars, "vars must be a mapping"))
    children = node.get("children") or {}
    if not isinstance(children, dict):
        s.problems.append(Problem(rel, f"{keypath}.children", children, "children must be a mapping"))
        return
    for child, cnode in children.items():
        _yaml_group(s, rel, str(child), cnode, f"{keypath}.children.{child}", host_vars_seen)


def _vars_dir(s: Scan, vdir: Path, kind: str) -> None:
    owner_kind = "group" if kind == "group_vars" else "host"
    for entry in sorted(vdir.iterdir()):
        if entry.name.startswith(".") or entry.name.endswith(_IGNORED_EXTS):
            continue
        if entry.is_symlink() and _outside(s.root, entry):
            s.problems.append(Problem(s.rel(entry), "(file)", "<not read>",
                                      "symlink to a file outside the inventory: refused, not read"))
            continue
        name = entry.name if entry.is_dir() else (entry.stem if entry.suffix in YAML_EXTS else entry.name)
        files = _walk(s, entry) if entry.is_dir() else [entry]
        if owner_kind == "group":
            s.group_files.add(name)
        else:
            s.host_var_names.add(name)
        for f in files:
            if entry.is_dir() and f.suffix not in (*YAML_EXTS, ""):
                continue
            got = _read(s, f)
            if got is None:
                continue
            data, vaulted = got
            rel = s.rel(f)
            if vaulted and rel not in s.decrypted:
                continue
            if data is None:
                continue
            if not isinstance(data, dict):
                s.problems.append(Problem(rel, "(file)", None, f"{kind} file must be a mapping of variables"))
                continue
            if owner_kind == "host":
                s.host_files[name] = rel
            for k, v in data.items():
                s.definitions.append(Definition(rel, f"{owner_kind}:{name}", str(k), v, vaulted=vaulted))
