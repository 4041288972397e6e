"""plugins/modules/rdma_facts.py over simulated trees (in-process and through ansible itself)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import simfabric
from conftest import LOCAL_FIXTURES, REPO
from fabric_modrun import run_module

from clusterctl import collection


def _facts(res: dict) -> dict:
    assert not res.get("failed"), res
    assert res["changed"] is False
    return res["ansible_facts"]["clusterctl_rdma"]


def test_roce_node(tmp_path: Path) -> None:
    root = simfabric.build(simfabric.load(LOCAL_FIXTURES / "simfabric/roce-h100-frontend.yml"), tmp_path)
    facts = _facts(run_module("rdma_facts", {"sysfs_root": str(root)}, check_mode=True))
    assert facts["status"] == "ok"
    assert len(facts["devices"]) == 12
    dev = next(d for d in facts["devices"] if d["name"] == "mlx5_0")
    # The description gives mlx5_0 netdev rdma0 with 10.10.0.11 -> RoCE v2 GID at index 3.
    assert dev["ports"][0]["netdev"] == "rdma0"
    assert dev["ports"][0]["roce_v2_gid_index"] == 3
    assert dev["ports"][0]["roce_v2_ipv4"] == "10.10.0.11"
    assert "mlx5_11:1" in facts["active_ports"]


def test_down_port_not_active(tmp_path: Path) -> None:
    desc = {"devices": [{"name": "mlx5_0", "ports": [{"faults": ["port_down"]}]}, {"name": "mlx5_1"}]}
    facts = _facts(run_module("rdma_facts", {"sysfs_root": str(simfabric.build(desc, tmp_path))}))
    assert facts["active_ports"] == ["mlx5_1:1"]


def test_no_devices_vs_no_stack_vs_error(tmp_path: Path) -> None:
    empty = simfabric.build({"devices": []}, tmp_path / "empty")
    assert _facts(run_module("rdma_facts", {"sysfs_root": str(empty)}))["status"] == "no_devices"
    nostack = simfabric.build({"devices": [], "infiniband_class": False}, tmp_path / "nostack")
    assert _facts(run_module("rdma_facts", {"sysfs_root": str(nostack)}))["status"] == "no_rdma_stack"
    missing = run_module("rdma_facts", {"sysfs_root": str(tmp_path / "nope")})
    assert missing["failed"] and "not a directory" in missing["msg"]
    broken = simfabric.build({"devices": [{"name": "mlx5_0"}]}, tmp_path / "broken")
    (broken / "class/infiniband/mlx5_0/ports/1/rate").write_text("garbage\n")
    res = run_module("rdma_facts", {"sysfs_root": str(broken)})
    assert res["failed"] and res["tool"] == "sysfs-ib" and "garbage" in res["msg"]


def test_fact_name(tmp_path: Path) -> None:
    root = simfabric.build({"devices": [{"name": "mlx5_0"}]}, tmp_path)
    res = run_module("rdma_facts", {"sysfs_root": str(root), "fact_name": "rdma"})
    assert res["ansible_facts"]["rdma"]["devices"][0]["name"] == "mlx5_0"


@pytest.mark.skipif(shutil.which("ansible", path=str(Path(sys.executable).parent)) is None, reason="no ansible")
def test_through_ansible_adhoc(tmp_path: Path) -> None:
    """Ansible packs the collection's module_utils ccparse (relative imports included) and runs the module."""
    root = simfabric.build({"devices": [{"name": "mlx5_0"}]}, tmp_path / "sys")
    env = dict(
        os.environ,
        ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
        ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
        ANSIBLE_STDOUT_CALLBACK="json",
        ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
        **collection.ansible_env(),
    )
    res = subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible"),
            "localhost",
            "-c",
            "local",
            "-i",
            "localhost,",
            "-m",
            "clusterctl.hpc.rdma_facts",
            "-a",
            f"sysfs_root={root}",
            "--check",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    host = json.JSONDecoder().raw_decode(res.stdout)[0]["plays"][0]["tasks"][0]["hosts"]["localhost"]
    assert host["changed"] is False
    assert host["ansible_facts"]["clusterctl_rdma"]["devices"][0]["ports"][0]["state"] == "ACTIVE"
