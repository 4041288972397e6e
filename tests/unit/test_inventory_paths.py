"""An inventory named by any spelling of its path is read the same, and messages name real paths.

``clusterctl validate .`` inside the inventory folder used to hand Ansible a bare ``hosts.yml``,
whose group_vars Ansible then never found (cluster_name "missing"); a problem of an inventory given
as a file was printed ``hosts.yml/hosts.yml: ...`` and one given absolutely ``/x//x/...``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO
from typer.testing import CliRunner

from clusterctl.cli import app

runner = CliRunner()


def _validate(*args: str) -> tuple[int, dict]:
    r = runner.invoke(app, ["validate", *args, "--json"])
    doc = json.loads(r.stdout)  # the envelope; problems as "file: key: message" lines
    return r.exit_code, doc["result"] or {"problems": [f"{p['file']}: {p['key']}: {p['message']}"
                                                       for p in doc["problems"]]}


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    dest = tmp_path / "inv"
    shutil.copytree(REPO / "inventories" / "lab", dest)
    return dest


@pytest.mark.parametrize("spelling", [".", "./", "..", "../../inv", "hosts.yml", "./hosts.yml"])
def test_relative_spellings_read_the_group_vars(lab: Path, spelling: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(lab / "group_vars" if spelling.startswith("..") else lab)
    code, doc = _validate(spelling)
    assert code == 0, doc


def test_problem_paths_are_not_doubled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "no-compute"
    shutil.copytree(REPO / "tests" / "bad_inventories" / "no-compute", bad)
    for arg, expect in ((str(bad / "hosts.yml"), f"{bad}/hosts.yml: "), (str(bad), f"{bad}/hosts.yml: ")):
        code, doc = _validate(arg)
        assert code == 2
        assert [p for p in doc["problems"] if p.startswith(expect)], doc["problems"]
        assert not [p for p in doc["problems"] if "//" in p or "hosts.yml/hosts.yml" in p], doc["problems"]
    monkeypatch.chdir(bad)
    code, doc = _validate(".")
    assert code == 2
    assert doc["problems"][0].startswith("hosts.yml: "), doc["problems"]
