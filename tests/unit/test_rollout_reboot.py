"""Rollout of a change that declares clusterctl_reboots (the gpu component): reboot through Slurm
(scontrol reboot ASAP nextstate=DOWN), wait for a new BootTime, quick verify, resume only the nodes
that pass; a failed verify leaves the node drained with a reason naming the check and stops; nodes
held by someone else are neither rebooted nor resumed. Fakes of test_slurm_lib."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from test_slurm_lib import FakeSlurm, _rollout

from clusterctl.errors import HostsFailed
from clusterctl.rollout import COMPONENTS, Disruption, RolloutPlan
from clusterctl.slurm import reboot_argv


class RebootingSlurm(FakeSlurm):
    """A FakeSlurm whose nodes get a new BootTime two polls after ``reboot``. Meanwhile they show
    ``drained@`` (ASAP: drain, reboot pending) and then, as slurmctld does for nextstate=DOWN,
    ``down`` with the reason suffixed ``: reboot complete`` (``early``: ``idle``, as if Slurm had
    returned them by itself)."""

    def __init__(self, states: dict[str, tuple[str, str]], comes_back: bool = True, early: bool = False) -> None:
        super().__init__(job_polls=0, states=states)
        self.boots: dict[str, str] = {}
        self.polls_left: dict[str, int] = {}
        self.comes_back = comes_back
        self.early = early

    def reboot(self, nodes: Sequence[str], reason: str) -> None:
        reboot_argv(nodes, reason)  # refuses what the real wrapper refuses
        self.calls.append(("reboot", list(nodes)))
        self.reason = reason
        for n in nodes:
            self.polls_left[n] = 2
            self.states[n] = ("drained@", reason)

    def boot_times(self, nodes: Sequence[str]) -> dict[str, str]:
        out = {}
        for n in nodes:
            left = self.polls_left.get(n)
            if left is not None and self.comes_back:
                self.polls_left[n] = left - 1
                if left <= 0 and n not in self.boots:
                    self.boots[n] = "2026-12-03T07:10:00"
                    self.states[n] = ("idle", "none") if self.early else ("down", f"{self.reason} : reboot complete")
            out[n] = self.boots.get(n, "2026-12-01T00:00:00")
        return out


def _reboot_plan(batches: list[list[str]] | None = None) -> RolloutPlan:
    kinds = frozenset({"clusterctl_reboots"})
    return RolloutPlan("gpu", [], batches or [["c1"], ["c2"]],
                       {n: [Disruption("Install driver", kinds)] for n in ("c1", "c2", "c3")})


def test_gpu_rollout_reboots_through_slurm_verifies_and_resumes() -> None:
    slurm, applied, lines = RebootingSlurm(states={}), [], []
    seen: list[dict[str, str]] = []
    r = _rollout(slurm, applied, lines)
    r.verify = lambda nodes: seen.append(slurm.node_states(nodes)) or {}
    r.run(_reboot_plan())
    # nextstate=DOWN: the rebooted node waits, down, until the rollout resumes it after the verify
    assert slurm.calls == [("drain", ["c1"]), ("reboot", ["c1"]), ("drain", ["c1"]), ("resume", ["c1"]),
                           ("drain", ["c2"]), ("reboot", ["c2"]), ("drain", ["c2"]), ("resume", ["c2"])]
    assert seen == [{"c1": "down"}, {"c2": "down"}] and applied == [["c1"], ["c2"]]
    assert slurm.reason == "clusterctl: reconfigure slurm: reboot"
    assert "batch 1/2 (c1): c1 back from the reboot (out of service until verified)" in lines
    assert "batch 1/2 (c1): quick verify passed on c1: resumed" in lines
    assert slurm.node_states(["c1", "c2"]) == {"c1": "idle", "c2": "idle"}


def test_failed_verify_after_reboot_stays_drained_naming_the_check_and_stops() -> None:
    slurm, applied, lines = RebootingSlurm(states={}), [], []
    r = _rollout(slurm, applied, lines)
    r.verify = lambda nodes: {"c1": "gpu-count: 7 GPUs, expected 8"}
    with pytest.raises(HostsFailed, match=r"quick verify failed after the reboot: c1: gpu-count: 7 GPUs, expected 8; "
                                          r"c1 stay drained .*resumed: -; rollout stopped; untouched: c2"):
        r.run(_reboot_plan())
    assert slurm.calls == [("drain", ["c1"]), ("reboot", ["c1"]), ("drain", ["c1"]), ("drain", ["c1"])]
    assert applied == [["c1"]]
    state, reason = slurm.node_info(["c1"])["c1"]
    assert "down" in state or "drain" in state
    assert reason == "clusterctl: reconfigure slurm: verify failed after reboot: gpu-count: 7 GPUs, expected 8"
    assert slurm.node_states(["c2"]) == {"c2": "idle"}  # the next batch was never touched


def test_only_the_passing_nodes_of_a_failed_batch_are_resumed() -> None:
    slurm, applied, lines = RebootingSlurm(states={}), [], []
    r = _rollout(slurm, applied, lines)
    r.verify = lambda nodes: {"c1": "nvidia-smi: no devices found"}
    with pytest.raises(HostsFailed, match=r"c1 stay drained .*resumed: c2; rollout stopped; untouched: c3"):
        r.run(_reboot_plan([["c1", "c2"], ["c3"]]))
    assert slurm.calls[-2:] == [("drain", ["c1"]), ("resume", ["c2"])]
    assert slurm.node_states(["c1", "c2", "c3"]) == {"c1": "down", "c2": "idle", "c3": "idle"}


def test_node_drained_by_someone_else_during_the_verify_keeps_its_state() -> None:
    slurm, applied, lines = RebootingSlurm(states={}), [], []
    r = _rollout(slurm, applied, lines)

    def verify(nodes: list[str]) -> dict[str, str]:
        slurm.states["c1"] = ("drained", "fan replacement, ticket 7")  # an admin, meanwhile
        return {}

    r.verify = verify
    r.run(_reboot_plan())
    assert ("resume", ["c1"]) not in slurm.calls
    assert slurm.node_info(["c1"])["c1"] == ("drained", "fan replacement, ticket 7")
    assert any("c1 passed the quick verify but is out of service for another reason (fan replacement" in ln
               for ln in lines)


class ReturningSlurm(RebootingSlurm):
    """... with ReturnToService=2, as slurm 22.05 does in the lab: the reboot's completion drops the DRAIN flag
    (``down``), and the node's next registration (:meth:`registers`) returns a down node without it to service."""

    def __init__(self, states: dict[str, tuple[str, str]]) -> None:
        super().__init__(states=states)
        self.held: set[str] = set()

    def drain(self, nodes: Sequence[str], reason: str) -> None:
        super().drain(nodes, reason)
        self.held.update(nodes)

    def reboot(self, nodes: Sequence[str], reason: str) -> None:
        super().reboot(nodes, reason)
        self.held.difference_update(nodes)

    def registers(self, n: str) -> None:
        if self.states[n][0] == "down" and n not in self.held:
            self.states[n] = ("idle", "none")


