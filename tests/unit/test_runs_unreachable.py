"""Runs where hosts cannot be reached (issue 15, Runs): every host of the inventory that got no
result is reported and remembered for --retry, later plays' hosts are still tried, plan says it is
incomplete and exits 4, and state files are written atomically and set aside when corrupt.

The real runs go to 127.0.0.x on a port nothing listens on (ssh: connection refused): loopback only.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clusterctl import runner
from clusterctl.cli import app
from clusterctl.runner import HostStats, RunResult, read_last_failed, write_state

REPO = Path(__file__).resolve().parents[2]
needs_ansible = pytest.mark.skipif(shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) is None,
                                   reason="ansible-playbook is not installed next to this python")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))  # free on every address, loopback ones included
        return int(s.getsockname()[1])


@pytest.fixture
def unreachable_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The lab inventory with its hosts at 127.0.0.10-12:<closed port> over ssh (loopback)."""
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    inv = tmp_path / "lab"
    shutil.copytree(REPO / "inventories" / "lab", inv)
    port = closed_port()
    hosts = (inv / "hosts.yml").read_text()
    for last in (10, 11, 12):
        hosts = hosts.replace(f"ansible_host: 10.213.77.{last}",
                              f"ansible_host: 127.0.0.{last}\n          ansible_port: {port}")
    (inv / "hosts.yml").write_text(hosts)
    lab = (inv / "group_vars" / "all" / "lab.yml").read_text()
    lab = lab.replace("-o LogLevel=ERROR", "-o LogLevel=ERROR -o ConnectTimeout=3")
    (inv / "group_vars" / "all" / "lab.yml").write_text(lab + "ansible_connection: ssh\n")
    return inv


@needs_ansible
def test_every_host_unreachable_later_plays_still_tried_and_remembered(unreachable_lab: Path) -> None:
    """site.yml's first play targets slurm_compute: both are unreachable, so ansible-playbook stops
    and the controller's plays never run. The runner runs the playbook again for lab-ctl; all three
    are reported, recorded for --retry, and --retry targets all three."""
    res = CliRunner().invoke(app, ["provision", str(unreachable_lab), "--json"])
    assert res.exit_code == 4, res.output
    out = json.loads(res.stdout)["result"]
    assert sorted(out["unreachable"]) == ["lab-c1", "lab-c2", "lab-ctl"], out
    assert out["not_reached"] == {} and out["failed"] == {}
    assert len(out["artifacts"]) == 2  # the first pass stopped after play 1; a second pass for lab-ctl
    assert sorted(read_last_failed(unreachable_lab)) == ["lab-c1", "lab-c2", "lab-ctl"]
    assert "unreachable lab-ctl" in " ".join(res.stderr.split())  # the human summary went to stderr

    plan = CliRunner().invoke(app, ["plan", str(unreachable_lab)])
    assert plan.exit_code == 4, plan.output
    assert "no changes" not in plan.output
    assert "plan: incomplete: 3 host(s) unreachable or not reached" in " ".join(plan.output.split())


