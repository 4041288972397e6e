"""The embedded lab end to end: lab up, provision, plan reports zero changes, a container killed
mid-run is reported unreachable while the others finish, and --retry completes it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from labutil import CLI, cc, sh

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
    assert res.stdout.count("running") == 3


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


def test_plan_reports_zero_changes(provisioned: Path) -> None:
    res = cc("plan", str(provisioned))
    assert res.returncode == 0, res.stdout[-4000:]
    assert "plan: no changes" in res.stdout, res.stdout[-4000:]


def test_second_provision_changes_nothing(provisioned: Path) -> None:
    res = cc("provision", str(provisioned))
    assert res.returncode == 0
    table = [ln for ln in res.stdout.splitlines() if ln.startswith("│ lab-")]
    assert len(table) == 3
    for row in table:
        cols = [c.strip() for c in row.strip("│").split("│")]
        assert cols[2] == "0", f"changed on second run: {row}"


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
        rows = {r.split("│")[1].strip(): [c.strip() for c in r.split("│")[2:-1]]
                for r in out.splitlines() if r.startswith("│ lab-")}
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
    rows = [r for r in res.stdout.splitlines() if r.startswith("│ lab-")]
    assert [r.split("│")[1].strip() for r in rows] == ["lab-c2"]
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
    jobid = sh("lab-ctl", f"sbatch --parsable -N2 -o /tmp/reconf-%j.out --wrap \"{script}\"").strip()
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