def test_a_rebooted_node_is_held_through_a_registration_during_the_verify() -> None:
    """CI's race, in the rollout: slurmd registers while the quick verify runs; without a DRAIN flag Slurm
    returns the node (ReturnToService=2) and the resume after the verify is refused (node idle)."""
    slurm, applied, lines = ReturningSlurm(states={}), [], []
    r = _rollout(slurm, applied, lines)

    def verify(nodes: list[str]) -> dict[str, str]:
        for n in nodes:
            slurm.registers(n)
        assert all(slurm.node_states([n])[n] == "down" for n in nodes), slurm.states
        return {}

    r.verify = verify
    r.run(_reboot_plan())
    assert slurm.node_states(["c1", "c2"]) == {"c1": "idle", "c2": "idle"}
    assert slurm.calls[-2:] == [("drain", ["c2"]), ("resume", ["c2"])]


def test_node_slurm_returned_early_is_drained_again_before_the_verify() -> None:
    slurm, applied, lines = RebootingSlurm(states={}, early=True), [], []
    seen: list[dict[str, str]] = []
    r = _rollout(slurm, applied, lines)
    r.verify = lambda nodes: seen.append(slurm.node_states(nodes)) or {}
    r.run(_reboot_plan())
    assert seen == [{"c1": "drained"}, {"c2": "drained"}]
    assert "batch 1/2 (c1): c1 came back in service before the verify: drained again" in lines


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
    from clusterctl.slurm import parse_boot_times

    assert reboot_argv(["lab-c1"], "clusterctl: reconfigure gpu: reboot") == [
        "scontrol", "reboot", "ASAP", "nextstate=DOWN", "reason=clusterctl: reconfigure gpu: reboot", "lab-c1"]
    text = ("NodeName=lab-c1 Arch=x86_64 CoresPerSocket=1 BootTime=2026-12-03T06:58:01 SlurmdStartTime=x\n"
            "NodeName=lab-c2 Arch=x86_64 BootTime=None SlurmdStartTime=y\n")
    assert parse_boot_times(text) == {"lab-c1": "2026-12-03T06:58:01", "lab-c2": "None"}


def test_gpu_component_selects_the_gpu_play() -> None:
    assert COMPONENTS["gpu"].tags == "gpu" and "reboot" in COMPONENTS["gpu"].why


@pytest.mark.parametrize(("state", "back", "out"), [
    ("down", True, True), ("drained", True, True), ("idle", True, False), ("down*", False, True),
    ("drained@", False, True), ("reboot^", False, False), ("idle#", False, False), ("unknown", False, False),
    ("missing", False, False), ("draining", True, True), ("mixed", True, False),
])
def test_back_from_reboot_and_out_of_service(state: str, back: bool, out: bool) -> None:
    from clusterctl.rollout import back_from_reboot, out_of_service

    assert (back_from_reboot(state), out_of_service(state)) == (back, out)


def test_driver_and_kernel_installs_of_nvidia_gpu_declare_reboots() -> None:
    """Found by what the task installs (the held driver set, the pinned kernel packages), not by its
    name: each such apt/dnf task of nvidia_gpu declares clusterctl_reboots, so reconfigure reboots."""
    from pathlib import Path

    import yaml
    from test_change_kinds import at

    from clusterctl.rollout import disruptive_hosts

    tasks = Path(__file__).resolve().parents[2] / "roles" / "nvidia_gpu" / "tasks"
    found = []
    for f in sorted(tasks.glob("*.yml")):
        for task in yaml.safe_load(f.read_text()) or []:
            for module in ("ansible.builtin.apt", "ansible.builtin.dnf"):
                name = str((task.get(module) or {}).get("name", ""))
                if "__nvidia_gpu_held" in name or "__nvidia_gpu_kernel_packages" in name:
                    found.append((f.name, task["name"]))
                    got = disruptive_hosts({"n1": [at(f, task["name"])]})
                    assert [d.kinds for d in got["n1"]] == [{"clusterctl_reboots"}], (f, task["name"])
    assert sorted(found) == [
        ("kernel_apt.yml", "Install the pinned kernel image and headers"),
        ("kernel_dnf.yml", "Install the pinned kernel and its headers (kernel, kernel-devel)"),
        ("packages_apt.yml", "Install the driver (and fabric manager) at the pinned version"),
        ("packages_dnf.yml", "Install the driver (and fabric manager) at the pinned version"),
    ]
