"""The rolling GPU driver upgrade in the lab, for real: `clusterctl reconfigure --component gpu --batch 1`.

The lab containers have no GPU: the driver comes from the STAND-IN CUDA repository of
molecule/nvidia_gpu (tiny packages named like NVIDIA's, not NVIDIA's), served inside lab-c1 and
lab-c2, and the RebootProgram the nvidia_gpu role installs runs in its `restart_slurmd` mode (the
simulation for containers: slurmd restarted with -b, so that it reports a fresh boot to slurmctld).
What is real: the role's install/hold on both nodes, slurm.conf's RebootProgram, `scontrol reboot
ASAP nextstate=RESUME` issued by the rollout, slurmctld waiting for the new boot and returning the
node, the quick verify, and a job on lab-c2 that runs through lab-c1's reboot and completes before
lab-c2 is rebooted. The lab is left as found (stand-in packages purged, mirrors restored).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from labutil import CLI, cc, sh

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
NODES = ("lab-c1", "lab-c2")
FLAG = "/tmp/cc-gpu-release-job"
PKGS = "nvidia-driver-550 datacenter-gpu-manager"


def _job_field(jobid: str, field: str) -> str:
    for word in sh("lab-ctl", f"scontrol show job {jobid}").split():
        if word.startswith(field + "="):
            return word.split("=", 1)[1]
    return ""


def _started_unix(host: str, unit: str) -> int:
    out = sh(host, f"systemctl show -p ExecMainStartTimestamp --timestamp=unix --value {unit}").strip()
    assert out.startswith("@"), out
    return int(out[1:])


def _serve_standin(tmp: Path) -> None:
    repo = tmp / "gpu-standin"
    subprocess.run(["bash", str(REPO / "molecule/nvidia_gpu/files/gpu-standin-repo.sh"), str(repo)], check=True,
                   env={**os.environ, "PYTHON": sys.executable})
    for host in NODES:
        name = f"clusterctl-lab-{host}"
        subprocess.run(["podman", "cp", f"{repo}/.", f"{name}:/srv/gpu-standin"], check=True)
        # apt talks only to the stand-in repository meanwhile (the mirrors come back in cleanup)
        subprocess.run(["podman", "exec", name, "sh", "-c",
                        "mv /etc/apt/sources.list /etc/apt/sources.list.clusterctl-gpu-test && "
                        "systemd-run --unit=cc-gpu-standin-repo --quiet python3 -m http.server 8766 "
                        "--bind 127.0.0.1 --directory /srv/gpu-standin && sleep 1"], check=True)


def _cleanup() -> None:
    for host in NODES:
        sh(host, "systemctl disable --now nvidia-persistenced nvidia-dcgm 2>/dev/null; "
                 f"apt-mark unhold {PKGS} >/dev/null 2>&1; dpkg --purge {PKGS} >/dev/null 2>&1; "
                 "rm -f /etc/apt/sources.list.d/clusterctl-cuda.list /etc/apt/keyrings/clusterctl-cuda.asc "
                 "/etc/ansible/facts.d/clusterctl_gpu.fact /usr/local/sbin/clusterctl-reboot; "
                 "systemctl stop cc-gpu-standin-repo 2>/dev/null; rm -rf /srv/gpu-standin; "
                 "test -e /etc/apt/sources.list.clusterctl-gpu-test && "
                 "mv /etc/apt/sources.list.clusterctl-gpu-test /etc/apt/sources.list; "
                 f"rm -f {FLAG}")
    for line in sh("lab-ctl", "sinfo -h -N -o '%N|%T|%E'").splitlines():
        name, state, reason = [*line.split("|", 2), "", ""][:3]
        if "drain" in state and reason.startswith("clusterctl:"):
            sh("lab-ctl", f"scontrol update NodeName={name} State=RESUME")


def test_gpu_driver_rollout_reboots_batch_by_batch(provisioned: Path, tmp_path: Path) -> None:
    inv = tmp_path / "lab"
    shutil.copytree(provisioned, inv)
    gpu_vars = {
        "nvidia_gpu_repo_url": "http://127.0.0.1:8766/",
        "nvidia_gpu_repo_key_url": "http://127.0.0.1:8766/key.asc",
        "nvidia_gpu_driver_version": "550.90.07",
        "nvidia_gpu_fabricmanager": "never",
        "nvidia_gpu_reboot_mode": "restart_slurmd",
        "slurm_common_reboot_program": "/usr/local/sbin/clusterctl-reboot",
    }
    gv = inv / "group_vars" / "all" / "gpu.yml"
    try:
        _serve_standin(tmp_path)
        key_sha256 = (tmp_path / "gpu-standin/key.asc.sha256").read_text().strip()
        gpu_vars["nvidia_gpu_repo_key_checksum"] = f"sha256:{key_sha256}"
        gv.write_text(yaml.safe_dump(gpu_vars))
        res = cc("provision", str(inv), "--tags", "gpu,slurm", timeout=900)
        assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
        for host in NODES:
            assert sh(host, "dpkg-query -W -f='${Version}' nvidia-driver-550").strip() == "550.90.07-1"
        config = sh("lab-ctl", "scontrol show config")
        assert re.search(r"(?m)^RebootProgram\s*=\s*/usr/local/sbin/clusterctl-reboot$", config), config

        # the bump, without consent: the plan is empty and says why
        gv.write_text(yaml.safe_dump({**gpu_vars, "nvidia_gpu_driver_version": "550.127.05"}))
        res = cc("reconfigure", str(inv), "--component", "gpu", "--plan", timeout=600)
        assert res.returncode == 0 and "reconfigure gpu: nothing to change" in res.stdout, res.stdout[-4000:]

        before = {h: _started_unix(h, "slurmd") for h in NODES}
        sh("lab-c2", f"rm -f {FLAG}")
        jobid = sh("lab-ctl", "sbatch --parsable -N1 -w lab-c2 -o /tmp/gpu-held-%j.out "
                              f"--wrap 'while [ ! -e {FLAG} ]; do sleep 1; done; echo released'").strip()
        assert jobid.isdigit(), jobid
        deadline = time.monotonic() + 60
        while _job_field(jobid, "JobState") != "RUNNING" and time.monotonic() < deadline:
            time.sleep(1)
        assert _job_field(jobid, "JobState") == "RUNNING"

        proc = subprocess.Popen([*CLI, "reconfigure", str(inv), "--component", "gpu", "--batch", "1",
                                 "-e", "nvidia_gpu_allow_driver_change=true", "--drain-timeout", "300"],
                                cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, "COLUMNS": "200"})
        assert proc.stdout is not None
        lines: list[str] = []
        c1_back_while_running = False
        job_state = ""
        for line in proc.stdout:
            lines.append(line)
            if "lab-c1 back from the reboot" in line:
                c1_back_while_running = _job_field(jobid, "JobState") == "RUNNING"
            if f"batch 2/2 (lab-c2): waiting for job(s) {jobid} to end" in line and not job_state:
                sh("lab-c2", f"touch {FLAG}")
                deadline = time.monotonic() + 60
                job_state = _job_field(jobid, "JobState")
                while job_state in ("RUNNING", "COMPLETING", "") and time.monotonic() < deadline:
                    time.sleep(1)
                    job_state = _job_field(jobid, "JobState")
        rc = proc.wait(timeout=900)
        out = "".join(lines)
        assert rc == 0, out[-6000:]
        assert "batch 1/2 (drain): lab-c1" in out and "batch 2/2 (drain): lab-c2" in out, out[-6000:]
        assert "clusterctl_reboots" in out, out[-6000:]
        for n in NODES:
            assert f"rebooting {n} through Slurm (scontrol reboot ASAP nextstate=RESUME)" in out, out[-6000:]
            assert f"quick verify passed on {n}" in out, out[-6000:]
        # lab-c1 was rebooted and back while the job ran on lab-c2; the job then completed
        assert c1_back_while_running, out[-6000:]
        assert job_state == "COMPLETED" and _job_field(jobid, "ExitCode") == "0:0", (job_state, out[-3000:])
        assert sh("lab-c2", f"cat /tmp/gpu-held-{jobid}.out").strip() == "released"
        after = {h: _started_unix(h, "slurmd") for h in NODES}
        for h in NODES:
            assert after[h] > before[h], (before, after)  # the simulated reboot restarted slurmd
            assert sh(h, "dpkg-query -W -f='${Version}' nvidia-driver-550").strip() == "550.127.05-1"
            assert "nvidia-driver-550" in sh(h, "apt-mark showhold").split()
            log = sh(h, "cat /var/log/clusterctl-reboot.log").splitlines()
            assert len(log) == 1 and "reboot requested by slurmctld (restart_slurmd)" in log[0], log
        deadline = time.monotonic() + 60
        states = {}
        while time.monotonic() < deadline:
            rows = [ln.split("|") for ln in sh("lab-ctl", "sinfo -h -N -o '%N|%T'").splitlines() if "|" in ln]
            states = {r[0]: r[1] for r in rows if r[0] in NODES}
            if all(s == "idle" for s in states.values()):
                break
            time.sleep(2)
        assert states == {"lab-c1": "idle", "lab-c2": "idle"}, states
    finally:
        _cleanup()
