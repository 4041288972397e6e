"""The embedded lab end to end: lab up, provision, plan reports zero changes, a container killed
mid-run is reported unreachable while the others finish, and --retry completes it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from labutil import CLI, cc, sh, summary_rows

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(shutil.which("podman") is None, reason="podman not installed (scripts/setup.sh installs it)"),
]

REPO = Path(__file__).resolve().parents[2]


def test_lab_status_lists_running_hosts(lab: Path) -> None:
    res = cc("lab", "status")
    assert res.returncode == 0
    for host in ("lab-ctl", "lab-c1", "lab-c2"):
        assert host in res.stdout
    rows = [ln.split() for ln in res.stdout.splitlines() if ln.startswith("lab-")]  # one line per host
    assert len(rows) == 3 and all(r[-1] == "running" for r in rows), res.stdout


def test_lab_up_is_idempotent(lab: Path) -> None:
    before = subprocess.run(["podman", "inspect", "-f", "{{.Id}}", "clusterctl-lab-lab-c1"],
                            capture_output=True, text=True, check=True).stdout
    assert cc("lab", "up").returncode == 0
    after = subprocess.run(["podman", "inspect", "-f", "{{.Id}}", "clusterctl-lab-lab-c1"],
                           capture_output=True, text=True, check=True).stdout
    assert before == after


def test_provisioned_cluster_runs_jobs(provisioned: Path) -> None:
    out = sh("lab-ctl", "sinfo -h -N -o '%N %t'")
    nodes = dict(line.split() for line in out.splitlines())
    assert set(nodes) == {"lab-c1", "lab-c2"}, out
    assert all(state in ("idle", "mix", "alloc") for state in nodes.values()), out
    out = sh("lab-ctl", "srun -N2 hostname | sort")
    assert out.split() == ["lab-c1", "lab-c2"]


def test_job_steps_get_slurmds_memlock_limit(provisioned: Path) -> None:
    """RDMA jobs need memlock: a step has slurmd's LimitMEMLOCK (slurm_compute_memlock_limit; 4M in
    the lab, whose containers cannot go above the host's hard limit, 8 MiB on Debian 12), not the
    submitting shell's 64 KiB (PropagateResourceLimitsExcept=MEMLOCK) nor systemd's default."""
    hard = sh("lab-c1", "ulimit -H -l").strip()
    # systemd applies the closest value it may when the container's hard limit is lower
    want_kib = 4096 if hard == "unlimited" else min(4096, int(hard))
    assert want_kib > 64, f"the container's memlock hard limit ({hard} KiB) leaves nothing to tell apart"
    got = sh("lab-c1", "systemctl show -p LimitMEMLOCK --value slurmd").strip()  # the unit's setting
    assert got == str(4096 * 1024), got
    out = sh("lab-ctl", "ulimit -S -l 64 && srun -N2 sh -c 'ulimit -l'")
    assert out.split() == [str(want_kib)] * 2, out


def test_plan_reports_zero_changes(provisioned: Path) -> None:
    res = cc("plan", str(provisioned))
    assert res.returncode == 0, res.stdout[-4000:]
    assert "plan: no changes" in res.stdout, res.stdout[-4000:]


def test_second_provision_changes_nothing(provisioned: Path) -> None:
    res = cc("provision", str(provisioned))
    assert res.returncode == 0
    table = summary_rows(res.stdout)
    assert len(table) == 3, res.stdout[-3000:]
    for host, cols in table.items():
        assert cols[1] == "0", f"changed on second run: {host} {cols}"


def test_killed_host_is_unreachable_then_retry_completes(provisioned: Path) -> None:
    proc = subprocess.Popen([*CLI, "provision", str(provisioned)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines: list[str] = []
    killed = False
    for line in proc.stdout:
        lines.append(line)
        if not killed and line.startswith("PLAY Munge"):
            subprocess.run(["podman", "kill", "clusterctl-lab-lab-c2"], check=True, capture_output=True)
            killed = True
    rc = proc.wait(timeout=1200)
    out = "".join(lines)
    try:
        assert killed, out
        assert rc == 4, out[-4000:]
        assert "unreachable lab-c2" in out.replace("  ", " ") or "unreachable lab-c2:" in out, out[-4000:]
        rows = summary_rows(out)
        assert rows["lab-c1"][2] == "0" and rows["lab-c1"][3] == "0", rows  # c1 finished cleanly
        assert rows["lab-ctl"][2] == "0" and rows["lab-ctl"][3] == "0", rows
        state = Path(os.environ["CLUSTERCTL_STATE_DIR"])
        failed = json.loads(next(state.glob("lab-*/last-failed.json")).read_text())["hosts"]
        assert list(failed) == ["lab-c2"]
    finally:
        assert cc("lab", "up").returncode == 0  # brings the killed container back
    time.sleep(2)
    res = cc("provision", str(provisioned), "--retry")
    assert res.returncode == 0, res.stdout[-4000:]
    assert "retrying 1 host(s): lab-c2" in res.stdout
    assert list(summary_rows(res.stdout)) == ["lab-c2"], res.stdout[-3000:]
    out = sh("lab-ctl", "scontrol update NodeName=lab-c2 State=RESUME 2>/dev/null; sleep 1; srun -N2 hostname | sort")
    assert out.split() == ["lab-c1", "lab-c2"]
    res = cc("provision", str(provisioned), "--retry")
    assert "nothing to retry" in res.stdout


def _start_time(host: str, unit: str) -> str:
    return sh(host, f"systemctl show -p ExecMainStartTimestampMonotonic --value {unit}").strip()


def test_reconfigure_during_a_running_job(provisioned: Path, tmp_path: Path) -> None:
    """An NCCL setting and a slurm.conf option change while a job spans both nodes: the job
    finishes, the new values are in effect, and no daemon was restarted (start times unchanged)."""
    inv = tmp_path / "lab"
    shutil.copytree(provisioned, inv)
    daemons = [("lab-ctl", "slurmctld"), ("lab-c1", "slurmd"), ("lab-c2", "slurmd")]
    before = {d: _start_time(*d) for d in daemons}
    assert all(before.values()), before
    # \$ so the submitting shell leaves $(hostname)/$NCCL_DEBUG to each task's own shell
    script = "srun -N2 sleep 40; srun -N2 sh -c 'echo \\$(hostname) NCCL_DEBUG=\\$NCCL_DEBUG'"
    # stderr apart: srun's "step creation temporarily disabled" notice is no task output
    jobid = sh("lab-ctl", f"sbatch --parsable -N2 -o /tmp/reconf-%j.out -e /tmp/reconf-%j.err "
                          f"--wrap \"{script}\"").strip()
    assert jobid.isdigit(), jobid
    spec = inv / "group_vars" / "all" / "cluster.yml"
    spec.write_text(spec.read_text().replace("nccl_overrides: {}", "nccl_overrides:\n  NCCL_DEBUG: WARN"))
    (inv / "group_vars" / "all" / "day2.yml").write_text("---\nslurm_common_kill_wait: 31\n")
    res = cc("reconfigure", str(inv), "--component", "nccl")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "batch 1" not in res.stdout  # nothing drained
    res = cc("reconfigure", str(inv), "--component", "slurm")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "(drain)" not in res.stdout
    assert "KillWait                = 31 sec" in sh("lab-ctl", "scontrol show config")
    for host in ("lab-c1", "lab-c2"):
        assert "NCCL_DEBUG=WARN" in sh(host, "cat /etc/nccl.conf")
    deadline = time.monotonic() + 180
    state = ""
    while time.monotonic() < deadline:
        state = sh("lab-ctl", f"scontrol show job {jobid} | grep -o 'JobState=[A-Z]*'").strip()
        if state and state != "JobState=RUNNING" and state != "JobState=PENDING":
            break
        time.sleep(3)
    assert state == "JobState=COMPLETED", state
    out = sh("lab-c1", f"cat /tmp/reconf-{jobid}.out")
    assert sorted(out.split()) == sorted(["lab-c1", "NCCL_DEBUG=WARN", "lab-c2", "NCCL_DEBUG=WARN"]), out
    after = {d: _start_time(*d) for d in daemons}
    assert after == before, f"a daemon was restarted: {before} -> {after}"


def _nodes() -> dict[str, tuple[str, str, str]]:
    """sinfo on the controller: node -> (state %T, reason %E, features %f)."""
    out = sh("lab-ctl", "sinfo -h -N -o '%N|%T|%E|%f'")
    rows = [ln.split("|") for ln in out.splitlines() if ln.count("|") == 3]
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def _started_unix(host: str, unit: str) -> int:
    out = sh(host, f"systemctl show -p ExecMainStartTimestamp --timestamp=unix --value {unit}").strip()
    assert out.startswith("@"), out
    return int(out[1:])


def _job_field(jobid: str, field: str) -> str:
    out = sh("lab-ctl", f"scontrol show job {jobid}")
    for word in out.split():
        if word.startswith(field + "="):
            return word.split("=", 1)[1]
    return ""


class _SinfoLog(threading.Thread):
    """sinfo sampled about once a second while a rollout runs."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[dict[str, tuple[str, str, str]]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            nodes = _nodes()
            if nodes:
                self.samples.append(nodes)
            self.done.wait(1.0)


