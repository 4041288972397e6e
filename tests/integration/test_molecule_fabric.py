"""Molecule scenario of the fabric roles (rdma, roce_qos, nccl) over a simulated RoCE node."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.molecule


def test_molecule_fabric() -> None:
    if shutil.which("podman") is None:
        pytest.skip("podman not installed")
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    r = subprocess.run(
        ["molecule", "test", "-s", "fabric"],
        cwd=REPO, env=env, text=True, capture_output=True, timeout=1200, check=False,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
