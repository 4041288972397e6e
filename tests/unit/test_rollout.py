"""Batch sizes and the disruptive/in-place split of reconfigure."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from clusterctl.cli import app
from clusterctl.rollout import COMPONENTS, BatchSpecError, batch_size, batches, disruptive_hosts


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


def test_nccl_change_never_drains() -> None:
    changes = {"n1": ["nccl : Write /etc/nccl.conf", "nccl : Write /etc/profile.d/nccl.sh"]}
    assert disruptive_hosts(COMPONENTS["nccl"], changes) == {}


def test_slurm_reconfigure_is_in_place_restart_drains() -> None:
    changes = {
        "ctl": ["slurm_common : Render slurm.conf", "Reconfigure Slurm"],
        "n1": ["slurm_common : Render slurm.conf", "Reconfigure Slurm"],
        "n2": ["slurm_common : Render slurm.conf", "Restart slurmd"],
    }
    assert disruptive_hosts(COMPONENTS["slurm"], changes) == {"n2": ["Restart slurmd"]}


def test_reconfigure_rejects_unknown_component_and_bad_batch() -> None:
    r = CliRunner()
    res = r.invoke(app, ["reconfigure", "inventories/lab", "--component", "gpu"])
    assert res.exit_code == 2 and "--component 'gpu'" in res.output
    res = r.invoke(app, ["reconfigure", "inventories/lab", "--component", "roce", "--batch", "0"])
    assert res.exit_code == 2 and "--batch '0'" in res.output