def test_hosts_a_stopped_run_never_reached_are_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recorded shapes of two passes: the first stops with lab-c1/lab-c2 unreachable; the second
    (for lab-ctl) stops too before lab-ctl gets any result. lab-ctl is 'not reached', exit 4,
    remembered for --retry."""
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    calls: list[str | None] = []

    def fake_execute(call: runner.AnsibleCall, on_event: object = None) -> RunResult:
        calls.append(call.limit)
        r = RunResult(rc=4, status="failed", artifacts_dir=tmp_path / f"run{len(calls)}",
                      passes=[tmp_path / f"run{len(calls)}"])
        runner._summarise({"event": "playbook_on_no_hosts_remaining", "event_data": {}}, r)
        if len(calls) == 1:
            for h in ("lab-c1", "lab-c2"):
                runner._summarise({"event": "runner_on_unreachable", "event_data": {
                    "host": h, "task": "Gathering Facts", "res": {"msg": "ssh: connect to host 127.0.0.1 port 9: "
                                                                  "Connection refused", "unreachable": True}}}, r)
        return r

    monkeypatch.setattr(runner, "execute", fake_execute)
    res = runner.run_playbook("site.yml", REPO / "inventories" / "lab", label="provision")
    assert calls == [None, "lab-ctl"]
    assert sorted(res.unreachable_hosts) == ["lab-c1", "lab-c2"]
    assert list(res.not_reached) == ["lab-ctl"] and "never reached" in res.not_reached["lab-ctl"]
    assert res.exit_code == 4 and res.problem_hosts == ["lab-c1", "lab-c2", "lab-ctl"]
    assert sorted(read_last_failed(REPO / "inventories" / "lab")) == ["lab-c1", "lab-c2", "lab-ctl"]


def test_hosts_without_results_in_a_run_that_went_to_its_end_are_fine(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Under --tags, a host whose plays had nothing to do gets no result: not 'not reached'."""
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    calls: list[str | None] = []

    def fake_execute(call: runner.AnsibleCall, on_event: object = None) -> RunResult:
        calls.append(call.limit)
        r = RunResult(rc=0, status="successful", artifacts_dir=tmp_path, passes=[tmp_path])
        runner._summarise({"event": "runner_on_ok", "event_data": {"host": "lab-c1", "task": "t", "res": {}}}, r)
        return r

    monkeypatch.setattr(runner, "execute", fake_execute)
    res = runner.run_playbook("site.yml", REPO / "inventories" / "lab", tags="nccl", check=True)
    assert calls == [None] and res.not_reached == {} and res.exit_code == 0


def test_plan_with_an_unreachable_host_is_incomplete(tmp_path: Path) -> None:
    from clusterctl.commands.provision_cmd import print_plan
    from clusterctl.display import console

    r = RunResult(4, "failed", tmp_path, unreachable_hosts={"c2": "Gathering Facts: refused"})
    r.hosts["c1"] = HostStats(ok=5)
    with console.capture() as cap:
        print_plan(r)
    text = cap.get()
    assert "no changes" not in text and "plan: incomplete: 1 host(s)" in text and "c2" in text


def test_state_file_is_replaced_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "last-failed.json"
    write_state(f, {"hosts": {"a": "x"}})
    assert json.loads(f.read_text()) == {"hosts": {"a": "x"}}

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(runner.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_state(f, {"hosts": {"b": "y"}})
    assert json.loads(f.read_text()) == {"hosts": {"a": "x"}}  # the old content is intact
    assert [p.name for p in tmp_path.iterdir()] == ["last-failed.json"]  # no temporary file left


@pytest.mark.parametrize("content", [b'{"hosts": {"a": "x"', b"\xff\xfe garbage", b'["a"]', b'{"hosts": {"a": 1}}'])
def test_corrupt_state_file_is_reported_and_set_aside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      content: bytes) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    inv = REPO / "inventories" / "lab"
    f = runner.last_failed_file(inv)
    f.write_bytes(content)
    res = CliRunner().invoke(app, ["provision", str(inv), "--retry"])
    assert res.exit_code == 0, res.output
    assert "nothing to retry" in res.stdout
    assert f"state file {f}" in res.stderr and "set aside as" in res.stderr and "Traceback" not in res.output
    assert not f.exists() and f.with_name("last-failed.json.corrupt").read_bytes() == content
    write_state(f, {"hosts": {"n1": "u"}, "artifacts": "x"})
    assert read_last_failed(inv) == {"n1": "u"}  # a new file is written where the corrupt one was


def test_record_failures_keeps_not_reached_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path))
    inv = tmp_path / "inv"
    inv.mkdir()
    r = RunResult(4, "failed", tmp_path, unreachable_hosts={"c1": "u"}, not_reached={"ctl": "never reached"})
    runner._record_failures(inv, r, None)
    assert read_last_failed(inv) == {"c1": "u", "ctl": "never reached"}
    assert oct(os.stat(runner.last_failed_file(inv)).st_mode & 0o777) == "0o600"
