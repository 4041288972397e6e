"""Run the Slurm Molecule scenarios (real Slurm 22.05 in podman containers) and require exit 0.

Each takes minutes; run them one at a time: `pytest -m molecule tests/integration/test_molecule_slurm.py`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent

pytestmark = pytest.mark.molecule


def _molecule() -> str:
    exe = VENV_BIN / "molecule"
    if exe.exists():
        return str(exe)
    found = shutil.which("molecule")
    if found is None:
        pytest.fail("molecule is not installed (pip install -e '.[test]')")
    return found


@pytest.mark.parametrize("scenario", ["slurm", "slurm_scaleout"])
def test_molecule_scenario(scenario: str) -> None:
    if shutil.which("podman") is None:
        pytest.skip("podman is missing: run lab/host-setup.sh and lab/build-image.sh first")
    env = dict(os.environ)
    # molecule shells out to ansible-config/ansible-playbook: the venv's bin must be on PATH.
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(
        [_molecule(), "test", "-s", scenario],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, f"molecule test -s {scenario} failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
