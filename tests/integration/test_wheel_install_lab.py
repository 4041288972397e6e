"""Issue 27 (3) on the lab: a FRESH venv with nothing but the built clusterctl wheel and its dependencies
from the package index (ansible-core, not the `ansible` package) runs `validate`, `plan` and `provision`
of the lab inventory; on the session's provisioned lab the plan has no changes and the provision changes
nothing.

The collections of requirements.yml (ansible.posix, community.general) are installed the way the README
tells a user: `ansible-galaxy collection install` into a folder named by ANSIBLE_COLLECTIONS_PATH (the CLI
keeps that path after its own collection, clusterctl/collection.py). Galaxy is not reachable here, so the
same `ansible-galaxy collection install` reads local tarballs of them (scripts/ee_build.py makes those from
the `ansible` package of the test extras).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from labutil import REPO, cc, ee_build_script, summary_rows

pytestmark = pytest.mark.lab


def _env(venv: Path, colls: Path | None, home: Path) -> dict[str, str]:
    """The user's shell: the venv first on PATH, none of this checkout on any path, no ANSIBLE_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}/usr/local/bin:/usr/bin:/bin"
    env["ANSIBLE_HOME"] = str(home)  # not ~/.ansible: nothing installed there earlier is found by chance
    if colls is not None:
        env["ANSIBLE_COLLECTIONS_PATH"] = str(colls)
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: int = 1200) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(venv, collections folder, a working folder outside the checkout)."""
    tmp = tmp_path_factory.mktemp("wheel-install")
    dist = tmp / "dist"
    r = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist),
              str(REPO)], tmp, dict(os.environ))
    assert r.returncode == 0, r.stderr[-3000:]
    (whl,) = dist.glob("clusterctl-*.whl")
    venv = tmp / "venv"
    base_python = getattr(sys, "_base_executable", sys.executable)  # the interpreter, not this venv's
    r = _run([base_python, "-m", "venv", str(venv)], tmp, dict(os.environ))
    assert r.returncode == 0, r.stderr[-3000:]
    env = _env(venv, None, tmp / "ahome")
    r = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(whl)], tmp, env, timeout=900)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    # requirements.yml's collections, installed into a folder of the user's (local tarballs: no Galaxy here)
    installed = Path(sysconfig.get_paths()["purelib"]) / "ansible_collections"
    if not (installed / "ansible" / "posix" / "MANIFEST.json").is_file():
        pytest.skip(f"no installed ansible.posix under {installed} (the `ansible` package of the test extras)")
    tarballs = ee_build_script().dependency_tarballs(installed, tmp / "tarballs")
    wanted = {c["name"] for c in yaml.safe_load((REPO / "requirements.yml").read_text())["collections"]}
    assert {"-".join(t.name.split("-")[:2]).replace("-", ".") for t in tarballs} == wanted
    (tmp / "requirements.yml").write_text(yaml.safe_dump(
        {"collections": [{"name": str(t), "type": "file"} for t in tarballs]}))
    colls = tmp / "collections"
    r = _run([str(venv / "bin" / "ansible-galaxy"), "collection", "install", "--offline", "-r", "requirements.yml",
              "-p", str(colls)], tmp, env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    work = tmp / "work"  # no ansible.cfg here: the CLI's own config only
    work.mkdir()
    return venv, colls, work


def test_a_fresh_wheel_install_has_ansible_core_and_not_the_ansible_package(fresh: tuple[Path, Path, Path]) -> None:
    venv, _, work = fresh
    r = _run([str(venv / "bin" / "python"), "-c", "import importlib.metadata as m, json; "
              "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))"], work,
             _env(venv, None, work / "ahome"))
    names = json.loads(r.stdout)
    assert "clusterctl" in names and "ansible-core" in names, names
    assert "ansible" not in names, "the wheel pulled the `ansible` package"
    r = _run([str(venv / "bin" / "python"), "-c", "import clusterctl, ansible; print(clusterctl.__file__, "
              "ansible.__file__)"], work, _env(venv, None, work / "ahome"))
    assert r.returncode == 0 and all(p.startswith(str(venv)) for p in r.stdout.split()), r.stdout + r.stderr


def test_the_cli_finds_its_collection_and_the_users_collections(fresh: tuple[Path, Path, Path]) -> None:
    """clusterctl.hpc from the wheel first, then ANSIBLE_COLLECTIONS_PATH: what every Ansible run of the CLI
    gets (clusterctl.collection.ansible_env)."""
    venv, colls, work = fresh
    code = ("import json, os, subprocess; from clusterctl.collection import ansible_env; "
            "env = dict(os.environ, **ansible_env()); "
            "out = subprocess.run(['ansible-galaxy', 'collection', 'list', '--format', 'json'], env=env, "
            "capture_output=True, text=True, check=True).stdout; "
            "print(json.dumps({p: sorted(c) for p, c in json.loads(out).items()}))")
    r = _run([str(venv / "bin" / "python"), "-c", code], work, _env(venv, colls, work / "ahome"))
    assert r.returncode == 0, r.stderr[-3000:]
    found = json.loads(r.stdout)
    where = {name: path for path, names in found.items() for name in names}
    assert where["clusterctl.hpc"].startswith(str(venv)), where  # the wheel's, not the checkout's
    assert where["ansible.posix"].startswith(str(colls)) and where["community.general"].startswith(str(colls)), where


def test_a_fresh_wheel_install_validates_plans_and_provisions_the_lab(provisioned: Path,
                                                                      fresh: tuple[Path, Path, Path]) -> None:
    venv, colls, work = fresh
    # the lab as the inventory has it: earlier lab tests leave day-2 settings on the nodes (test_lab's
    # reconfigure test: NCCL_DEBUG=WARN), which a plan would rightly show; the checkout's CLI converges first
    conv = cc("provision", str(provisioned))
    assert conv.returncode == 0, conv.stdout[-4000:] + conv.stderr[-2000:]
    env = _env(venv, colls, work / "ahome")
    cli = str(venv / "bin" / "clusterctl")
    r = _run([cli, "validate", str(provisioned), "--json"], work, env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert json.loads(r.stdout)["exit_code"] == 0
    r = _run([cli, "plan", str(provisioned)], work, env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "plan: no changes" in r.stdout, r.stdout[-4000:]
    r = _run([cli, "provision", str(provisioned)], work, env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    rows = summary_rows(r.stdout)
    assert set(rows) == {"lab-ctl", "lab-c1", "lab-c2"}, r.stdout[-3000:]
    assert all(cols[1] == "0" and cols[2] == "0" for cols in rows.values()), rows  # nothing changed or failed
