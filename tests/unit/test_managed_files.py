"""tests/managed_files.py (the files each role writes, which the day-2 lab test checksums) stays equal to
the roles' tasks: a new task that writes a file fails here until it is listed (issue 28)."""

from __future__ import annotations

import re
from typing import Any

import yaml
from managed_files import (
    CASES_MANAGED,
    LAB_ABSENT,
    MANAGED,
    NOT_ON_LAB,
    REPO,
    dependencies,
    destinations,
    role_hosts,
    writing_tasks,
)

from clusterctl.commands.reconfigure_cmd import Component
from clusterctl.rollout import COMPONENTS

SIMPLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def test_table_lists_every_file_writing_task_of_every_role() -> None:
    tasks = writing_tasks()
    assert set(tasks) <= set(MANAGED), f"roles writing files, missing from MANAGED: {set(tasks) - set(MANAGED)}"
    for role, listed in MANAGED.items():
        found = set(tasks.get(role, {}))
        assert found == set(listed), (
            f"{role}: tasks writing files but not in tests/managed_files.py MANAGED: {sorted(found - set(listed))}; "
            f"listed but no longer in the role: {sorted(set(listed) - found)}")


def test_lab_roles_list_their_paths_and_absent_ones_say_why() -> None:
    assert set(NOT_ON_LAB) <= set(MANAGED)
    for role, listed in MANAGED.items():
        for task, paths in listed.items():
            if role in NOT_ON_LAB:
                assert not paths, f"{role} does not run on the lab ({NOT_ON_LAB[role]}): list no lab paths for {task!r}"
            else:
                assert paths and all(p.startswith("/") for p in paths), (role, task, paths)
    assert all(role not in NOT_ON_LAB and task in MANAGED[role] for role, task in LAB_ABSENT)


def test_cases_table_lists_every_file_writing_task_of_the_roles_the_cases_add() -> None:
    """CASES_MANAGED (the storage component on the lab of the Slurm cases) names every file-writing task of
    its roles, only roles the plain lab does not run, and the cases' volumes (molecule/slurm's storage_mounts)."""
    tasks = writing_tasks()
    assert set(CASES_MANAGED) <= set(NOT_ON_LAB) and "lustre_client" not in CASES_MANAGED
    for role, listed in CASES_MANAGED.items():
        assert set(tasks[role]) == set(listed), (role, sorted(set(tasks[role]) ^ set(listed)))
        assert all(paths and all(p.startswith("/") for p in paths) for paths in listed.values()), (role, listed)
    conf = yaml.safe_load((REPO / "molecule" / "slurm" / "molecule.yml").read_text())
    names = [m["name"] for m in conf["provisioner"]["inventory"]["group_vars"]["all"]["storage_mounts"]]
    volume_files = CASES_MANAGED["juicefs"]["Write the credentials file (root-only, value not logged)"] \
        + CASES_MANAGED["juicefs"]["Write the systemd unit"]
    assert sorted(volume_files) == sorted([f"/etc/juicefs/{n}.env" for n in names]
                                          + [f"/etc/systemd/system/juicefs-{n}.service" for n in names])


def _values(*files: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in files:
        if f.is_file():
            out.update(yaml.safe_load(f.read_text()) or {})
    return out


def _resolve(expr: str, values: dict[str, Any], depth: int = 8) -> str | None:
    """EXPR with every plain ``{{ name }}`` replaced by a plain value; None when anything else is left."""
    for _ in range(depth):
        m = SIMPLE.search(expr)
        if not m:
            break
        v = values.get(m.group(1))
        if not isinstance(v, (str, int)):
            return None
        expr = expr[:m.start()] + str(v) + expr[m.end():]
    return None if "{{" in expr or "{%" in expr else expr


def test_listed_lab_paths_are_what_the_role_defaults_and_the_lab_inventory_give() -> None:
    """Where a task's destination is a literal, or plain ``{{ variable }}`` references that resolve from
    the role's defaults and vars (and those of the roles it depends on) and the lab inventory: the
    listed paths are those. Other destinations are checked on the lab (the files must exist there)."""
    lab = _values(*sorted((REPO / "inventories" / "lab" / "group_vars" / "all").glob("*.yml")))
    checked = 0
    for role, tasks in writing_tasks().items():
        if role in NOT_ON_LAB:
            continue
        deps = dependencies(role)
        values = _values(*(REPO / "roles" / r / "defaults" / "main.yml" for r in deps),
                         REPO / "roles" / role / "defaults" / "main.yml")
        values.update(lab)
        values.update(_values(REPO / "roles" / role / "vars" / "main.yml"))
        for name, task in tasks.items():
            resolved = [_resolve(d, values) for d in destinations(task)]
            if None in resolved:
                continue
            assert set(resolved) == set(MANAGED[role][name]), (role, name, resolved)
            checked += 1
    assert checked >= 15  # most destinations are checked here, not only on the lab


def test_every_reconfigure_component_selects_roles_of_the_table() -> None:
    """The components are the CLI's typed choices; each selects roles (site.yml tags) that the table lists."""
    names = [c.value for c in Component]
    assert names == list(COMPONENTS) and names
    for name in names:
        roles = role_hosts(COMPONENTS[name].tags)
        assert roles, f"component {name}: tag {COMPONENTS[name].tags!r} selects no role in site.yml"
        assert set(roles) <= set(MANAGED), (name, set(roles) - set(MANAGED))
    assert set(role_hosts("nccl")) == {"nccl"}
    assert set(role_hosts("slurm")) >= {"munge", "slurm_common", "slurm_controller", "slurm_compute", "node_health",
                                        "slurm_dbd", "containers"}
