"""clusterctl.pairwise: who is paired, pass 1 then pass 2, judged by the real engine.

The round runner stands in for playbooks/pairtest.yml: it writes what that playbook writes, the
client's report per device as <client>/ib_write_bw#<dev>@<server>.txt, from the real-format report
tests/fixtures/ib_write_bw/ndr-duration-gbits.txt (379.27 Gb/s average at 1 MiB on NDR 400), with
the bandwidth replaced by 150.00 for every pair that includes the bad node.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import read_fixture

from clusterctl.analysis.engine import analyze_dir
from clusterctl.pairwise import eligible, run_pairwise

REPORT = read_fixture("ib_write_bw/ndr-duration-gbits.txt")
EXP = {"ib_rate_gbps": 400, "rdma_devices_per_node": 1}


def collect(evidence: Path, host: str, status: str, stderr: str = "") -> None:
    (evidence / host).mkdir(parents=True, exist_ok=True)
    (evidence / host / "_collect.json").write_text(json.dumps({"ib_write_bw": {"status": status, "rc": 0,
                                                                               "stderr": stderr}}))


def runner(evidence: Path, bad: set[str], log: list[list[tuple[str, str]]]):
    def run_round(rnd: dict[str, list[tuple[str, str]]], label: str) -> int:
        pairs = rnd["ib_write_bw"]
        log.append(pairs)
        for server, client in pairs:
            text = REPORT
            if {server, client} & bad:
                text = text.replace("379.27", "150.00")
            (evidence / client / f"ib_write_bw#mlx5_0@{server}.txt").write_text(text)
        return 0
    return run_round


def test_eligible_reads_the_collector_status(tmp_path: Path) -> None:
    collect(tmp_path, "n1", "ok")
    collect(tmp_path, "n2", "error")  # the loopback failed: a pair test still tells why
    collect(tmp_path, "n3", "tool_missing", "ib_write_bw (perftest) not found in PATH")
    collect(tmp_path, "n4", "skipped", "1 Slurm job step(s) running on the node")
    ok, excluded = eligible(tmp_path, ["n1", "n2", "n3", "n4", "n5"])
    assert ok == ["n1", "n2"]
    assert excluded["n3"] == "ib_write_bw tool_missing: ib_write_bw (perftest) not found in PATH"
    assert excluded["n4"].startswith("ib_write_bw skipped: 1 Slurm job step")
    assert "unreachable" in excluded["n5"]


def test_two_passes_find_the_bad_node(tmp_path: Path) -> None:
    hosts = [f"n{i}" for i in range(1, 7)]
    for h in hosts:
        collect(tmp_path, h, "ok")
    log: list[list[tuple[str, str]]] = []
    run = run_pairwise(tmp_path, hosts, EXP, runner(tmp_path, {"n3"}, log))
    # pass 1: (n1,n2),(n3,n4),(n5,n6) then the ring shifted by one: every node meets two partners
    assert log == [[("n1", "n2"), ("n3", "n4"), ("n5", "n6")], [("n2", "n3"), ("n4", "n5"), ("n6", "n1")]]
    # n3 failed with n2 and n4, both good elsewhere: confirmed in pass 1, nothing left for pass 2
    assert len(run.passes) == 1
    report = analyze_dir(tmp_path, EXP)
    # with no pass 2 the rounds' own judgement is final: the same verdicts, no second judging needed
    assert run.report is not None and run.report.to_dict()["hosts"] == report.to_dict()["hosts"]
    assert report.hosts["n3"].status == "failed"
    assert [f.check for f in report.hosts["n3"].findings if f.severity == "critical"] == ["pairwise"]
    # n4 holds the low (n3,n4) report but passed with n5: a note, not a warning
    assert {h for h, r in report.hosts.items() if r.status == "healthy"} == set(hosts) - {"n3"}
    assert any("blamed on the peer" in f.message for f in report.hosts["n4"].notes)
    assert "n2" in report.pair_verdicts.good and "n4" in report.pair_verdicts.good


def test_adjacent_bad_nodes_need_pass_two(tmp_path: Path) -> None:
    hosts = [f"n{i}" for i in range(1, 9)]
    for h in hosts:
        collect(tmp_path, h, "ok")
    log: list[list[tuple[str, str]]] = []
    # n3 and n4 are each other's pass-1 partner: each fails once with a good node and once together
    run = run_pairwise(tmp_path, hosts, EXP, runner(tmp_path, {"n3", "n4"}, log))
    assert len(run.passes) == 2 and run.passes[1], run.passes
    # pass 2 added evidence: run_pairwise judged the folder again, its report is the final one
    assert run.report is not None and run.report.to_dict()["hosts"] == analyze_dir(tmp_path, EXP).to_dict()["hosts"]
    second = [p for r in run.passes[1] for p in r["ib_write_bw"]]
    assert {p[0] for p in second} == {"n3", "n4"}
    assert all(p[1] not in {"n3", "n4"} for p in second)
    report = analyze_dir(tmp_path, EXP)
    confirmed = report.pair_verdicts.confirmed()
    assert set(confirmed) == {"n3", "n4"}
    assert {h for h, r in report.hosts.items() if r.status == "failed"} == {"n3", "n4"}
    assert any("pass 2" in line for line in run.lines())


def test_three_nodes_one_bad_rail_is_blamed_on_its_node(tmp_path: Path) -> None:
    # two of the three pairs include the bad node: a median over pairs alone would call them normal,
    # the pair's own line-rate check (150 of 400 Gb/s) still marks them bad
    hosts = ["a", "b", "c"]
    for h in hosts:
        collect(tmp_path, h, "ok")
    run = run_pairwise(tmp_path, hosts, EXP, runner(tmp_path, {"c"}, []))
    assert [r["ib_write_bw"] for r in run.passes[0]] == [[("a", "b")], [("b", "c")], [("c", "a")]]
    report = analyze_dir(tmp_path, EXP)
    assert report.hosts["c"].status == "failed"
    assert report.hosts["a"].status == report.hosts["b"].status == "healthy"
    assert set(report.pair_verdicts.confirmed()) == {"c"}


def test_pair_status_files_are_judged(tmp_path: Path) -> None:
    collect(tmp_path, "n1", "ok")
    (tmp_path / "n1" / "_collect#ib_write_bw@n2.json").write_text(json.dumps(
        {"mlx5_0": {"status": "error", "rc": 1, "stderr": "server 10.0.0.2 did not accept within 30 s"}}))
    report = analyze_dir(tmp_path, EXP)
    msgs = [f.message for f in report.hosts["n1"].findings]
    assert any(m.startswith("ib_write_bw#mlx5_0@n2: collector failed") and "did not accept" in m for m in msgs), msgs


def test_fewer_than_two_nodes_runs_nothing(tmp_path: Path) -> None:
    collect(tmp_path, "n1", "ok")
    log: list[list[tuple[str, str]]] = []
    run = run_pairwise(tmp_path, ["n1"], EXP, runner(tmp_path, set(), log))
    assert log == [] and "not run" in run.lines()[0]
    # no round ran: the report is still the folder's judgement (verify never judges it itself)
    assert run.report is not None and set(run.report.hosts) == {"n1"}


def test_each_test_pairs_the_nodes_that_can_run_it(tmp_path: Path) -> None:
    hosts = ["n1", "n2", "n3", "n4"]
    for h in hosts:
        (tmp_path / h).mkdir()
        nccl = {"status": "tool_missing", "stderr": "/opt/nccl-tests/build/all_reduce_perf not found"} \
            if h == "n4" else {"status": "ok"}
        (tmp_path / h / "_collect.json").write_text(json.dumps({"ib_write_bw": {"status": "ok"}, "nccl-tests": nccl}))
    rounds: list[dict[str, list[tuple[str, str]]]] = []

    def run_round(rnd: dict[str, list[tuple[str, str]]], label: str) -> int:
        rounds.append(rnd)
        return 0

    run = run_pairwise(tmp_path, {"ib_write_bw": hosts, "nccl-tests": hosts}, EXP, run_round)
    # ib_write_bw: 4 nodes, 2 rounds; nccl-tests: n1-n3 (odd), 3 rounds; round i runs both tests
    assert rounds == [
        {"ib_write_bw": [("n1", "n2"), ("n3", "n4")], "nccl-tests": [("n1", "n2")]},
        {"ib_write_bw": [("n2", "n3"), ("n4", "n1")], "nccl-tests": [("n2", "n3")]},
        {"nccl-tests": [("n3", "n1")]},
    ]
    assert run.excluded["nccl-tests"] == {"n4": "nccl-tests tool_missing: /opt/nccl-tests/build/all_reduce_perf "
                                                "not found"}
    lines = run.lines()
    assert "pairwise nccl-tests pass 1: 3 round(s), 3 pair test(s): n1<->n2; n2<->n3; n3<->n1" in lines
    assert any(line.startswith("pairwise nccl-tests: n4 left out") for line in lines)
