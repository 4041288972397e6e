"""What a run tells the user to do next, and the debug log's mode.

plan and verify printed "retry only these hosts with: --retry", an option they do not take; a run on
the lab with every host unreachable did not say the lab is down; --log-file was written 0644 while
the run artifacts beside it are 0600.
"""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest

from clusterctl import display, lab
from clusterctl.commands.common import setup_logging
from clusterctl.runner import HostStats, RunResult


def _result(tmp_path: Path, unreachable: list[str], ok: list[str] = ()) -> RunResult:
    r = RunResult(rc=4, status="failed", artifacts_dir=tmp_path)
    for h in unreachable:
        r.hosts[h] = HostStats(unreachable=1)
        r.unreachable_hosts[h] = "ssh: connect to host: Connection refused"
    for h in ok:
        r.hosts[h] = HostStats(ok=3)
    return r


def _printed(capsys: pytest.CaptureFixture[str], result: RunResult, command: str, inventory: Path) -> str:
    display.print_summary(result, "t", command=command, inventory=inventory)
    out = capsys.readouterr()
    return out.out + out.err


@pytest.mark.parametrize("command,expect", [
    ("provision", "clusterctl provision INV --retry"),
    ("plan", "clusterctl plan INV --limit lab-c1,lab-c2"),
    ("verify", "clusterctl verify INV --limit lab-c1,lab-c2"),
])
def test_the_hint_uses_options_the_command_takes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 command: str, expect: str) -> None:
    inv = tmp_path / "inv"
    text = " ".join(_printed(capsys, _result(tmp_path, ["lab-c1", "lab-c2"], ["lab-ctl"]), command, inv).split())
    assert expect.replace("INV", str(inv)) in text
    if command != "provision":
        assert "--retry" not in text


def test_every_lab_host_unreachable_says_lab_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    all_down = _result(tmp_path, ["lab-ctl", "lab-c1", "lab-c2"])
    assert "clusterctl lab up" in _printed(capsys, all_down, "provision", lab.lab_inventory())
    # not the lab, or one host answered: no such hint
    assert "lab up" not in _printed(capsys, all_down, "provision", tmp_path / "prod")
    some = _result(tmp_path, ["lab-c1"], ["lab-ctl"])
    assert "lab up" not in _printed(capsys, some, "provision", lab.lab_inventory())


def test_log_file_is_owner_only(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    try:
        setup_logging(0, log)
        logging.getLogger("clusterctl.test").debug("secret-free line")
    finally:
        setup_logging(0, None)
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert "secret-free line" in log.read_text()
