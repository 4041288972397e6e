"""The ansible-core matrix (issue 27): the collection and the CLI against every ansible-core release
line sites run, from 2.16 to the newest on the package index. 2.16 .. 2.19 run on this venv's Python
(3.11); 2.20 and later need Python >= 3.12: session smoke312, on a Python 3.12 interpreter found by
python312() (python3.12 on PATH, else a pyenv install of 3.12; this machine image has pyenv's 3.12.1;
Debian 12 packages no 3.12 and no CPython is on PyPI, see README).

    nox -r                             # all of them, reusing the venvs (installs only when pyproject changed)
    nox -r -s "smoke(core='2.16')"     # one
    nox -r -s "smoke312(core='2.20')"  # one on Python 3.12

Each session: ansible-doc renders every module and filter plugin, ansible-playbook --syntax-check
of every playbook, `clusterctl validate` of the lab inventory (the CLI reads inventories through
ansible-core's own loader), and the filter plugins' unit tests. tests/unit/test_ansible_matrix.py
runs it in the fast tier when CLUSTERCTL_NOX=1.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import nox

REPO = Path(__file__).resolve().parent
CORES = ["2.16", "2.17", "2.18", "2.19", "2.20", "2.21"]
CORES_312 = ["2.20", "2.21"]  # ansible-core 2.20+ require Python >= 3.12
FILTER_TESTS = ["tests/unit/test_hostlist.py", "tests/unit/test_nccl_env.py", "tests/unit/test_juicefs_meta_split.py"]

nox.options.sessions = ["smoke", "smoke312"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True


def _runtime_deps(core: str) -> list[str]:
    """pyproject's dependencies with ansible-core pinned to one release line."""
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    return [f"ansible-core=={core}.*" if d.startswith("ansible-core") else d for d in deps]


def _names(folder: str, suffix: str = ".py") -> list[str]:
    """Modules by their files; filters by their documentation sidecars (one per filter)."""
    return sorted(f"clusterctl.hpc.{p.stem}" for p in (REPO / "plugins" / folder).glob(f"*{suffix}")
                  if not p.name.startswith("_"))


def python312() -> str:
    """A Python 3.12 that runs: python3.12 on PATH (a pyenv shim of an inactive version does not), else
    $PYENV_ROOT/versions/3.12.*; else "3.12", which nox then reports missing (error_on_missing_interpreters)."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = [shutil.which("python3.12"), *sorted(glob.glob(f"{root}/versions/3.12.*/bin/python3.12"), reverse=True)]
    for cand in filter(None, found):
        r = subprocess.run([cand, "-c", "import sys, venv; assert sys.version_info[:2] == (3, 12)"],
                           capture_output=True, check=False)
        if r.returncode == 0:
            return cand
    return "3.12"


@nox.session
@nox.parametrize("core", [c for c in CORES if c not in CORES_312])
def smoke(session: nox.Session, core: str) -> None:
    _smoke(session, core)


@nox.session(python=python312())
@nox.parametrize("core", CORES_312)
def smoke312(session: nox.Session, core: str) -> None:
    _smoke(session, core)


def _smoke(session: nox.Session, core: str) -> None:
    deps = [*_runtime_deps(core), "pytest>=8", "hypothesis>=6.100"]
    marker = Path(session.virtualenv.location) / ".clusterctl-deps"
    if not marker.is_file() or marker.read_text() != "\n".join(deps):  # a reused venv installs only what changed
        session.install(*deps)
        marker.write_text("\n".join(deps))
    tmp = Path(session.create_tmp())
    colls = tmp / "collections"
    link = colls / "ansible_collections" / "clusterctl" / "hpc"
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() and link.resolve() != REPO:  # venvs shared by several checkouts (--envdir)
        link.unlink()
    if not link.is_symlink():
        link.symlink_to(REPO, target_is_directory=True)
    env = {
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_COLLECTIONS_PATH": str(colls),
        "ANSIBLE_HOME": str(tmp / "home"),
        "ANSIBLE_LOCAL_TEMP": str(tmp / "ltmp"),
        "ANSIBLE_NOCOLOR": "1",
        "CLUSTERCTL_STATE_DIR": str(tmp / "state"),
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "plugins" / "module_utils"), str(REPO / "tests")]),
    }
    session.run("python", "-c", f"import ansible.release as r; assert r.__version__.startswith('{core}.'), "
                "r.__version__", env=env)
    session.run("ansible-doc", "-t", "module", *_names("modules"), env=env, silent=True)
    session.run("ansible-doc", "-t", "filter", *_names("filter", ".yml"), env=env, silent=True)
    playbooks = sorted(str(pb) for pb in (REPO / "playbooks").glob("*.yml"))
    session.run("ansible-playbook", "--syntax-check", "-i", "localhost,", *playbooks, env=env, silent=True)
    session.run("python", "-c", "from clusterctl.cli import app; app()", "validate", str(REPO / "inventories" / "lab"),
                env=env)
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *FILTER_TESTS, env=env)
