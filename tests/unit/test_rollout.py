"""Batch sizes and the disruptive/in-place split of reconfigure."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_change_kinds import at
from test_slurm_lib import Clock
from typer.testing import CliRunner

from clusterctl.cli import app
from clusterctl.rollout import BatchSpecError, batch_size, batches, disruptive_hosts, wait_fit


@pytest.mark.parametrize(("spec", "total", "size"), [
    (None, 10, 1), ("4", 10, 4), ("25%", 10, 3), ("100%", 7, 7), ("1%", 500, 5), ("20", 3, 3),
])
def test_batch_size(spec: str | None, total: int, size: int) -> None:
    assert batch_size(spec, total) == size


@pytest.mark.parametrize("spec", ["0", "0%", "101%", "-1", "half", "2.5"])
def test_bad_batch_spec(spec: str) -> None:
    with pytest.raises(BatchSpecError, match="--batch"):
        batch_size(spec, 10)


def test_batches_cover_every_host_once_in_order() -> None:
    hosts = [f"n{i}" for i in range(10)]
    out = batches(hosts, "30%")
    assert out == [hosts[0:3], hosts[3:6], hosts[6:9], hosts[9:10]]


ROLES = Path(__file__).resolve().parents[2] / "roles"


def test_nccl_change_never_drains() -> None:
    tasks = ROLES / "nccl" / "tasks" / "main.yml"
    changes = {"n1": [at(tasks, "Write the NCCL configuration and login environment")]}
    assert disruptive_hosts(changes) == {}


def test_slurm_reconfigure_is_in_place_restart_drains() -> None:
    config = ROLES / "slurm_common" / "tasks" / "config.yml"
    handlers = ROLES / "slurm_common" / "handlers" / "main.yml"
    render, reconf = at(config, "Render slurm.conf, gres.conf, cgroup.conf"), at(handlers, "Reconfigure Slurm")
    changes = {"ctl": [render, reconf], "n1": [render, reconf], "n2": [render, at(handlers, "Restart slurmd")]}
    got = disruptive_hosts(changes)
    assert list(got) == ["n2"] and [d.task for d in got["n2"]] == ["Restart slurmd"]


def test_reconfigure_rejects_unknown_component_and_bad_batch() -> None:
    r = CliRunner()
    res = r.invoke(app, ["reconfigure", "inventories/lab", "--component", "tpu"])
    assert res.exit_code == 2 and "'--component' / '-c'" in res.output and "'tpu' is not one of" in res.output
    res = r.invoke(app, ["reconfigure", "inventories/lab", "--component", "roce", "--batch", "0"])
    assert res.exit_code == 2 and "--batch '0'" in res.output


def test_unfit_nodes_from_real_sinfo_states() -> None:
    """States as a real sinfo printed them (../shared/fixtures/sinfo): down and down* (not
    responding) are unfit after a change; mix/alloc/idle are fit; a node sinfo omits is missing."""
    from conftest import read_fixture

    rows = [ln.split() for ln in read_fixture("sinfo/default-with-down-star.txt").splitlines()
            if ln.startswith("short*")]
    states = {r[5]: r[4] for r in rows}  # one NODELIST entry per state in this capture
    assert set(states.values()) == {"down*", "mix", "alloc", "idle", "down"}
    from clusterctl.rollout import unfit_nodes

    got = unfit_nodes([*states, "node99"], states)
    assert got == {"node[4-7,9,17]": "down*", "node12": "down", "node99": "missing"}
    assert unfit_nodes(["a", "b", "c"], {"a": "drained", "b": "draining", "c": "idle*"}) == {"c": "idle*"}


def test_nodes_out_of_service_for_another_reason_are_held() -> None:
    from clusterctl.rollout import held_by_others

    info = {
        "n1": ("idle", "none"),
        "n2": ("drained", "disk replaced, ticket 42"),          # an admin's drain
        "n3": ("drained", "clusterctl: reconfigure slurm"),     # left by an earlier rollout: ours
        "n4": ("drained", "clusterctl: verify: mlx5_0 rate 200"),  # verify --drain: a faulty node
        "n5": ("down*", "Not responding"),
        "n6": ("draining", "maintenance"),
    }
    held = held_by_others(info, "clusterctl: reconfigure")
    assert sorted(held) == ["n2", "n4", "n5", "n6"]
    assert held["n2"] == "drained: disk replaced, ticket 42"


def test_slurmd_limit_change_drains() -> None:
    """The memlock drop-in needs a slurmd restart: its task names (read from the role) are disruptive."""
    import yaml

    role = ROLES / "slurm_compute" / "tasks" / "main.yml"
    tasks = yaml.safe_load(role.read_text())
    names = [t["name"] for t in tasks
             if "clusterctl-limits.conf" in str(t.get("ansible.builtin.copy") or t.get("ansible.builtin.file") or {})]
    assert len(names) == 2, names  # write and remove
    for name in names:
        got = disruptive_hosts({"n1": [at(role, name)]})
        assert [(d.task, d.kinds) for d in got["n1"]] == [(name, {"clusterctl_restarts_slurmd"})]


def test_wait_fit_needs_two_fit_checks_in_a_row() -> None:
    # registered, then missed a ping (idle*), then steady: the flap must not count as verified
    seq = iter([{"n1": "idle"}, {"n1": "idle*"}, {"n1": "idle"}, {"n1": "idle"}, {"n1": "idle*"}])
    clock = Clock()
    assert wait_fit(["n1"], lambda: next(seq), clock=clock, sleep=clock.sleep) == {}
    assert clock.now == 9.0  # four checks, 3 s apart


def test_wait_fit_gives_up_with_the_last_state() -> None:
    clock = Clock()
    assert wait_fit(["n1", "n2"], lambda: {"n1": "idle", "n2": "down*"}, timeout=30, clock=clock,
                    sleep=clock.sleep) == {"n2": "down*"}
    assert 30 <= clock.now <= 33
