"""The repository is the Ansible collection clusterctl.hpc: ``ansible-galaxy collection build`` packs it,
``ansible-galaxy collection install`` puts it into a collections path, and a user's own playbook in a
folder outside the repository uses a role, a module and a filter by FQCN (local connection, files
written under tmp only). The wheel carries the same tree once, ccparse included once."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import simfabric
import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, f"{args}:\n{r.stdout[-4000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built collection, installed into a fresh collections path; returns that path."""
    tmp = tmp_path_factory.mktemp("collection")
    _run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tmp), str(REPO)], cwd=tmp)
    (tarball,) = tmp.glob("clusterctl-hpc-*.tar.gz")
    # the README's requirements.yml, pointing at the built tarball (Galaxy is not reachable here;
    # ansible.posix and community.general come with the `ansible` package, hence --no-deps)
    (tmp / "requirements.yml").write_text(f"---\ncollections:\n  - name: {tarball}\n    type: file\n")
    colls = tmp / "collections"
    _run([str(BIN / "ansible-galaxy"), "collection", "install", "--offline", "--no-deps", "-p", str(colls),
          "-r", "requirements.yml"], cwd=tmp, env=_env(tmp, None))
    return colls


def _env(tmp: Path, colls: Path | None) -> dict[str, str]:
    cfg = tmp / "ansible.cfg"  # the user's own (empty) config, not the repository's
    cfg.write_text("[defaults]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(ANSIBLE_CONFIG=str(cfg), ANSIBLE_HOME=str(tmp / "home"), ANSIBLE_LOCAL_TEMP=str(tmp / "ltmp"),
               ANSIBLE_NOCOLOR="1", PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if colls is not None:
        env["ANSIBLE_COLLECTIONS_PATH"] = str(colls)
    return env


def test_the_built_collection_holds_the_content_and_not_the_rest(installed: Path) -> None:
    (tarball,) = installed.parent.glob("clusterctl-hpc-*.tar.gz")
    with tarfile.open(tarball) as tf:
        names = set(tf.getnames())
    manifest = json.loads((installed / "ansible_collections/clusterctl/hpc/MANIFEST.json").read_text())
    assert manifest["collection_info"]["namespace"] == "clusterctl"
    assert manifest["collection_info"]["name"] == "hpc"
    for want in ("roles/nccl/tasks/main.yml", "plugins/modules/rdma_facts.py", "playbooks/site.yml",
                 "plugins/module_utils/ccparse/sysfs_ib.py", "plugins/filter/hostlist.py", "meta/runtime.yml"):
        assert want in names, want
    tops = {n.split("/")[0] for n in names}
    assert not tops & {"molecule", ".venv", "clusterctl", "bench", "inventories", ".ansible", "scripts"}
    assert {n for n in names if n.startswith("tests/") and n.count("/") > 1} <= {"tests/sanity/ignore-2.19.txt"}
    assert not [n for n in names if "__pycache__" in n]


def test_a_playbook_outside_the_repository_uses_role_module_and_filter_by_fqcn(installed: Path,
                                                                                tmp_path: Path) -> None:
    user = tmp_path / "my-site"  # a user's own project: nothing of the repository on any path
    user.mkdir()
    sysfs = simfabric.build({"devices": [{"name": "mlx5_0", "ports": [{
        "port": 1, "link_layer": "InfiniBand", "state": "ACTIVE", "phys_state": "LinkUp", "rate": 400}]}]},
        tmp_path / "sys")
    etc = tmp_path / "etc"
    etc.mkdir()
    play = [{
        "name": "My own playbook",
        "hosts": "all",
        "gather_facts": True,
        "gather_subset": ["!all", "network"],
        "vars": {"fabric": "infiniband"},
        "tasks": [
            {"name": "RDMA facts by FQCN", "clusterctl.hpc.rdma_facts": {"sysfs_root": str(sysfs)}},
            {"name": "A filter by FQCN", "ansible.builtin.assert": {"that": [
                "(['gpu001', 'gpu002', 'gpu003'] | clusterctl.hpc.hostlist_compress) == 'gpu[001-003]'",
                "ansible_facts.clusterctl_rdma.devices[0].name == 'mlx5_0'"]}},
            {"name": "A role by FQCN", "ansible.builtin.include_role": {"name": "clusterctl.hpc.nccl"}, "vars": {
                "nccl_sysfs_root": str(sysfs), "nccl_conf_path": str(etc / "nccl.conf"),
                "nccl_profile_path": str(etc / "nccl.sh"), "nccl_frontend_nics": []}},
        ],
    }]
    (user / "site.yml").write_text("---\n" + yaml.safe_dump(play, sort_keys=False))
    env = _env(tmp_path, installed)
    _run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
          "-e", f"ansible_python_interpreter={sys.executable}", "site.yml"], cwd=user, env=env)
    conf = (etc / "nccl.conf").read_text()
    assert "NCCL_IB_HCA=" in conf and "mlx5_0" in conf, conf


def test_ansible_doc_renders_a_module_with_its_fragment_outside_the_repository(installed: Path,
                                                                              tmp_path: Path) -> None:
    r = _run([str(BIN / "ansible-doc"), "--json", "clusterctl.hpc.rdma_facts"], cwd=tmp_path,
             env=_env(tmp_path, installed))
    doc = json.loads(r.stdout)["clusterctl.hpc.rdma_facts"]["doc"]
    assert "sysfs_root" in doc["options"]
    assert "WARNING" not in r.stderr, r.stderr


@pytest.mark.skipif(importlib.util.find_spec("hatchling") is None, reason="hatchling (test extra) missing")
def test_the_wheel_carries_the_collection_once(tmp_path: Path) -> None:
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path),
          str(REPO)], cwd=tmp_path)
    (whl,) = tmp_path.glob("clusterctl-*.whl")
    names = zipfile.ZipFile(whl).namelist()
    coll = "clusterctl/_data/ansible_collections/clusterctl/hpc/"
    assert f"{coll}galaxy.yml" in names and f"{coll}roles/nccl/tasks/main.yml" in names
    ccparse = [n for n in names if n.endswith("ccparse/__init__.py")]
    assert ccparse == [f"{coll}plugins/module_utils/ccparse/__init__.py"]
    assert not [n for n in names if n.startswith("clusterctl/_data/") and not n.startswith(coll)
                and n.split("/")[2] in ("roles", "plugins", "playbooks")]
    pth = zipfile.ZipFile(whl).read("clusterctl-ccparse.pth").decode().strip()
    assert pth == f"{coll}plugins/module_utils"
