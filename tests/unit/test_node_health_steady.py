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


def run(tmp: Path, *extra: str) -> tuple[int, str]:
    inv = tmp / "hosts.yml"
    inv.write_text(
        "all:\n  hosts:\n    n1:\n      ansible_connection: local\n"
        f"      ansible_python_interpreter: {sys.executable}\n"
        f"      node_health_config_path: {tmp}/etc/clusterctl/node-check.json\n"
        f"      node_health_program_path: {tmp}/sbin/clusterctl-node-check\n"
        f"      node_health_bundle_path: {tmp}/lib/clusterctl/node-check.pyz\n"
        f"      node_health_state_dir: {tmp}/state\n")
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
