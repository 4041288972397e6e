"""nccl-tests rows of latency-bound messages only, none of them validated (issue 29: no expectation, yet
"healthy"): nothing in the run is judged, so the host is "cannot judge", not healthy. With #wrong read as 0 the
results were checked and the run is judged (small messages stay a note).

The capture: tests/corpus/round2/nccl-tests/aksrdma30-mpijob-two-workers-info-interleaved-small-sizes-only-cut.txt
(Azure/aks-rdma-infiniband#30): all_reduce rows of 8 B to 2048 B, busbw 0.00-0.10 GB/s, every #wrong "N/A",
pasted without nccl-tests' header.
"""

from __future__ import annotations

from pathlib import Path

from clusterctl.analysis.engine import analyze_dir

CAPTURE = (Path(__file__).resolve().parents[1] / "corpus" / "round2" / "nccl-tests"
           / "aksrdma30-mpijob-two-workers-info-interleaved-small-sizes-only-cut.txt")


def judge(tmp_path: Path, text: str) -> str:
    host = tmp_path / "worker-0"
    host.mkdir()
    (host / "nccl-tests.txt").write_text(text)
    return analyze_dir(str(tmp_path), {}).hosts["worker-0"].status


def test_small_messages_none_validated_is_cannot_judge(tmp_path: Path) -> None:
    assert judge(tmp_path, CAPTURE.read_text()) == "cannot judge"


def test_small_messages_validated_is_judged(tmp_path: Path) -> None:
    rows = [ln.replace("N/A", "  0") for ln in CAPTURE.read_text().splitlines() if ln.strip().endswith("N/A")]
    assert len(rows) == 5 and rows[-1].split()[:2] == ["2048", "512"]
    assert judge(tmp_path, "\n".join(rows) + "\n") == "healthy"
