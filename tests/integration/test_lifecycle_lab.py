"""The node lifecycle loop in the lab, for real (issue 25): real slurmctld/slurmd, the node check as
slurmd's HealthCheckProgram, `clusterctl remediate --once` run as the controller's timer runs it.

The fault is a captured Xid 79 (tests/fixtures/kernel-log) written into the kernel log the node check
reads (a file here: `node_health_kernel_log`, the containers have no kernel log of their own), read by
the same parser and judged by the same checks as verify. The reboot is the lab's stand-in of
test_lab_gpu.py: the nvidia_gpu role's RebootProgram in its restart_slurmd mode (slurmd restarted with
-b reports a fresh boot; slurmctld's `scontrol reboot ASAP nextstate=DOWN` handling is real).

One sequence: the pre-flight gate (a Prolog for the partition `gated`) finds an Xid on lab-c2 when a
job is allocated there: lab-c2 is drained, the job requeued by Slurm and run on lab-c1; lab-c2 back in
service. Then an admin drains lab-c2 while a job runs there; an Xid on lab-c1 -> slurmd's own health
check run (at slurmd's start) drains it -> the loop reboots it through Slurm -> the fault is still
there at the first verify (another Xid): it stays out of service -> two passing verifies -> resumed;
a second Xid within the window -> quarantined. lab-c2 is never touched and its job completes.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import jinja2
import pytest
import yaml
from conftest import read_fixture
from labutil import cc, sh

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
SIM_LOG = "/var/log/clusterctl-sim-kern.log"
REBOOT = "/usr/local/sbin/clusterctl-reboot"
FLAG = "/tmp/cc-lifecycle-release"
ADMIN = "admin: planned fan swap"
GATED = "gated"
CHECK = "/usr/local/sbin/clusterctl-node-check"
LOOP = ("--once", "--share", "0.5", "--reverify", "node")


def _xid() -> str:
    """The captured Xid 79 lines (without the provenance line), as the kernel writes them."""
    return read_fixture("kernel-log/xid79-fallen-off-bus-journal.txt").split("\n", 1)[1]


def _node(name: str) -> dict[str, str]:
    line = sh("lab-ctl", f"scontrol --oneliner show node {name}")
    out = {}
    for key in ("State", "BootTime", "SlurmdStartTime"):
        out[key] = line.split(f" {key}=", 1)[1].split()[0] if f" {key}=" in line else ""
    out["Reason"] = line.split(" Reason=", 1)[1].rsplit(" [", 1)[0] if " Reason=" in line else ""
    return out


def _out(name: str) -> bool:
    """Takes no job: DOWN, or a DRAIN or FAIL flag (the loop holds a node it rebooted with FAIL)."""
    return any(w in _node(name)["State"] for w in ("DOWN", "DRAIN", "FAIL"))


def _wait(what: str, cond: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            last = sh("lab-c1", "cat $(ls -d /var/lib/clusterctl/node-check/runs/* | tail -1)/verdict.json; "
                                "cat /var/lib/clusterctl/node-check/kernel-log.cursor; wc -c " + SIM_LOG)
            raise AssertionError(f"timed out waiting for {what}: lab-c1 {_node('lab-c1')}; its last node check: "
                                 f"{last[-1500:]}")
        time.sleep(2)


def _job_field(jobid: str, key: str) -> str:
    words = sh("lab-ctl", f"scontrol show job {jobid}").split()
    return next((w.split("=", 1)[1] for w in words if w.startswith(f"{key}=")), "")


def _job(jobid: str) -> str:
    return _job_field(jobid, "JobState")


def _inject(host: str) -> None:
    sh(host, f"cat >> {SIM_LOG} <<'EOF'\n{_xid()}EOF")


def _loop(inv: Path, *extra: str) -> str:
    res = cc("remediate", str(inv), *LOOP, *extra, timeout=600)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-3000:]
    return " ".join(res.stdout.split())


def test_lifecycle_loop(provisioned: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inv = tmp_path / "lab"
    shutil.copytree(provisioned, inv)
    (inv / "group_vars" / "all" / "lifecycle.yml").write_text(yaml.safe_dump({
        "node_health_kernel_log": SIM_LOG, "node_health_tool_timeout": 10, "node_health_budget": 30,
        "slurm_common_reboot_program": REBOOT,
        "node_health_preflight_partitions": [GATED], "node_health_preflight_budget": 40}))
    cluster = inv / "group_vars" / "all" / "cluster.yml"
    spec = yaml.safe_load(cluster.read_text())
    spec["slurm_partitions"].append({"name": GATED, "max_time": "UNLIMITED"})
    cluster.write_text(yaml.safe_dump(spec))
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(REPO / "roles" / "nvidia_gpu" / "templates"))
    reboot = env.get_template("reboot_program.sh.j2").render(ansible_managed="clusterctl lab test",
                                                             nvidia_gpu_reboot_mode="restart_slurmd")
    jobid = ""
    try:
        for h in ("lab-c1", "lab-c2"):
            sh(h, f": > {SIM_LOG}; cat > {REBOOT} <<'EOF'\n{reboot}EOF\nchmod 0755 {REBOOT}")
        res = cc("provision", str(inv), "--tags", "slurm", timeout=900)
        assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
        assert f"RebootProgram = {REBOOT}" in " ".join(sh("lab-ctl", "scontrol show config").split())
        # the loop's timer is installed on the controller (it skips its runs there: no clusterctl in the lab)
        assert sh("lab-ctl", "systemctl is-enabled clusterctl-remediate.timer").strip() == "enabled"
        for h in ("lab-c1", "lab-c2"):  # the first run of the check sets its kernel log cursor
            assert sh(h, f"{CHECK} --no-drain; echo $?").strip() == "0", h

        # the pre-flight gate: an Xid on lab-c2 that no health check run has seen yet; two one-node jobs in the
        # gated partition, one allocated each node: lab-c2's Prolog runs the node check, which drains lab-c2,
        # the Prolog fails, Slurm requeues that job (eligible: nohold_on_prolog_fail) and it runs on lab-c1
        # both nodes idle and each job a whole node (--exclusive): the two jobs cannot share lab-c1, one is
        # allocated lab-c2 (without it both one-CPU jobs could be packed onto lab-c1 and the gate never ran)
        _wait("lab-c1 and lab-c2 idle", lambda: all(_node(h)["State"] == "IDLE" for h in ("lab-c1", "lab-c2")), 120)
        _inject("lab-c2")
        # each job holds its node a while (sleep 5): a bare 'hostname' could end before the second sbatch, which
        # then found lab-c1 free again and never ran on lab-c2 (both ran on lab-c1, Restarts 0 and 0)
        gated = [sh("lab-ctl", f"sbatch --parsable -p {GATED} -N1 --exclusive -o /tmp/cc-preflight-%j.out "
                               "--wrap 'sleep 5; hostname'").strip()
                 for _ in range(2)]
        assert all(j.isdigit() for j in gated), gated
        _wait("the gated jobs", lambda: all(_job(j) == "COMPLETED" for j in gated), 180)
        for j in gated:
            assert sh("lab-c1", f"cat /tmp/cc-preflight-{j}.out").strip() == "lab-c1", j
        restarts = [_job_field(j, "Restarts") for j in gated]
        assert sorted(restarts) == ["0", "1"], restarts  # one job requeued once by the Prolog's failure
        gate = _node("lab-c2")
        assert "DRAIN" in gate["State"] and gate["Reason"].startswith("clusterctl: node-check: xid "), gate
        # back in service for the loop's part (the node check has read this Xid: its cursor moved on)
        sh("lab-ctl", "scontrol update NodeName=lab-c2 State=RESUME")
        _wait("lab-c2 resumed after the gate", lambda: _node("lab-c2")["State"] == "IDLE", 60)

        # a job on lab-c2, then an admin drains lab-c2 (the job runs on)
        jobid = sh("lab-ctl", "sbatch --parsable -J cc-lifecycle -N1 -w lab-c2 -o /tmp/cc-lifecycle-%j.out "
                              f"--wrap 'while [ ! -e {FLAG} ]; do sleep 1; done; echo released'").strip()
        assert jobid.isdigit(), jobid
        _wait("the job on lab-c2", lambda: _job(jobid) == "RUNNING", 60)
        sh("lab-ctl", f'scontrol update NodeName=lab-c2 State=DRAIN Reason="{ADMIN}"')

        # fault 1: an Xid 79 on lab-c1; slurmd's own health check run (at its start) drains it
        _inject("lab-c1")
        sh("lab-c1", "systemctl restart slurmd")
        _wait("the node check's drain", lambda: _node("lab-c1")["Reason"].startswith("clusterctl: node-check: xid "))
        reason = _node("lab-c1")["Reason"]
        evidence = reason.split("evidence=", 1)[1].split(":", 1)[0]
        # the run's evidence on the node: the captured lines it judged
        assert "NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus." in sh(
            "lab-c1", f"cat {evidence}/kernel-log.txt"), evidence

        out = _loop(inv, "--dry-run")
        # the burn-in gate's first run would adopt both nodes' identities (a record, no action on a node)
        assert "lab-c1: would reboot" in out and "lab-c2: would adopt" in out, out
        assert "lab-c2: would" not in out.replace("lab-c2: would adopt", ""), out
        assert "DRAIN" in _node("lab-c1")["State"] and _node("lab-c1")["Reason"] == reason  # dry run: nothing done

        boot = _node("lab-c1")["BootTime"]
        out = _loop(inv)
        assert "lab-c1: reboot done" in out, out
        _wait("lab-c1's reboot", lambda: _node("lab-c1")["BootTime"] != boot
              and "REBOOT" not in _node("lab-c1")["State"] and "DOWN" in _node("lab-c1")["State"])
        # the fault is still there: another Xid before the loop's verify; lab-c1 stays out of service
        _inject("lab-c1")
        out = _loop(inv)
        assert "lab-c1: verify failed" in out and "Xid 79" in out, out
        assert _out("lab-c1")
        out = _loop(inv)
        assert "lab-c1: verify passed" in out and "resume" not in out, out  # one pass is not enough
        assert _out("lab-c1")
        out = _loop(inv)
        assert "lab-c1: verify passed" in out and "lab-c1: resume done" in out, out
        _wait("lab-c1 in service", lambda: _node("lab-c1")["State"] == "IDLE", 60)
        assert sh("lab-ctl", "srun -N1 -w lab-c1 -t 1 hostname").strip() == "lab-c1"

        # fault 2 within the window: drained again by the node check, then quarantined by the loop
        _inject("lab-c1")
        sh("lab-c1", "systemctl restart slurmd")
        _wait("the second drain", lambda: _node("lab-c1")["Reason"].startswith("clusterctl: node-check: xid "))
        out = _loop(inv)
        assert "lab-c1: quarantine done" in out, out
        assert _node("lab-c1")["Reason"].startswith("clusterctl: quarantined: failed again")
        assert "lab-c1" not in _loop(inv)  # nothing more for it
        res = cc("nodes", str(inv), "--json")
        assert res.returncode == 0, res.stderr[-2000:]
        states = {n["name"]: n for n in json.loads(res.stdout)["result"]["nodes"]}
        assert states["lab-c1"]["state"] == "quarantined" and states["lab-c2"]["state"] == "admin_drained"
        assert [h["event"] for h in states["lab-c1"]["history"]][-3:] == ["reboot", "resumed", "quarantined"]

        # the admin's drain was never touched, and the loop logged nothing about lab-c2
        assert _node("lab-c2")["Reason"] == ADMIN
        log = [json.loads(x) for x in next((tmp_path / "state").glob("*/lifecycle/actions.jsonl")).read_text()
               .splitlines()]
        assert log and all(e["node"] == "lab-c1" or e["kind"] == "adopt" for e in log), log
        assert [e["kind"] for e in log if e["node"] == "lab-c2" and not e["dry_run"]] == ["adopt"], log
        # the job on lab-c2 completes
        sh("lab-c2", f"touch {FLAG}")
        _wait("the job's end", lambda: _job(jobid) == "COMPLETED", 60)
        assert sh("lab-c2", f"cat /tmp/cc-lifecycle-{jobid}.out").strip() == "released"
    finally:
        if jobid:
            sh("lab-ctl", f"scancel {jobid}")
        for h in ("lab-c1", "lab-c2"):
            sh(h, f"rm -f {SIM_LOG} {FLAG} {REBOOT}")
            sh("lab-ctl", f"scontrol update NodeName={h} State=RESUME")
        sh("lab-ctl", f"scancel -p {GATED}")
        # slurm.conf (partitions, RebootProgram), the pre-flight Prolog and the node check's settings as the
        # lab's own inventory has them
        cc("provision", str(provisioned), "--tags", "slurm", timeout=900)


def test_degraded_roce_port_drains_and_returns(provisioned: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A degraded simulated RoCE tree as the fault: lab-c1 carries the lab's two-HCA RoCE tree
    (tests/fixtures/simfabric/lab-roce-healthy.yml laid out by tests/simfabric.py as the kernel does under
    /sys/class/infiniband), its node check pointed at it the production way (node_health_sysfs_root, rendered
    into /etc/clusterctl/node-check.json by the node_health role; one `provision --tags slurm` with the lab's
    reboot stand-in as RebootProgram, one back). mlx5_1 port 1 goes DOWN/Disabled -> slurmd's own health check
    run drains lab-c1 ``clusterctl: node-check: ib_port_state ...`` -> the loop reboots it through Slurm
    (ib_port_state.down: remedy reboot) -> its verify fails while the port is down -> the port back ACTIVE: two
    passing verifies, then resumed."""
    from labutil import NODE_SIM_ROOT, NODE_SIM_VARS, put_node_roce_tree

    node = "lab-c1"
    inv = tmp_path / "roce"
    shutil.copytree(provisioned, inv)
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    compute = hosts["all"]["children"]["slurm_compute"]["hosts"]
    compute[node] = {**(compute[node] or {}), **NODE_SIM_VARS}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    (inv / "group_vars" / "all" / "lifecycle.yml").write_text(yaml.safe_dump({
        "node_health_kernel_log": SIM_LOG, "slurm_common_reboot_program": REBOOT}))
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(REPO / "roles" / "nvidia_gpu" / "templates"))
    reboot = env.get_template("reboot_program.sh.j2").render(ansible_managed="clusterctl lab test",
                                                             nvidia_gpu_reboot_mode="restart_slurmd")
    loop = ("--once", "--share", "0.5", "--reverify", "node", "--no-burn-in")

    def remediate() -> str:
        res = cc("remediate", str(inv), *loop, timeout=600)
        assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-3000:]
        return " ".join(res.stdout.split())

    try:
        _wait(f"{node} in service", lambda: _node(node)["State"] == "IDLE", 120)
        put_node_roce_tree(node, tmp_path)  # before the check reads it: a healthy tree
        for h in ("lab-c1", "lab-c2"):
            sh(h, f": > {SIM_LOG}; cat > {REBOOT} <<'EOF'\n{reboot}EOF\nchmod 0755 {REBOOT}")
        res = cc("provision", str(inv), "--tags", "slurm", timeout=900)
        assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
        conf = json.loads(sh(node, "cat /etc/clusterctl/node-check.json"))
        assert conf["sysfs_root"] == f"{NODE_SIM_ROOT}/sys" and conf["rdma_devices"] == 2, conf
        assert conf["spec"]["ib_rate_gbps"] == 400, conf
        assert sh(node, f"{CHECK} --no-drain; echo $?").strip() == "0"  # the healthy tree: nothing to say

        # the fault: a port down, as the kernel shows it; slurmd's own health check run (at its start) drains
        port = put_node_roce_tree(node, tmp_path, "port_down")
        assert sh(node, f"cat {port}/state {port}/phys_state").split() == ["1:", "DOWN", "3:", "Disabled"]
        sh(node, "systemctl restart slurmd")
        _wait("the node check's drain", lambda: _node(node)["Reason"].startswith(
            f"clusterctl: node-check: ib_port_state {node}/mlx5_1/1 evidence="))
        evidence = _node(node)["Reason"].split("evidence=", 1)[1].split(":", 1)[0]
        seen = json.loads(sh(node, f"cat {evidence}/sysfs-ib.txt"))  # what the check read, in the run folder
        ports = {d["name"]: d["ports"][0]["state"] for d in seen["devices"]}
        assert ports == {"mlx5_0": "ACTIVE", "mlx5_1": "DOWN"}, ports

        boot = _node(node)["BootTime"]
        out = remediate()
        assert f"{node}: reboot done" in out, out
        _wait(f"{node}'s reboot", lambda: _node(node)["BootTime"] != boot
              and "REBOOT" not in _node(node)["State"] and "DOWN" in _node(node)["State"])
        out = remediate()  # the port is still down: it stays out of service
        assert f"{node}: verify failed" in out and "ib_port_state" in out, out
        assert _out(node)

        put_node_roce_tree(node, tmp_path)  # the port back ACTIVE
        out = remediate()
        assert f"{node}: verify passed" in out and "resume" not in out, out  # one pass is not enough
        # slurmd registers again (ReturnToService=2 returns a DOWN node then; the reboot dropped the DRAIN
        # flag): the loop's FAIL keeps the node out until its second verify (CI once lost it right here)
        started = _node(node)["SlurmdStartTime"]
        sh(node, "systemctl restart slurmd")
        _wait(f"{node}'s slurmd registers", lambda: _node(node)["SlurmdStartTime"] != started
              and "*" not in _node(node)["State"], 60)
        time.sleep(5)
        assert _out(node) and "FAIL" in _node(node)["State"], _node(node)
        out = remediate()
        assert f"{node}: verify passed" in out and f"{node}: resume done" in out, out
        _wait(f"{node} in service", lambda: _node(node)["State"] == "IDLE", 60)
        assert sh("lab-ctl", f"srun -N1 -w {node} -t 1 hostname").strip() == node
    finally:
        # slurm.conf (RebootProgram) and the node check's settings as the lab's own inventory has them, then no tree
        cc("provision", str(provisioned), "--tags", "slurm", timeout=900)
        for h in ("lab-c1", "lab-c2"):
            sh(h, f"rm -f {SIM_LOG} {REBOOT}")
        sh(node, f"rm -rf {NODE_SIM_ROOT}")
        if _node(node)["Reason"].startswith("clusterctl:") or "DOWN" in _node(node)["State"]:
            sh("lab-ctl", f"scontrol update NodeName={node} State=RESUME")
