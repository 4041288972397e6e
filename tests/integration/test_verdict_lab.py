"""Verdicts inside Ansible on the lab: plain ``ansible-playbook playbooks/verify.yml`` over SSH fails
the play on the node with an injected fault and passes the healthy one with changed=0, with the same
findings as ``clusterctl verify`` of the same nodes.

The faults are injected as tests/integration/test_verify_lab.py injects them: a simulated sysfs tree
and the fake mlnx_qos under ``SIM_ROOT`` in each compute container (lab-c1 healthy; lab-c2 with
mlx5_1 port 1 at 200 of 400 Gb/s and PFC off on rdma0), on a copy of the lab inventory declaring
that RoCE fabric. Needs the lab up (not provisioned: nothing here uses Slurm).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import simfabric
import yaml
from labutil import REPO, cc, lab_copy_on_roce

from clusterctl import collection
from clusterctl.runner import state_dir

pytestmark = pytest.mark.lab

SIM_ROOT = "/opt/clusterctl-verdict-sim"
SIM_DESC = {"lab-c1": "lab-roce-healthy.yml", "lab-c2": "lab-roce-degraded.yml"}


@pytest.fixture(scope="module")
def sim_inventory(lab: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("verdict-lab")
    inv = lab_copy_on_roce(tmp / "inv")
    (inv / "group_vars" / "all" / "verify_sim.yml").write_text(yaml.safe_dump({
        "clusterctl_verify_sysfs_root": f"{SIM_ROOT}/sys", "clusterctl_verify_tool_dirs": [f"{SIM_ROOT}/bin"],
        "clusterctl_verify_kinds": ["sysfs-ib", "mlnx_qos"]}))
    for host, desc in SIM_DESC.items():
        root = tmp / host
        simfabric.build(simfabric.load(REPO / "tests" / "fixtures" / "simfabric" / desc), root / "sys")
        shutil.copytree(REPO / "tests" / "fakebin", root / "bin", ignore=shutil.ignore_patterns("__pycache__"))
        name = f"clusterctl-lab-{host}"
        subprocess.run(["podman", "exec", name, "rm", "-rf", SIM_ROOT], check=True)
        subprocess.run(["podman", "cp", str(root), f"{name}:{SIM_ROOT}"], check=True)
    try:
        yield inv
    finally:
        for host in SIM_DESC:
            subprocess.run(["podman", "exec", f"clusterctl-lab-{host}", "rm", "-rf", SIM_ROOT], check=False)


def test_verify_playbook_judges_like_clusterctl_verify(sim_inventory: Path, tmp_path: Path) -> None:
    inv = sim_inventory
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), **collection.ansible_env(),
               ANSIBLE_CACHE_PLUGIN="memory", ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default")
    reports = tmp_path / "reports"
    res = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inv),
                          str(REPO / "playbooks" / "verify.yml"), "-e", f"clusterctl_evidence_dir={tmp_path / 'ev'}",
                          "-e", f"clusterctl_verify_report_dir={reports}"],
                         capture_output=True, text=True, timeout=900, env=env, cwd=REPO, check=False)
    out = res.stdout + res.stderr
    assert res.returncode == 2, out[-6000:]  # a host failed
    recap = {m.group(1): dict(re.findall(r"(\w+)=(\d+)", m.group(2)))
             for m in re.finditer(r"^(lab-c\d)\s+:\s+(.*)$", res.stdout, re.M)}
    assert recap["lab-c1"]["failed"] == "0" and recap["lab-c2"]["failed"] == "1", recap
    assert recap["lab-c1"]["changed"] == "0" and recap["lab-c2"]["changed"] == "0", recap
    play = json.loads((reports / "verify-report.json").read_text())["hosts"]

    res = cc("verify", str(inv))
    assert res.returncode == 3, (res.stdout + res.stderr)[-4000:]
    runs = sorted((state_dir(inv) / "runs").glob("*/verify-report.json"), key=lambda p: p.stat().st_mtime)
    cli = json.loads(runs[-1].read_text())["hosts"]
    assert play == cli, (play, cli)  # the same verdicts and findings
    assert cli["lab-c1"]["status"] == "healthy" and cli["lab-c2"]["status"] == "failed", cli
    fatal = out.split("fatal: [lab-c2]", 1)[1].split("\n\n")[0]
    crit = [f for f in cli["lab-c2"]["findings"] if f["severity"] == "critical"]
    assert crit and all(f["subject"] in fatal for f in crit[:3]), fatal
