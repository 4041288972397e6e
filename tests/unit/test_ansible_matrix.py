"""Issue 27 (3): the ansible-core matrix. noxfile.py runs a smoke (ansible-doc of every module and
filter, --syntax-check of every playbook, `clusterctl validate`, the filter unit tests) under each
ansible-core line from the declared floor to the newest; here it runs when CLUSTERCTL_NOX=1
(scripts/test.sh sets it in its full run, venvs reused from CLUSTERCTL_NOX_ENVDIR)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

REPO = Path(__file__).resolve().parents[2]


def _cores() -> list[str]:
    sys.path.insert(0, str(REPO))
    try:
        import noxfile
    finally:
        sys.path.remove(str(REPO))
    return list(noxfile.CORES)


def test_the_matrix_starts_at_the_declared_floor_and_has_no_gap() -> None:
    cores = _cores()
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (core,) = [Requirement(d) for d in deps if Requirement(d).name == "ansible-core"]
    runtime = SpecifierSet(yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())["requires_ansible"])
    floor = f"{cores[0]}.0"
    assert core.specifier.contains(floor) and runtime.contains(floor)
    below = f"{cores[0].split('.')[0]}.{int(cores[0].split('.')[1]) - 1}.99"
    assert not core.specifier.contains(below), f"pyproject allows {below}, which the matrix does not test"
    assert not runtime.contains(below), f"meta/runtime.yml allows {below}, which the matrix does not test"
    minors = [int(c.split(".")[1]) for c in cores]
    assert minors == list(range(minors[0], minors[0] + len(minors))), cores


@pytest.mark.skipif(os.environ.get("CLUSTERCTL_NOX") != "1", reason="the ansible-core matrix: CLUSTERCTL_NOX=1")
def test_the_ansible_core_matrix_passes() -> None:
    nox = shutil.which("nox", path=str(Path(sys.executable).parent)) or shutil.which("nox")
    assert nox, "nox is in the test extras"
    envdir = os.environ.get("CLUSTERCTL_NOX_ENVDIR") or str(REPO / ".nox")
    r = subprocess.run([nox, "-r", "-f", str(REPO / "noxfile.py"), "--envdir", envdir], cwd=REPO,
                       capture_output=True, text=True, timeout=1200, check=False)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]


def test_the_matrix_reaches_the_lines_that_need_python_3_12() -> None:
    """ansible-core 2.20+ require Python >= 3.12 (this venv is 3.11): session smoke312 runs them on a 3.12
    interpreter that python312() finds (this machine image's pyenv 3.12.1; python3.12 on PATH elsewhere)."""
    sys.path.insert(0, str(REPO))
    try:
        import noxfile
    finally:
        sys.path.remove(str(REPO))
    assert {"2.20", "2.21"} <= set(noxfile.CORES_312) <= set(noxfile.CORES)
    py = noxfile.python312()
    if py == "3.12":
        pytest.skip("no Python 3.12 on this machine (python3.12 on PATH or a pyenv 3.12): smoke312 cannot run")
    r = subprocess.run([py, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True,
                       check=True)
    assert r.stdout.strip() == "(3, 12)", r.stdout
