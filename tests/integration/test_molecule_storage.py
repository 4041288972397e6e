"""Molecule scenarios of the storage roles: real JuiceFS across containers, Lustre configuration."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.molecule


def _molecule(scenario: str, tmp_path: Path, timeout: int) -> subprocess.CompletedProcess[str]:
    if shutil.which("podman") is None:
        pytest.skip("podman not installed")
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["CC_STOR_BUCKET"] = str(tmp_path / "bucket")  # the host folder shared as the juicefs bucket
    return subprocess.run(
        ["molecule", "test", "-s", scenario],
        cwd=REPO, env=env, text=True, capture_output=True, timeout=timeout, check=False,
    )


def test_molecule_storage_juicefs(tmp_path: Path) -> None:
    r = _molecule("storage", tmp_path, timeout=3600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]


def test_molecule_lustre_client(tmp_path: Path) -> None:
    r = _molecule("lustre", tmp_path, timeout=1800)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
