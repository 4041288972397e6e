"""Every module's DOCUMENTATION (with its doc fragments, as ``ansible-doc`` renders it) matches the
argument_spec its main() builds: same options, types, defaults, choices, elements and required;
EXAMPLES use only documented options; RETURN is valid YAML. What validate-modules checks for a
collection, for the modules of this repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fabric_modrun import load_module

from clusterctl import collection

REPO = Path(__file__).resolve().parents[2]
PLUGINS = REPO / "plugins"
MODULES = sorted(p.stem for p in (PLUGINS / "modules").glob("*.py"))


class _Spec(Exception):
    def __init__(self, kwargs: dict[str, Any]) -> None:
        super().__init__("argument_spec captured")
        self.kwargs = kwargs


def argument_spec(name: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The argument_spec main() passes to AnsibleModule (main() stops there)."""
    mod = load_module(name)

    def capture(**kwargs: Any) -> None:
        raise _Spec(kwargs)

    monkeypatch.setattr(mod, "AnsibleModule", capture)
    with pytest.raises(_Spec) as got:
        mod.main()
    return dict(got.value.kwargs["argument_spec"])


@pytest.fixture(scope="module")
def rendered() -> dict[str, Any]:
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), **collection.ansible_env())
    doc = Path(sys.executable).parent / "ansible-doc"
    out = subprocess.run([str(doc), "-t", "module", "--json", *(f"clusterctl.hpc.{m}" for m in MODULES)],
                         capture_output=True, text=True, env=env, cwd=REPO, check=False)
    assert out.returncode == 0, out.stderr
    assert "WARNING" not in out.stderr, out.stderr
    data: dict[str, Any] = json.loads(out.stdout)
    return {k.removeprefix("clusterctl.hpc."): v for k, v in data.items()}


def test_every_module_is_rendered(rendered: dict[str, Any]) -> None:
    assert sorted(rendered) == MODULES


@pytest.mark.parametrize("name", MODULES)
def test_documented_options_match_argument_spec(name: str, rendered: dict[str, Any],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    doc = rendered[name]["doc"]
    spec = argument_spec(name, monkeypatch)
    options = doc.get("options", {})
    assert sorted(options) == sorted(spec), f"{name}: documented {sorted(options)} vs argument_spec {sorted(spec)}"
    for opt, s in spec.items():
        d = options[opt]
        where = f"{name}: option {opt}"
        assert d.get("type", "str") == s.get("type", "str"), where
        assert d.get("default") == s.get("default"), where
        assert bool(d.get("required", False)) == bool(s.get("required", False)), where
        assert d.get("choices") == s.get("choices"), where
        assert d.get("elements") == s.get("elements"), where
        assert d.get("description"), f"{where} has no description"
    assert doc["attributes"]["check_mode"]["support"] in ("full", "partial", "none")
    assert doc.get("author"), name


@pytest.mark.parametrize("name", MODULES)
def test_examples_use_documented_options_and_return_parses(name: str, rendered: dict[str, Any]) -> None:
    options = set(rendered[name]["doc"].get("options", {}))
    mod = load_module(name)
    tasks = yaml.safe_load(mod.EXAMPLES)
    assert not [t for t in tasks if name in t], f"{name}: examples call the module by its short name"
    used = [t[f"clusterctl.hpc.{name}"] for t in tasks if f"clusterctl.hpc.{name}" in t]
    assert used, f"{name}: no example calls the module (by FQCN)"
    for args in used:
        assert set(args or {}) <= options, f"{name}: example uses {sorted(set(args or {}) - options)}"
    returned = yaml.safe_load(mod.RETURN)
    assert isinstance(returned, dict) and returned, name
    for key, val in returned.items():
        assert val.get("description"), f"{name}: return value {key} has no description"
