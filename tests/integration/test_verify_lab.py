"""clusterctl verify --drain and clusterctl resume on the real Slurm lab, over simulated RoCE fabrics.

The lab containers have no RDMA hardware. Each compute container gets a simulated sysfs tree
(tests/simfabric.py, kernel layout) and the fake mlnx_qos/dcb backends (tests/fakebin) under
``SIM_ROOT``; a copy of inventories/lab declares a RoCE fabric and points verify.yml's
``clusterctl_verify_sysfs_root`` / ``clusterctl_verify_tool_dirs`` there. Everything else is the
production path: fabric_evidence over SSH, the analysis on the controller, ``scontrol`` on lab-ctl.

lab-c1 is healthy; lab-c2 has mlx5_1 port 1 trained at 2X (200 of 400 Gb/s) and PFC off on rdma0
(tests/fixtures/simfabric/lab-roce-{healthy,degraded}.yml).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import simfabric
import yaml
from ccparse import registry
from labutil import MPI_NODES, MPI_RUNTIME, REPO, apt_install, cc, lab_copy_on_roce, lab_mpi_program, sh

from clusterctl.analysis.engine import analyze_dir
from clusterctl.analysis.expectations import build, load_spec
from clusterctl.runner import state_dir

pytestmark = pytest.mark.lab

SIM_ROOT = "/opt/clusterctl-verify-sim"
SIM_DESC = {"lab-c1": "lab-roce-healthy.yml", "lab-c2": "lab-roce-degraded.yml"}
ADMIN_REASON = "admin maintenance"


def nodes() -> dict[str, tuple[str, str]]:
    """sinfo's view on the controller: node -> (state, reason)."""
    out = sh("lab-ctl", "sinfo -N -h -o '%N|%T|%E'")
    rows = [line.split("|", 2) for line in out.splitlines() if line.count("|") >= 2]
    return {n: (state, reason) for n, state, reason in rows}


def drained(state: str) -> bool:
    return "drain" in state.lower() or "drng" in state.lower()


