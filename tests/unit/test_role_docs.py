"""Every public role variable is prefixed with the role name and documented three times: in
defaults/main.yml, in meta/argument_specs.yml (with a type and a description) and in a variable
table of the role's README; per-host overrides without a default ("Host var, ...") in the last
two. Registered results and facts a role sets are internals (``__<role>_``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[2] / "roles"
NAMES = sorted(p.name for p in ROLES.iterdir() if (p / "tasks" / "main.yml").is_file())


def defaults(role: str) -> dict[str, Any]:
    f = ROLES / role / "defaults" / "main.yml"
    return (yaml.safe_load(f.read_text()) or {}) if f.is_file() else {}


def spec_options(role: str) -> dict[str, Any]:
    spec = yaml.safe_load((ROLES / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    out: dict[str, Any] = {}
    for entry in spec.values():
        out.update(entry.get("options") or {})
    return out


def readme_table_vars(role: str) -> set[str]:
    text = (ROLES / role / "README.md").read_text()
    return {v for line in text.splitlines() if line.startswith("|") for v in re.findall(r"`([a-z][a-z0-9_]*)`", line)}


@pytest.mark.parametrize("role", NAMES)
def test_defaults_are_prefixed(role: str) -> None:
    bad = [k for k in defaults(role) if not k.startswith(f"{role}_")]
    assert not bad, f"roles/{role}/defaults/main.yml: not prefixed {role}_: {bad}"


def host_vars_only(options: dict[str, Any]) -> set[str]:
    """Options a host sets for itself (per-node overrides): no default, described as such."""
    return {k for k, o in options.items()
            if "default" not in o and str(o.get("description", "")).startswith("Host var")}


@pytest.mark.parametrize("role", NAMES)
def test_argument_specs_match_defaults(role: str) -> None:
    d, s = set(defaults(role)), spec_options(role)
    assert sorted(d - set(s)) == [], f"roles/{role}: in defaults, not in meta/argument_specs.yml"
    assert sorted(set(s) - d - host_vars_only(s)) == [], f"roles/{role}: in meta/argument_specs.yml, not in defaults"
    for name, opt in s.items():
        assert opt.get("type") and opt.get("description"), f"roles/{role}/meta/argument_specs.yml: {name}"


@pytest.mark.parametrize("role", NAMES)
def test_readme_documents_every_variable(role: str) -> None:
    missing = sorted(set(spec_options(role)) - readme_table_vars(role))
    assert not missing, f"roles/{role}/README.md: no variable table row for {missing}"


@pytest.mark.parametrize("role", NAMES)
def test_registered_results_and_facts_are_internal(role: str) -> None:
    bad = []
    for f in sorted((ROLES / role).glob("*/*.yml")):
        if f.parent.name not in ("tasks", "handlers"):
            continue
        for task in yaml.safe_load(f.read_text()) or []:
            for t in [task, *task.get("block", []), *task.get("rescue", []), *task.get("always", [])]:
                names = [t["register"]] if "register" in t else []
                names += [k for k in (t.get("ansible.builtin.set_fact") or t.get("set_fact") or {})
                          if k != "cacheable"]
                bad += [f"{f.relative_to(ROLES)}: {n}" for n in names if not n.startswith(f"__{role}_")]
    assert not bad, bad
