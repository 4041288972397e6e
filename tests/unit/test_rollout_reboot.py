"""Rollout of a change that declares clusterctl_reboots (the gpu component): reboot through Slurm
(scontrol reboot ASAP nextstate=RESUME), wait for a new BootTime, quick verify, resume; a failed
verify drains again and stops; nodes held by someone else are not rebooted. Fakes of test_slurm_lib."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from test_slurm_lib import FakeSlurm, _rollout

from clusterctl.errors import HostsFailed
from clusterctl.rollout import COMPONENTS, Disruption, RolloutPlan


class RebootingSlurm(FakeSlurm):
    """A FakeSlurm whose nodes get a new BootTime two polls after ``reboot`` (nextstate=RESUME: idle)."""

    def __init__(self, states: dict[str, tuple[str, str]], comes_back: bool = True) -> None:
        super().__init__(job_polls=0, states=states)
        self.boots: dict[str, str] = {}
        self.polls_left: dict[str, int] = {}
        self.comes_back = comes_back

    def reboot(self, nodes: Sequence[str], reason: str) -> None:
        self.calls.append(("reboot", list(nodes)))
        self.reason = reason
        for n in nodes:
            self.polls_left[n] = 2

    def boot_times(self, nodes: Sequence[str]) -> dict[str, str]:
        out = {}
        for n in nodes:
            left = self.polls_left.get(n)
            if left is not None and self.comes_back:
                self.polls_left[n] = left - 1
                if left <= 0:
                    self.boots[n] = "2026-12-03T07:10:00"
            out[n] = self.boots.get(n, "2026-12-01T00:00:00")
        return out


def _reboot_plan() -> RolloutPlan:
    kinds = frozenset({"clusterctl_reboots"})
    return RolloutPlan("gpu", [], [["c1"], ["c2"]], {n: [Disruption("Install driver", kinds)] for n in ("c1", "c2")})


def test_gpu_rollout_reboots_through_slurm_verifies_and_resumes() -> None:
    slurm, applied, lines = RebootingSlurm(states={}), [], []
    verified: list[list[str]] = []
    r = _rollout(slurm, applied, lines)
    r.verify = lambda nodes: verified.append(nodes) or {}
    r.run(_reboot_plan())
    # nextstate=RESUME returned the rebooted node (the fake shows it idle): no extra resume
    assert slurm.calls == [("drain", ["c1"]), ("reboot", ["c1"]), ("drain", ["c2"]), ("reboot", ["c2"])]
    assert verified == [["c1"], ["c2"]] and applied == [["c1"], ["c2"]]
    assert slurm.reason == "clusterctl: reconfigure slurm: reboot"
    assert "batch 1/2 (c1): c1 back from the reboot" in lines


def test_failed_verify_after_reboot_drains_again_and_stops() -> None:
    slurm, applied, lines = RebootingSlurm(states={}), [], []
    r = _rollout(slurm, applied, lines)
    r.verify = lambda nodes: {"c1": "nvidia-smi: no devices"}
    with pytest.raises(HostsFailed, match=r"quick verify failed after the reboot: c1: nvidia-smi: no devices; "
                                          r"drained again .*rollout stopped; untouched: c2"):
        r.run(_reboot_plan())
    assert slurm.calls == [("drain", ["c1"]), ("reboot", ["c1"]), ("drain", ["c1"])] and applied == [["c1"]]


def test_node_that_never_comes_back_stops_the_rollout() -> None:
    slurm, applied, lines = RebootingSlurm(states={}, comes_back=False), [], []
    r = _rollout(slurm, applied, lines)
    r.reboot_timeout = 30
    with pytest.raises(HostsFailed, match=r"reboot not completed: c1 not rebooted yet .*untouched: c2"):
        r.run(_reboot_plan())


def test_node_held_by_someone_else_is_changed_but_not_rebooted() -> None:
    slurm, applied, lines = RebootingSlurm(states={"c2": ("drained", "bad dimm")}), [], []
    r = _rollout(slurm, applied, lines)
    r.verify = lambda nodes: {}
    r.run(_reboot_plan())
    assert ("reboot", ["c2"]) not in slurm.calls and ("drain", ["c2"]) not in slurm.calls
    assert ("resume", ["c2"]) not in slurm.calls and applied == [["c1"], ["c2"]]
    assert any("c2 is held by someone else: not rebooted" in ln for ln in lines)


def test_reboot_argv_and_boot_times() -> None:
    from clusterctl.slurm import parse_boot_times, reboot_argv

    assert reboot_argv(["lab-c1"], "clusterctl: reconfigure gpu: reboot") == [
        "scontrol", "reboot", "ASAP", "nextstate=RESUME", "reason=clusterctl: reconfigure gpu: reboot", "lab-c1"]
    text = ("NodeName=lab-c1 Arch=x86_64 CoresPerSocket=1 BootTime=2026-12-03T06:58:01 SlurmdStartTime=x\n"
            "NodeName=lab-c2 Arch=x86_64 BootTime=None SlurmdStartTime=y\n")
    assert parse_boot_times(text) == {"lab-c1": "2026-12-03T06:58:01", "lab-c2": "None"}


def test_gpu_component_selects_the_gpu_play() -> None:
    assert COMPONENTS["gpu"].tags == "gpu" and "reboot" in COMPONENTS["gpu"].why
