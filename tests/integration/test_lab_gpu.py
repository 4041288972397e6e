"""The rolling GPU driver upgrade in the lab, for real: `clusterctl reconfigure --component gpu --batch 1`.

The lab containers have no GPU: the driver comes from the STAND-IN CUDA repository of
molecule/nvidia_gpu (tiny packages named like NVIDIA's, not NVIDIA's), served inside lab-c1 and
lab-c2, and the RebootProgram the nvidia_gpu role installs runs in its `restart_slurmd` mode (the
simulation for containers: slurmd restarted with -b, so that it reports a fresh boot to slurmctld;
the kernel is not rebooted). The quick verify reads simulated RoCE sysfs trees (tests/simfabric.py,
as test_verify_lab.py): lab-c1's is healthy, lab-c2's degraded, so lab-c2 fails its verify.
What is real: the role's install/hold on both nodes, slurm.conf's RebootProgram, `scontrol reboot
ASAP nextstate=DOWN` issued by the rollout, slurmctld waiting for the new boot and keeping the node
DOWN, the quick verify, and the resume of lab-c1 only after it passed: a job pinned to lab-c1 with
-w, queued at its reboot, starts only after that resume (its own clock against the rollout's log)
and sinfo never shows lab-c1 able to take it before. A job on lab-c2 runs through lab-c1's reboot
and completes; lab-c2 fails its verify and stays drained, reason naming the check, the rollout
stops, while the job on lab-c1 completes. The lab is left as found (stand-in packages purged,
mirrors restored, nodes resumed).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest
import simfabric
import yaml
from labutil import CLI, cc, sh

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
NODES = ("lab-c1", "lab-c2")
FLAG = "/tmp/cc-gpu-release-job"
FLAG_C1 = "/tmp/cc-gpu-release-c1-job"
SIM_ROOT = "/opt/clusterctl-verify-sim"
SIM_DESC = {"lab-c1": "lab-roce-healthy.yml", "lab-c2": "lab-roce-degraded.yml"}
#: sinfo %T states in which Slurm starts a job on the node
TAKES_JOBS = ("idle", "mixed", "allocated", "completing")
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


def _put_sim(tmp: Path, inv: Path) -> None:
    """The simulated RoCE trees of test_verify_lab.py and the spec that judges them (quick verify)."""
    cluster = inv / "group_vars" / "all" / "cluster.yml"
    spec = yaml.safe_load(cluster.read_text())
    spec.update({"fabric": "roce", "pfc_priority": 3, "roce_dscp": 26, "rdma_devices_per_node": 2,
                 "ib_rate_gbps": 400})
    cluster.write_text(yaml.safe_dump(spec, sort_keys=False))
    (inv / "group_vars" / "all" / "verify_sim.yml").write_text(yaml.safe_dump({
        "clusterctl_verify_sysfs_root": f"{SIM_ROOT}/sys",
        "clusterctl_verify_tool_dirs": [f"{SIM_ROOT}/bin"],
        "clusterctl_verify_kinds": ["sysfs-ib", "mlnx_qos", "nvidia-smi-q", "nvidia-smi-query", "nvidia-smi-topo",
                                    "proc-limits"],
    }))
    for host, desc in SIM_DESC.items():
        root = tmp / f"sim-{host}"
        simfabric.build(simfabric.load(REPO / "tests" / "fixtures" / "simfabric" / desc), root / "sys")
        shutil.copytree(REPO / "tests" / "fakebin", root / "bin", ignore=shutil.ignore_patterns("__pycache__"))
        name = f"clusterctl-lab-{host}"
        subprocess.run(["podman", "exec", name, "rm", "-rf", SIM_ROOT], check=True)
        subprocess.run(["podman", "cp", str(root), f"{name}:{SIM_ROOT}"], check=True)


def _sinfo() -> dict[str, tuple[str, str]]:
    rows = [ln.split("|", 2) for ln in sh("lab-ctl", "sinfo -h -N -o '%N|%T|%E'").splitlines() if ln.count("|") >= 2]
    return {r[0]: (r[1], r[2]) for r in rows}


def _resume_times(log: Path, node: str) -> list[float]:
    """When the rollout's Slurm wrapper issued ``State=RESUME`` for ``node`` (its --log-file lines)."""
    out = []
    for line in log.read_text().splitlines():
        if "slurm on " in line and "'State=RESUME'" in line and f"NodeName={node}'" in line:
            out.append(datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp())
    return out


