"""analyze_dir over evidence folders built from the real fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import read_fixture

from clusterctl.analysis import checks, engine
from clusterctl.analysis.model import CHECKS, CheckResult, Finding, Metric

# register the real checks before any test swaps a KIND's list, so they never land in a patched one
checks.load_all()


def make(tmp: Path, hosts: dict[str, dict[str, str]]) -> Path:
    """hosts: host -> {file name: fixture path or literal text prefixed with '='}."""
    ev = tmp / "evidence"
    for host, files in hosts.items():
        d = ev / host
        d.mkdir(parents=True)
        for name, src in files.items():
            (d / name).write_text(src[1:] if src.startswith("=") else read_fixture(src))
    return ev


def rate_check(host: str, data: dict[str, Any], exp: Any) -> CheckResult:
    """A stand-in port check (the real ones live in clusterctl/analysis/checks)."""
    out = CheckResult()
    for dev in data["devices"]:
        for p in dev["ports"]:
            subj = f"{host}/{dev['name']}/{p['port']}"
            if p["state"] != "ACTIVE":
                out.findings.append(Finding(host, "stub_port", "critical", subj, f"state {p['state']}"))
            out.metrics.append(Metric(host, "port_rate_gbps", p["rate_gbps"] or 0.0, f"{dev['name']}/{p['port']}"))
    return out


@pytest.fixture
def stub_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(CHECKS, "ibstat", [rate_check])


def test_findings_status_and_json_shape(tmp_path: Path, stub_checks: None) -> None:
    ev = make(tmp_path, {
        "good1": {"ibstat.txt": "ibstat/h100-cx7-roce-all-active.txt"},
        "bad1": {"ibstat.txt": "ibstat/h100-cx7-roce-down-polling.txt"},
    })
    rep = engine.analyze_dir(ev, {})
    d = json.loads(json.dumps(rep.to_dict()))
    assert set(d) >= {"hosts", "stragglers"}
    assert d["hosts"]["good1"] == {"status": "healthy", "findings": []}
    bad = d["hosts"]["bad1"]
    assert bad["status"] == "failed"
    assert all(set(f) == {"check", "severity", "subject", "message"} for f in bad["findings"])
    # the fixture reads "State: Down" for mlx5_11 (line 61) and mlx5_5 (line 129), Active elsewhere
    assert sorted(f["subject"] for f in bad["findings"]) == ["bad1/mlx5_11/1", "bad1/mlx5_5/1"]
    assert bad["findings"][0] == {"check": "stub_port", "severity": "critical", "subject": "bad1/mlx5_11/1",
                                  "message": "state DOWN"}
    assert rep.failed == ["bad1"]
    assert d["summary"]["failed"] == 1 and d["summary"]["healthy"] == 1


def test_parse_error_unknown_kind_crashing_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(host: str, data: Any, exp: Any) -> list[Finding]:
        raise RuntimeError("bug")

    monkeypatch.setitem(CHECKS, "ibstat", [boom])
    ev = make(tmp_path, {
        "h1": {"ibstat.txt": "=this is not ibstat\nat all\n", "frobnicate.txt": "=x\n"},
        "h2": {"ibstat.txt": "ibstat/h100-all-active-2.txt"},
    })
    rep = engine.analyze_dir(ev, {})
    # issue 29: a parse failure never decides a verdict alone; it is coverage, and a host none of
    # whose evidence could be read is "cannot judge", not degraded
    assert rep.hosts["h1"].findings == []
    notes = [f.message for f in rep.hosts["h1"].notes if f.check == "coverage"]
    assert any(m.startswith("h1/ibstat.txt: not read (2 lines): ibstat line ") for m in notes), notes
    assert any("frobnicate" in m and "not recognised" in m for m in notes), notes
    h2 = rep.hosts["h2"].findings
    assert [(f.check, f.severity) for f in h2] == [("boom", "warning")]
    assert "crashed: RuntimeError: bug" in h2[0].message
    assert rep.hosts["h1"].status == "cannot judge"
    assert rep.hosts["h1"].cannot_judge_reason == "no evidence could be read"


def test_collect_status(tmp_path: Path) -> None:
    status = {"ibstat": {"status": "device_absent", "rc": None, "stderr": "no device"},
              "nvidia-smi-q": {"status": "tool_missing", "rc": None, "stderr": "nvidia-smi not found"},
              "mlnx_qos": {"status": "error", "rc": 1, "stderr": "Netlink error"}}
    ev = make(tmp_path, {"h": {"_collect.json": "=" + json.dumps(status)}})
    rep = engine.analyze_dir(ev, {"rdma_devices_per_node": 8, "gpus_per_node": 0})
    f = {x.message.split(":")[0]: x for x in rep.hosts["h"].findings}
    assert f["ibstat"].severity == "critical" and "8 expected" in f["ibstat"].message
    assert f["mlnx_qos"].severity == "warning" and "rc 1" in f["mlnx_qos"].message
    assert [n.message.split(":")[0] for n in rep.hosts["h"].notes] == ["nvidia-smi-q"]
    rep2 = engine.analyze_dir(ev, {"rdma_devices_per_node": 0})
    assert rep2.hosts["h"].counts()["critical"] == 0


def test_stragglers_from_metrics(tmp_path: Path, stub_checks: None) -> None:
    hosts = {f"n{i}": {"ibstat.txt": "ibstat/h100-all-active-2.txt"} for i in range(6)}
    text = read_fixture("ibstat/h100-all-active-2.txt")
    i = text.index("CA 'mlx5_4'")
    hosts["n3"] = {"ibstat.txt": "=" + text[:i] + text[i:].replace("Rate: 400", "Rate: 200", 1)}
    rep = engine.analyze_dir(make(tmp_path, hosts), {})
    assert [(s.host, s.subject, s.value, s.median) for s in rep.stragglers] == [("n3", "mlx5_4/1", 200.0, 400.0)]
    assert [f.subject for f in rep.hosts["n3"].findings] == ["n3/mlx5_4/1"]
    assert rep.hosts["n3"].status == "degraded"


def pair_check(host: str, data: Any, exp: Any) -> CheckResult:
    return CheckResult(metrics=[Metric(host, "ib_write_bw_Gbps", float(data), "mlx5_0/1", "Gb/s")])


def test_pair_results_blame(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ccparse.common import PARSERS

    monkeypatch.setitem(PARSERS, "stubbw", lambda text: text.strip())
    monkeypatch.setitem(CHECKS, "stubbw", [pair_check])
    # ring a-b-c-d-e-f; c is bad
    vals = {("a", "b"): 390, ("c", "d"): 150, ("e", "f"): 391, ("b", "c"): 140, ("d", "e"): 389, ("f", "a"): 388}
    hosts: dict[str, dict[str, str]] = {h: {} for h in "abcdef"}
    for (x, y), v in vals.items():
        hosts[x][f"stubbw@{y}.txt"] = f"={v}\n"
    rep = engine.analyze_dir(make(tmp_path, hosts), {})
    assert rep.stragglers == []  # pair metrics are not per-host metrics
    assert sorted(rep.bad_pairs) == [("b", "c"), ("c", "d")]
    assert rep.failed == ["c"]
    (f,) = rep.hosts["c"].findings
    assert f.check == "pairwise" and "b, d" in f.message
    d = rep.to_dict()
    assert d["pair_verdicts"]["bad"] == {"c": ["b", "d"]}
    assert len(d["pairs"]) == 6


def test_parallel_jobs_same_result(tmp_path: Path, stub_checks: None) -> None:
    hosts = {f"n{i:03d}": {"ibstat.txt": "ibstat/h100-cx7-roce-down-polling.txt" if i == 5 else
                           "ibstat/h100-cx7-roce-all-active.txt"} for i in range(130)}
    ev = make(tmp_path, hosts)
    a = engine.analyze_dir(ev, {}).to_dict()
    b = engine.analyze_dir(ev, {}, jobs=2).to_dict()
    a.pop("summary"), b.pop("summary")
    assert a == b


def test_missing_dir(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        engine.analyze_dir(tmp_path / "nope", {})
