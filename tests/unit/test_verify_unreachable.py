"""Issue 28: verify names every node it was for. A node the collection could not reach is in the
JSON and HTML report as ``unreachable`` (with why), never left out, and verify then exits 4 (the
runs' convention: 3 failed/no evidence > 4 unreachable > 5 cannot judge > 0).

The collection's result is built the way production builds it: ansible-runner event dicts (the
shapes ``runner_on_ok``/``runner_on_unreachable`` have in a run's ``job_events``) through
``runner._summarise``; the last test is a real ``clusterctl verify`` against hosts on loopback ports
nothing listens on.
"""

from __future__ import annotations

import json
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from clusterctl import verify
from clusterctl.cli import app
from clusterctl.errors import EXIT_HOSTS_FAILED, EXIT_UNREACHABLE
from clusterctl.runner import RunResult, _summarise
from clusterctl.verify import Collection

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab"
SSH_REFUSED = "Failed to connect to the host via ssh: ssh: connect to host 10.213.77.12 port 22: Connection refused"


def event(kind: str, host: str, task: str, **res: Any) -> dict[str, Any]:
    return {"event": kind, "event_data": {"host": host, "task": task, "res": res}}


def collection(tmp_path: Path, events: list[dict[str, Any]], captured: dict[str, str]) -> Collection:
    """A verify of the lab's compute nodes whose run saw ``events`` and whose evidence folder holds
    ``captured`` (host -> tests/fixtures file, copied as its KIND)."""
    p = verify.plan(LAB, name="t")
    run = RunResult(rc=4, status="failed", artifacts_dir=tmp_path / "artifacts")
    run.artifacts_dir.mkdir()
    for e in events:
        _summarise(e, run)
    p.evidence.mkdir(parents=True)
    for host, rel in captured.items():
        (p.evidence / host).mkdir()
        shutil.copy(REPO / "tests" / "fixtures" / rel, p.evidence / host / f"{rel.split('/')[0]}.txt")
    return Collection(p, run)


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))


def test_unreachable_node_is_in_json_and_html_report_and_exit_is_4(tmp_path: Path) -> None:
    col = collection(tmp_path, [
        event("runner_on_ok", "lab-c1", "Capture evidence (read-only tools; active tests only on idle nodes)"),
        event("runner_on_unreachable", "lab-c2", "Validate the verify variables", msg=SSH_REFUSED, unreachable=True),
    ], {"lab-c1": "ibstat/a100-all-active.txt"})  # every port of that capture Active, LinkUp
    v = verify.analyse(col)
    d = json.loads(v.report_json.read_text())
    assert d["hosts"]["lab-c1"]["status"] == "healthy"
    assert d["hosts"]["lab-c2"]["status"] == "unreachable"
    assert "Connection refused" in d["hosts"]["lab-c2"]["unreachable"]
    assert d["summary"]["hosts"] == 2 and d["summary"]["unreachable"] == 1
    html = v.report_html.read_text()
    assert "data-host='lab-c2' data-status='unreachable'" in html
    assert "1 unreachable" in html
    assert v.exit_code == EXIT_UNREACHABLE == 4


def test_every_node_unreachable_is_a_report_not_no_evidence(tmp_path: Path) -> None:
    col = collection(tmp_path, [event("runner_on_unreachable", h, "Validate the verify variables", msg=SSH_REFUSED)
                                for h in ("lab-c1", "lab-c2")], {})
    v = verify.analyse(col)
    assert {h: r.status for h, r in v.report.hosts.items()} == {"lab-c1": "unreachable", "lab-c2": "unreachable"}
    assert v.exit_code == EXIT_UNREACHABLE


def test_failed_node_wins_over_unreachable_and_a_silent_target_has_no_evidence(tmp_path: Path) -> None:
    col = collection(tmp_path, [
        event("runner_on_unreachable", "lab-c1", "Validate the verify variables", msg=SSH_REFUSED),
    ], {})
    col.plan.evidence.joinpath("stray").mkdir()  # something was collected, but nothing for lab-c2
    v = verify.analyse(col)
    assert v.report.hosts["lab-c1"].status == "unreachable"
    assert v.report.hosts["lab-c2"].status == "no evidence"  # targeted, no result, no folder: named too
    assert v.exit_code == EXIT_HOSTS_FAILED


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) is None,
                    reason="ansible-playbook is not installed next to this python")
def test_real_verify_of_unreachable_nodes_lists_them_and_exits_4(tmp_path: Path) -> None:
    inv = tmp_path / "lab"
    shutil.copytree(LAB, inv)
    port = closed_port()
    hosts = (inv / "hosts.yml").read_text()
    for last in (10, 11, 12):
        hosts = hosts.replace(f"ansible_host: 10.213.77.{last}",
                              f"ansible_host: 127.0.0.{last}\n          ansible_port: {port}")
    (inv / "hosts.yml").write_text(hosts)
    lab = (inv / "group_vars" / "all" / "lab.yml").read_text()
    (inv / "group_vars" / "all" / "lab.yml").write_text(
        lab.replace("-o LogLevel=ERROR", "-o LogLevel=ERROR -o ConnectTimeout=3") + "ansible_connection: ssh\n")
    res = CliRunner().invoke(app, ["verify", str(inv), "--json"])
    assert res.exit_code == 4, res.output
    out = json.loads(res.stdout)["result"]  # the --json envelope
    assert {h: s["status"] for h, s in out["report"]["hosts"].items()} == {"lab-c1": "unreachable",
                                                                           "lab-c2": "unreachable"}
    assert "unreachable" in " ".join(res.stderr.split())
