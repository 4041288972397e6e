"""Session 20 (issue 29): rules and readings of this session; expected values are read off the text of each
capture (quoted here, with the corpus file it comes from where there is one)."""

from __future__ import annotations

from pathlib import Path

from conftest import judge_text


def _log(*lines: str) -> str:
    return "".join(f"{ln}\n" for ln in lines)


def _gdr_off_log(host_b: str, n_nodes: int) -> str:
    # NCCL >= 2.19 prints 'comm ... rank R nRanks N nNodes M localRanks L localRank R' once the topology is known
    return _log(
        "hostA:101:201 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",
        "hostA:101:201 [0] NCCL INFO Using network IB",
        "hostA:101:201 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
        f"hostA:101:201 [0] NCCL INFO comm 0x5561 rank 0 nRanks 2 nNodes {n_nodes} localRanks 1 localRank 0 MNNVL 0",
        f"{host_b}:102:202 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.2<0>",
        f"{host_b}:102:202 [0] NCCL INFO comm 0x5562 rank 1 nRanks 2 nNodes {n_nodes} localRanks 1 localRank 0 "
        "MNNVL 0")


def test_nccl_says_how_many_nodes_its_communicator_spans_and_that_decides_multi_node() -> None:
    # two hosts' lines and nNodes 2: GDR off is on the inter-node data path (nccl_gdr.off)
    found = judge_text("nccl-log", _gdr_off_log("hostB", 2))
    assert [(f.check, f.severity) for f in found] == [("nccl_gdr", "warning")]
    # lines of two hosts but NCCL's own 'nNodes 1' (two single-node jobs logged together): no inter-node traffic
    assert judge_text("nccl-log", _gdr_off_log("hostB", 1)) == []
    # nNodes 2 said by NCCL on one host's lines alone is enough
    assert [f.check for f in judge_text("nccl-log", _gdr_off_log("hostA", 2))] == ["nccl_gdr"]


# --- a line a parser rejects is left out, within a budget; the rest is read and judged (issue 29 item 2) ---

SINFO = ("PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
         "gpu*         up   infinite      2  down* gpu[01-02]\n"
         "gpu*         up   infinite      6   idle gpu[03-08]\n"
         "Jobid list: 3381322 3380373\n"   # a wrapper's line inside the table (slurmtools' psnode prints such lines)
         "cpu          up   infinite      4   idle c[1-4]\n")


def test_a_line_the_parser_rejects_is_left_out_and_said() -> None:
    from ccparse import registry

    data = registry.parse("sinfo", SINFO)
    assert [(r["partition"], r["state"], r["nodes"]) for r in data["partitions"]] == [
        ("gpu", "down*", 2), ("gpu", "idle", 6), ("cpu", "idle", 4)]
    assert data["unread_lines"] == [4]
    assert data["cut"] == ["1 line(s) not read (line 4: expected 6 columns PARTITION AVAIL TIMELIMIT NODES STATE "
                           "NODELIST, got 'Jobid list: 3381322 3380373')"]
    # what was read is judged: the two nodes down and not responding
    assert {f.subject for f in judge_text("sinfo", SINFO) if f.severity == "critical"} >= {"gpu01", "gpu02"}


def test_more_rejected_lines_than_the_budget_leave_the_capture_unread() -> None:
    import pytest
    from ccparse import registry
    from ccparse.common import ParseError

    # 5 non-blank lines: one may be left out (a quarter, rounded down), not two
    two = SINFO.replace("cpu          up", "Jobid list: 1 2\ncpu          up")
    with pytest.raises(ParseError) as err:
        registry.parse("sinfo", two)
    assert err.value.line == 4  # the first error is the one reported


def test_a_count_is_not_judged_when_a_line_was_left_unread(tmp_path: Path) -> None:
    from clusterctl.analysis.engine import analyze_dir

    head = "index, name, pci.bus_id, temperature.gpu, utilization.gpu [%], memory.used [MiB]\n"
    rows = [f"{i}, NVIDIA H100 80GB HBM3, 00000000:{i + 1:02X}:00.0, 30, 0 %, 1 MiB\n" for i in range(8)]

    def judged(text: str) -> tuple[str, list[str]]:
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        (folder / "n1").mkdir(parents=True)
        (folder / "n1" / "nvidia-smi-query.txt").write_text(text)
        rep = analyze_dir(str(folder), {"gpus_per_node": 8}).hosts["n1"]
        return rep.status, [f.message for f in rep.notes if f.check == "coverage"]

    # 7 of 8 rows read and none unread: a GPU is missing (failed)
    assert judged(head + "".join(rows[:7]))[0] == "failed"
    # 7 of 8 read because a garbled row was left out: the GPU may be on it; the count is not judged, and said
    status, notes = judged(head + "".join(rows[:5]) + "5, NVIDIA H100 garbled\n" + "".join(rows[6:]))
    assert status == "healthy"
    assert any("count not judged, 1 line(s) of the capture were not read" in n for n in notes)
    assert any("1 line(s) not read (line 7: row has 2 values, header has 6" in n for n in notes)