def _cleanup() -> None:
    for host in NODES:
        sh(host, "systemctl disable --now nvidia-persistenced nvidia-dcgm 2>/dev/null; "
                 f"apt-mark unhold {PKGS} >/dev/null 2>&1; dpkg --purge {PKGS} >/dev/null 2>&1; "
                 "rm -f /etc/apt/sources.list.d/clusterctl-cuda.list /etc/apt/keyrings/clusterctl-cuda.asc "
                 "/etc/ansible/facts.d/clusterctl_gpu.fact /usr/local/sbin/clusterctl-reboot; "
                 "systemctl stop cc-gpu-standin-repo 2>/dev/null; rm -rf /srv/gpu-standin; "
                 "test -e /etc/apt/sources.list.clusterctl-gpu-test && "
                 "mv /etc/apt/sources.list.clusterctl-gpu-test /etc/apt/sources.list; "
                 f"rm -rf {FLAG} {FLAG_C1} {SIM_ROOT}")
    sh("lab-ctl", "scancel --name=cc-gpu-test 2>/dev/null; true")
    for name, (state, reason) in _sinfo().items():
        if ("drain" in state or "down" in state) and reason.startswith("clusterctl:"):
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

        _put_sim(tmp_path, inv)
        before = {h: _started_unix(h, "slurmd") for h in NODES}
        sh("lab-c2", f"rm -f {FLAG}")
        sh("lab-c1", f"rm -f {FLAG_C1}")
        jobid = sh("lab-ctl", "sbatch --parsable -J cc-gpu-test -N1 -w lab-c2 -o /tmp/gpu-held-%j.out "
                              f"--wrap 'while [ ! -e {FLAG} ]; do sleep 1; done; echo released'").strip()
        assert jobid.isdigit(), jobid
        deadline = time.monotonic() + 60
        while _job_field(jobid, "JobState") != "RUNNING" and time.monotonic() < deadline:
            time.sleep(1)
        assert _job_field(jobid, "JobState") == "RUNNING"

        log = tmp_path / "rollout.log"
        proc = subprocess.Popen([*CLI, "reconfigure", str(inv), "--component", "gpu", "--batch", "1",
                                 "-e", "nvidia_gpu_allow_driver_change=true", "--drain-timeout", "300",
                                 "--log-file", str(log)],
                                cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, "COLUMNS": "200"})
        assert proc.stdout is not None
        lines: list[str] = []
        c1_back_while_running = False
        job_state = ""
        pinned = ""
        samples: list[tuple[float, str, str]] = []  # (time, lab-c1's sinfo state, the pinned job's state)
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                t = time.time()
                state = _sinfo().get("lab-c1", ("missing", ""))[0]
                samples.append((t, state, _job_field(pinned, "JobState")))
                stop.wait(0.5)

        sampler = threading.Thread(target=sample, daemon=True)
        for line in proc.stdout:
            lines.append(line)
            if "rebooting lab-c1 through Slurm" in line and not pinned:
                # queued for lab-c1 alone: it can only start once Slurm lets lab-c1 take a job
                pinned = sh("lab-ctl", "sbatch --parsable -J cc-gpu-test -N1 -w lab-c1 -o /tmp/gpu-pinned-%j.out "
                                       f"--wrap 'date +%s.%N; while [ ! -e {FLAG_C1} ]; do sleep 1; done; "
                                       "echo released'").strip()
                assert pinned.isdigit(), pinned
                sampler.start()
            if "lab-c1 back from the reboot" in line:
                c1_back_while_running = _job_field(jobid, "JobState") == "RUNNING"
            if "quick verify passed on lab-c1" in line:
                time.sleep(3)  # a few samples after the resume too
                stop.set()
            if f"batch 2/2 (lab-c2): waiting for job(s) {jobid} to end" in line and not job_state:
                sh("lab-c2", f"touch {FLAG}")
                deadline = time.monotonic() + 60
                job_state = _job_field(jobid, "JobState")
                while job_state in ("RUNNING", "COMPLETING", "") and time.monotonic() < deadline:
                    time.sleep(1)
                    job_state = _job_field(jobid, "JobState")
        rc = proc.wait(timeout=900)
        stop.set()
        out = "".join(lines)
        # lab-c2 fails its quick verify: the rollout stops (exit 3) with lab-c2 drained, reason naming the check
        assert rc == 3, out[-6000:]
        assert "batch 1/2 (drain): lab-c1" in out and "batch 2/2 (drain): lab-c2" in out, out[-6000:]
        assert "clusterctl_reboots" in out, out[-6000:]
        for n in NODES:
            assert f"rebooting {n} through Slurm (scontrol reboot ASAP nextstate=DOWN)" in out, out[-6000:]
        assert "quick verify passed on lab-c1: resumed" in out, out[-6000:]
        assert "quick verify failed after the reboot: lab-c2:" in " ".join(out.split()), out[-6000:]
        assert "lab-c2 stay drained" in " ".join(out.split()), out[-6000:]

        # the job pinned to lab-c1 started only after our resume; until then sinfo never showed lab-c1
        # in a state that takes a job
        resumed = _resume_times(log, "lab-c1")
        assert len(resumed) == 1, log.read_text()[-4000:]
        deadline = time.monotonic() + 60
        while _job_field(pinned, "JobState") != "RUNNING" and time.monotonic() < deadline:
            time.sleep(1)
        assert _job_field(pinned, "JobState") == "RUNNING", sh("lab-ctl", f"scontrol show job {pinned}")
        pinned_start = float(sh("lab-c1", f"head -1 /tmp/gpu-pinned-{pinned}.out").strip())
        assert pinned_start >= resumed[0], (pinned_start, resumed[0])
        before_resume = [(t, st, js) for t, st, js in samples if t < resumed[0]]
        assert len(before_resume) >= 5, samples  # the reboot and the verify were watched
        assert all(st not in TAKES_JOBS and js == "PENDING" for _, st, js in before_resume), before_resume
        # what sinfo showed for lab-c1 from its reboot to our resume, in order (for the record)
        seen = [st for i, (_, st, _) in enumerate(before_resume) if i == 0 or before_resume[i - 1][1] != st]
        Path("/tmp/clusterctl-lab-gpu-c1-states.txt").write_text(" -> ".join(seen) + "\n")

        # lab-c1 was rebooted and back while the job ran on lab-c2; that job then completed
        assert c1_back_while_running, out[-6000:]
        assert job_state == "COMPLETED" and _job_field(jobid, "ExitCode") == "0:0", (job_state, out[-3000:])
        assert sh("lab-c2", f"cat /tmp/gpu-held-{jobid}.out").strip() == "released"
        # lab-c2 is still drained at the end (DRAIN flag, our reason naming the failed check)...
        c2_state, c2_reason = _sinfo()["lab-c2"]
        assert c2_state not in TAKES_JOBS, (c2_state, c2_reason)
        assert "DRAIN" in sh("lab-ctl", "scontrol --oneliner show node lab-c2").split("State=", 1)[1].split()[0]
        assert c2_reason.startswith("clusterctl: reconfigure gpu: verify failed after reboot: "), c2_reason
        assert any(check in c2_reason for check in ("qos_pfc", "ib_port_rate")), c2_reason
        # ...while the job on lab-c1 runs on and completes
        sh("lab-c1", f"touch {FLAG_C1}")
        deadline = time.monotonic() + 60
        while _job_field(pinned, "JobState") in ("RUNNING", "COMPLETING") and time.monotonic() < deadline:
            time.sleep(1)
        assert _job_field(pinned, "JobState") == "COMPLETED" and _job_field(pinned, "ExitCode") == "0:0"
        assert sh("lab-c1", f"tail -1 /tmp/gpu-pinned-{pinned}.out").strip() == "released"

        after = {h: _started_unix(h, "slurmd") for h in NODES}
        for h in NODES:
            assert after[h] > before[h], (before, after)  # the simulated reboot restarted slurmd
            assert sh(h, "dpkg-query -W -f='${Version}' nvidia-driver-550").strip() == "550.127.05-1"
            assert "nvidia-driver-550" in sh(h, "apt-mark showhold").split()
            log_lines = sh(h, "cat /var/log/clusterctl-reboot.log").splitlines()
            assert len(log_lines) == 1 and "reboot requested by slurmctld (restart_slurmd)" in log_lines[0], log_lines
        assert _sinfo()["lab-c1"][0] == "idle", _sinfo()
    finally:
        _cleanup()
