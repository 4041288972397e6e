"""The machine-output contract (README "Machine output"): every command that has ``--json`` prints
one envelope ``{clusterctl, command, time, exit_code, result, problems}`` on stdout, for its result,
its failures and usage errors alike. The commands are enumerated from the typer app, so a new
command with ``--json`` is held to the contract without being named here."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import typer
from conftest import LOCAL_FIXTURES
from typer.testing import CliRunner

from clusterctl.analysis.engine import VERDICTS
from clusterctl.app import version
from clusterctl.cli import app
from clusterctl.commands.common import ENVELOPE_KEYS

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def json_commands() -> dict[str, Any]:
    """Every command (``lab status`` for a sub-command) whose options include ``--json``."""
    found: dict[str, Any] = {}

    def walk(cmd: Any, words: list[str]) -> None:
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            if getattr(sub, "commands", None):
                walk(sub, [*words, name])
            elif any("--json" in p.opts for p in sub.params):
                found[" ".join([*words, name])] = sub

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = json_commands()
#: commands whose success the fast tier can produce without hosts: their arguments
NO_HOSTS: dict[str, list[str]] = {
    "validate": [str(REPO / "inventories" / "lab")],
    "parse": ["ibstat", str(LOCAL_FIXTURES / "ibstat" / "h100-all-active-2.txt")],
    "analyze": ["{evidence}"],
    "provision": [str(REPO / "inventories" / "lab"), "--retry"],  # no failed hosts recorded: nothing runs
    "init": ["{tmp}/new-inventory"],
    "job": [str(REPO / "inventories" / "example-prod"), str(REPO / "tests" / "lab" / "elastic_train.py"),
            "--nodes", "1", "--dry-run"],
}
#: commands whose results need hosts (an Ansible run, Slurm): their envelope on success is shown by the
#: lab tests; here their failure and usage-error envelopes
NEEDS_HOSTS = {"plan", "verify", "reconfigure", "resume", "remediate", "nodes", "lab status"}


def envelope(res: Any, command: str) -> dict[str, Any]:
    lines = res.stdout.splitlines()
    assert len(lines) == 1, res.stdout  # one document, one line
    doc = json.loads(lines[0])
    assert tuple(doc) == ENVELOPE_KEYS, doc
    assert doc["clusterctl"] == version() and doc["command"] == command
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["time"]), doc["time"]
    assert doc["exit_code"] == res.exit_code, (doc, res.exit_code)
    for p in doc["problems"]:
        assert tuple(p) == ("file", "line", "key", "message") and p["message"], p
    return doc


def test_the_commands_are_enumerated() -> None:
    # the walk finds the known ones (a broken walk would make the tests below vacuous), and each
    # command with --json is classified: success shown here, or needing hosts
    assert {"validate", "verify", "analyze", "lab status"} <= set(COMMANDS)
    assert set(COMMANDS) == set(NO_HOSTS) | NEEDS_HOSTS, set(COMMANDS) ^ (set(NO_HOSTS) | NEEDS_HOSTS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_usage_error_is_an_envelope_exit_2(command: str) -> None:
    res = runner.invoke(app, [*command.split(), "--json", "--no-such-option"])
    assert res.exit_code == 2, res.output
    doc = envelope(res, command)
    assert doc["result"] is None and "--no-such-option" in doc["problems"][0]["message"]
    assert "No such option" in res.stderr  # the person still reads the usual message


def _required_args(command: str, missing: Path) -> list[str]:
    """Arguments that get past parsing and fail on the missing path (nothing contacted)."""
    out: list[str] = []
    for p in COMMANDS[command].params:
        if not p.required:
            if "--inventory" in p.opts:
                out += ["--inventory", str(missing)]
            continue
        value = "ibstat" if p.name == "kind" else "nccl" if "--component" in p.opts else str(missing)
        out += [value] if not p.opts or not p.opts[0].startswith("-") else [p.opts[0], value]
    return out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_input_is_an_envelope_naming_the_path(command: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    missing = tmp_path / "no-such-inventory"
    if command == "init":  # its bad input is a path that exists (it writes a new folder)
        missing.write_text("not a folder\n")
    res = runner.invoke(app, [*command.split(), *_required_args(command, missing), "--json"])
    assert res.exit_code in (1, 2), res.output
    doc = envelope(res, command)
    assert doc["result"] is None and doc["problems"], doc
    assert any(str(missing) in f"{p['file']} {p['message']}" for p in doc["problems"]), doc


@pytest.mark.parametrize("command", sorted(NO_HOSTS))
def test_result_is_in_the_envelope(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    ev = tmp_path / "ev"
    for host, fixture in (("n1", "h100-all-active-2.txt"), ("n2", "h100-all-active-2.txt")):
        (ev / host).mkdir(parents=True)
        shutil.copy(LOCAL_FIXTURES / "ibstat" / fixture, ev / host / "ibstat.txt")
    args = [a.replace("{evidence}", str(ev)).replace("{tmp}", str(tmp_path)) for a in NO_HOSTS[command]]
    res = runner.invoke(app, [command, *args, "--json"])
    doc = envelope(res, command)
    assert isinstance(doc["result"], dict) and doc["result"], doc
    if command == "analyze":
        # verdict words: the analysis's, one set everywhere
        assert {h["status"] for h in doc["result"]["hosts"].values()} <= set(VERDICTS)