def scontrol(cmd: str) -> None:
    out = subprocess.run(["podman", "exec", "clusterctl-lab-lab-ctl", "sh", "-c", f"scontrol {cmd}"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


def put_sim(host: str, src: Path) -> None:
    name = f"clusterctl-lab-{host}"
    subprocess.run(["podman", "exec", name, "rm", "-rf", SIM_ROOT], check=True)
    subprocess.run(["podman", "cp", str(src), f"{name}:{SIM_ROOT}"], check=True)


@pytest.fixture(scope="module")
def sim_inventory(provisioned: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("verify-lab")
    inv = lab_copy_on_roce(tmp / "inv")
    (inv / "group_vars" / "all" / "verify_sim.yml").write_text(yaml.safe_dump({
        "clusterctl_verify_sysfs_root": f"{SIM_ROOT}/sys",
        "clusterctl_verify_tool_dirs": [f"{SIM_ROOT}/bin"],
        # the containers' real ibstat/ibstatus read the kernel's /sys (no devices), not the tree
        "clusterctl_verify_kinds": ["sysfs-ib", "mlnx_qos", "nvidia-smi-q", "nvidia-smi-query", "nvidia-smi-topo",
                                    "proc-limits"],
    }))
    for host, desc in SIM_DESC.items():
        root = tmp / host
        simfabric.build(simfabric.load(REPO / "tests" / "fixtures" / "simfabric" / desc), root / "sys")
        shutil.copytree(REPO / "tests" / "fakebin", root / "bin", ignore=shutil.ignore_patterns("__pycache__"))
        put_sim(host, root)
    try:
        yield inv
    finally:
        # leave the lab as found: every node back in service, no simulated trees
        for name, (state, reason) in nodes().items():
            if drained(state) and (reason.startswith("clusterctl:") or reason.startswith(ADMIN_REASON)):
                scontrol(f"update NodeName={name} State=RESUME")
        for host in SIM_DESC:
            subprocess.run(["podman", "exec", f"clusterctl-lab-{host}", "rm", "-rf", SIM_ROOT], check=False)


def latest_report(inv: Path) -> Path:
    reports = sorted((state_dir(inv) / "runs").glob("*/verify-report.json"), key=lambda p: p.stat().st_mtime)
    assert reports, f"no verify-report.json under {state_dir(inv) / 'runs'}"
    return reports[-1]


def test_verify_drain_and_resume(sim_inventory: Path) -> None:
    inv = sim_inventory
    before = nodes()
    assert {"lab-c1", "lab-c2"} <= set(before), before
    assert not any(drained(s) for s, _ in before.values()), f"a lab node is drained before the test: {before}"

    res = cc("verify", str(inv), "--drain")
    out = res.stdout + res.stderr
    assert res.returncode == 3, out
    assert "lab-c2" in res.stdout and "drained lab-c2: clusterctl:" in " ".join(res.stdout.split())

    report_json = latest_report(inv)
    assert report_json.with_name("verify-report.html").is_file()
    report = json.loads(report_json.read_text())
    assert report["hosts"]["lab-c1"] == {"status": "healthy", "findings": []}
    c2 = report["hosts"]["lab-c2"]
    assert c2["status"] == "failed"
    found = {(f["check"], f["subject"]): f for f in c2["findings"]}
    # the description: PFC cleared on rdma0 (priority 3 expected), mlx5_1 port 1 at 2X = 200 Gb/s
    assert found[("qos_pfc", "lab-c2/rdma0")]["severity"] == "critical"
    rate = found[("ib_port_rate", "lab-c2/mlx5_1/1")]
    assert "200" in rate["message"] and "400" in rate["message"]
    assert not [f for f in c2["findings"] if f["subject"].startswith(("lab-c2/mlx5_0", "lab-c2/rdma1"))]

    # the real slurmd's limits were read: 4M as the lab inventory sets (slurm_compute_memlock_limit),
    # so no memlock finding above; judged against the role's default (infinity) it is one
    evidence = sorted((state_dir(inv) / "evidence").iterdir())[-1]
    limits = registry.parse("proc-limits", (evidence / "lab-c1" / "proc-limits#slurmd.txt").read_text())
    assert limits["process"] == "slurmd" and limits["limits"]["max_locked_memory"]["soft"] == 4 * 1024 * 1024
    strict = analyze_dir(evidence, build({**load_spec(inv), "slurm_compute_memlock_limit": "infinity"}))
    memlock = [f for f in strict.hosts["lab-c1"].findings if f.check == "memlock"]
    assert [f.subject for f in memlock] == ["lab-c1/slurmd"] and "4 MiB, expected unlimited" in memlock[0].message

    after = nodes()
    assert drained(after["lab-c2"][0]) and after["lab-c2"][1].startswith("clusterctl:"), after
    assert not drained(after["lab-c1"][0]), after

    # an admin drains lab-c1 by hand: resume must return lab-c2 only
    scontrol(f'update NodeName=lab-c1 State=DRAIN Reason="{ADMIN_REASON}"')
    res = cc("resume", str(inv))
    text = " ".join(res.stdout.split())
    assert res.returncode == 0, res.stdout + res.stderr
    assert "resumed: lab-c2" in text and "left alone lab-c1" in text, text
    now = nodes()
    assert not drained(now["lab-c2"][0]), now
    assert drained(now["lab-c1"][0]) and now["lab-c1"][1].startswith(ADMIN_REASON), now

    # a second resume has nothing of clusterctl's to do and still leaves the admin drain alone
    res = cc("resume", str(inv))
    assert res.returncode == 0 and "nothing to resume" in res.stdout, res.stdout + res.stderr
    assert drained(nodes()["lab-c1"][0])

    scontrol("update NodeName=lab-c1 State=RESUME")
    assert not any(drained(s) for s, _ in nodes().values()), nodes()


def test_node_check_is_slurm_health_check_program(provisioned: Path) -> None:
    conf = sh("lab-ctl", "scontrol show config")
    line = next((x for x in conf.splitlines() if x.startswith("HealthCheckProgram")), "")
    prog = line.partition("=")[2].strip()
    if not prog or prog == "(null)":
        pytest.skip(f"the Slurm roles set no HealthCheckProgram ({line!r})")
    check = "/usr/local/sbin/clusterctl-node-check"  # node_health_program_path default
    for host in ("lab-c1", "lab-c2"):
        assert sh(host, f"test -x {prog} && test -x {check} && echo ok").strip() == "ok", host
        # the program slurmd runs is the node check itself or a wrapper that execs it
        assert prog == check or check in sh(host, f"cat {prog}"), prog
    # the node check passes on a lab node (no RDMA/GPU expected there) and drains nothing
    assert sh("lab-c1", f"{check} >/dev/null 2>&1; echo $?").strip() == "0"
    assert not any(drained(s) for s, _ in nodes().values()), nodes()


def test_verify_full_runs_pairwise_rounds(sim_inventory: Path, tmp_path: Path) -> None:
    """--level full: pair rounds over the lab network blame lab-c2's slow rail; nccl-tests pairs go through srun.

    lab-ctl joins the verified set (--hosts) with a healthy tree, so three nodes make three
    ib_write_bw rounds of one pair each; the fake ib_write_bw (tests/fakebin) talks TCP between
    the containers like perftest and reports 96 % of the slower side's simulated port rate. The
    2-node nccl-tests pair (Slurm nodes only: lab-c1 and lab-c2) is one real MPI job on the real
    Slurm lab: ``srun --mpi=pmix`` (the pair test's default, MpiDefault=pmix in the lab) starts
    tests/labmpi/all_reduce_perf, an MPI_Allreduce between the two nodes over TCP (no GPU here)
    that prints what it measured in nccl-tests' format (the per-node runs keep the fake).
    """
    inv = tmp_path / "inv"
    shutil.copytree(sim_inventory, inv)
    nccl = f"{SIM_ROOT}/bin/all_reduce_perf"
    args = ["-b", "8M", "-e", "1G", "-f", "2", "-g", "1"]
    (inv / "group_vars" / "all" / "verify_full.yml").write_text(yaml.safe_dump({
        "clusterctl_verify_nccl_tests_binary": nccl, "clusterctl_verify_nccl_tests_args": args,
        # the pair: a real MPI program, launched with the default srun options (--mpi=pmix)
        "clusterctl_pairtest_nccl_binary": lab_mpi_program(),
        "clusterctl_pairtest_nccl_args": ["-b", "1M", "-e", "8M", "-f", "2", "-n", "5", "-w", "2"],
    }))
    root = tmp_path / "lab-ctl"
    simfabric.build(simfabric.load(REPO / "tests" / "fixtures" / "simfabric" / SIM_DESC["lab-c1"]), root / "sys")
    shutil.copytree(REPO / "tests" / "fakebin", root / "bin", ignore=shutil.ignore_patterns("__pycache__"))
    put_sim("lab-ctl", root)
    try:
        res = cc("verify", str(inv), "--level", "full", "--hosts", "slurm_controller:slurm_compute")
    finally:
        subprocess.run(["podman", "exec", "clusterctl-lab-lab-ctl", "rm", "-rf", SIM_ROOT], check=False)
    out = " ".join((res.stdout + res.stderr).split())
    assert res.returncode == 3, res.stdout[-4000:] + res.stderr[-2000:]
    assert "pairwise ib_write_bw pass 1: 3 round(s), 3 pair test(s)" in out, out[-3000:]
    report = json.loads(latest_report(inv).read_text())
    pairs = {(p["a"], p["b"], p["subject"]): p["value"] for p in report["pairs"] if p["metric"] == "ib_write_bw_Gbps"}
    # every node met two partners, on both rails; the client's folder holds the result
    met = {frozenset((a, b)) for a, b, _ in pairs}
    assert met == {frozenset(p) for p in (("lab-ctl", "lab-c1"), ("lab-c1", "lab-c2"), ("lab-c2", "lab-ctl"))}
    assert {s for _, _, s in pairs} == {"mlx5_0/1", "mlx5_1/1"}
    for (a, b, subject), value in pairs.items():
        slow = subject == "mlx5_1/1" and "lab-c2" in (a, b)
        # the descriptions: 400 Gb/s ports, lab-c2's mlx5_1 at 200; the fake reports 96 %
        assert value == pytest.approx(0.96 * (200 if slow else 400)), (a, b, subject, value)
    assert report["pair_verdicts"]["bad"] == {"lab-c2": ["lab-c1", "lab-ctl"]}
    c2 = {(f["check"], f["severity"]) for f in report["hosts"]["lab-c2"]["findings"]}
    assert ("pairwise", "critical") in c2
    for host in ("lab-c1", "lab-ctl"):
        assert report["hosts"][host]["status"] == "healthy", report["hosts"][host]
    assert not any(drained(s) for s, _ in nodes().values()), nodes()
    # the nccl-tests pair: one srun job over both Slurm nodes, its report in lab-c2's folder
    assert "pairwise nccl-tests pass 1: 1 round(s), 1 pair test(s): lab-c1<->lab-c2" in out, out[-3000:]
    assert "pairwise nccl-tests: lab-ctl" not in out  # not a Slurm node: never a candidate
    evidence = Path(out.split("evidence: ")[1].split()[0])
    pair = registry.parse("nccl-tests", (evidence / "lab-c2" / "nccl-tests@lab-c1.txt").read_text())
    # one MPI job across the pair: rank 0 on lab-c1 and rank 1 on lab-c2, each named by the rank itself
    assert pair["hosts"] == list(MPI_NODES) and pair["n_ranks"] == 2, pair
    assert [d["host"] for d in pair["devices"]] == list(MPI_NODES), pair["devices"]
    assert pair["wrong_total"] == 0 and pair["busbw_largest_GBps"] > 0, pair
    status = json.loads((evidence / "lab-c2" / "_collect#nccl-tests@lab-c1.json").read_text())["_"]
    assert status["status"] == "ok" and status["launcher"] == "srun --mpi=pmix", status
    metric = [p for p in report["pairs"] if p["metric"] == "nccl_busbw_GBps"]
    assert metric and all(p["value"] > 0 for p in metric), report["pairs"]
    # the lab keeps no accounting: the finished job is still in slurmctld's memory (MinJobAge 300 s)
    name = "JobName=clusterctl-nccl-lab-c1-lab-c2"
    job = [j for j in sh("lab-ctl", "scontrol -o show job").splitlines() if name in j]
    assert len(job) == 1 and "JobState=COMPLETED" in job[0] and " NodeList=lab-c[1-2] " in job[0], job


def test_verify_full_pair_through_salloc_and_mpirun(sim_inventory: Path, tmp_path: Path) -> None:
    """The pair test's other launcher for real: ``clusterctl_pairtest_launcher: mpirun`` (what ``auto``
    takes when Slurm offers no pmix plugin) makes the 2-node run ``salloc -N2 -w lab-c1,lab-c2 ...
    mpirun -np 2 --map-by ppr:1:node``: Debian's Open MPI on lab-ctl starts its daemons on the two
    nodes through Slurm and they start the ranks of the real MPI allreduce (tests/labmpi), one per
    node; no --mpi=pmix anywhere. The verified set is the two Slurm nodes (one ib_write_bw pair)."""
    apt_install("lab-ctl", MPI_RUNTIME)  # mpirun on the submit host (the nodes get it with the program)
    inv = tmp_path / "inv"
    shutil.copytree(sim_inventory, inv)
    (inv / "group_vars" / "all" / "verify_full.yml").write_text(yaml.safe_dump({
        "clusterctl_verify_nccl_tests_binary": f"{SIM_ROOT}/bin/all_reduce_perf",
        "clusterctl_verify_nccl_tests_args": ["-b", "8M", "-e", "1G", "-f", "2", "-g", "1"],
        "clusterctl_pairtest_nccl_binary": lab_mpi_program(),
        "clusterctl_pairtest_nccl_args": ["-b", "1M", "-e", "8M", "-f", "2", "-n", "5", "-w", "2"],
        "clusterctl_pairtest_launcher": "mpirun",
    }))
    name = "JobName=clusterctl-nccl-lab-c1-lab-c2"
    before = {j.split()[0] for j in sh("lab-ctl", "scontrol -o show job").splitlines() if name in j}
    res = cc("verify", str(inv), "--level", "full")
    out = " ".join((res.stdout + res.stderr).split())
    assert res.returncode == 3, res.stdout[-4000:] + res.stderr[-2000:]  # lab-c2's simulated slow rail
    assert "pairwise nccl-tests pass 1: 1 round(s), 1 pair test(s): lab-c1<->lab-c2" in out, out[-3000:]
    evidence = Path(out.split("evidence: ")[1].split()[0])
    status = json.loads((evidence / "lab-c2" / "_collect#nccl-tests@lab-c1.json").read_text())["_"]
    assert status["status"] == "ok" and status["launcher"] == "mpirun (salloc)", status
    pair = registry.parse("nccl-tests", (evidence / "lab-c2" / "nccl-tests@lab-c1.txt").read_text())
    # one MPI job across the pair, each rank naming the host it ran on
    assert pair["hosts"] == list(MPI_NODES) and pair["n_ranks"] == 2, pair
    assert [d["host"] for d in pair["devices"]] == list(MPI_NODES), pair["devices"]
    assert pair["wrong_total"] == 0 and pair["failure"] is None and pair["busbw_largest_GBps"] > 0, pair
    report = json.loads(latest_report(inv).read_text())
    metric = [p for p in report["pairs"] if p["metric"] == "nccl_busbw_GBps"]
    assert metric and all(p["value"] > 0 for p in metric), report["pairs"]
    # the allocation was salloc's: a new job of that name, both nodes, completed (MinJobAge 300 s)
    jobs = [j for j in sh("lab-ctl", "scontrol -o show job").splitlines() if name in j and j.split()[0] not in before]
    assert jobs and all("JobState=COMPLETED" in j and " NodeList=lab-c[1-2] " in j for j in jobs), jobs
    assert all("BatchFlag=0" in j for j in jobs), jobs  # an interactive allocation (salloc), not sbatch
    assert not any(drained(s) for s, _ in nodes().values()), nodes()
