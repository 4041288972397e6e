"""Issue 15 (c): the variables clusterctl's inventory layer says each host sees (group_vars, host_vars,
inline vars, group all, child groups, ansible_group_priority) are exactly what ansible-core's own
``VariableManager.get_vars(host=...)`` gives, over the shipped inventories and over generated
inventories with overlapping variables at several group depths: every host, every key either side
reads (Ansible's magic and play variables aside)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusterctl.inventory.loading import _plain, load

REPO = Path(__file__).resolve().parents[2]
# what VariableManager adds that no inventory sets (magic, play and run variables)
NOT_INVENTORY = {
    "inventory_file", "inventory_dir", "inventory_hostname", "inventory_hostname_short", "group_names", "groups",
    "omit", "playbook_dir", "ansible_playbook_python", "ansible_config_file", "ansible_version",
    "ansible_check_mode", "ansible_diff_mode", "ansible_forks", "ansible_inventory_sources", "ansible_skip_tags",
    "ansible_run_tags", "ansible_verbosity", "hostvars", "environment", "ansible_facts", "ansible_local",
    "play_hosts", "ansible_play_batch", "ansible_play_hosts", "ansible_play_hosts_all", "ansible_play_role_names",
    "ansible_role_names", "ansible_dependent_role_names", "role_names", "ansible_search_path",
    "ansible_collection_name", "ansible_execution_env",
}


def _norm(v: Any) -> Any:
    return json.loads(json.dumps(_plain(v), default=repr, sort_keys=True))


def differences(path: Path) -> list[str]:
    """``host key ours theirs`` for every variable where clusterctl and VariableManager differ."""
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    inv = load(path)
    assert not inv.problems, [str(p) for p in inv.problems]
    dl = DataLoader()
    dl.set_basedir(str(path))
    im = InventoryManager(loader=dl, sources=[str(path)])
    vm = VariableManager(loader=dl, inventory=im)
    assert sorted(inv.host_order) == sorted(h.name for h in im.get_hosts())
    out = []
    for h in inv.host_order:
        theirs = vm.get_vars(host=im.get_host(h), include_hostvars=False)
        ours = inv.host_vars[h]
        for k in sorted(set(ours) | (set(theirs) - NOT_INVENTORY)):
            a, b = _norm(ours.get(k, "<unset>")), _norm(theirs.get(k, "<unset>"))
            if a != b:
                out.append(f"{h} {k} ours={a!r} ansible={b!r}")
    return out


@pytest.mark.parametrize("name", ["lab", "example-prod"])
def test_shipped_inventories_match_variable_manager(name: str) -> None:
    assert differences(REPO / "inventories" / name) == []


@pytest.mark.parametrize("case", ["host-in-two-groups", "spec-key-in-group-vars", "spec-key-in-host-vars"])
def test_bad_inventories_with_overlaps_match_variable_manager(case: str) -> None:
    # refused by validation, but read (and merged) the way Ansible does
    assert differences(REPO / "tests" / "bad_inventories" / case) == []


KEYS = ("k_a", "k_b", "k_c", "k_d")
_values = st.one_of(st.integers(0, 9), st.dictionaries(st.sampled_from(("x", "y")), st.integers(0, 9), max_size=2))
_vars = st.dictionaries(st.sampled_from(KEYS), _values, max_size=3)


@st.composite
def inventories(draw: Any) -> dict[str, Any]:
    n_groups = draw(st.integers(1, 6))
    parents = [draw(st.integers(-1, i - 1)) for i in range(n_groups)]  # -1: a child of all
    n_hosts = draw(st.integers(1, 5))
    member = [draw(st.lists(st.integers(0, n_groups - 1), min_size=1, max_size=3, unique=True))
              for _ in range(n_hosts)]
    return {
        "parents": parents,
        "member": member,
        "group_inline": [draw(_vars) for _ in range(n_groups)],
        "group_files": [draw(st.one_of(st.none(), _vars)) for _ in range(n_groups)],
        "priority": [draw(st.one_of(st.none(), st.integers(1, 3))) for _ in range(n_groups)],
        "priority_in_file": draw(st.booleans()),
        "host_inline": [draw(_vars) for _ in range(n_hosts)],
        "host_files": [draw(st.one_of(st.none(), _vars)) for _ in range(n_hosts)],
        "all_inline": draw(_vars),
        "all_file": draw(st.one_of(st.none(), _vars)),
        "dir_form": draw(st.booleans()),
    }


def write(root: Path, spec: dict[str, Any]) -> None:
    groups: dict[str, dict[str, Any]] = {f"g{i}": {} for i in range(len(spec["parents"]))}
    for i, g in enumerate(groups.values()):
        if spec["group_inline"][i]:
            g["vars"] = dict(spec["group_inline"][i])
        if spec["priority"][i] is not None and not spec["priority_in_file"]:
            g.setdefault("vars", {})["ansible_group_priority"] = spec["priority"][i]
    placed: set[int] = set()
    for h, gs in enumerate(spec["member"]):
        for gi in gs:
            hv = dict(spec["host_inline"][h]) if h not in placed and spec["host_inline"][h] else None
            placed.add(h)
            groups[f"g{gi}"].setdefault("hosts", {})[f"h{h}"] = hv
    tree: dict[str, Any] = {}
    for i, p in enumerate(spec["parents"]):
        if p >= 0:
            groups[f"g{p}"].setdefault("children", {})[f"g{i}"] = groups[f"g{i}"]
        else:
            tree[f"g{i}"] = groups[f"g{i}"]
    top: dict[str, Any] = {"children": tree}
    if spec["all_inline"]:
        top["vars"] = dict(spec["all_inline"])
    (root / "hosts.yml").write_text(yaml.safe_dump({"all": top}, sort_keys=False))
    gv, hv_dir = root / "group_vars", root / "host_vars"
    gv.mkdir()
    hv_dir.mkdir()

    def put(folder: Path, name: str, data: dict[str, Any]) -> None:
        if spec["dir_form"]:
            (folder / name).mkdir(exist_ok=True)
            (folder / name / "main.yml").write_text(yaml.safe_dump(data))
        else:
            (folder / f"{name}.yml").write_text(yaml.safe_dump(data))

    if spec["all_file"] is not None:
        put(gv, "all", spec["all_file"])
    for i in range(len(spec["parents"])):
        data = dict(spec["group_files"][i] or {})
        if spec["priority"][i] is not None and spec["priority_in_file"]:
            data["ansible_group_priority"] = spec["priority"][i]
        if data:
            put(gv, f"g{i}", data)
    for h, data in enumerate(spec["host_files"]):
        if data is not None:
            put(hv_dir, f"h{h}", data)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(inventories())
def test_generated_inventories_match_variable_manager(spec: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root, spec)
        assert differences(root) == [], (root / "hosts.yml").read_text()


def test_the_comparison_sees_a_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not vacuous: a host view that differs from Ansible's in one value is reported."""
    import test_precedence_vs_ansible as me

    real = me.load

    def altered(path: Path) -> Any:
        inv = real(path)
        inv.host_vars["node01"] = {**inv.host_vars["node01"], "ansible_host": "192.0.2.99"}
        return inv

    monkeypatch.setattr(me, "load", altered)
    assert differences(REPO / "tests" / "bad_inventories" / "spec-key-in-host-vars") == [
        "node01 ansible_host ours='192.0.2.99' ansible='192.0.2.11'"]
