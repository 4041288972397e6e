"""The verify library (clusterctl.verify: collect -> analyse -> act) called directly, without the CLI.

The capture is real: ``playbooks/verify.yml`` through ansible-runner with the local connection, so
fabric_evidence runs on this machine, reading the lab's simulated RoCE trees (tests/simfabric.py,
tests/fixtures/simfabric/lab-roce-{healthy,degraded}.yml) and the fake mlnx_qos (tests/fakebin), one
tree per inventory host, as tests/integration/test_verify_lab.py does in the podman lab. lab-c1 is
healthy; lab-c2 has mlx5_1 port 1 trained at 2X (200 of 400 Gb/s) and PFC off on rdma0 (the
descriptions' comments). Slurm is the recording fake of test_slurm_lib (no controller here).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import simfabric
import yaml
from conftest import read_fixture
from labutil import lab_copy_on_roce
from test_slurm_lib import FakeSlurm

from clusterctl import verify
from clusterctl.analysis.engine import analyze_dir
from clusterctl.errors import (
    EXIT_CANNOT_JUDGE,
    EXIT_FAILED,
    EXIT_HOSTS_FAILED,
    EXIT_OK,
    EXIT_UNREACHABLE,
    NoEvidence,
    UsageError,
)
from clusterctl.inventory import InventoryError
from clusterctl.pairwise import Round
from clusterctl.runner import HostStats, RunResult

REPO = Path(__file__).resolve().parents[2]
SIM = REPO / "tests" / "fixtures" / "simfabric"
TREES = {"lab-c1": "lab-roce-healthy.yml", "lab-c2": "lab-roce-degraded.yml"}
needs_ansible = pytest.mark.skipif(shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) is None,
                                   reason="ansible-playbook is not installed next to this python")


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.fixture
def sim_inventory(tmp_path: Path, state: Path) -> Path:
    """The lab inventory on a RoCE spec, every host on the local connection, each compute host
    reading its own simulated tree."""
    inv = lab_copy_on_roce(tmp_path / "inv")
    (inv / "group_vars" / "all" / "local.yml").write_text(yaml.safe_dump({
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "clusterctl_verify_kinds": ["sysfs-ib", "mlnx_qos"]}))
    (inv / "host_vars").mkdir()
    for host, desc in TREES.items():
        root = tmp_path / "nodes" / host
        simfabric.build(simfabric.load(SIM / desc), root / "sys")
        shutil.copytree(REPO / "tests" / "fakebin", root / "bin", ignore=shutil.ignore_patterns("__pycache__"))
        (inv / "host_vars" / f"{host}.yml").write_text(yaml.safe_dump({
            "clusterctl_verify_sysfs_root": str(root / "sys"), "clusterctl_verify_tool_dirs": [str(root / "bin")]}))
    return inv


@needs_ansible
def test_collect_analyse_drain_on_simulated_fabrics(sim_inventory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIMFABRIC_QOS_STATE", raising=False)  # each fake mlnx_qos reads its own tree's state
    p = verify.plan(sim_inventory)
    assert (p.level, p.hosts) == ("quick", "slurm_compute") and not p.evidence.exists()  # nothing ran yet
    col = verify.collect(p)
    assert col.run.rc == 0 and col.collected and col.unreachable == [], col.run.failed_hosts
    assert col.verified == ["lab-c1", "lab-c2"]  # slurm_compute only: lab-ctl was not verified
    names = sorted(f.name for f in (col.evidence / "lab-c2").iterdir())
    # the sysfs dump and one mlnx_qos capture per RoCE netdev (rdma0, rdma1) of the tree
    assert "sysfs-ib.txt" in names and len([n for n in names if n.startswith("mlnx_qos")]) == 2, names

    v = verify.analyse(col)
    assert v.pairwise is None and v.report.failed == ["lab-c2"] and v.exit_code == EXIT_HOSTS_FAILED
    assert v.report.hosts["lab-c1"].status == "healthy" and v.report.hosts["lab-c1"].findings == []
    found = {(f.check, f.subject): f for f in v.report.hosts["lab-c2"].findings}
    assert found[("qos_pfc", "lab-c2/rdma0")].severity == "critical"
    rate = found[("ib_port_rate", "lab-c2/mlx5_1/1")]
    assert "200" in rate.message and "400" in rate.message
    assert json.loads(v.report_json.read_text())["hosts"]["lab-c2"]["status"] == "failed"
    assert v.report_html.read_text().startswith("<!DOCTYPE html>")

    slurm = FakeSlurm(0, {})
    drained = verify.drain(v, slurm)
    assert [d["name"] for d in drained] == ["lab-c2"] and v.drained == drained
    assert drained[0]["reason"].startswith("clusterctl: ") and slurm.calls == [("drain", ["lab-c2"])]


@needs_ansible
def test_quick_verify_names_why_each_failed_node_failed(sim_inventory: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIMFABRIC_QOS_STATE", raising=False)
    inv = verify.plan(sim_inventory).inv
    out = verify.quick_verify(sim_inventory, inv, ["lab-c2"])
    # the reason names the critical findings: PFC cleared on rdma0 (priority 3 expected)
    assert list(out) == ["lab-c2"] and out["lab-c2"].startswith("qos_pfc: PFC off on priority 3"), out


def test_bad_level_and_bad_inventory_are_refused_before_anything_runs(state: Path) -> None:
    with pytest.raises(UsageError, match=r"verify: --level 'thorough' must be quick or full") as exc:
        verify.plan(REPO / "inventories" / "lab", level="thorough")
    assert exc.value.exit_code == 2 and not state.exists()
    with pytest.raises(InventoryError):
        verify.plan(REPO / "tests" / "bad_inventories" / "fabric-unknown")
    assert not (state.exists() and any(state.rglob("evidence")))


def _collection(tmp_path: Path, level: str = "quick", hosts: dict[str, HostStats] | None = None,
                not_reached: dict[str, str] | None = None) -> verify.Collection:
    """A capture as collect() returns it, over the lab inventory (its evidence folder left to the test)."""
    p = verify.plan(REPO / "inventories" / "lab", level=level)
    run = RunResult(0, "successful", tmp_path / "artifacts", hosts=hosts or {}, not_reached=not_reached or {})
    return verify.Collection(p, run)


def healthy(host_dir: Path) -> None:
    """A host folder with one capture of healthy ports (every port ACTIVE in the fixture)."""
    host_dir.mkdir(parents=True)
    (host_dir / "ibstat.txt").write_text(read_fixture("ibstat/h100-cx7-roce-all-active.txt"))


def test_no_evidence_at_all_is_the_typed_error_exit_1(tmp_path: Path, state: Path) -> None:
    col = _collection(tmp_path, not_reached={"lab-c1": "never reached", "lab-c2": "never reached"})
    col.evidence.mkdir(parents=True)
    assert not col.collected and col.unreachable == ["lab-c1", "lab-c2"]
    v = verify.analyse(col)  # issue 28: nodes not reached are a report of unreachable nodes, exit 4
    assert v.report.unreachable == ["lab-c1", "lab-c2"] and v.exit_code == EXIT_UNREACHABLE
    col.run.not_reached = {}  # nothing collected and nobody unreachable: every host failed
    shutil.rmtree(tmp_path / "artifacts")
    with pytest.raises(NoEvidence, match="no evidence was collected") as exc:
        verify.analyse(col)
    assert exc.value.exit_code == EXIT_FAILED
    assert not (tmp_path / "artifacts" / "verify-report.json").exists()


def test_a_host_not_reached_fails_the_verification_though_none_failed(tmp_path: Path, state: Path) -> None:
    col = _collection(tmp_path, hosts={"lab-c1": HostStats(ok=5)}, not_reached={"lab-c2": "never reached"})
    healthy(col.evidence / "lab-c1")
    v = verify.analyse(col)
    assert v.report.failed == [] and v.unreachable == ["lab-c2"] and v.exit_code == EXIT_UNREACHABLE
    (col.evidence / "lab-c2").mkdir()
    col.run.not_reached = {}
    v = verify.analyse(col)
    assert v.report.no_evidence == ["lab-c2"] and v.exit_code == EXIT_HOSTS_FAILED  # an empty folder
    shutil.rmtree(col.evidence / "lab-c2")  # a target with no folder and no result is named too
    v = verify.analyse(col)
    assert v.report.no_evidence == ["lab-c2"] and v.exit_code == EXIT_HOSTS_FAILED
    healthy(col.evidence / "lab-c2")
    assert verify.analyse(col).exit_code == EXIT_OK


def test_a_host_that_cannot_be_judged_is_exit_5_unless_a_host_failed(tmp_path: Path, state: Path) -> None:
    """verify exits as analyze does: 3 (a host failed or had no evidence) > 4 (not reached) > 5 (a host
    cannot be judged) > 0. The ib_write_bw capture states no line rate and the lab spec gives none; its one result
    is of 4 KiB messages (ib_write_bw -s 4096), which no line rate can be read from."""
    col = _collection(tmp_path, hosts={"lab-c1": HostStats(ok=5), "lab-c2": HostStats(ok=5)})
    healthy(col.evidence / "lab-c1")
    (col.evidence / "lab-c2").mkdir()
    capture = read_fixture("ib_write_bw/ndr-duration-gbits.txt").replace(" 1048576    ", " 4096       ")
    (col.evidence / "lab-c2" / "ib_write_bw.txt").write_text(capture)
    v = verify.analyse(col)
    assert v.report.failed == [] and v.report.cannot_judge == ["lab-c2"]
    assert v.exit_code == EXIT_CANNOT_JUDGE
    col.run.not_reached = {"lab-c3": "never reached"}
    assert verify.analyse(col).exit_code == EXIT_UNREACHABLE  # 4 before 5
    col.run.not_reached = {}
    (col.evidence / "lab-c1" / "ibstat.txt").write_text(
        read_fixture("ibstat/h100-cx7-roce-all-active.txt").replace("State: Active", "State: Down"))
    v = verify.analyse(col)
    assert v.report.failed == ["lab-c1"] and v.exit_code == EXIT_HOSTS_FAILED


def test_full_level_runs_the_pair_rounds_over_the_verified_slurm_nodes(tmp_path: Path, state: Path) -> None:
    """The round runner is injected: which pairs are asked for, and that the pairwise run's final
    report is the verification's. No node wrote a per-node ib_write_bw result: both are left out."""
    col = _collection(tmp_path, level="full")
    for host in ("lab-c1", "lab-c2"):
        (col.evidence / host).mkdir(parents=True)
        (col.evidence / host / "_collect.json").write_text(json.dumps({
            "ib_write_bw": {"status": "ok"}, "nccl-tests": {"status": "tool_missing", "stderr": "no binary"}}))
    asked: list[tuple[str, Round]] = []

    def run_round(rnd: Round, label: str) -> int:
        asked.append((label, rnd))
        return 0

    v = verify.analyse(col, run_round=run_round)
    assert v.pairwise is not None and v.report is v.pairwise.report
    assert asked == [("pairtest-p1r1", {"ib_write_bw": [("lab-c1", "lab-c2")]})]
    assert v.pairwise.excluded["nccl-tests"] == {"lab-c1": "nccl-tests tool_missing: no binary",
                                                 "lab-c2": "nccl-tests tool_missing: no binary"}
    assert v.report.hosts.keys() == analyze_dir(col.evidence).hosts.keys()


def test_drain_asks_nothing_of_slurm_when_no_node_failed(tmp_path: Path, state: Path) -> None:
    col = _collection(tmp_path, hosts={"lab-c1": HostStats(ok=1)})
    healthy(col.evidence / "lab-c1")
    slurm = FakeSlurm(0, {})
    assert verify.drain(verify.analyse(col), slurm) == [] and slurm.calls == []


def test_judge_folder_refuses_what_is_not_an_evidence_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"analyze: .* is not a folder"):
        verify.judge_folder(tmp_path / "none")
    ev = tmp_path / "ev"
    ev.mkdir()
    (tmp_path / "outside").mkdir()
    (ev / "n1").symlink_to(tmp_path / "outside")
    with pytest.raises(UsageError, match=r"no <host>/ folders in .*\n  refused .*/n1/: symlink to ") as exc:
        verify.judge_folder(ev)
    assert exc.value.exit_code == 2
    with pytest.raises(InventoryError):
        verify.judge_folder(ev, REPO / "tests" / "bad_inventories" / "fabric-unknown")
