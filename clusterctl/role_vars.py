"""Role variables set in an inventory, checked against each role's ``meta/argument_specs.yml``
before anything runs: an unknown variable of a role (a typo the role would silently ignore),
a value of the wrong type, or one outside the option's choices is a validation problem naming
the file, the key and the value. Templated values (``{{ ... }}``) and vaulted ones are the roles'
to check when they run.
"""

from __future__ import annotations

import difflib
from functools import cache
from typing import Any

import yaml

from clusterctl import paths
from clusterctl.inventory import Problem, VaultValue

_BOOLS = {"yes", "no", "true", "false", "on", "off", "1", "0", "y", "n"}


@cache
def role_options() -> dict[str, dict[str, dict[str, Any]]]:
    """Role name -> option name -> its spec, for every role with ``meta/argument_specs.yml``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for spec_file in sorted(paths.roles().glob("*/meta/argument_specs.yml")):
        doc = yaml.safe_load(spec_file.read_text()) or {}
        options: dict[str, dict[str, Any]] = {}
        for entry in (doc.get("argument_specs") or {}).values():
            options.update((entry or {}).get("options") or {})
        out[spec_file.parent.parent.name] = options
    return out


def owner(key: str) -> str | None:
    """The role whose prefix ``key`` carries (the longest role name that matches), or None."""
    names = sorted(role_options(), key=len, reverse=True)
    return next((r for r in names if key.startswith(f"{r}_")), None)


def _type_error(kind: str, value: Any) -> str | None:
    if kind == "int":
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and value.strip().lstrip("-").isdigit())
        return None if ok else "must be an integer"
    if kind == "bool":
        ok = isinstance(value, bool) or (isinstance(value, (str, int)) and str(value).lower() in _BOOLS)
        return None if ok else "must be true or false"
    if kind == "list":
        return None if isinstance(value, (list, str)) else "must be a list"
    if kind == "dict":
        return None if isinstance(value, dict) else "must be a mapping"
    if kind == "str":
        return None if isinstance(value, (str, int, float)) and not isinstance(value, bool) else "must be a string"
    return None  # path, raw, float, ...: the role converts


def _templated(value: Any) -> bool:
    return isinstance(value, VaultValue) or (isinstance(value, str) and ("{{" in value or "{%" in value))


def check(file: str, key: str, value: Any, shown_key: str | None = None) -> list[Problem]:
    """Problems of one inventory variable ``key`` (shown as ``shown_key``, e.g. ``host.key``)."""
    role = owner(key)
    if role is None:
        return []
    where = shown_key or key
    options = role_options()[role]
    spec = options.get(key)
    if spec is None:
        near = difflib.get_close_matches(key, list(options), n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        return [Problem(file, where, value, f"not a variable of role {role} (roles/{role}/meta/argument_specs.yml)"
                                            f"{hint}")]
    if _templated(value) or value is None:
        return []
    why = _type_error(str(spec.get("type", "str")), value)
    if why:
        return [Problem(file, where, value, f"{why} (role {role}, type {spec.get('type', 'str')})")]
    choices = spec.get("choices")
    if choices and not isinstance(value, (list, dict)) and value not in choices:
        return [Problem(file, where, value, f"must be one of {', '.join(map(str, choices))} (role {role})")]
    return []
