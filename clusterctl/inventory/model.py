"""What an inventory is once read: hosts, groups, the variables each host sees (Ansible's
precedence), and every place a variable was set (file, owner, key), so a message can name them.

Nothing here reads a file or imports Ansible; :mod:`clusterctl.inventory.loading` fills it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

NODE_GROUPS = ("slurm_controller", "slurm_compute", "slurm_login")
KNOWN_GROUPS = (*NODE_GROUPS, "storage_clients")

# Keys whose value is never printed (a secret, or what looks like one).
SECRET_KEY = re.compile(
    r"(^|_)(password|passwd|pass|secret|token|munge_key|access_key|secret_key|metaurl|meta_url|private_key)"
    r"($|_)", re.IGNORECASE)


@lru_cache(maxsize=1 << 16)
def secret_looking(key: str) -> bool:
    """True for a key whose value must never be shown (``munge_key``, ``*_password``, ...).

    Remembered per key: an inventory asks about the same few keys once per host.
    """
    parts = [p for p in re.split(r"[.\[\]]", key) if p]
    for p in parts:
        if p.endswith(_NOT_SECRET_SUFFIXES):
            continue
        if SECRET_KEY.search(p):
            return True
        # a mistyped secret key (slurm_dbd_pasword) is still a secret: its value is never shown
        tokens = [t.lower() for t in p.split("_") if len(t) > 3]
        if any(difflib.get_close_matches(t, _SECRET_WORDS, n=1, cutoff=0.75) for t in tokens):
            return True
    return False


_SECRET_WORDS = ("password", "passwd", "secret", "token", "metaurl", "credential", "credentials")


_NOT_SECRET_SUFFIXES = ("_file", "_path", "_dir")  # where a secret is, not the secret
_KEY_MATERIAL = re.compile(r"PRIVATE KEY|PuTTY-User-Key")


class VaultValue:
    """An inline ``!vault`` value (structure checked) or a value from an encrypted file."""

    def __repr__(self) -> str:
        return "<vaulted>"


@dataclass
class Problem:
    """One reason the inventory is refused: file (relative to the inventory), key path, value, message."""

    file: str
    key: str
    value: Any
    message: str

    def shown_value(self) -> str:
        if isinstance(self.value, VaultValue):
            return "<vaulted>"
        if secret_looking(self.key) or self.value == "<redacted>" or _KEY_MATERIAL.search(repr(self.value)):
            return "<redacted>"
        return _cut(repr(_mask_secrets(self.value)), 200)

    def __str__(self) -> str:
        # Key and message are cut as the value is: a 100,000-character key (or a message quoting a
        # long expression) must not turn one problem into a screenful.
        return (f"{_printable(self.file)}: {_cut(_printable(self.key), 200)}: {_cut(self.message, 400)} "
                f"(value: {self.shown_value()})")


def _mask_secrets(value: Any, depth: int = 0) -> Any:
    """``value`` with the value of every secret-looking key inside replaced by ``<redacted>`` (a problem
    about a whole list, ``[{name: x, pasword: ...}]``, must not show the password of a misspelt key); a
    reference (``vault_data_metaurl``, ``{{ vault_x }}``) is not a secret and stays."""
    if depth > 20:
        return "<redacted>"
    if isinstance(value, dict):
        return {k: ("<redacted>" if secret_looking(str(k)) and not _reference(v) else _mask_secrets(v, depth + 1))
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mask_secrets(v, depth + 1) for v in value]
    return value


def _reference(v: Any) -> bool:
    return isinstance(v, str) and (v.startswith("vault_") or v.strip().startswith("{{")) and " " not in v.strip("{} ")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "...(cut)"


def _printable(text: str) -> str:
    """Control characters shown escaped (a key with a newline stays on one line)."""
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group(0))[1:-1], str(text))


class InventoryError(Exception):
    """The inventory was refused; ``problems`` says why (each names file, key and value)."""

    def __init__(self, path: Path, problems: list[Problem]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: {len(problems)} problem(s)")


@dataclass(frozen=True)
class Definition:
    """One variable set in one place: ``owner`` is ``group:<name>`` or ``host:<name>``."""

    file: str
    owner: str
    key: str
    value: Any
    vaulted: bool = False  # set in a vault-encrypted file (decrypted to be checked)

    @property
    def shown_key(self) -> str:
        kind, _, name = self.owner.partition(":")
        return self.key if kind == "group" else f"{name}.{self.key}"


@dataclass
class Inventory:
    path: Path
    hosts_file: str = "hosts.yml"
    groups: dict[str, list[str]] = field(default_factory=dict)  # group -> hosts (direct and nested)
    host_vars: dict[str, dict[str, Any]] = field(default_factory=dict)  # effective vars of each host
    host_var_files: dict[str, str] = field(default_factory=dict)  # host -> file its own vars came from
    group_spec: dict[str, Any] = field(default_factory=dict)  # effective vars of group all
    spec_files: dict[str, str] = field(default_factory=dict)  # key of group all -> file that set it
    definitions: list[Definition] = field(default_factory=list)  # every variable, where it was set
    vaulted_files: list[str] = field(default_factory=list)  # encrypted var files not checked (no password)
    decrypted_files: list[str] = field(default_factory=list)  # encrypted var files decrypted and checked
    warnings: list[str] = field(default_factory=list)  # accepted, but said (command-running lookups)
    host_order: list[str] = field(default_factory=list)
    #: group -> (depth, ansible_group_priority): Ansible's order of group variables (a later one wins)
    group_rank: dict[str, tuple[int, int]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    #: the hosts an Ansible host pattern (``--limit``) selects, by ansible-core's own matching
    match: Callable[[str], list[str]] | None = field(default=None, repr=False, compare=False)

    @property
    def hosts(self) -> list[str]:
        return list(self.host_order)

    def spec(self) -> dict[str, Any]:
        """The cluster spec: the variables of group ``all`` with Ansible's precedence."""
        return dict(self.group_spec)

    def spec_sources(self) -> dict[str, str]:
        """Key of the cluster spec -> file that set it (the one that wins)."""
        return dict(self.spec_files)

    def address(self, host: str) -> str:
        v = self.host_vars.get(host, {}).get("ansible_host", host)
        return v if isinstance(v, str) else repr(v)
