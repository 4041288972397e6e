"""Drain reasons and the resume selection: only nodes clusterctl drained come back."""

from __future__ import annotations

from clusterctl.analysis.engine import HostReport, Report
from clusterctl.analysis.model import Finding
from clusterctl.slurm import drain_argv, resume_argv
from clusterctl.slurm_drain import NodeState, drains, nodes_from_parsed, select_resumable


def test_drain_reason_from_top_finding() -> None:
    r = HostReport("gpu07")
    r.findings += [Finding("gpu07", "straggler", "warning", "gpu07", "slow"),
                   Finding("gpu07", "ib_port", "critical", "gpu07/mlx5_4/1", 'rate 200 "Gb/s" < 400')]
    rep = Report(hosts={"gpu07": r, "gpu08": HostReport("gpu08")})
    (d,) = drains(rep)
    assert d == {"name": "gpu07", "reason": "clusterctl: ib_port gpu07/mlx5_4/1: rate 200 Gb/s < 400"}
    assert drain_argv(d["name"], d["reason"]) == ["scontrol", "update", "NodeName=gpu07", "State=DRAIN",
                                                  "Reason=" + d["reason"]]
    assert resume_argv("gpu07") == ["scontrol", "update", "NodeName=gpu07", "State=RESUME"]


NODES = [
    NodeState("gpu01", "IDLE+DRAIN", "clusterctl: ib_port gpu01/mlx5_0/1: DOWN"),
    NodeState("gpu02", "IDLE+DRAIN", "bad DIMM, ticket 4711"),
    NodeState("gpu03", "MIXED", None),
    NodeState("gpu04", "DRAINING", "clusterctl: gpu gpu04/gpu3: row remap pending"),
    NodeState("gpu05", "DOWN+DRAIN", "Clusterctl: not ours (case matters)"),
]


def test_resume_only_ours() -> None:
    p = select_resumable(NODES)
    assert p.resume == ["gpu01", "gpu04"]
    assert "gpu02" in p.refused and "by hand" in p.refused["gpu02"]
    assert "gpu05" in p.refused and "gpu03" not in p.refused


def test_resume_requested_nodes() -> None:
    p = select_resumable(NODES, ["gpu02", "gpu03", "gpu04", "nope"])
    assert p.resume == ["gpu04"]
    assert set(p.refused) == {"gpu02", "gpu03", "nope"}
    assert "not drained" in p.refused["gpu03"]


def test_nodes_from_parsed_shapes() -> None:
    a = nodes_from_parsed({"nodes": [{"name": "n1", "state": ["IDLE", "DRAIN"], "reason": "clusterctl: x"}]})
    b = nodes_from_parsed([{"NodeName": "n1", "State": "IDLE+DRAIN", "Reason": "clusterctl: x"},
                           {"node": "n2", "state": "idle", "reason": "none"}])
    assert a == [NodeState("n1", "IDLE+DRAIN", "clusterctl: x")]
    assert b[0] == a[0] and b[1] == NodeState("n2", "idle", None)


SCONTROL = """NodeName=gpu01 Arch=x86_64 CoresPerSocket=4
   CPUAlloc=0 CPUTot=8 CPULoad=0.01
   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=batch
   Reason=clusterctl: ib_port gpu01/mlx5_0/1: state DOWN [root@2025-01-01T00:00:00]

NodeName=gpu02 Arch=x86_64 CoresPerSocket=4
   State=IDLE+DRAIN ThreadsPerCore=1
   Reason=bad DIMM, ticket 4711 [admin@2025-01-01T10:00:00]

NodeName=gpu03 Arch=x86_64 CoresPerSocket=4
   State=MIXED ThreadsPerCore=1
"""


def test_with_scontrol_node_parser() -> None:
    from ccparse import registry

    nodes = nodes_from_parsed(registry.parse("scontrol-node", SCONTROL))
    assert [n.name for n in nodes] == ["gpu01", "gpu02", "gpu03"]
    p = select_resumable(nodes)
    assert p.resume == ["gpu01"] and list(p.refused) == ["gpu02"]
