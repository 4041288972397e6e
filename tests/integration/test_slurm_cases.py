"""The cases of molecule/slurm (real Slurm 22.05) on the lab's one provisioned cluster: no second Slurm
cluster is built (#18: Slurm built once per run). The fixture ``lab_slurm_cases`` (tests/conftest.py)
brings the provisioned lab to what molecule/slurm's create, prepare, converge and idempotence give:
the bare scale-out node lab-c3 (localhost/clusterctl-bare), the test NCCL environment, Redis on
lab-ctl, the site playbook with accounting (slurmdbd/MariaDB) and the JuiceFS volume, run twice (the
second changes nothing). The cases then run on it in this order, each a side effect and a verify
playbook of molecule/ run by ansible-playbook against the lab (labutil.SLURM_CASES); storage is last
(it stops the metadata engine), and this module runs after every other test (it changes the lab).
`molecule test -s slurm` runs the same playbooks on its own podman cluster, for role developers.

`flock /tmp/clusterctl-podman.lock pytest -m lab tests/integration/test_slurm_cases.py`
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from labutil import REPO, run_slurm_case

pytestmark = [pytest.mark.lab, pytest.mark.molecule]


def test_munge_rotation_and_jobs(lab_slurm_cases: Path) -> None:
    """Day-2 munge key rotation, then sinfo (both nodes idle), srun -N2, a two-node sbatch job with
    the TaskProlog's NCCL environment, the running config and accounting."""
    run_slurm_case("slurm", lab_slurm_cases)


def test_scaleout_adds_a_bare_node_under_a_running_job(lab_slurm_cases: Path) -> None:
    """lab-c3 (bare image: munge and slurmd installed for real) joins slurm_compute; a running job
    survives the restarts 22.05 needs; then three idle nodes answer srun -N3."""
    run_slurm_case("slurm_scaleout", lab_slurm_cases)


def test_elastic_training_job_resumes_from_its_checkpoint(lab_slurm_cases: Path, tmp_path: Path) -> None:
    """Issue 24, 5(b): `clusterctl job --submit` as a normal user runs a tiny gloo training loop
    (tests/lab/elastic_train.py, CPU torch from wheels in a venv on each node) on the two JuiceFS
    clients with --max-restarts 2; one node's worker is killed mid-run, TorchElastic restarts the
    workers, they resume from the last checkpoint on the shared mount and the job completes. Runs
    before the storage case (which stops JuiceFS' metadata engine)."""
    import json

    import labjob
    import yaml
    from labutil import LAB_PENDING, cc, sh

    wheels = labjob.torch_wheels()
    inv = tmp_path / "job"
    shutil.copytree(lab_slurm_cases.parent / "lab", inv)
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    groups = hosts["all"]["children"]
    known = sh("lab-ctl", "sinfo -h -N -o %N").split()
    if all(h in known for h in LAB_PENDING):  # the scale-out case added lab-c3: a node without JuiceFS
        groups["slurm_compute"]["hosts"].update(groups.pop("slurm_pending")["hosts"])
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    case_vars = yaml.safe_load((lab_slurm_cases / "group_vars" / "all" / "slurm_cases.yml").read_text())
    (inv / "group_vars" / "all" / "job.yml").write_text(yaml.safe_dump(
        {"storage_mounts": case_vars["storage_mounts"], "clusterctl_job_user": labjob.USER}, sort_keys=False))
    clients = sorted(groups["storage_clients"]["hosts"])
    labjob.add_user(["lab-ctl", *clients])
    labjob.install_torch(clients, wheels)

    steps = 40
    res = cc("job", str(inv), str(labjob.TRAIN), "--nodes", "2", "--gpus-per-node", "1", "--max-restarts", "2",
             "--torchrun", f"{labjob.VENV}/bin/torchrun", "--name", f"elastic-{os.getpid()}", "--submit", "--json",
             "--", "--steps", str(steps), "--step-seconds", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    job = json.loads(res.stdout)["result"]  # the --json envelope
    log = job["log"]
    assert log.startswith(case_vars["storage_mounts"][0]["mountpoint"] + f"/jobs/{labjob.USER}/")

    def read_log() -> str:
        return sh(clients[0], f"cat {log} 2>/dev/null")

    def victim() -> str:
        m = [x for x in labjob.START.findall(read_log()) if x[0] == "1" and x[4] == "-1"]
        return f"{m[0][3]} {m[0][2]}" if m and "\nstep 5 rank 1 restart 0 " in read_log() else ""

    host, pid = labjob.wait_for("rank 1 at step 5", victim, 300).split()
    killed = [h for h in ([host] if host in clients else clients)  # the worker's own node (pids are per node)
              if sh(h, f"grep -q elastic_train /proc/{pid}/cmdline && kill -9 {pid} && echo killed").strip()]
    assert len(killed) == 1, f"rank 1's worker {pid} on {host}: killed on {killed}"
    state = labjob.wait_for("the job to end", lambda: (st := labjob.job_state(job["job_id"])) not in
                            ("", "PENDING", "RUNNING", "COMPLETING") and st, 400)
    text = read_log()
    assert state == "COMPLETED", f"job {job['job_id']} {state}:\n{text[-5000:]}"
    got = labjob.check_log(text, steps)
    assert got["killed_pid"] == int(pid), text[-5000:]
    # every task had the nodes' NCCL environment through the TaskProlog (the cases' /etc/nccl.conf)
    mark = yaml.safe_load((REPO / "molecule" / "slurm" / "molecule.yml").read_text())[
        "provisioner"]["inventory"]["group_vars"]["all"]["cc_slurm_nccl_conf"]["NCCL_CC_LAB_MARK"]
    assert text.count(f"NCCL_CC_LAB_MARK={mark}") >= 2, text[:3000]
    ckpt = sh(clients[1], f"ls {job['checkpoint_dir']}").split()
    assert ckpt == ["ckpt.pt"], ckpt


def test_storage_juicefs(lab_slurm_cases: Path) -> None:
    """Both computes mount one JuiceFS volume, a job's file written on one is read on the other, the
    password is nowhere but the credentials file; then, Redis stopped, the role fails fast naming the server."""
    run_slurm_case("storage", lab_slurm_cases)