def _held_job(node: str, flag: str) -> str:
    """A job on ``node`` that runs until the test creates ``flag`` there (so no timing guesses)."""
    sh(node, f"rm -f {flag}")
    jobid = sh("lab-ctl", f"sbatch --parsable -N1 -w {node} -o /tmp/held-%j.out "
                          f"--wrap 'while [ ! -e {flag} ]; do sleep 1; done; echo released'").strip()
    assert jobid.isdigit(), jobid
    deadline = time.monotonic() + 60
    while _job_field(jobid, "JobState") != "RUNNING" and time.monotonic() < deadline:
        time.sleep(1)
    assert _job_field(jobid, "JobState") == "RUNNING", sh("lab-ctl", f"scontrol show job {jobid}")
    return jobid


def _wait_job_end(jobid: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    state = _job_field(jobid, "JobState")
    while state in ("RUNNING", "PENDING", "COMPLETING", "") and time.monotonic() < deadline:
        time.sleep(1)
        state = _job_field(jobid, "JobState")
    return state


def test_reconfigure_disruptive_change_drains_one_batch_at_a_time(provisioned: Path, tmp_path: Path) -> None:
    """A change that needs a slurmd restart, rolled out with --batch 1 while a job runs on lab-c1.

    The change is a node Feature: NodeName lines are among slurm_common's restart keys (Slurm 22.05's
    `scontrol reconfigure` does not apply node definitions), so the plan shows "Restart slurmd" on
    both computes and the rollout drains them. Checked from real sinfo/scontrol/systemd output: each
    node was drained and resumed in turn (never both), lab-c1 was draining while its job ran and
    slurmd there restarted only after the job ended, the job completed, slurmd restarted on both
    nodes, and the feature is in effect. Then the original inventory is rolled back out with a job
    that outlives --drain-timeout: batch 1 is resumed unchanged, the rollout stops (exit 3) and
    lab-c2 is untouched; a provision of the slurm tag then restores the normal lab.
    """
    inv = tmp_path / "lab"
    shutil.copytree(provisioned, inv)
    (inv / "group_vars" / "all" / "day2.yml").write_text("---\nslurm_common_node_features: [day2]\n")
    flag = "/tmp/cc-release-drain-test"
    before = {h: _started_unix(h, "slurmd") for h in ("lab-c1", "lab-c2")}
    assert all(f == "(null)" for _, _, f in _nodes().values()), _nodes()
    jobs: list[str] = []
    try:
        jobid = _held_job("lab-c1", flag)
        jobs.append(jobid)
        log = _SinfoLog()
        log.start()
        proc = subprocess.Popen([*CLI, "reconfigure", str(inv), "--component", "slurm", "--batch", "1",
                                 "--drain-timeout", "240"], cwd=REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "200"})
        assert proc.stdout is not None
        lines: list[str] = []
        released = False
        job_end: dict[str, str] = {}
        for line in proc.stdout:
            lines.append(line)
            if not released and f"waiting for job(s) {jobid} to end" in line:
                time.sleep(3)  # let the sinfo log see lab-c1 draining with its job
                sh("lab-c1", f"touch {flag}")
                released = True
                # record the job's end now: slurmctld forgets it MinJobAge (300 s) after it ends
                job_end = {"state": _wait_job_end(jobid), "exit": _job_field(jobid, "ExitCode"),
                           "end": _job_field(jobid, "EndTime")}
        rc = proc.wait(timeout=900)
        log.done.set()
        log.join()
        out = "".join(lines)
        assert rc == 0, out[-6000:]
        assert "in place (no drain): lab-ctl" in out, out[-6000:]
        assert "batch 1/2 (drain): lab-c1" in out and "batch 2/2 (drain): lab-c2" in out, out[-6000:]
        assert released, out[-6000:]

        # drained and resumed in turn: lab-c1's drain window ends before lab-c2's begins, never both
        def drained(s: dict[str, tuple[str, str, str]], n: str) -> bool:
            return "drain" in s.get(n, ("", "", ""))[0]
        c1 = [i for i, s in enumerate(log.samples) if drained(s, "lab-c1")]
        c2 = [i for i, s in enumerate(log.samples) if drained(s, "lab-c2")]
        assert c1 and c2, log.samples
        assert max(c1) < min(c2), log.samples
        assert not any(drained(s, "lab-c1") and drained(s, "lab-c2") for s in log.samples), log.samples
        assert any(s["lab-c1"][0] == "draining" for s in log.samples), log.samples  # job still on it
        assert all(s[n][1].startswith("clusterctl: reconfigure slurm")
                   for s in log.samples for n in ("lab-c1", "lab-c2") if drained(s, n)), log.samples
        final = _nodes()
        # the rollout waited for both to be fit after resume; a ping missed since (idle*, a loaded
        # 2-core CI machine) is Slurm's to clear, not the rollout's
        deadline = time.monotonic() + 60
        while any(st.endswith("*") for st, _, _ in final.values()) and time.monotonic() < deadline:
            time.sleep(2)
            final = _nodes()
        assert {n: s for n, (s, _, _) in final.items()} == {"lab-c1": "idle", "lab-c2": "idle"}, final

        assert job_end["state"] == "COMPLETED" and job_end["exit"] == "0:0", job_end
        assert sh("lab-c1", f"cat /tmp/held-{jobid}.out").strip() == "released"
        after = {h: _started_unix(h, "slurmd") for h in ("lab-c1", "lab-c2")}
        assert after["lab-c1"] != before["lab-c1"] and after["lab-c2"] != before["lab-c2"], (before, after)
        ended = int(sh("lab-ctl", f"date -d {job_end['end']} +%s").strip())
        assert after["lab-c1"] >= ended, (ended, after)  # slurmd restarted only after the job ended
        assert after["lab-c2"] >= after["lab-c1"]
        assert {n: f for n, (_, _, f) in final.items()} == {"lab-c1": "day2", "lab-c2": "day2"}, final
        assert sh("lab-ctl", "srun -N2 -C day2 hostname | sort").split() == ["lab-c1", "lab-c2"]

        # back to the original inventory, with a job on lab-c1 that outlives --drain-timeout
        sh("lab-c1", f"rm -f {flag}")
        jobid = _held_job("lab-c1", flag)
        jobs.append(jobid)
        res = cc("reconfigure", str(provisioned), "--component", "slurm", "--batch", "1", "--drain-timeout", "8")
        both = res.stdout + res.stderr
        assert res.returncode == 3, both[-6000:]
        assert f"job(s) {jobid} still running after 8s" in both, both[-6000:]
        assert "batch resumed unchanged; rollout stopped; untouched: lab-c2" in " ".join(both.split()), both[-6000:]
        assert "batch 2/2 (lab-c2)" not in both, both[-6000:]
        states = {n: s for n, (s, _, _) in _nodes().items()}
        assert "drain" not in states["lab-c1"] and states["lab-c2"] == "idle", states
        assert _job_field(jobid, "JobState") == "RUNNING"
        assert {h: _started_unix(h, "slurmd") for h in ("lab-c1", "lab-c2")} == after  # neither node touched
        for h in ("lab-c1", "lab-c2"):
            assert "Feature=day2" in sh(h, "cat /etc/slurm/clusterctl-restart-keys.conf"), h
        sh("lab-c1", f"touch {flag}")
        assert _wait_job_end(jobid) == "COMPLETED"
    finally:
        sh("lab-c1", f"touch {flag}")
        for j in jobs:
            sh("lab-ctl", f"scancel {j}")
        res = cc("provision", str(provisioned), "--tags", "slurm")
        assert res.returncode == 0, res.stdout[-4000:]
        cc("resume", str(provisioned))
    final = _nodes()
    assert all(f == "(null)" and "drain" not in s for s, _, f in final.values()), final


def test_steps_get_pmix_ranks(provisioned: Path) -> None:
    """MpiDefault=pmix from the lab inventory: slurmd loads mpi_pmix_v4.so (libpmix2 and the
    libpmix.so link slurm_compute makes), so each task of a 2-node step is a PMIx rank."""
    assert "pmix" in sh("lab-ctl", "srun --mpi=list 2>&1")
    out = sh("lab-ctl", "srun -N2 sh -c 'echo $(hostname) $PMIX_RANK' | sort")
    assert out.split() == ["lab-c1", "0", "lab-c2", "1"], out
    # the role's link, or libpmix-dev's own (to the full version) where a test installed Open MPI's headers
    link = sh("lab-c1", "readlink /usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so").strip()
    assert re.fullmatch(r"libpmix\.so\.2(\.[0-9.]+)?", link), link
