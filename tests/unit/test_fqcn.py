"""Every custom module, filter and role is used by its FQCN (``clusterctl.hpc.<name>``) in roles,
playbooks and Molecule scenarios: a short name only resolves through path variables, which a user's own
playbook (the collection installed from Galaxy or the wheel) does not have."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
MODULES = {p.stem for p in (REPO / "plugins" / "modules").glob("*.py") if not p.stem.startswith("_")}
ROLES = {p.name for p in (REPO / "roles").iterdir() if (p / "tasks").is_dir()}


def _filter_names() -> set[str]:
    """The keys FilterModule.filters() returns in plugins/filter/*.py, read from the source."""
    names: set[str] = set()
    for p in (REPO / "plugins" / "filter").glob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name == "filters":
                for ret in ast.walk(node):
                    if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Dict):
                        names |= {k.value for k in ret.value.keys if isinstance(k, ast.Constant)}
    return names


FILTERS = _filter_names()


def _files() -> list[Path]:
    out: list[Path] = []
    for top in ("roles", "playbooks", "molecule"):
        out += [p for p in (REPO / top).rglob("*") if p.suffix in (".yml", ".yaml", ".j2") and p.is_file()]
    return sorted(out)


def _walk(node: Any) -> Iterator[dict]:
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def _short_uses(path: Path) -> list[str]:
    text = path.read_text()
    found: list[str] = []
    names = "|".join(sorted(FILTERS))
    for m in re.finditer(rf"(?:\|\s*|\b(?:map|select|reject)\(\s*['\"])({names})\b", text):
        found.append(f"filter {m.group(1)}")
    if path.suffix == ".j2":
        return found
    for doc in yaml.safe_load_all(text):
        for d in _walk(doc):
            found += [f"module {k}" for k in d if k in MODULES]
            if isinstance(d.get("role"), str) and d["role"] in ROLES:
                found.append(f"role {d['role']}")
            for key in ("ansible.builtin.include_role", "ansible.builtin.import_role", "include_role",
                        "import_role"):
                inc = d.get(key)
                if isinstance(inc, dict) and inc.get("name") in ROLES:
                    found.append(f"role {inc['name']}")
            roles = d.get("roles")
            if isinstance(roles, list):
                found += [f"role {r}" for r in roles if isinstance(r, str) and r in ROLES]
            deps = d.get("dependencies")
            if isinstance(deps, list):
                found += [f"role {r}" for r in deps if isinstance(r, str) and r in ROLES]
    return found


def test_the_lists_are_not_empty() -> None:
    assert {"rdma_facts", "fabric_evidence"} <= MODULES
    assert {"hostlist_compress", "nccl_env", "juicefs_meta_split"} <= FILTERS
    assert {"slurm_common", "rdma"} <= ROLES


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(REPO)))
def test_custom_content_is_used_by_fqcn(path: Path) -> None:
    assert _short_uses(path) == [], f"{path.relative_to(REPO)}: use clusterctl.hpc.<name>"


def test_the_check_sees_a_short_name(tmp_path: Path) -> None:
    bad = tmp_path / "main.yml"
    bad.write_text("- name: Facts\n  rdma_facts:\n    sysfs_root: /sys\n"
                   "- name: Role\n  ansible.builtin.include_role:\n    name: munge\n"
                   "- name: Filter\n  ansible.builtin.debug:\n    msg: \"{{ ['a1'] | hostlist_compress }}\"\n")
    assert sorted(_short_uses(bad)) == ["filter hostlist_compress", "module rdma_facts", "role munge"]


@pytest.mark.parametrize("path", sorted((REPO / "plugins").glob("*/*.py")), ids=lambda p: str(p.relative_to(REPO)))
def test_plugins_import_module_utils_by_fqcn(path: Path) -> None:
    """``ansible.module_utils.ccparse`` only resolves through ANSIBLE_MODULE_UTILS, which users do not set."""
    assert not re.search(r"^\s*(from|import)\s+ansible\.module_utils\.ccparse\b", path.read_text(), re.M), (
        f"{path.relative_to(REPO)}: import ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse...")
