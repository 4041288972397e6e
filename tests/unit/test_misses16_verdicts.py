"""Session 16 (issue 29): the rest misses of blind batches 25-28 that a general rule fixes; expected values
are read off the text."""

from __future__ import annotations

from pathlib import Path

from conftest import judge_text

from clusterctl.analysis.model import Finding

REPO = Path(__file__).resolve().parents[2]


def _topo(text: str) -> list[Finding]:
    return [f for f in judge_text("nvidia-smi-topo", text) if f.check == "gpu_topology"]


def _row(i: int, cells: list[str]) -> str:
    return f"GPU{i}\t" + "\t".join(cells) + "\t0-31\t0\n"


def test_an_unbridged_pcie_card_beside_a_bridged_pair_is_the_build() -> None:
    """Three RTX A6000 (PCIe; their NVLink a 2-way bridge): GPU0-GPU1 NV4, GPU2 NODE to both (siboehm/bench)."""
    capture = REPO / "tests/corpus/round2/nvidia-smi-topo/siboehmbench-3x-rtx-a6000-nv4-pair-third-node-tabs-prompt.txt"
    assert _topo(capture.read_text()) == []


def test_a_gpu_cut_off_from_an_nvlink_mesh_is_still_failed() -> None:
    """Four GPUs: GPU0-2 NV12 to each other (a mesh: each to two peers), GPU3 SYS to all."""
    head = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
    rows = [["X", "NV12", "NV12", "SYS"], ["NV12", "X", "NV12", "SYS"], ["NV12", "NV12", "X", "SYS"],
            ["SYS", "SYS", "SYS", "X"]]
    found = _topo(head + "".join(_row(i, r) for i, r in enumerate(rows)))
    assert [f.severity for f in found] == ["critical"] and "GPU3" in found[0].message
