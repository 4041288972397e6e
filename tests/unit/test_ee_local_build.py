"""Issue 27 (2): scripts/ee_build.py builds execution-environment.yml on a local Debian base. Here without
podman: the derived definition is valid for ansible-builder v3 and its build context is Debian's (no dnf,
no ensurepip, the apt-get shim, the dependency collections offline); an installed collection becomes an
artifact ansible-galaxy installs offline; an existing image of the same inputs is not built again."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import types
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
INSTALLED = Path(sysconfig.get_paths()["purelib"]) / "ansible_collections"
needs_installed = pytest.mark.skipif(not (INSTALLED / "ansible" / "posix" / "MANIFEST.json").is_file(),
                                     reason="ansible.posix is not installed (the `ansible` package, test extras)")


@pytest.fixture(scope="module")
def ee_build() -> types.ModuleType:
    from labutil import ee_build_script

    return ee_build_script()


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    (tmp / "none.cfg").write_text("[defaults]\n")
    env.update(ANSIBLE_CONFIG=str(tmp / "none.cfg"), ANSIBLE_HOME=str(tmp / "ahome"), ANSIBLE_NOCOLOR="1")
    return env


@needs_installed
def test_an_installed_collection_becomes_an_artifact_ansible_galaxy_installs_offline(
        ee_build: types.ModuleType, tmp_path: Path) -> None:
    (tarball,) = ee_build.dependency_tarballs(INSTALLED, tmp_path / "t")[:1]
    version = ee_build.installed_collection_version(INSTALLED / "ansible" / "posix")
    assert tarball.name == f"ansible-posix-{version}.tar.gz"
    r = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "install", "--offline", "--no-deps", "--force", "-p",
                        str(tmp_path / "c"), str(tarball)], env=_env(tmp_path), capture_output=True, text=True,
                       timeout=300, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "c" / "ansible_collections" / "ansible" / "posix" / "plugins" / "modules" / "mount.py").is_file()


def test_the_derived_definition_builds_on_debian(ee_build: types.ModuleType, tmp_path: Path) -> None:
    (tmp_path / "dist").mkdir()
    for name in ("clusterctl-hpc-0.1.0.tar.gz", "clusterctl-0.1.0-py3-none-any.whl", "ansible-posix-2.1.0.tar.gz"):
        (tmp_path / "dist" / name).write_bytes(b"")
    definition = ee_build.derive_definition(tmp_path, "localhost/clusterctl-ee-base:x",
                                            [tmp_path / "dist" / "ansible-posix-2.1.0.tar.gz"])
    r = subprocess.run([str(BIN / "ansible-builder"), "create", "-f", str(definition), "-c", str(tmp_path / "ctx"),
                        "--output-filename", "Containerfile"],
                       cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stdout + r.stderr  # ansible-builder's v3 schema accepts it
    cf = (tmp_path / "ctx" / "Containerfile").read_text()
    assert 'ARG EE_BASE_IMAGE="localhost/clusterctl-ee-base:x"' in cf
    assert f'ARG PKGMGR="{ee_build.PKGMGR}"' in cf and 'ARG PYCMD="/usr/bin/python3"' in cf
    assert "dnf" not in cf and "python3.11-pip" not in cf
    assert "pip_install $PYCMD" not in cf  # ensurepip: disabled in Debian's python3
    assert 'ANSIBLE_GALAXY_CLI_COLLECTION_OPTS="--offline"' in cf
    reqs = yaml.safe_load((tmp_path / "ctx" / "_build" / "requirements.yml").read_text())["collections"]
    assert {"name": "collections/ansible-posix-2.1.0.tar.gz", "type": "file"} in reqs
    assert "pip install --no-cache-dir /tmp/clusterctl-wheels/*.whl" in cf.split("FROM base AS final")[1]


def test_a_new_step_for_the_centos_base_is_not_dropped_silently(ee_build: types.ModuleType, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "repo"
    (fake / "ee").mkdir(parents=True)
    ee = yaml.safe_load((REPO / "execution-environment.yml").read_text())
    ee["additional_build_steps"]["prepend_base"].append("RUN $PKGMGR install -y epel-release")
    (fake / "execution-environment.yml").write_text(yaml.safe_dump(ee))
    (fake / "ee" / "requirements.yml").write_text((REPO / "ee" / "requirements.yml").read_text())
    monkeypatch.setattr(ee_build, "REPO", fake)
    with pytest.raises(SystemExit, match="epel-release"):
        ee_build.derive_definition(tmp_path, "b", [])


def test_an_image_of_the_same_inputs_is_not_built_again(ee_build: types.ModuleType,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ee_build, "_image_id", lambda name: "sha256:bare")
    name = ee_build.image_name(None)
    assert name == ee_build.image_name(None) and name.startswith("localhost/clusterctl-ee:local-")
    monkeypatch.setattr(ee_build, "_image_id", lambda name: "sha256:another-bare")
    assert ee_build.image_name(None) != name  # a rebuilt base image is a new input
    monkeypatch.setattr(ee_build, "image_exists", lambda n: True)
    monkeypatch.setattr(ee_build, "build_base", lambda *a: pytest.fail("built although the image exists"))
    assert ee_build.build(None) == ee_build.image_name(None)
