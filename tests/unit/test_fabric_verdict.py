"""clusterctl.hpc.fabric_verdict: the verdicts of ``clusterctl verify`` inside a play.

Through the action plugin's run() on fixture evidence (tests/fixtures/ibstat), and through
``ansible-playbook playbooks/verify.yml`` on this machine (local connection) over the simulated
RoCE fabrics of the lab's verify test (tests/fixtures/simfabric): the degraded node fails the
play with the findings ``clusterctl analyze`` gives for the same folder, the healthy one passes,
and the run reports changed=0 (also in check mode).
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import simfabric
import yaml
from conftest import read_fixture
from fabric_modrun import load_module
from labutil import lab_copy_on_roce
from typer.testing import CliRunner

from clusterctl import collection
from clusterctl.analysis.engine import analyze_dir
from clusterctl.analysis.expectations import build
from clusterctl.cli import app
from clusterctl.verify import verdict

REPO = Path(__file__).resolve().parents[2]


def action_module() -> Any:
    spec = importlib.util.spec_from_file_location("fabric_verdict_action", REPO / "plugins/action/fabric_verdict.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_action(args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
    """The action plugin's run(), as a worker calls it (a real Task, PlayContext and local connection)."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.playbook.play_context import PlayContext
    from ansible.playbook.task import Task
    from ansible.plugins.loader import connection_loader
    from ansible.template import Templar

    task = Task.load({"action": "clusterctl.hpc.fabric_verdict", "args": args})
    loader, pc = DataLoader(), PlayContext()
    am = action_module().ActionModule(task=task, connection=connection_loader.get("local", pc, io.StringIO()),
                                      play_context=pc, loader=loader, templar=Templar(loader=loader),
                                      shared_loader_obj=None)
    return dict(am.run(task_vars=task_vars))


@pytest.fixture
def evidence(tmp_path: Path) -> Path:
    ev = tmp_path / "ev"
    for host, fixture in (("node1", "h100-cx7-roce-all-active.txt"), ("node2", "h100-cx7-roce-down-polling.txt")):
        (ev / host).mkdir(parents=True)
        (ev / host / "ibstat.txt").write_text(read_fixture(f"ibstat/{fixture}"))
    return ev


def test_action_judges_as_the_analysis_and_fails_the_failed_node(evidence: Path, tmp_path: Path) -> None:
    want = analyze_dir(evidence, build(None), jobs=1).to_dict()["hosts"]
    assert want["node2"]["status"] == "failed" and want["node1"]["status"] == "healthy"  # the fixtures' ports
    out = tmp_path / "reports"
    args = {"evidence_dir": str(evidence), "report_dir": str(out), "junit": str(out / "verify.xml"),
            "prom": str(out / "clusterctl.prom")}
    results = {h: run_action(args, {"inventory_hostname": h}) for h in ("node1", "node2", "node3")}
    ok, bad, none = results["node1"], results["node2"], results["node3"]
    assert not ok.get("failed") and ok["status"] == "healthy" and ok["changed"] is False
    assert bad["failed"] is True and bad["status"] == "failed" and bad["findings"] == want["node2"]["findings"]
    assert bad["changed"] is False and all(f["subject"] in bad["msg"] for f in want["node2"]["findings"][:3])
    assert none["failed"] is True and none["status"] == "no evidence"  # no folder: as verify, exit 3
    assert bad["ansible_facts"]["clusterctl_verdict"]["findings"] == want["node2"]["findings"]
    stats = ok["ansible_stats"]
    assert stats["per_host"] is False and stats["data"]["clusterctl_verdicts"]["hosts"] == {
        "node1": "healthy", "node2": "failed"}
    assert stats["data"]["clusterctl_verdicts"]["failed"] == ["node2"]
    written = json.loads((out / "verify-report.json").read_text())
    assert written["hosts"] == want and (out / "verify-report.html").read_text().startswith("<!DOCTYPE html>")
    # the exports of clusterctl/report/, as clusterctl verify --junit/--prom write them
    from clusterctl.report import junit

    report = analyze_dir(evidence, build(None), jobs=1)
    def timeless(xml: str) -> str:
        return re.sub(r' time="[0-9.]+"', "", xml)

    assert timeless((out / "verify.xml").read_text()) == timeless(junit.render(report, "clusterctl"))
    assert 'clusterctl_node_status{host="node2",status="failed"} 1' in (out / "clusterctl.prom").read_text()


def test_the_folder_is_judged_once_and_again_when_it_changes(evidence: Path) -> None:
    first = verdict.judged(evidence, build(None))
    cache = json.loads((evidence / verdict.CACHE).read_text())
    assert cache["report"] == first
    # the cached report is what the next host reads (marked here to tell it from a new judgement)
    cache["report"]["hosts"]["node1"]["status"] = "from-cache"
    (evidence / verdict.CACHE).write_text(json.dumps(cache))
    assert verdict.judged(evidence, build(None))["hosts"]["node1"]["status"] == "from-cache"
    # new evidence: judged again
    (evidence / "node2" / "ibstat.txt").write_text(read_fixture("ibstat/h100-cx7-roce-all-active.txt"))
    again = verdict.judged(evidence, build(None))
    assert again["hosts"]["node1"]["status"] == "healthy" and again["hosts"]["node2"]["status"] == "healthy"


def test_action_spec_is_the_documented_one(monkeypatch: pytest.MonkeyPatch) -> None:
    assert action_module().ARGUMENT_SPEC == load_module("fabric_verdict").ARGUMENT_SPEC


