"""Pre-parsed evidence (ccparse.preparsed, issue 19): the collectors' parse on the node gives the
same report as parsing the raw text on the controller, and anything stale falls back to raw."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import simfabric
from ccparse import preparsed, registry
from conftest import FIXTURES, LOCAL_FIXTURES
from fabric_modrun import run_module

from clusterctl.analysis import engine
from clusterctl.analysis.engine import analyze_dir

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench_analysis as bench  # noqa: E402

SPEC = {"fabric": "roce", "pfc_priority": 3, "roce_dscp": 26, "rdma_devices_per_node": 2, "ib_rate_gbps": 400}


def comparable(evidence: Path, exp: dict[str, Any] | None = None) -> dict[str, Any]:
    d = analyze_dir(evidence, exp or {}, jobs=1).to_dict()
    d["summary"].pop("seconds")
    return d


def fixture_folder(dest: Path) -> int:
    """One host per real capture of every registered KIND (shared and local fixtures, source line
    kept: the parsers accept it); returns the number of hosts."""
    kinds = set(registry.kinds())
    n = 0
    for base in (FIXTURES, LOCAL_FIXTURES):
        for kdir in sorted(p for p in base.iterdir() if p.is_dir() and p.name in kinds):
            for f in sorted(kdir.glob("*.txt")):
                host = dest / f"{kdir.name}-{n:03d}"
                host.mkdir(parents=True)
                (host / f"{kdir.name}.txt").write_text(f.read_text(errors="replace"))
                n += 1
    return n


def write_envelopes(evidence: Path) -> int:
    count = 0
    for host in evidence.iterdir():
        docs = {}
        for txt in host.glob("*.txt"):
            env = preparsed.envelope(preparsed.base_kind(txt.stem), txt.read_text(errors="replace"))
            if env is not None:
                docs[txt.stem] = env
        if docs:
            (host / engine.PARSED_FILE).write_text(json.dumps(docs))
            count += len(docs)
    return count


@pytest.fixture
def parse_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """KINDs the engine parsed from raw text (the real parser still runs)."""
    calls: list[str] = []
    real = registry.parse

    def counting(kind: str, text: str, **kw: Any) -> Any:
        calls.append(kind)
        return real(kind, text, **kw)

    monkeypatch.setattr(registry, "parse", counting)
    return calls


def test_every_fixture_gives_the_same_report_pre_parsed(tmp_path: Path, parse_calls: list[str]) -> None:
    ev = tmp_path / "ev"
    hosts = fixture_folder(ev)
    assert hosts > 50
    raw = comparable(ev)
    raw_parses = len(parse_calls)
    assert raw_parses == hosts
    wrapped = write_envelopes(ev)
    # parse errors (the invalid-input fixtures) have no envelope: the controller reports them itself
    assert 0 < wrapped <= hosts
    parse_calls.clear()
    assert comparable(ev) == raw
    assert len(parse_calls) == hosts - wrapped  # only the captures without an envelope were parsed


def test_bench_folder_same_report_and_no_parsing(tmp_path: Path, parse_calls: list[str]) -> None:
    bench.generate(8, tmp_path / "ev")
    raw = comparable(tmp_path / "ev", bench.EXPECTATIONS)
    assert bench.write_preparsed(tmp_path / "ev") == 24
    parse_calls.clear()
    assert comparable(tmp_path / "ev", bench.EXPECTATIONS) == raw
    assert parse_calls == []
    # two processes, pre-parsed: same report again
    d = analyze_dir(tmp_path / "ev", bench.EXPECTATIONS, jobs=2).to_dict()
    d["summary"].pop("seconds")
    assert d == raw


def _one_host(tmp_path: Path) -> Path:
    host = tmp_path / "ev" / "node1"
    host.mkdir(parents=True)
    text = (FIXTURES / bench.BASE["ibstat"]).read_text()
    (host / "ibstat.txt").write_text(text)
    env = preparsed.envelope("ibstat", text)
    assert env is not None
    (host / engine.PARSED_FILE).write_text(json.dumps({"ibstat": env}))
    return host


@pytest.mark.parametrize("field, value", [("schema", "clusterctl-preparsed/0"), ("parser_version", "0" * 64),
                                          ("kind", "ibstatus"), ("raw_crc32", "00000000:0")])
def test_stale_or_foreign_envelope_falls_back_to_raw(tmp_path: Path, parse_calls: list[str],
                                                    field: str, value: str) -> None:
    host = _one_host(tmp_path)
    docs = json.loads((host / engine.PARSED_FILE).read_text())
    docs["ibstat"][field] = value
    docs["ibstat"]["data"] = {"devices": []}  # would judge differently if it were used
    (host / engine.PARSED_FILE).write_text(json.dumps(docs))
    parse_calls.clear()
    rep = comparable(tmp_path / "ev", bench.EXPECTATIONS)
    assert parse_calls == ["ibstat"]
    assert rep["hosts"]["node1"]["status"] == "healthy"


def test_edited_raw_text_wins_over_its_old_envelope(tmp_path: Path, parse_calls: list[str]) -> None:
    host = _one_host(tmp_path)
    edited = bench.set_port_rate((host / "ibstat.txt").read_text(), "mlx5_4", 200)
    (host / "ibstat.txt").write_text(edited)
    parse_calls.clear()
    rep = comparable(tmp_path / "ev", bench.EXPECTATIONS)
    assert parse_calls == ["ibstat"]
    assert any("mlx5_4" in f["subject"] for f in rep["hosts"]["node1"]["findings"])


def test_unreadable_parsed_file_is_ignored(tmp_path: Path, parse_calls: list[str]) -> None:
    host = _one_host(tmp_path)
    (host / engine.PARSED_FILE).write_text("{not json")
    parse_calls.clear()
    assert comparable(tmp_path / "ev", bench.EXPECTATIONS)["hosts"]["node1"]["status"] == "healthy"
    assert parse_calls == ["ibstat"]


def test_parse_error_and_unfaithful_data_give_no_envelope() -> None:
    assert preparsed.envelope("ibstat", "this is not ibstat output\n") is None
    assert preparsed.envelope("no-such-kind", "x") is None
    assert preparsed.load({"schema": preparsed.SCHEMA}, "ibstat", "x") is preparsed.MISSING
    assert preparsed.load(None, "ibstat", "x") is preparsed.MISSING


def test_collector_returns_the_envelopes_the_engine_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        parse_calls: list[str]) -> None:
    """fabric_evidence on the lab's simulated RoCE trees: raw and pre-parsed folders judge the same."""
    evidence = tmp_path / "evidence"
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("SIMFABRIC_QOS_STATE", raising=False)
    for host, desc in (("lab-c1", "lab-roce-healthy.yml"), ("lab-c2", "lab-roce-degraded.yml")):
        root = tmp_path / host
        simfabric.build(simfabric.load(REPO / "tests" / "fixtures" / "simfabric" / desc), root / "sys")
        shutil.copytree(REPO / "tests" / "fakebin", root / "bin")
        (root / "proc").mkdir()
        r = run_module("fabric_evidence", {"sysfs_root": str(root / "sys"), "proc_root": str(root / "proc"),
                                           "tool_dirs": [str(root / "bin")], "kinds": ["sysfs-ib", "mlnx_qos"]},
                       check_mode=True)
        assert set(r["parsed"]) == {k for k, v in r["evidence"].items() if v["status"] == "ok"}
        assert all(e["schema"] == preparsed.SCHEMA for e in r["parsed"].values())
        (evidence / host).mkdir(parents=True)
        for kind, v in r["evidence"].items():
            (evidence / host / f"{kind}.txt").write_text(v["stdout"])
        (evidence / host / "_collect.json").write_text(json.dumps(r["summary"]))
        (evidence / f"{host}.parsed").write_text(json.dumps(r["parsed"]))
    parse_calls.clear()
    raw = comparable(evidence, SPEC)
    assert len(parse_calls) == 6
    assert raw["hosts"]["lab-c2"]["status"] == "failed"
    for host in ("lab-c1", "lab-c2"):
        (evidence / f"{host}.parsed").rename(evidence / host / engine.PARSED_FILE)
    parse_calls.clear()
    assert comparable(evidence, SPEC) == raw
    assert parse_calls == []


def test_pair_test_envelopes_keyed_like_their_status_file(tmp_path: Path, parse_calls: list[str]) -> None:
    """``_parsed#ib_write_bw@<peer>.json`` maps devices (``_`` for none) like ``_collect#...``."""
    ev = tmp_path / "ev"
    text = next(iter(sorted((FIXTURES / "ib_write_bw").glob("*.txt")))).read_text()
    for a, b in (("node1", "node2"), ("node2", "node1")):
        (ev / a).mkdir(parents=True)
        (ev / a / f"ib_write_bw#mlx5_0@{b}.txt").write_text(text)
    raw = comparable(ev)
    assert len(parse_calls) == 2
    env = preparsed.envelope("ib_write_bw", text)
    assert env is not None
    for a, b in (("node1", "node2"), ("node2", "node1")):
        (ev / a / f"_parsed#ib_write_bw@{b}.json").write_text(json.dumps({"mlx5_0": env}))
    parse_calls.clear()
    assert comparable(ev) == raw
    assert parse_calls == []
