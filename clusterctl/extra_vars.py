"""``-e/--extra-vars`` as typed: read once, here, for both the runner (which hands them to Ansible)
and the inventory checks (which refuse bad values before anything runs, as for the inventory's own
files: extra vars have the highest precedence, so ``-e cluster_name=EVIL`` would otherwise reach
every host unchecked).

Each ``-e`` is ``key=value`` pairs (Ansible's own splitter), a JSON/YAML mapping, or ``@file`` (read
with the inventory's limits: size, encoding, aliases, depth).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterctl.errors import UsageError


@dataclass(frozen=True)
class ExtraVars:
    """One ``-e``: how it was given (for messages: ``-e`` or ``-e @path``), its variables, and the
    file it names (``@file``: passed to Ansible as it is)."""

    label: str
    data: dict[str, Any]
    file: Path | None = None


def read_one(raw: str) -> ExtraVars:
    """One ``-e`` value; :class:`UsageError` (exit 2) when it is not readable or not a mapping."""
    from clusterctl.inventory.safeyaml import Refused, load, load_file

    if raw.startswith("@"):
        given = Path(raw[1:]).expanduser()
        if not given.is_file():
            raise UsageError(f"-e {raw}: no such file")
        try:
            data, vaulted = load_file(given)
        except Refused as exc:
            raise UsageError(f"-e {raw}: {exc.key}: {exc.message}") from None
        if vaulted:  # an encrypted file: Ansible decrypts it; its keys are not known here
            return ExtraVars(f"-e {raw}", {}, given.resolve())
        if data is not None and not isinstance(data, dict):
            raise UsageError(f"-e {raw}: expected a mapping of variables")
        return ExtraVars(f"-e {raw}", dict(data or {}), given.resolve())
    text = raw.strip()
    if text.startswith(("{", "[")):
        try:
            data = load(text)
        except Refused as exc:
            raise UsageError(f"-e: not valid JSON/YAML: {exc.message}") from None
    else:
        from ansible.parsing.splitter import parse_kv

        try:
            data = parse_kv(text)
        except Exception as exc:  # Ansible's splitter raises its own error types
            raise UsageError(f"-e: expected key=value pairs, JSON or @file: {exc}") from None
        data.pop("_raw_params", None)
    if not isinstance(data, dict) or not data:
        raise UsageError("-e: expected key=value pairs, a JSON/YAML mapping or @file")
    return ExtraVars("-e", data)


def read_all(raws: Iterable[str]) -> list[ExtraVars]:
    return [read_one(raw) for raw in raws]
