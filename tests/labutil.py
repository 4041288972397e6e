"""Helpers for the lab integration tests: run the CLI, run a command in a lab container."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / "inventories" / "lab"
CLI = [sys.executable, "-m", "clusterctl.cli"]


def cc(*args: str, timeout: int = 1200) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, check=False)


def sh(host: str, command: str) -> str:
    out = subprocess.run(["podman", "exec", f"clusterctl-lab-{host}", "sh", "-c", command],
                         capture_output=True, text=True, check=False)
    return out.stdout
