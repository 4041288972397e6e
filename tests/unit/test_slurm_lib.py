"""clusterctl.slurm (argv lists, result handling) and rollout.Rollout (the batch flow) on recorded
shapes of ansible-runner results; the lab tests run both against a real Slurm."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from clusterctl.errors import HostsFailed, SlurmError, Unreachable, UsageError
from clusterctl.rollout import Rollout, RolloutPlan
from clusterctl.runner import RunResult
from clusterctl.slurm import Slurm, drain_argv, fail_argv, node_list, parse_sinfo, resume_argv, sinfo_argv, squeue_argv


def test_argv_lists() -> None:
    assert drain_argv(["gpu01", "gpu02"], "clusterctl: reconfigure slurm") == [
        "scontrol", "update", "NodeName=gpu01,gpu02", "State=DRAIN", "Reason=clusterctl: reconfigure slurm"]
    assert resume_argv("gpu[01-04]") == ["scontrol", "update", "NodeName=gpu[01-04]", "State=RESUME"]
    assert fail_argv(["gpu07"], "clusterctl: remediating: reboot (was: x)") == [
        "scontrol", "update", "NodeName=gpu07", "State=FAIL", "Reason=clusterctl: remediating: reboot (was: x)"]
    assert sinfo_argv(["a", "b"]) == ["sinfo", "--noheader", "--Node", "--nodes=a,b", "--format=%N|%T|%E"]
    assert squeue_argv(["a"]) == ["squeue", "--noheader", "--nodelist=a", "--format=%i"]


@pytest.mark.parametrize(("nodes", "reason"), [(["gpu01 State=DOWN"], "r"), (["-x"], "r"), ([], "r"),
                                               (["gpu01"], "two\nlines"), (["gpu01"], "{{ lookup('pipe', 'id') }}"),
                                               (["gpu01"], "  ")])
def test_bad_node_names_and_reasons_are_refused(nodes: list[str], reason: str) -> None:
    with pytest.raises(UsageError):
        drain_argv(nodes, reason)
    with pytest.raises(UsageError):
        fail_argv(nodes, reason)


def test_parse_sinfo_one_line_per_node() -> None:
    text = "lab-c1|drained|clusterctl: reconfigure slurm\nlab-c2|idle|none\nlab-c1|drained|dup partition\n"
    assert parse_sinfo(text) == {"lab-c1": ("drained", "clusterctl: reconfigure slurm"), "lab-c2": ("idle", "none")}


def recorded(res: dict[str, Any]) -> Any:
    calls: list[dict[str, Any]] = []

    def run(inventory: Path, pattern: str, module: str, args: dict[str, Any]) -> dict[str, dict[str, Any]]:
        calls.append({"pattern": pattern, "module": module, **args})
        return {"lab-ctl": res} if res else {}

    run.calls = calls  # type: ignore[attr-defined]
    return run


def test_slurm_run_maps_results_to_errors() -> None:
    ok = recorded({"_event": "runner_on_ok", "rc": 0, "stdout": "101\n102\n"})
    assert Slurm(Path("inv"), run=ok).jobs_on(["lab-c1"]) == ["101", "102"]
    assert ok.calls == [{"pattern": "slurm_controller[0]", "module": "ansible.builtin.command",
                         "argv": squeue_argv(["lab-c1"]), "expand_argument_vars": False}]
    with pytest.raises(Unreachable, match="lab-ctl is unreachable"):
        Slurm(Path("inv"), run=recorded({"_event": "runner_on_unreachable", "msg": "ssh: refused"})).resume(["a"])
    with pytest.raises(SlurmError, match=r"scontrol update failed on lab-ctl \(rc 1\): Invalid node name"):
        Slurm(Path("inv"), run=recorded({"_event": "runner_on_failed", "rc": 1,
                                         "stderr": "Invalid node name specified"})).drain(["a"], "clusterctl: x")
    with pytest.raises(SlurmError, match="no host matched"):
        Slurm(Path("inv"), run=recorded({})).show_nodes()


class FakeSlurm:
    """Records the rollout's calls and keeps each node's (sinfo %T state, reason); jobs end after
    ``job_polls`` polls. It refuses what the real wrapper or scontrol refuses: an empty node list or
    a bad reason (UsageError, from the same argv builders), and ``State=RESUME`` of a node that is
    neither drained nor down (scontrol: "Invalid node state specified", a SlurmError)."""

    def __init__(self, job_polls: int, states: dict[str, tuple[str, str]]) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.job_polls = job_polls
        self.states = dict(states)
        self.reasons: dict[str, str] = {}

    def _info(self, n: str) -> tuple[str, str]:
        return self.states.get(n, ("idle", "none"))

    def drain(self, nodes: Sequence[str], reason: str) -> None:
        drain_argv(nodes, reason)
        self.calls.append(("drain", list(nodes)))
        for n in nodes:
            state = self._info(n)[0]
            self.states[n] = (state if "down" in state else "drained", reason)
            self.reasons[n] = reason

    def resume(self, nodes: Sequence[str]) -> None:
        resume_argv(nodes)
        bad = [n for n in nodes if not any(w in self._info(n)[0] for w in ("drain", "down"))]
        if bad:
            raise SlurmError(f"scontrol update failed on lab-ctl (rc 1): slurm_update error: Invalid node state "
                             f"specified ({', '.join(bad)})")
        self.calls.append(("resume", list(nodes)))
        for n in nodes:
            self.states[n] = ("idle", "none")

    def jobs_on(self, nodes: Sequence[str]) -> list[str]:
        node_list(nodes)
        self.job_polls -= 1
        return ["42"] if self.job_polls >= 0 else []

    def node_info(self, nodes: Sequence[str]) -> dict[str, tuple[str, str]]:
        node_list(nodes)  # the real Slurm wrapper refuses an empty node list (UsageError): so does the fake
        return {n: self._info(n) for n in nodes}

    def node_states(self, nodes: Sequence[str]) -> dict[str, str]:
        return {n: state for n, (state, _) in self.node_info(nodes).items()}


def test_fake_slurm_refuses_what_scontrol_refuses() -> None:
    slurm = FakeSlurm(job_polls=0, states={"c2": ("down", "Not responding")})
    with pytest.raises(SlurmError, match="Invalid node state specified"):
        slurm.resume(["c1"])  # idle: scontrol refuses to resume it
    with pytest.raises(UsageError):
        slurm.node_states([])
    with pytest.raises(UsageError):
        slurm.drain(["c1"], "two\nlines")
    slurm.drain(["c1", "c2"], "clusterctl: x")
    assert slurm.node_info(["c1", "c2"]) == {"c1": ("drained", "clusterctl: x"), "c2": ("down", "clusterctl: x")}
    slurm.resume(["c1", "c2"])
    assert slurm.node_states(["c1", "c2"]) == {"c1": "idle", "c2": "idle"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


def _rollout(slurm: FakeSlurm, applied: list[list[str]], lines: list[str], drain_timeout: float = 60,
             apply_rc: int = 0) -> Rollout:
    clock = Clock()

    def apply(nodes: list[str], index: int) -> RunResult:
        applied.append(nodes)
        r = RunResult(apply_rc, "successful" if not apply_rc else "failed", Path("."))
        if apply_rc:
            r.failed_hosts = {nodes[0]: "Restart slurmd: failed"}
        return r

    return Rollout(slurm, "slurm", apply, lines.append, drain_timeout=drain_timeout, clock=clock, sleep=clock.sleep)


PLAN = RolloutPlan("slurm", ["ctl"], [["c1"], ["c2"]], {})


def test_rollout_drains_waits_applies_resumes_batch_by_batch() -> None:
    slurm, applied, lines = FakeSlurm(job_polls=2, states={"c2": ("drained", "disk swap")}), [], []
    _rollout(slurm, applied, lines).run(PLAN)
    assert slurm.calls == [("drain", ["c1"]), ("resume", ["c1"])]  # c2 is held by an admin: neither
    assert applied == [["c1"], ["c2"]]
    assert "batch 1/2 (c1): waiting for job(s) 42 to end" in lines
    assert any("c2 is already out of service (drained: disk swap)" in ln for ln in lines)


def test_job_outliving_the_drain_timeout_resumes_the_batch_unchanged() -> None:
    slurm, applied, lines = FakeSlurm(job_polls=1000, states={}), [], []
    with pytest.raises(HostsFailed, match=r"job\(s\) 42 still running after 8s .*batch resumed unchanged; "
                                          r"rollout stopped; untouched: c2"):
        _rollout(slurm, applied, lines, drain_timeout=8).run(PLAN)
    assert slurm.calls == [("drain", ["c1"]), ("resume", ["c1"])] and applied == []


def test_failed_apply_stops_with_the_batch_drained() -> None:
    slurm, applied, lines = FakeSlurm(job_polls=0, states={}), [], []
    with pytest.raises(HostsFailed, match=r"apply failed on c1; the batch stays drained .*untouched: c2"):
        _rollout(slurm, applied, lines, apply_rc=2).run(PLAN)
    assert slurm.calls == [("drain", ["c1"])]

