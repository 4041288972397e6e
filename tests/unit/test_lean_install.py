"""Issue 27 (3): a lean install. The wheel depends on ansible-core (not the `ansible` package of
92 collections) with no upper cap; the collections the roles use are declared once, the same in
galaxy.yml `dependencies` and requirements.yml; the CLI finds them where ansible-galaxy puts them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from clusterctl import collection

REPO = Path(__file__).resolve().parents[2]
FQCN_USE = re.compile(r"\b([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\.[a-z_][a-z0-9_]*\b")
NOT_COLLECTIONS = {("ansible", "builtin"), ("clusterctl", "hpc")}


@pytest.fixture(scope="module")
def requires_dist(tmp_path_factory: pytest.TempPathFactory) -> list[Requirement]:
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                        str(out), str(REPO)], capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    (whl,) = out.glob("clusterctl-*.whl")
    with zipfile.ZipFile(whl) as zf:
        (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        msg = Parser().parsestr(zf.read(meta).decode())
        assert [n for n in zf.namelist() if n.endswith(".dist-info/licenses/LICENSE")], "the wheel carries LICENSE"
    return [Requirement(v) for v in msg.get_all("Requires-Dist") or []]


def test_the_wheel_needs_ansible_core_and_not_the_ansible_package(requires_dist: list[Requirement]) -> None:
    runtime = {r.name: r for r in requires_dist if r.marker is None}  # what `pip install clusterctl` pulls
    assert "ansible-core" in runtime
    assert "ansible" not in runtime, "the wheel must not pull the ansible package"
    core = runtime["ansible-core"].specifier
    assert core.contains("2.16.0") and core.contains("2.19.14")
    assert core.contains("2.20.0") and core.contains("2.21.0"), f"no upper cap without a reason: {core}"


def _declared() -> tuple[dict[str, str], dict[str, str]]:
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())["dependencies"] or {}
    req = yaml.safe_load((REPO / "requirements.yml").read_text())["collections"]
    return galaxy, {c["name"]: c.get("version", "*") for c in req}


def test_galaxy_dependencies_and_requirements_yml_agree() -> None:
    galaxy, req = _declared()
    assert galaxy == req


def _used_collections() -> dict[str, set[str]]:
    used: dict[str, set[str]] = {}
    files = [REPO / "ansible.cfg", *sorted((REPO / "playbooks").rglob("*.yml")),
             *sorted(p for p in (REPO / "roles").rglob("*") if p.suffix in (".yml", ".yaml", ".j2")
                     and "molecule" not in p.parts)]
    for f in files:
        for line in f.read_text().splitlines():
            if line.lstrip().startswith("#"):
                continue
            for m in FQCN_USE.finditer(line):
                ns_name = (m.group(1), m.group(2))
                if ns_name not in NOT_COLLECTIONS and m.group(1) in {"ansible", "community", "containers"}:
                    used.setdefault(".".join(ns_name), set()).add(str(f.relative_to(REPO)))
    return used


def test_every_collection_the_roles_use_is_declared() -> None:
    used = _used_collections()
    _, req = _declared()
    assert used, "the scan found no collection use at all: the pattern is wrong"
    missing = {c: sorted(files) for c, files in used.items() if c not in req}
    assert not missing, f"used but not in requirements.yml / galaxy.yml dependencies: {missing}"
    unused = set(req) - set(used)
    assert not unused, f"declared but not used (drop them): {unused}"


def test_community_general_is_needed_only_for_the_rhel_version_lock() -> None:
    """Builtins do the rest (ansible.builtin.password for the munge key, modprobe through
    ansible.builtin.command with creates=/sys/module/NAME): a Debian cluster needs no community.general."""
    assert set(_used_collections().get("community.general", set())) <= {
        "roles/nvidia_gpu/tasks/packages_dnf.yml", "roles/nvidia_gpu/tasks/kernel_dnf.yml"}


def test_the_cli_keeps_ansible_galaxys_default_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANSIBLE_COLLECTIONS_PATH", raising=False)
    parts = collection.ansible_env()["ANSIBLE_COLLECTIONS_PATH"].split(os.pathsep)
    assert parts[0] == str(collection.collections_path())
    assert os.path.expanduser("~/.ansible/collections") in parts  # ansible-galaxy's default target
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", f"/a{os.pathsep}/b")
    assert collection.ansible_env()["ANSIBLE_COLLECTIONS_PATH"].split(os.pathsep)[1:] == ["/a", "/b"]


def test_the_cli_config_loads_no_plugin_from_another_collection() -> None:
    """Every CLI run reads ansible.cfg: a callback from ansible.posix would warn on a lean install."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(REPO / "ansible.cfg")
    enabled = [c.strip() for c in cfg.get("defaults", "callbacks_enabled", fallback="").split(",") if c.strip()]
    assert all(c.startswith(("clusterctl.hpc.", "ansible.builtin.")) for c in enabled), enabled
