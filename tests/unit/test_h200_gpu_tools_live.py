"""What the live H200 run of the gpu_tools role recorded (tests/fixtures/h200-live/gpu-tools, SOURCE.txt).

The expected values are read off the recorded text: the first run built nccl-tests, the second run and the
check-mode run changed nothing, the tree holds the binaries verify runs, all_reduce_perf ran on the GPU,
and verify afterwards no longer reported nccl-tests missing.
"""

from __future__ import annotations

import re
from pathlib import Path

D = Path(__file__).resolve().parents[1] / "fixtures" / "h200-live" / "gpu-tools"


def _recap(name: str) -> dict[str, int]:
    line = next(x for x in (D / name).read_text().splitlines() if x.startswith("h200-live ") and "ok=" in x)
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def _task_changed(text: str, task: str) -> bool:
    block = text.split(f"TASK [clusterctl.hpc.gpu_tools : {task}]", 1)[1].split("TASK [", 1)[0]
    return "changed: [h200-live]" in block


def test_first_run_built_nccl_tests_with_mpi_off() -> None:
    text = (D / "run1.txt").read_text()
    assert _recap("run1.txt")["failed"] == 0
    assert _task_changed(text, "Build nccl-tests (MPI=0)")
    assert "- MPI=0" in text and "- NCCL_HOME=/usr" in text


def test_second_run_and_check_mode_change_nothing() -> None:
    for name in ("run2.txt", "check.txt"):
        recap = _recap(name)
        assert recap["changed"] == 0 and recap["failed"] == 0, (name, recap)


def test_tree_and_binary_ran_on_the_gpu() -> None:
    assert re.search(r"-rwx\S* .* all_reduce_perf$", (D / "installed.txt").read_text(), re.M)
    perf = (D / "all_reduce_perf.txt").read_text()
    assert "# Out of bounds values : 0 OK" in perf and perf.rstrip().endswith("exit 0")


def test_verify_found_the_tools_the_role_installed() -> None:
    verify = (D / "verify.txt").read_text()
    assert "tool_missing" not in verify
    assert "nccl-tests: not run (1 node(s) can take part, 2 needed)" in verify
