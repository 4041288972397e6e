"""Read an inventory the way Ansible does: ansible-core's ``InventoryManager`` builds hosts and groups
from any source it reads (YAML, INI, folders, scripts, plugin files), and the variables each host
sees are combined in Ansible's order (``VARIABLE_PRECEDENCE``, ``sort_groups``, the vars plugins
that read group_vars/ and host_vars/).

Every file was pre-checked first (:mod:`clusterctl.inventory.scan`); Ansible is handed the data
that scan read, so a hostile file is refused before Ansible parses it. Group-level variables are
combined once per distinct set of groups, so reading is linear in the number of hosts.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from clusterctl.inventory.model import Definition, Inventory, Problem, VaultValue
from clusterctl.inventory.scan import Scan, scan

#: bounds on a dynamic inventory script (each run: --list, and --host when it gives no _meta)
SCRIPT_SECONDS = 60.0
SCRIPT_MAX_BYTES = 64 * 1024 * 1024  # its output, stdout and stderr together (as safeyaml.MAX_BYTES)
SCRIPT_MAX_MEMORY = 4 * 1024 * 1024 * 1024  # address space (RLIMIT_AS)

_MAGIC = {"inventory_file", "inventory_dir", "inventory_hostname", "inventory_hostname_short", "group_names"}


def _plain(v: Any) -> Any:
    """Ansible's tagged values as plain Python (a vault value stays opaque)."""
    try:
        from ansible.parsing.vault import EncryptedString as vaulted  # ansible-core 2.19+
    except ImportError:  # 2.16 .. 2.18
        from ansible.parsing.yaml.objects import AnsibleVaultEncryptedUnicode as vaulted

    if isinstance(v, vaulted):
        return VaultValue()
    if isinstance(v, VaultValue) or v is None or isinstance(v, bool):
        return v
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    if isinstance(v, dict):
        return {_plain(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    return v


def _limit_child() -> None:  # runs in the script's process before exec
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (SCRIPT_MAX_MEMORY, SCRIPT_MAX_MEMORY))
    cpu = int(SCRIPT_SECONDS) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))


class _BoundedPopen:
    """What ansible-core's script inventory plugin uses of ``subprocess.Popen`` (``communicate()``,
    ``returncode``), with bounds: :data:`SCRIPT_SECONDS` of wall time, :data:`SCRIPT_MAX_BYTES` of
    output, :data:`SCRIPT_MAX_MEMORY` of address space. Over a bound, the script's whole process
    group is killed and AnsibleError says which bound (the inventory is then refused, exit 2)."""

    def __init__(self, cmd: list[str], **kwargs: Any) -> None:
        import subprocess

        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True, preexec_fn=_limit_child)
        self.returncode: int | None = None

    def _kill(self) -> None:
        import os
        import signal

        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            self.proc.kill()
        self.proc.wait()

    def communicate(self) -> tuple[bytes, bytes]:
        import selectors
        import time

        from ansible.errors import AnsibleError

        assert self.proc.stdout is not None and self.proc.stderr is not None
        chunks: dict[int, list[bytes]] = {self.proc.stdout.fileno(): [], self.proc.stderr.fileno(): []}
        total = 0
        deadline = time.monotonic() + SCRIPT_SECONDS
        with selectors.DefaultSelector() as sel:
            for f in (self.proc.stdout, self.proc.stderr):
                sel.register(f, selectors.EVENT_READ)
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    self._kill()
                    raise AnsibleError(f"inventory script {self.cmd[0]} did not finish within {SCRIPT_SECONDS:.0f} "
                                       "seconds: killed")
                for key, _ in sel.select(min(left, 1.0)):
                    data = key.fileobj.read1(1 << 16)  # type: ignore[union-attr]
                    if not data:
                        sel.unregister(key.fileobj)
                        continue
                    total += len(data)
                    if total > SCRIPT_MAX_BYTES:
                        self._kill()
                        raise AnsibleError(f"inventory script {self.cmd[0]} printed more than "
                                           f"{SCRIPT_MAX_BYTES // (1024 * 1024)} MiB: killed")
                    chunks[key.fd].append(data)
        try:
            self.returncode = self.proc.wait(max(deadline - time.monotonic(), 0.1))
        except Exception:
            self._kill()
            raise AnsibleError(f"inventory script {self.cmd[0]} did not exit within {SCRIPT_SECONDS:.0f} "
                               "seconds: killed") from None
        if self.returncode in (-9, -24) and total == 0:  # SIGKILL (memory), SIGXCPU
            raise AnsibleError(f"inventory script {self.cmd[0]} was killed (memory limit "
                               f"{SCRIPT_MAX_MEMORY // (1024 ** 3)} GiB or CPU time)")
        return b"".join(chunks[self.proc.stdout.fileno()]), b"".join(chunks[self.proc.stderr.fileno()])


