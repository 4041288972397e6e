"""Session 20 (issue 29): rules and readings of this session; expected values are read off the text of each
capture (quoted here, with the corpus file it comes from where there is one)."""

from __future__ import annotations

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
