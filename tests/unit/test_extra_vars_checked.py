"""``-e`` values and ``--limit`` are checked with the inventory before anything runs.

Extra vars have Ansible's highest precedence: before this, ``-e cluster_name=EVIL`` or an
``nccl_overrides`` value with a line break went past every inventory rule straight to the hosts, and
a ``--limit`` that matched nothing ran Ansible, which failed with rc 1 after "plan: no changes".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from clusterctl import extra_vars
from clusterctl.cli import app
from clusterctl.errors import UsageError
from clusterctl.inventory import InventoryError, load_checked

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab"
runner = CliRunner()


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def _nothing_ran(state: Path) -> bool:
    return not any(state.glob("*/runs/*"))


@pytest.mark.parametrize("command", ["plan", "provision", "verify"])
@pytest.mark.parametrize("given,message", [
    ("cluster_name=EVIL", "-e: cluster_name: must be lower-case letters"),
    ('{"nccl_overrides": {"NCCL_X": "a\\nexport LD_PRELOAD=/tmp/x.so"}}',
     "-e: nccl_overrides.NCCL_X: line break or control character in a value"),
    ('{"slurm_partitions": [{"name": "b", "nodes": "ghost[1-3]"}]}',
     "-e: slurm_partitions[0].nodes: names hosts not in the inventory: ghost1, ghost2, ghost3"),
    ("slurm_compute_memlock_limit=lots", "-e: slurm_compute_memlock_limit: must be infinity or a size"),
    ("ansible_port=22;id", "-e: ansible_port: ansible_port must be a port number"),
    ("munge_key_x=1", "-e: munge_key_x: not a variable of role munge"),
])
def test_bad_extra_var_refused_before_anything_runs(state: Path, command: str, given: str, message: str) -> None:
    res = runner.invoke(app, [command, str(LAB), "-e", given])
    assert res.exit_code == 2, res.output
    assert message in res.stderr, res.stderr
    assert "nothing was run" in res.stderr
    assert _nothing_ran(state)


def test_extra_var_file_read_with_the_inventory_limits(state: Path, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yml"
    bomb.write_text("a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefg", "bcdefgh", strict=True)))
    res = runner.invoke(app, ["plan", str(LAB), "-e", f"@{bomb}"])
    assert res.exit_code == 2 and f"-e @{bomb}" in res.stderr and "alias" in res.stderr, res.stderr
    listed = tmp_path / "list.yml"
    listed.write_text("- a\n- b\n")
    res = runner.invoke(app, ["plan", str(LAB), "-e", f"@{listed}"])
    assert res.exit_code == 2 and "expected a mapping of variables" in res.stderr
    bad = tmp_path / "bad.yml"
    bad.write_text("cluster_name: Bad Name\n")
    res = runner.invoke(app, ["plan", str(LAB), "-e", f"@{bad}"])
    assert res.exit_code == 2 and f"-e @{bad}: cluster_name: must be lower-case" in res.stderr
    assert _nothing_ran(state)


def test_good_extra_vars_pass_and_take_precedence() -> None:
    inv = load_checked(LAB, extra_vars.read_all(["slurm_compute_memlock_limit=8M", '{"mtu": 9000}']))
    assert inv.host_vars["lab-c1"]["slurm_compute_memlock_limit"] == "8M"  # over group_vars/all/lab.yml's 4M
    assert inv.spec()["mtu"] == 9000 and inv.spec_sources()["mtu"] == "-e"
    # a secret on the command line is the operator's choice: it never reaches a process list
    load_checked(LAB, extra_vars.read_all(["slurm_dbd_password=plain-Text-1"]))
    with pytest.raises(InventoryError):
        load_checked(LAB, extra_vars.read_all(["mtu=70000"]))


@pytest.mark.parametrize("raw", ["{bad json", "[1, 2]", "", "@/nonexistent/x.yml"])
def test_unreadable_extra_vars_are_usage_errors(raw: str) -> None:
    with pytest.raises(UsageError):
        extra_vars.read_one(raw)


@pytest.mark.parametrize("limit", ["nonexistent-host", "lab-c1:&slurm_controller", "~^ghost"])
def test_limit_matching_no_host_refused(state: Path, limit: str) -> None:
    res = runner.invoke(app, ["plan", str(LAB), "--limit", limit])
    assert res.exit_code == 2, res.output
    assert f"--limit {limit!r} matches no host of inventory" in res.stderr
    assert "Could not match" not in res.output  # Ansible's own warning is not printed beside ours
    assert _nothing_ran(state)


def test_limit_matching_uses_ansible_patterns() -> None:
    inv = load_checked(LAB)
    assert inv.match is not None
    assert inv.match("slurm_compute:!lab-c2") == ["lab-c1"]
    assert sorted(inv.match("lab-c*")) == ["lab-c1", "lab-c2", "lab-ctl"]  # a glob: lab-ctl too
    assert inv.match("~lab-c[0-9]") == ["lab-c1", "lab-c2"]