def test_bad_arguments_fail_the_task(tmp_path: Path) -> None:
    from ansible.errors import AnsibleActionFail  # the task executor makes it the task's failure

    with pytest.raises(AnsibleActionFail, match=r"^fabric_verdict: evidence_dir .*/none is not a folder"):
        run_action({"evidence_dir": str(tmp_path / "none")}, {"inventory_hostname": "n1"})
    with pytest.raises(AnsibleActionFail, match="bogus"):
        run_action({"evidence_dir": str(tmp_path), "bogus": 1}, {"inventory_hostname": "n1"})
    bad = tmp_path / "inv"
    bad.mkdir()
    (bad / "hosts.yml").write_text("all:\n  children:\n    slurm_compute:\n      hosts:\n        'bad host':\n")
    with pytest.raises(AnsibleActionFail, match=r"inventory .*inv rejected: .*bad host"):
        run_action({"evidence_dir": str(tmp_path), "inventory": str(bad)}, {"inventory_hostname": "n1"})


# --- verify.yml with the verdict task, plain ansible-playbook on this machine -----------------------------------

SIM = {"lab-c1": "lab-roce-healthy.yml", "lab-c2": "lab-roce-degraded.yml"}


def sim_inventory(tmp_path: Path) -> Path:
    """The lab inventory on RoCE; lab-c1/lab-c2 are this machine (local connection), each reading its
    simulated sysfs tree and the fake mlnx_qos (as the lab's verify test sets the containers up)."""
    inv = lab_copy_on_roce(tmp_path / "inv")
    (inv / "group_vars" / "all" / "verify_sim.yml").write_text(yaml.safe_dump({
        "clusterctl_verify_kinds": ["sysfs-ib", "mlnx_qos"]}))
    for host, desc in SIM.items():
        root = tmp_path / "sim" / host
        simfabric.build(simfabric.load(REPO / "tests" / "fixtures" / "simfabric" / desc), root / "sys")
        # the fake tools keep their state beside themselves (as the lab test lays them out)
        shutil.copytree(REPO / "tests" / "fakebin", root / "bin", ignore=shutil.ignore_patterns("__pycache__"))
        (inv / "host_vars").mkdir(exist_ok=True)
        (inv / "host_vars" / f"{host}.yml").write_text(yaml.safe_dump({
            "clusterctl_verify_sysfs_root": str(root / "sys"), "clusterctl_verify_tool_dirs": [str(root / "bin")],
            "ansible_connection": "local", "ansible_python_interpreter": sys.executable}))
    return inv


def playbook(inv: Path, evidence: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), **collection.ansible_env(),
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default", ANSIBLE_SHOW_CUSTOM_STATS="true",
               ANSIBLE_CACHE_PLUGIN="memory")
    exe = Path(sys.executable).parent / "ansible-playbook"
    return subprocess.run([str(exe), "-i", str(inv), str(REPO / "playbooks" / "verify.yml"),
                           "-e", "clusterctl_verify_hosts=lab-c1,lab-c2", "-e", f"clusterctl_evidence_dir={evidence}",
                           *extra], capture_output=True, text=True, timeout=300, env=env, check=False)


def recap(out: str) -> dict[str, dict[str, int]]:
    return {m.group(1): {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))}
            for m in re.finditer(r"^(lab-c\d)\s+:\s+(.*)$", out, re.M)}


def test_verify_playbook_fails_the_degraded_node_with_clusterctls_findings(tmp_path: Path) -> None:
    inv = sim_inventory(tmp_path)
    evidence = tmp_path / "evidence"
    res = playbook(inv, evidence, "-e", f"clusterctl_verify_report_dir={tmp_path / 'reports'}")
    out = res.stdout + res.stderr
    assert res.returncode == 2, out[-4000:]  # ansible-playbook: a host failed
    r = recap(res.stdout)
    assert r["lab-c1"]["failed"] == 0 and r["lab-c2"]["failed"] == 1, r
    assert r["lab-c1"]["changed"] == 0 and r["lab-c2"]["changed"] == 0, r  # read-only: changed=0
    # the same verdicts and findings as clusterctl analyze of the folder with the inventory (verify's judgement)
    cli = CliRunner().invoke(app, ["analyze", str(evidence), "--inventory", str(inv), "--json"])
    hosts = json.loads(cli.stdout)["result"]["hosts"]
    assert hosts["lab-c1"]["status"] == "healthy" and hosts["lab-c2"]["status"] == "failed", hosts
    written = json.loads((tmp_path / "reports" / "verify-report.json").read_text())
    assert written["hosts"] == hosts
    # the descriptions: PFC off on rdma0 (critical), mlx5_1 port 1 at 200 of 400 Gb/s
    found = {(f["check"], f["subject"]): f["severity"] for f in hosts["lab-c2"]["findings"]}
    assert found[("qos_pfc", "lab-c2/rdma0")] == "critical" and ("ib_port_rate", "lab-c2/mlx5_1/1") in found, found
    assert hosts["lab-c1"]["findings"] == []
    failed_task = out.split("fatal: [lab-c2]", 1)[1].split("\n\n")[0]
    for f in hosts["lab-c2"]["findings"][:3]:
        assert f["subject"] in failed_task, failed_task
    assert "clusterctl_verdicts" in out  # set_stats data (ANSIBLE_SHOW_CUSTOM_STATS prints it)


def test_verify_playbook_passes_a_healthy_node_with_changed_0_also_in_check_mode(tmp_path: Path) -> None:
    inv = sim_inventory(tmp_path)
    for args in ((), ("--check",)):
        evidence = tmp_path / f"evidence{len(args)}"
        res = playbook(inv, evidence, "--limit", "lab-c1", *args)
        assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
        r = recap(res.stdout)
        assert r == {"lab-c1": {**r["lab-c1"], "changed": 0, "failed": 0}}, r
        assert (evidence / "lab-c1" / "sysfs-ib.txt").is_file()
    shutil.rmtree(tmp_path / "sim")
