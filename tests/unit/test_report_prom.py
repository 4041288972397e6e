"""Issue 26: clusterctl's verdicts as a Prometheus textfile and as JUnit XML (clusterctl/report/).

Every textfile is checked by Prometheus' own parser (``promtool check metrics``, Debian package
``prometheus``, installed by scripts/setup.sh); without promtool those checks skip with the reason.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import read_fixture
from typer.testing import CliRunner

from clusterctl.analysis.engine import analyze_dir
from clusterctl.cli import app
from clusterctl.report import junit, prom

runner = CliRunner()
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool missing: apt-get install prometheus "
                                                             "(scripts/setup.sh installs it)")
XID_FIXTURE = "kernel-log/xid69-31-syslog.txt"
NCCL_FIXTURE = "nccl-tests/a100x8-single-node-all-reduce-gcm.txt"


def _evidence(root: Path) -> Path:
    ev = root / "evidence"
    for host, kind, fixture in (("node1", "ibstat", "ibstat/h100-cx7-roce-all-active.txt"),
                                ("node2", "ibstat", "ibstat/h100-cx7-roce-down-polling.txt"),
                                ("node3", "kernel-log", XID_FIXTURE),
                                ("node4", "nccl-tests", NCCL_FIXTURE)):
        (ev / host).mkdir(parents=True)
        (ev / host / f"{kind}.txt").write_text(read_fixture(fixture))
    (ev / "node5").mkdir()  # no evidence
    return ev


def _samples(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def _promtool_check(text: str, tmp_path: Path) -> None:
    assert PROMTOOL is not None
    f = tmp_path / "check.prom"
    f.write_text(text)
    with f.open() as stdin:
        r = subprocess.run([PROMTOOL, "check", "metrics"], stdin=stdin, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.fixture
def report(tmp_path: Path):
    return analyze_dir(_evidence(tmp_path), {"nccl_busbw_floor_GBps": 1000.0}, jobs=1)


def test_prom_values_follow_the_evidence(report, tmp_path: Path) -> None:
    s = _samples(prom.render(report, now=1700000000))
    statuses = {h: r.status for h, r in report.hosts.items()}
    for host, status in statuses.items():
        assert s[f'clusterctl_node_status{{host="{host}",status="{status}"}}'] == 1
        assert sum(v for k, v in s.items() if k.startswith(f'clusterctl_node_status{{host="{host}",')) == 1
    assert statuses["node2"] == "failed" and statuses["node5"] == "no evidence"
    assert s['clusterctl_hosts{status="failed"}'] == list(statuses.values()).count("failed")
    # the down port of node2 is a critical finding of some check, counted as such
    crit = {k: v for k, v in s.items() if k.startswith('clusterctl_findings{host="node2"') and 'critical' in k}
    assert sum(crit.values()) == len([f for f in report.hosts["node2"].findings if f.severity == "critical"]) > 0
    # Xid counts by code, from the capture's lines
    cap = read_fixture(XID_FIXTURE)
    for code in ("69", "31"):
        n = len(re.findall(rf"NVRM: Xid \(PCI:[^)]*\): {code},", cap))
        assert n > 0 and s[f'clusterctl_xid_events{{host="node3",code="{code}"}}'] == n
    # the measured busbw against the floor the check applied (the expectation above)
    bus = {k: v for k, v in s.items() if k.startswith('clusterctl_measured{host="node4",metric="nccl_busbw_GBps"')}
    floors = {k: v for k, v in s.items() if k.startswith('clusterctl_measured_floor{host="node4"')}
    assert len(bus) == 1 and list(floors.values()) == [1000.0]
    measured = next(m.value for m in report.hosts["node4"].metrics if m.name == "nccl_busbw_GBps")
    assert next(iter(bus.values())) == measured
    assert s["clusterctl_last_verify_timestamp_seconds"] == 1700000000
    assert not any(k.startswith("clusterctl_node_drained") for k in s)
    assert _samples(prom.render(report, drained=["node2"]))['clusterctl_node_drained{host="node2"}'] == 1


def test_label_values_are_escaped() -> None:
    from clusterctl.analysis.engine import HostReport, Report
    from clusterctl.analysis.model import Finding

    r = HostReport('we"ird\\host\n')
    r.add(Finding(r.host, "chk", "warning", r.host, "m"))
    r.kinds.append("x")
    text = prom.render(Report({r.host: r}), now=1)
    assert 'host="we\\"ird\\\\host\\n"' in text
    assert len([ln for ln in text.splitlines() if ln.startswith("clusterctl_findings")]) == 1


@needs_promtool
def test_promtool_accepts_every_textfile(report, tmp_path: Path) -> None:
    from clusterctl.analysis.engine import Report

    _promtool_check(prom.render(report, drained=["node2"]), tmp_path)
    _promtool_check(prom.render(Report({})), tmp_path)  # an empty analysis is still a valid file


@needs_promtool
def test_promtool_rejects_a_broken_textfile(tmp_path: Path) -> None:
    """The check above can fail: a duplicate TYPE line is refused."""
    assert PROMTOOL is not None
    f = tmp_path / "bad.prom"
    f.write_text("# TYPE a gauge\n# TYPE a gauge\na 1\n")
    with f.open() as stdin:
        r = subprocess.run([PROMTOOL, "check", "metrics"], stdin=stdin, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0


def test_write_is_atomic(report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "tf" / "clusterctl.prom"
    out.parent.mkdir()
    out.write_text("old\n")

    def boom(*a: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("os.fsync", boom)
    with pytest.raises(OSError):
        prom.write(report, out)
    assert out.read_text() == "old\n" and sorted(p.name for p in out.parent.iterdir()) == ["clusterctl.prom"]
    monkeypatch.undo()
    prom.write(report, out)
    assert out.read_text().startswith("# HELP clusterctl_node_status")
    assert out.stat().st_mode & 0o777 == 0o644


def test_junit(report) -> None:
    root = ET.fromstring(junit.render(report))
    ts = root.find("testsuite")
    assert ts is not None
    cases = {c.get("name"): c for c in ts.findall("testcase")}
    assert set(cases) == set(report.hosts)
    assert cases["node2"].find("failure") is not None and cases["node1"].find("failure") is None
    assert cases["node5"].find("error") is not None
    assert ts.get("failures") == str(len(report.failed)) and ts.get("tests") == str(len(report.hosts))


@needs_promtool
def test_analyze_cli_prom_and_junit(tmp_path: Path) -> None:
    ev = _evidence(tmp_path)
    p, j = tmp_path / "out" / "c.prom", tmp_path / "out" / "c.xml"
    r = runner.invoke(app, ["analyze", str(ev), "--prom", str(p), "--junit", str(j)])
    assert r.exit_code == 3, r.output
    assert 'clusterctl_node_status{host="node2",status="failed"} 1' in p.read_text()
    assert ET.parse(j).getroot().tag == "testsuites"
    _promtool_check(p.read_text(), tmp_path)


def test_cli_options_listed() -> None:
    for cmd in ("analyze", "verify"):
        out = runner.invoke(app, [cmd, "--help"], terminal_width=200).output
        assert "--prom" in out and "--junit" in out
