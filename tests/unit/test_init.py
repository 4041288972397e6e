"""clusterctl init DIR: a commented starter inventory that validate accepts; never over an existing one."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from clusterctl.cli import app

runner = CliRunner()


def test_init_writes_a_commented_inventory_that_validates(tmp_path: Path) -> None:
    dest = tmp_path / "mycluster"
    res = runner.invoke(app, ["init", str(dest)])
    assert res.exit_code == 0, res.output
    hosts, cluster = dest / "hosts.yml", dest / "group_vars" / "all" / "cluster.yml"
    for f in (hosts, cluster):
        lines = f.read_text().splitlines()
        assert sum(ln.lstrip().startswith("#") for ln in lines) >= 5, f  # commented for a new user
    ok = runner.invoke(app, ["validate", str(dest), "--json"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout)["result"]
    assert doc["valid"] is True and doc["groups"]["slurm_compute"] >= 1 and doc["groups"]["slurm_controller"] == 1
    # an empty folder is fine too
    (tmp_path / "empty").mkdir()
    assert runner.invoke(app, ["init", str(tmp_path / "empty")]).exit_code == 0


def test_init_refuses_an_existing_non_empty_folder_exit_2(tmp_path: Path) -> None:
    dest = tmp_path / "inv"
    dest.mkdir()
    (dest / "hosts.yml").write_text("# mine\n")
    res = runner.invoke(app, ["init", str(dest), "--json"])
    assert res.exit_code == 2
    assert str(dest) in res.stderr and "not empty" in res.stderr
    doc = json.loads(res.stdout)
    assert doc["problems"][0]["file"] == str(dest) and doc["result"] is None
    assert (dest / "hosts.yml").read_text() == "# mine\n" and not (dest / "group_vars").exists()  # untouched
    f = tmp_path / "file"
    f.write_text("x")
    res = runner.invoke(app, ["init", str(f)])
    assert res.exit_code == 2 and str(f) in res.stderr and f.read_text() == "x"