@functools.cache
def _collection_loader() -> None:
    """ansible-core's collection loader, as its CLIs install it: without it a plugin file naming
    ``ansible.builtin.constructed`` (any FQCN) cannot be loaded in this process."""
    from ansible.plugins.loader import init_plugin_loader
    from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder

    if not any(isinstance(f, _AnsibleCollectionFinder) for f in __import__("sys").meta_path):
        init_plugin_loader()


@contextmanager
def _ansible(failures: list[str]) -> Iterator[Any]:
    """Ansible's constants as validation needs them, its warnings collected instead of printed."""
    import subprocess
    import types

    from ansible import constants as C
    from ansible.inventory import data as inventory_data
    from ansible.plugins.inventory import script as script_plugin
    from ansible.utils.display import Display

    _collection_loader()
    display = Display()
    saved = {k: getattr(C, k) for k in ("INVENTORY_ANY_UNPARSED_IS_FAILED", "INVENTORY_ENABLED")}
    methods = {m: display.__dict__.get(m) for m in ("warning", "error_as_warning")}

    def warn(msg: str = "", *args: Any, **kwargs: Any) -> None:
        exc = kwargs.get("exception")
        text = str(getattr(exc, "message", "") or exc or msg)
        failures.append(f"{msg} {text}".strip().splitlines()[0][:300])

    C.INVENTORY_ANY_UNPARSED_IS_FAILED = True
    enabled = list(C.INVENTORY_ENABLED)
    if "auto" in enabled and "yaml" in enabled:  # a YAML inventory is read once, not first by auto
        enabled.remove("auto")
        enabled.append("auto")
    C.INVENTORY_ENABLED = enabled
    display.warning = warn
    display.error_as_warning = warn
    # InventoryData.add_host asks for the folder of the current source once per host (two stat calls
    # each): the answer is remembered for the duration of this read (the sources do not move meanwhile)
    basedir = inventory_data.basedir
    inventory_data.basedir = functools.lru_cache(maxsize=64)(basedir)
    # an inventory script runs bounded (time, output, memory): see _BoundedPopen
    script_subprocess = script_plugin.subprocess
    script_plugin.subprocess = types.SimpleNamespace(PIPE=subprocess.PIPE, Popen=_BoundedPopen)
    try:
        yield C
    finally:
        script_plugin.subprocess = script_subprocess
        inventory_data.basedir = basedir
        for k, v in saved.items():
            setattr(C, k, v)
        for m, fn in methods.items():
            if fn is None:
                display.__dict__.pop(m, None)
            else:
                setattr(display, m, fn)


def _data_loader(s: Scan) -> Any:
    from ansible.parsing.dataloader import DataLoader

    class PrecheckedLoader(DataLoader):
        """Serves the data the scan read (checked), never re-reading those files."""

        def load_from_file(self, file_name: str, *args: Any, **kwargs: Any) -> Any:
            key = str(Path(self.path_dwim(file_name)).resolve())
            # a plugin file (``plugin: ...``, pre-checked too) is read by Ansible itself: its templates
            # (constructed's compose/groups) must carry Ansible's trust marks to be evaluated
            if key in s.data and not (isinstance(s.data[key], dict) and "plugin" in s.data[key]):
                return s.data[key]
            return super().load_from_file(file_name, *args, **kwargs)

    dl = PrecheckedLoader()
    dl.set_basedir(str(s.root))
    return dl


def load(path: Path) -> Inventory:
    """Read the inventory at ``path``. Problems (pre-checks, Ansible's failures) land in ``inv.problems``.

    The cyclic garbage collector is paused while reading: the objects made are all kept, and its
    passes over a growing heap would make reading 100,000 hosts grow faster than linearly.
    """
    with gc_paused():
        return _load(path)


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (on again after it if it was on)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _match(im: Any, pattern: str) -> list[str]:
    """The hosts ``pattern`` selects, by ansible-core's matching (its "could not match" warning
    collected, not printed: the caller says it)."""
    with _ansible([]):
        return [h.name for h in im.list_hosts(pattern)]


