"""Bad input, round 3 (issue 28), the classes handled here: each case was accepted, or hung, on the
previous main and is now refused with exit 2 before anything runs (or, for analyze, a named refusal).

* an empty path (an unset variable: ``clusterctl validate ""``) is not the current folder;
* a FIFO named like an inventory file or like the pre-parsed envelope beside a capture is never
  read (it would block the read forever): only regular files are read, everywhere;
* ``verify --hosts``/``--limit``, and ``--limit @FILE``, that select no host run nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest
from conftest import REPO, read_fixture
from typer.testing import CliRunner

from clusterctl.analysis.engine import analyze_dir
from clusterctl.cli import app

runner = CliRunner()


def _bounded(fn, seconds: float = 60.0):  # a call that must not hang
    out: dict = {}

    def run() -> None:
        out["value"] = fn()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "the call blocked (it read a fifo?)"
    return out["value"]


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    dest = tmp_path / "inv"
    shutil.copytree(REPO / "inventories" / "lab", dest)
    return dest


@pytest.mark.parametrize("command", [["validate"], ["plan"], ["provision"], ["verify"], ["analyze"]])
def test_empty_path_is_a_usage_error(command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(REPO / "inventories" / "lab", tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)  # a valid inventory right here: "" must still not mean "."
    r = runner.invoke(app, [*command, ""])
    assert r.exit_code == 2, r.output
    assert "empty path" in r.output


@pytest.mark.parametrize("where", ["extra.yml", "group_vars/all/fifo.yml", "host_vars/lab-c1.yml"])
def test_fifo_in_an_inventory_is_refused_not_read(lab: Path, where: str) -> None:
    fifo = lab / where
    fifo.parent.mkdir(parents=True, exist_ok=True)
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    r = _bounded(lambda: runner.invoke(app, ["validate", str(lab), "--json"]))
    assert r.exit_code == 2, r.output
    problems = json.loads(r.stdout)["problems"]
    assert any(where in p["file"] and "not a regular file" in p["message"] for p in problems), problems


def test_fifo_named_like_the_preparsed_envelope_is_not_read(tmp_path: Path) -> None:
    host = tmp_path / "ev" / "n1"
    host.mkdir(parents=True)
    (host / "ibstat.txt").write_text(read_fixture("ibstat/h100-all-active-2.txt"))
    os.mkfifo(host / "_parsed.json")
    report = _bounded(lambda: analyze_dir(tmp_path / "ev", {}))
    assert "ibstat" in report.hosts["n1"].kinds  # judged from the text, the fifo left alone


@pytest.mark.parametrize("args,word", [
    (["--hosts", "nosuchgroup"], "--hosts"),
    (["--hosts", "lab-c1", "--limit", "lab-c2"], "--limit"),
])
def test_verify_patterns_selecting_nothing(lab: Path, args: list[str], word: str) -> None:
    r = runner.invoke(app, ["verify", str(lab), *args])
    assert r.exit_code == 2, r.output
    assert word in r.output and "nothing was run" in r.output


@pytest.mark.parametrize("content", ["", "\n\n", "nosuchhost\n", "# only a comment\n"])
def test_limit_file_selecting_nothing(lab: Path, tmp_path: Path, content: str) -> None:
    f = tmp_path / "limit.txt"
    f.write_text(content)
    for command in ("plan", "provision", "verify"):
        r = runner.invoke(app, [command, str(lab), "--limit", f"@{f}"])
        assert r.exit_code == 2, (command, r.output)
        assert "matches no host" in r.output or "leaves no host" in r.output, (command, r.output)


def test_limit_file_that_is_a_fifo(lab: Path, tmp_path: Path) -> None:
    f = tmp_path / "limit.fifo"
    os.mkfifo(f)
    r = _bounded(lambda: runner.invoke(app, ["plan", str(lab), "--limit", f"@{f}"]))
    assert r.exit_code == 2, r.output
    assert "not a regular file" in r.output
