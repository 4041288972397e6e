"""nvidia-smi that cannot reach the NVIDIA driver (issue 29, class 2: an error the tool prints instead of a
table) is judged failed (severity table: gpu_driver.unreachable), not "cannot judge" through a parse error.

The capture: tests/corpus/round2/nvidia-smi/parallelcluster1768-g4dn-salloc-prompt-failed-to-communicate-with-
driver.txt (aws-parallelcluster#1768: nvidia-smi on a Slurm compute node after salloc, shell prompts kept), whose
only nvidia-smi output is "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ccparse import registry

from clusterctl.analysis.engine import analyze_dir

ROUND2 = Path(__file__).resolve().parents[1] / "corpus" / "round2"
PASTE = ROUND2 / "nvidia-smi" / "parallelcluster1768-g4dn-salloc-prompt-failed-to-communicate-with-driver.txt"


@pytest.mark.parametrize("line", [
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
    "NVIDIA driver is installed and running.",
    "Failed to initialize NVML: Driver/library version mismatch",
    "Failed to initialize NVML: Unknown Error",
])
def test_the_message_is_read_not_a_parse_error(line: str) -> None:
    out = registry.parse("nvidia-smi", line + "\n")
    assert out["driver_unreachable"] == line[:200] and out["gpus"] == [] and out["excerpt"] is True


def test_the_pasted_session_is_failed_naming_the_driver(tmp_path: Path) -> None:
    host = tmp_path / "ip-10-0-0-102"
    host.mkdir()
    (host / "nvidia-smi.txt").write_text(PASTE.read_text())
    report = analyze_dir(str(tmp_path), {})
    h = report.hosts["ip-10-0-0-102"]
    assert h.status == "failed", h
    [f] = [f for f in h.findings if f.check == "gpu_driver"]
    assert f.severity == "critical" and "couldn't communicate with the NVIDIA driver" in f.message
