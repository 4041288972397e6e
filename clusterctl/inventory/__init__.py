"""The inventory layer: read an inventory the way Ansible does and refuse bad input before anything runs.

Modules, each importing only those above it:

* :mod:`~clusterctl.inventory.model` - Problem, InventoryError, Inventory, VaultValue (no I/O)
* :mod:`~clusterctl.inventory.safeyaml` - one file read with limits (size, encoding, aliases, depth)
* :mod:`~clusterctl.inventory.scan` - the files of an inventory, pre-checked, and where each key is set
* :mod:`~clusterctl.inventory.loading` - ansible-core's InventoryManager and variable precedence
* :mod:`~clusterctl.inventory.spec`, :mod:`~clusterctl.inventory.role_vars`,
  :mod:`~clusterctl.inventory.secrets` - the rules
* :mod:`~clusterctl.inventory.validation` - every rule over a loaded inventory

Nothing here exits the process: :func:`load_checked` raises :class:`InventoryError` with the list of
problems, and the commands print them and exit 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clusterctl.inventory.loading import load
from clusterctl.inventory.model import (
    KNOWN_GROUPS,
    NODE_GROUPS,
    Definition,
    Inventory,
    InventoryError,
    Problem,
    VaultValue,
)
from clusterctl.inventory.scan import expand_host_pattern
from clusterctl.inventory.validation import command_lookups, validate

if TYPE_CHECKING:
    from clusterctl.extra_vars import ExtraVars

__all__ = [
    "KNOWN_GROUPS", "NODE_GROUPS", "Inventory", "InventoryError", "Problem", "VaultValue",
    "expand_host_pattern", "hosts_matching", "load", "load_checked", "read_spec", "require_decrypted", "validate",
]


def hosts_matching(inv: Inventory, pattern: str, option: str = "--limit") -> list[str]:
    """The hosts an Ansible host pattern selects (ansible-core's own matching); ``@FILE`` is a file
    of patterns, one a line or comma-separated, as ansible-playbook reads it. An unreadable file is
    :class:`~clusterctl.errors.UsageError` naming ``option`` and the path."""
    from clusterctl.errors import UsageError
    from clusterctl.paths import read_regular

    if inv.match is None:
        return []
    if not pattern.startswith("@"):
        return inv.match(pattern)
    path = Path(pattern[1:])
    try:
        text = read_regular(path, 1 << 20, what=f"{option} file").decode("utf-8", errors="replace")
    except (OSError, ValueError) as exc:
        raise UsageError(f"{option} {pattern}: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    names = [w for line in text.splitlines() for w in line.replace(",", " ").split() if not w.startswith("#")]
    return list(dict.fromkeys(h for name in names for h in inv.match(name)))


def load_checked(path: Path, extra: Sequence[ExtraVars] = ()) -> Inventory:
    """Load and validate; raise :class:`InventoryError` listing every problem.

    ``extra``: the run's ``-e`` variables, applied over everything (Ansible's highest precedence)
    and checked as if set for group ``all`` in a file named like the ``-e`` that gave them (plain
    secrets are allowed there: they never reach a process list, clusterctl.runner).
    """
    inv = load(path)
    for ev in extra:
        for key, value in ev.data.items():
            inv.definitions.append(Definition(ev.label, "group:all", str(key), value))
            inv.group_spec[key] = value
            inv.spec_files[key] = ev.label
            for hv in inv.host_vars.values():
                hv[key] = value
    problems = validate(inv)
    if problems:
        raise InventoryError(path, problems)
    inv.warnings = command_lookups(inv)
    return inv


def require_decrypted(inv: Inventory) -> None:
    """Before a run: vault-encrypted files without a vault password would stop ansible-playbook on
    every host ("never reached"); :class:`~clusterctl.errors.UsageError` (exit 2) naming them instead."""
    from clusterctl.errors import UsageError

    if inv.vaulted_files:
        raise UsageError(f"{inv.vaulted_files[0]}: (file): vault-encrypted and no vault password was given "
                         f"(--vault-password-file); nothing was run (value: {', '.join(inv.vaulted_files)})")


def read_spec(path: Path) -> dict[str, Any]:
    """The cluster spec (group ``all``'s variables, Ansible's precedence) without validating.

    Files the pre-checks refuse are left out (the spec of what could be read); vaulted values stay
    opaque.
    """
    inv = load(path)
    if inv.group_spec:
        return inv.spec()
    # no usable inventory source: group all's variables from the files the pre-checks accepted
    spec: dict[str, Any] = {}
    for d in inv.definitions:
        if d.owner == "group:all":
            spec[d.key] = d.value
    return spec
