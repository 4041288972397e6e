"""node_health steady state (issue 19): one find per host, the write tasks skipped when nothing
differs, and drift (content, mode, a deleted file) rewritten and reported, in check mode too; the bundle
built on the controller is the one the node gets (issue 25)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from clusterctl import collection

REPO = Path(__file__).resolve().parents[2]

PLAY = """---
- name: node_health steady state
  hosts: all
  gather_facts: false
  roles:
    - role: clusterctl.hpc.node_health
"""


def run(tmp: Path, *extra: str, host_vars: dict | None = None) -> tuple[int, str]:
    inv = tmp / "hosts.yml"
    inv.write_text(
        "all:\n  hosts:\n    n1:\n      ansible_connection: local\n"
        f"      ansible_python_interpreter: {sys.executable}\n"
        f"      node_health_config_path: {tmp}/etc/clusterctl/node-check.json\n"
        f"      node_health_program_path: {tmp}/sbin/clusterctl-node-check\n"
        f"      node_health_bundle_path: {tmp}/lib/clusterctl/node-check.pyz\n"
        f"      node_health_state_dir: {tmp}/state\n"
        + "".join(f"      {k}: {json.dumps(v)}\n" for k, v in (host_vars or {}).items()))
    (tmp / "play.yml").write_text(PLAY)
    (tmp / "sbin").mkdir(exist_ok=True)
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), **collection.ansible_env(),
               ANSIBLE_GATHERING="explicit",
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    p = subprocess.run(["ansible-playbook", "-i", str(inv), str(tmp / "play.yml"), *extra], env=env,
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    m = re.search(r"n1\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=0\s+skipped=(\d+)", p.stdout)
    assert m, p.stdout[-2000:]
    return int(m.group(2)), p.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="the role writes root-owned files")
def test_steady_state_skips_and_drift_is_rewritten(tmp_path: Path) -> None:
    from clusterctl.lifecycle import bundle

    conf = tmp_path / "etc" / "clusterctl" / "node-check.json"
    prog = tmp_path / "sbin" / "clusterctl-node-check"
    pyz = tmp_path / "lib" / "clusterctl" / "node-check.pyz"
    changed, _ = run(tmp_path)
    # the folders (one looped task), the bundle, the settings, the program
    assert changed == 4 and conf.is_file() and prog.is_file() and (tmp_path / "state").is_dir()
    assert pyz.read_bytes() == bundle.build()
    assert f"python3 {pyz} --config {conf}" in prog.read_text()
    settings = json.loads(conf.read_text())
    assert settings["state_dir"] == f"{tmp_path}/state" and settings["kernel_log"] == "journal"
    changed, out = run(tmp_path)
    assert changed == 0
    for task in ("Create the folders", "Install the node check bundle", "Install the check settings",
                 "Install clusterctl-node-check"):
        head = rf"TASK \[clusterctl\.hpc\.node_health : {task}\]"
        assert re.search(head + r"[^\n]*\n(skipping: \[n1\][^\n]*\n)*(skipping: \[n1\]|\s*$)", out), out[-3000:]
    # drift: a deleted settings file, a program that lost its execute bit, a changed bundle
    conf.unlink()
    prog.chmod(0o644)
    pyz.write_bytes(b"old")
    changed, _ = run(tmp_path, "--check", "--diff")
    assert changed == 3 and not conf.exists() and prog.stat().st_mode & 0o777 == 0o644
    changed, _ = run(tmp_path)
    assert changed == 3 and conf.is_file() and prog.stat().st_mode & 0o777 == 0o755
    assert pyz.read_bytes() == bundle.build()


@pytest.mark.skipif(os.geteuid() != 0, reason="the role writes root-owned files")
def test_the_role_points_the_check_at_a_simulated_roce_tree(tmp_path: Path) -> None:
    """node_health_sysfs_root (the lab's RoCE fault, tests/integration/test_lifecycle_lab.py) reaches the check
    through the role's settings file: the installed program judges the lab's two-HCA RoCE tree
    (tests/fixtures/simfabric/lab-roce-healthy.yml, laid out as the kernel does) healthy, and with mlx5_1 port 1
    down drains the node naming ib_port_state, a reason whose remedy is a reboot."""
    import copy
    import shutil

    import simfabric

    from clusterctl.lifecycle import core

    desc = simfabric.load(REPO / "tests" / "fixtures" / "simfabric" / "lab-roce-healthy.yml")
    sysfs = tmp_path / "sim" / "sys"
    simfabric.build(desc, sysfs)
    (tmp_path / "bin").mkdir()
    scontrol = tmp_path / "bin" / "scontrol"
    scontrol.write_text(f'#!/bin/sh\ncase "$1" in show) echo "NodeName=$3 State=IDLE";; '
                        f'*) echo "$@" >> {tmp_path}/scontrol.log;; esac\n')
    scontrol.chmod(0o755)
    (tmp_path / "kern.log").touch()
    run(tmp_path, host_vars={
        "node_health_sysfs_root": str(sysfs), "node_health_rdma_devices": 2, "node_health_rate_gbps": 400,
        "node_health_kernel_log": str(tmp_path / "kern.log"), "node_health_tool_dirs": [str(tmp_path / "bin")]})
    settings = json.loads((tmp_path / "etc" / "clusterctl" / "node-check.json").read_text())
    assert settings["sysfs_root"] == str(sysfs) and settings["rdma_devices"] == 2
    prog = [str(tmp_path / "sbin" / "clusterctl-node-check")]
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    ok = subprocess.run(prog, capture_output=True, text=True, env=env, check=False, timeout=120)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "", "")
    bad = copy.deepcopy(desc)
    bad["devices"][1]["ports"][0]["faults"] = ["port_down"]
    shutil.rmtree(sysfs)
    simfabric.build(bad, sysfs)
    assert (sysfs / "class" / "infiniband" / "mlx5_1" / "ports" / "1" / "state").read_text().strip() == "1: DOWN"
    failed = subprocess.run(prog, capture_output=True, text=True, env=env, check=False, timeout=120)
    node = os.uname().nodename.split(".")[0]
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert failed.stdout.startswith(f"clusterctl: node-check: ib_port_state {node}/mlx5_1/1 evidence="), failed.stdout
    drain = (tmp_path / "scontrol.log").read_text()
    assert drain.startswith(f"update NodeName={node} State=DRAIN Reason=clusterctl: node-check: ib_port_state ")
    assert core.remedy_of(drain.split("Reason=", 1)[1])[0] == "reboot"
