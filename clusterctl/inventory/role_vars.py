"""Role variables set in an inventory, checked with ansible-core's ``ArgumentSpecValidator`` against
each role's ``meta/argument_specs.yml`` (the same check ``validate_argument_spec`` does when the
role runs): unknown names (with a did-you-mean), types, ``elements``, ``choices`` and nested
``options`` with their ``required`` suboptions. Templated values (``{{ ... }}``) and vaulted ones are
the roles' to check when they run. Top-level ``required`` is not enforced here: an inventory need
not set a role variable, its default applies.

Which prefix belongs to which role comes from the roles on disk (``roles/*/meta/argument_specs.yml``).
"""

from __future__ import annotations

import copy
import difflib
import re
from functools import cache, lru_cache
from typing import Any

import yaml

from clusterctl import paths
from clusterctl.inventory import tokens
from clusterctl.inventory.model import Problem, VaultValue, secret_looking

# Variable prefixes that belong to no role: Ansible's own, the playbooks', vaulted references.
NON_ROLE_PREFIXES = ("ansible_", "clusterctl_", "vault_")
_SPEC_KEYS = {"type", "elements", "choices", "required", "default", "options", "no_log", "aliases",
              "mutually_exclusive", "required_together", "required_one_of", "required_if", "required_by"}


def _module_spec(options: dict[str, Any], top: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, spec in (options or {}).items():
        s = {k: copy.deepcopy(v) for k, v in (spec or {}).items() if k in _SPEC_KEYS}
        s.pop("default", None)  # defaults are the role's; the inventory value is what is checked
        if top:
            s.pop("required", None)
        if "options" in s:
            s["options"] = _module_spec(s["options"], top=False)
        if secret_looking(name):
            s["no_log"] = True
        out[name] = s
    return out


@cache
def role_options() -> dict[str, dict[str, dict[str, Any]]]:
    """Role name -> option name -> its spec, for every role with ``meta/argument_specs.yml``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for spec_file in sorted(paths.roles().glob("*/meta/argument_specs.yml")):
        doc = yaml.safe_load(spec_file.read_text()) or {}
        options: dict[str, dict[str, Any]] = {}
        for entry in (doc.get("argument_specs") or {}).values():
            options.update((entry or {}).get("options") or {})
        out[spec_file.parent.parent.name] = _module_spec(options, top=True)
    return out


@cache
def _names_longest_first() -> tuple[str, ...]:
    return tuple(sorted(role_options(), key=len, reverse=True))


@lru_cache(maxsize=1 << 16)
def owner(key: str) -> str | None:
    """The role whose prefix ``key`` carries (the longest role name that matches), or None."""
    return next((r for r in _names_longest_first() if key.startswith(f"{r}_")), None)


def is_known_prefix(key: str) -> bool:
    return key.startswith(NON_ROLE_PREFIXES) or owner(key) is not None


def _templated(value: Any) -> bool:
    if isinstance(value, VaultValue):
        return True
    if isinstance(value, str):
        return "{{" in value or "{%" in value
    return False


def _has_template(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_template(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_template(v) for v in value)
    return _templated(value)


def _untemplated(value: Any) -> Any:
    """Nested templated/vaulted values replaced by None: their type is the role's to check at run time."""
    if isinstance(value, dict):
        return {k: (None if _templated(v) else _untemplated(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [None if _templated(v) else _untemplated(v) for v in value]
    return value


def _clean(message: str, no_log: set[str]) -> str:
    for secret in sorted(no_log, key=len, reverse=True):
        if secret:
            message = message.replace(secret, "<redacted>")
    return re.sub(r"\s+", " ", message).strip()


def _nested_hint(message: str, spec: dict[str, Any]) -> str:
    m = re.search(r"(?:module: )?(\S+?)\. Supported parameters include", message)
    if not m:
        return ""
    bad = m.group(1).split(".")[-1].split(",")[0]
    names: list[str] = []
    stack = [spec]
    while stack:
        s = stack.pop()
        for name, sub in s.items():
            names.append(name)
            if isinstance(sub, dict) and isinstance(sub.get("options"), dict):
                stack.append(sub["options"])
    near = difflib.get_close_matches(bad, names, n=1)
    return f"; did you mean '{near[0]}'?" if near else ""


def check(file: str, key: str, value: Any, shown_key: str | None = None) -> list[Problem]:
    """Problems of one inventory variable ``key`` (shown as ``shown_key``, e.g. ``host.key``)."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

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
    checked = _untemplated(value) if _has_template(value) else value
    result = ArgumentSpecValidator({key: spec}).validate({key: checked})
    out = []
    for err in result.errors:
        msg = _clean(str(err), set(map(str, result._no_log_values)))
        msg = msg.replace(f"argument '{key}' ", "").replace(f"argument '{key}'", "")
        hint = _nested_hint(str(err), {key: spec})
        if hint or "Supported parameters include" in msg:
            msg = "unknown option " + msg.split(". Supported")[0].split(": ")[-1] + hint + \
                  "; supported:" + msg.split("Supported parameters include:")[-1].rstrip(".")
            hint = ""
        out.append(Problem(file, where, "<redacted>" if spec.get("no_log") else value,
                           f"{msg}{hint} (role {role}, roles/{role}/meta/argument_specs.yml)"))
    # the right shape: now each value that is written into a file must be one safe token
    return out or tokens.check(file, key, value, where)
