"""Molecule scenarios of the fabric roles, one each (rdma, roce_qos, nccl), over simulated fabric trees.

There is no RDMA hardware here: each scenario lays a tests/simfabric.py tree in one lab container
(molecule/_shared/simfabric.yml); rdma installs a local stand-in DOCA repository, not NVIDIA's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.molecule


@pytest.mark.parametrize("scenario", ["rdma", "roce_qos", "nccl"])
def test_molecule_fabric(scenario: str) -> None:
    if shutil.which("podman") is None:
        pytest.skip("podman not installed")
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    r = subprocess.run(
        ["molecule", "test", "-s", scenario],
        cwd=REPO, env=env, text=True, capture_output=True, timeout=1200, check=False,
    )
    assert r.returncode == 0, f"molecule test -s {scenario} failed:\n{(r.stdout + r.stderr)[-6000:]}"