def _load(path: Path) -> Inventory:
    s = scan(path)
    inv = Inventory(path=path, problems=list(s.problems))
    inv.vaulted_files = list(s.vaulted)
    inv.decrypted_files = list(s.decrypted)
    if s.problems or not s.sources:
        inv.definitions = s.definitions
        return inv
    inv.hosts_file = next(iter(sorted(s.yaml_sources)), s.rel(s.sources[0]))
    failures: list[str] = []
    with _ansible(failures) as C:
        from ansible.errors import AnsibleError
        from ansible.inventory.manager import InventoryManager

        dl = _data_loader(s)
        try:
            im = InventoryManager(loader=dl, sources=[str(p) for p in s.sources])
        except AnsibleError as exc:
            detail = "; ".join(dict.fromkeys(failures)) or str(exc.message).splitlines()[0]
            src = str(exc.message).rsplit(" ", 1)[-1]
            inv.problems.append(Problem(s.rel(Path(src)) if src.startswith("/") else inv.hosts_file,
                                        "(inventory)", None, f"Ansible cannot read this inventory source: {detail}"))
            return inv
        except Exception as exc:
            inv.problems.append(Problem(inv.hosts_file, "(inventory)", None,
                                        f"Ansible cannot read the inventory: {type(exc).__name__}"))
            return inv
        _fill(inv, s, im, dl, C)
    return inv


def _fill(inv: Inventory, s: Scan, im: Any, dl: Any, C: Any) -> None:
    from ansible.inventory.helpers import get_group_vars, sort_groups
    from ansible.utils.vars import combine_vars
    from ansible.vars.plugins import get_vars_from_inventory_sources

    sources = im._sources
    hosts = list(im._inventory.hosts.values())
    inv.host_order = [h.name for h in hosts]
    inv.match = functools.partial(_match, im)
    inv.groups = {name: [h.name for h in g.get_hosts()] for name, g in im.groups.items()}
    inv.group_rank = {name: (int(g.depth), int(g.priority)) for name, g in im.groups.items()}
    all_group = im.groups["all"]

    def plugins(entities: list[Any]) -> dict[str, Any]:
        return get_vars_from_inventory_sources(dl, sources, entities, "task")  # the stage VariableManager.get_vars uses

    all_inventory = all_group.get_vars()
    all_plugins = plugins([all_group])
    cache: dict[tuple[str, ...], dict[str, Any]] = {}
    replace = C.DEFAULT_HASH_BEHAVIOUR != "merge"
    with_files = s.host_files
    for host in hosts:
        key = tuple(g.name for g in host.get_groups())  # hosts of the same groups share the group layers
        if key not in cache:
            groups = sort_groups([g for g in host.get_groups() if g.name != "all"])
            layers = {"all_inventory": all_inventory, "groups_inventory": get_group_vars(groups),
                      "all_plugins_inventory": all_plugins, "groups_plugins_inventory": plugins(groups)}
            merged: dict[str, Any] = {}
            for entry in C.VARIABLE_PRECEDENCE:
                merged = combine_vars(merged, layers.get(entry, {}))
            cache[key] = merged
        base = cache[key]
        # combine_vars with hash_behaviour=replace is ``a | b`` after checking both are mappings
        hv = base | host.vars if replace and type(host.vars) is dict else combine_vars(base, host.vars)
        if host.name in with_files:
            hv = combine_vars(hv, plugins([host]))
        inv.host_vars[host.name] = hv
        inv.host_var_files[host.name] = with_files.get(host.name, inv.hosts_file)
    inv.group_spec = {k: _plain(v) for k, v in combine_vars(all_inventory, all_plugins).items()}
    # where each variable was set: the scan's YAML and var files, then what only Ansible saw
    defs = list(s.definitions)
    located = {(d.owner, d.key) for d in defs}
    other = next((s.rel(p) for p in s.sources if s.rel(p) not in s.yaml_sources), inv.hosts_file)
    for name, g in im.groups.items():
        for k, v in g.vars.items():
            if (f"group:{name}", k) not in located:
                defs.append(Definition(other, f"group:{name}", str(k), _plain(v)))
    if len(s.yaml_sources) < len(s.sources):
        for host in hosts:
            for k, v in host.vars.items():
                if k not in _MAGIC and (f"host:{host.name}", k) not in located:
                    defs.append(Definition(other, f"host:{host.name}", str(k), _plain(v)))
    inv.definitions = defs
    order = [d for d in defs if d.owner == "group:all" and "(" in d.file] + \
            [d for d in defs if d.owner == "group:all" and "(" not in d.file]
    for d in order:
        inv.spec_files[d.key] = d.file.split(" (")[0]
    known_hosts = set(inv.host_order)
    for name in sorted(s.group_files - set(inv.groups)):
        inv.problems.append(Problem(f"group_vars/{name}", "(group)", name,
                                    "group_vars for a group that is not in the inventory"))
    for name in sorted(s.host_var_names - known_hosts):
        inv.problems.append(Problem(f"host_vars/{name}", "(host)", name,
                                    "host_vars for a host that is not in the inventory"))
