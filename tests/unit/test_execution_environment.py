"""Issue 27 (2): an execution environment for AWX/AAP. `ansible-builder create` turns
execution-environment.yml (schema v3) into a build context carrying the collection built by
`ansible-galaxy collection build` and the clusterctl wheel; the collection's own
meta/execution-environment.yml gives ansible-builder its system packages."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(ANSIBLE_CONFIG=str(cwd / "none.cfg"), ANSIBLE_HOME=str(cwd / "ahome"), ANSIBLE_NOCOLOR="1")
    (cwd / "none.cfg").write_text("[defaults]\n")
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, f"{args}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the EE definition beside freshly built dist/ artifacts (nothing written in the checkout)."""
    tmp = tmp_path_factory.mktemp("ee")
    shutil.copy(REPO / "execution-environment.yml", tmp)
    shutil.copytree(REPO / "ee", tmp / "ee")
    _run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tmp / "dist"), str(REPO)], tmp)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"),
          str(REPO)], tmp)
    return tmp


@pytest.fixture(scope="module")
def context(work: Path) -> Path:
    ctx = work / "context"
    _run([str(BIN / "ansible-builder"), "create", "-f", "execution-environment.yml", "-c", str(ctx),
          "--output-filename", "Containerfile"], work)
    return ctx


def test_the_definition_is_schema_v3() -> None:
    ee = yaml.safe_load((REPO / "execution-environment.yml").read_text())
    assert ee["version"] == 3
    assert ee["dependencies"]["ansible_core"]["package_pip"].startswith("ansible-core")


def test_the_context_carries_the_built_collection(context: Path) -> None:
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    tarball = f"clusterctl-hpc-{version}.tar.gz"
    assert (context / "_build" / "collections" / tarball).is_file()
    reqs = yaml.safe_load((context / "_build" / "requirements.yml").read_text())["collections"]
    assert {"name": f"collections/{tarball}", "type": "file"} in reqs
    containerfile = (context / "Containerfile").read_text()
    assert "COPY _build /build" in containerfile
    assert "ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml" in containerfile
    assert 'ANSIBLE_INSTALL_REFS="ansible-core>=2.16 ' in containerfile
    assert "ansible>=" not in containerfile.replace("ansible-core>=", "")  # not the 92-collection package


def test_the_context_installs_the_clusterctl_wheel(context: Path) -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert (context / "_build" / "wheels" / f"clusterctl-{version}-py3-none-any.whl").is_file()
    final = (context / "Containerfile").read_text().split("FROM base AS final", 1)[1]
    assert "COPY _build/wheels/ /tmp/clusterctl-wheels/" in final
    assert "pip install --no-cache-dir /tmp/clusterctl-wheels/*.whl" in final
    assert 'ARG PYCMD="/usr/bin/python3.11"' in (context / "Containerfile").read_text()  # requires-python >=3.11


def test_the_collection_tells_ansible_builder_its_system_packages(work: Path) -> None:
    colls = work / "installed"
    (tarball,) = (work / "dist").glob("clusterctl-hpc-*.tar.gz")
    _run([str(BIN / "ansible-galaxy"), "collection", "install", "--offline", "--no-deps", "--force", "-p",
          str(colls), str(tarball)], work)
    meta = colls / "ansible_collections" / "clusterctl" / "hpc" / "meta" / "execution-environment.yml"
    assert meta.is_file(), "meta/execution-environment.yml must ship in the built collection"
    out = _run([str(BIN / "ansible-builder"), "introspect", str(colls)], work).stdout
    data = yaml.safe_load(out.split("---", 1)[1])
    assert "openssh-clients [platform:rpm]  # from collection clusterctl.hpc" in data["system"]
    assert data["python"] == []  # the controller side needs nothing beyond ansible-core
