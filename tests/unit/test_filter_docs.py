"""Issue 27 (5): every filter plugin is documented. Each filter named by a FilterModule in
plugins/filter/ has a sidecar plugins/filter/<name>.yml whose options are the function's own
parameters, and `ansible-doc -t filter clusterctl.hpc.<name>` renders it."""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterctl import collection

REPO = Path(__file__).resolve().parents[2]
FILTER_DIR = REPO / "plugins" / "filter"


def _filters() -> dict[str, Callable[..., Any]]:
    out: dict[str, Callable[..., Any]] = {}
    for path in sorted(FILTER_DIR.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"_filterdoc_{path.stem}", path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out.update(mod.FilterModule().filters())
    return out


FILTERS = _filters()


def test_the_filters_are_found() -> None:
    assert {"hostlist_compress", "nccl_env", "systemd_quote"} <= set(FILTERS)


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_each_filter_has_docs_matching_its_signature(name: str) -> None:
    sidecar = FILTER_DIR / f"{name}.yml"
    assert sidecar.is_file(), f"{sidecar.relative_to(REPO)} is missing"
    doc = yaml.safe_load(sidecar.read_text())
    assert set(doc) == {"DOCUMENTATION", "EXAMPLES", "RETURN"}
    d = doc["DOCUMENTATION"]
    assert d["name"] == name and d["short_description"] and "_value" in doc["RETURN"]
    assert f"clusterctl.hpc.{name}" in doc["EXAMPLES"]
    params = list(inspect.signature(FILTERS[name]).parameters)
    options = list(d["options"])
    assert options[0] == "_input"
    assert options[1:] == params[1:], f"{name}: documented {options[1:]}, the function takes {params[1:]}"
    assert [p.strip() for p in d["positional"].split(",")] == options
    for opt, spec in d["options"].items():
        assert spec.get("description"), f"{name}: option {opt} has no description"


def test_ansible_doc_renders_every_filter(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    (tmp_path / "a.cfg").write_text("[defaults]\n")
    env.update(ANSIBLE_CONFIG=str(tmp_path / "a.cfg"), ANSIBLE_HOME=str(tmp_path),
               ANSIBLE_COLLECTIONS_PATH=str(collection.collections_path()))
    names = [f"clusterctl.hpc.{n}" for n in sorted(FILTERS)]
    r = subprocess.run([str(Path(sys.executable).parent / "ansible-doc"), "-t", "filter", "--json", *names],
                       env=env, capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    docs = json.loads(r.stdout)
    assert sorted(docs) == names
    for n, d in docs.items():
        assert d["doc"]["short_description"], n
        assert d["examples"] and d["return"], n
    r = subprocess.run([str(Path(sys.executable).parent / "ansible-doc"), "-t", "filter", "-l", "clusterctl.hpc"],
                       env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "UNDOCUMENTED" not in r.stdout, r.stdout
