"""Issue 28: a day-2 run of a component renders exactly what `provision` renders.

For every component `clusterctl reconfigure --component` accepts (the CLI's typed choices), on the
session's provisioned lab: the files the component's roles write on each lab host (tests/managed_files.py,
kept equal to the roles' tasks by tests/unit/test_managed_files.py) are checksummed (content, mode,
owner; a link's target) after provision; then, with the fact cache removed (a first day-2 run, or one
after the cache expired: the worst case), `reconfigure --component X` must plan nothing, and the files
must be as provision left them. Components none of whose roles runs on the lab skip, saying why.

The module is named to run before the other lab modules (right after the session's provision): what it
compares against is then that provision. When another lab test ran first (it may leave other settings
on the lab, e.g. nccl_overrides or enroot), the module first runs `provision` of the lab inventory again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from labutil import cc, sh, snapshot, snapshot_changes
from managed_files import LAB_ABSENT, MANAGED, NOT_ON_LAB, component_roles, managed_paths

from clusterctl.commands.reconfigure_cmd import Component
from clusterctl.inventory import load_checked
from clusterctl.rollout import COMPONENTS
from clusterctl.runner import state_dir

pytestmark = [pytest.mark.lab]

#: component -> (path, line start) that provision writes on the lab: the setting a day-2 run
#: dropped (issue 28), checked by content as well as by checksum
WRITES = {"nccl": ("/etc/nccl.conf", "NCCL_SOCKET_IFNAME=")}

def lab_roles(component: str) -> dict[str, list[str]]:
    """role -> the lab hosts it runs on under the component's tag; skips when none runs on the lab."""
    groups = load_checked(Path(__file__).resolve().parents[2] / "inventories" / "lab").groups
    roles = component_roles(COMPONENTS[component].tags, groups)
    on_lab = {r: hs for r, hs in roles.items() if hs and r not in NOT_ON_LAB}
    if not on_lab:
        pytest.skip(f"component {component}: none of its roles runs on the lab: "
                    + "; ".join(f"{r}: {NOT_ON_LAB[r]}" for r in sorted(roles)))
    return on_lab


@pytest.fixture(scope="module")
def baseline(provisioned: Path, request: pytest.FixtureRequest) -> Path:
    """The lab as `provision` of the lab inventory leaves it."""
    items = request.session.items
    first = next(i for i, item in enumerate(items) if getattr(item, "module", None) is request.module)
    if any("lab" in getattr(item, "fixturenames", ()) for item in items[:first]):
        res = cc("provision", str(provisioned))
        assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    return provisioned


@pytest.mark.parametrize("component", [c.value for c in Component])
def test_reconfigure_renders_what_provision_rendered(component: str, baseline: Path) -> None:
    roles = lab_roles(component)
    files = managed_paths(roles, MANAGED)
    before = snapshot(files)
    # the table names what the lab really has: each listed file exists on a host of its role, unless the
    # lab inventory writes none (LAB_ABSENT), and then no host has it
    for role, hosts in roles.items():
        for task, paths in MANAGED[role].items():
            for p in paths:
                present = [h for h in hosts if before[h][p] != "absent"]
                if (role, task) in LAB_ABSENT:
                    why = LAB_ABSENT[(role, task)]
                    assert not present, f"{role}: {p} on {present}, but the lab should have none: {why}"
                else:
                    assert present, f"{role} ({task}): {p} is on none of {hosts} after provision"

    if component in WRITES:
        path, start = WRITES[component]
        holders = [h for h in before if before[h].get(path, "absent") != "absent"]
        assert holders, f"{path} is on no lab host"
        for host in holders:
            text = sh(host, f"cat {path}")
            assert any(line.startswith(start) for line in text.splitlines()), f"{host}: {path}: {text}"

    shutil.rmtree(state_dir(baseline) / "facts", ignore_errors=True)
    res = cc("reconfigure", str(baseline), "--component", component)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    after = snapshot(files)
    changed = snapshot_changes(before, after)
    # a day-2 run plans nothing on a provisioned lab (the plan's diffs are in its output), and writes nothing
    assert f"reconfigure {component}: nothing to change" in res.stdout, f"{changed}\n{res.stdout[-6000:]}"
    assert after == before, changed
    assert any((state_dir(baseline) / "facts").iterdir())  # the tagged run gathered, and cached, facts
