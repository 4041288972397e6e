"""Issue 27 (2) on the lab: the execution environment built for real (scripts/ee_build.py: ansible-builder v3
with podman on a local Debian 12 base, no registry) runs the verify playbook against the lab the way AWX
runs a job template (ansible-runner with process isolation: the playbook and the collection inside the
image, the project a playbook importing ``clusterctl.hpc.verify``) and judges like ``clusterctl verify``:
the same hosts, verdicts and findings, the play failed on the faulty node, changed=0.

The faults are test_verdict_lab's (its ``sim_inventory`` fixture: lab-c1 healthy, lab-c2 with a port at
half rate and PFC off). The image is built once per set of inputs (its name carries their hash): a later
run with the image present builds nothing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
import yaml
from labutil import cc, ee_build_script
from test_verdict_lab import sim_inventory  # noqa: F401  (the fixture: the same injected faults)

from clusterctl.lab import KEY, NETWORK
from clusterctl.runner import state_dir

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def ee_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    if shutil.which("podman") is None:
        pytest.skip("podman is missing: the execution environment is built and run with podman")
    if shutil.which("ansible-builder", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("ansible-builder (test extras) is missing")
    installed = Path(sysconfig.get_paths()["purelib"]) / "ansible_collections"  # no Galaxy here
    started = time.monotonic()
    log = tmp_path_factory.mktemp("ee") / "build.log"
    image = ee_build_script().build(installed if (installed / "ansible" / "posix").is_dir() else None, log=log)
    print(f"execution environment {image}: {time.monotonic() - started:.0f} s (build log {log})")
    return image


def test_the_execution_environment_judges_like_clusterctl_verify(ee_image: str, sim_inventory: Path,  # noqa: F811
                                                                 tmp_path: Path) -> None:
    pdd = tmp_path / "runner"  # ansible-runner's private data dir, /runner in the container
    (pdd / "project").mkdir(parents=True)
    (pdd / "project" / "verify.yml").write_text(
        "---\n- name: Verify the fabric\n  ansible.builtin.import_playbook: clusterctl.hpc.verify\n")
    shutil.copytree(sim_inventory, pdd / "inventory")
    shutil.copy(KEY, pdd / "lab_ed25519")  # a job template's machine credential
    (pdd / "lab_ed25519").chmod(0o600)
    (pdd / "env").mkdir()
    (pdd / "env" / "extravars").write_text(yaml.safe_dump({
        "ansible_ssh_private_key_file": "/runner/lab_ed25519", "clusterctl_verify_report_dir": "/runner/reports",
        "clusterctl_evidence_dir": "/runner/evidence"}))
    res = subprocess.run([str(Path(sys.executable).parent / "ansible-runner"), "run", str(pdd), "-p", "verify.yml",
                          "--ident", "ee", "--process-isolation", "--process-isolation-executable", "podman",
                          "--container-image", ee_image, f"--container-option=--network={NETWORK}",
                          "--container-option=--user=0"],
                         capture_output=True, text=True, timeout=900, check=False)
    out = (pdd / "artifacts" / "ee" / "stdout").read_text() if (pdd / "artifacts" / "ee" / "stdout").is_file() else ""
    out = re.sub(r"\x1b\[[0-9;]*m", "", out) + res.stdout + res.stderr
    assert (pdd / "artifacts" / "ee" / "rc").read_text().strip() == "2", out[-6000:]  # a host failed
    cmd = json.loads((pdd / "artifacts" / "ee" / "command").read_text())["command"]
    assert cmd[:2] == ["podman", "run"] and ee_image in cmd, cmd  # ran inside the image
    recap = {m.group(1): dict(re.findall(r"(\w+)=(\d+)", m.group(2)))
             for m in re.finditer(r"^(lab-c\d)\s+:\s+(.*)$", out, re.M)}
    assert recap["lab-c1"]["failed"] == "0" and recap["lab-c2"]["failed"] == "1", recap
    assert recap["lab-c1"]["changed"] == "0" and recap["lab-c2"]["changed"] == "0", recap
    ee = json.loads((pdd / "reports" / "verify-report.json").read_text())["hosts"]

    res = cc("verify", str(sim_inventory))
    assert res.returncode == 3, (res.stdout + res.stderr)[-4000:]
    runs = sorted((state_dir(sim_inventory) / "runs").glob("*/verify-report.json"), key=lambda p: p.stat().st_mtime)
    cli = json.loads(runs[-1].read_text())["hosts"]
    assert ee == cli, (ee, cli)  # the same verdicts and findings
    assert cli["lab-c1"]["status"] == "healthy" and cli["lab-c2"]["status"] == "failed", cli
