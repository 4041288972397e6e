"""Day-2 rollout logic: which component's change disturbs running work, and in what batches.

The split and batch arithmetic are pure functions; :class:`Rollout` runs the batches with a Slurm
client (:class:`clusterctl.slurm.Slurm`) and an ``apply`` callable the command gives it.

A change is *disruptive* on a host when the plan (check mode + diff) of that component shows a
changed task or handler that declares a change kind (a ``clusterctl_*`` tag, see
:mod:`clusterctl.change_kinds`); names are never matched. Those hosts are drained in batches,
waited on, changed, verified and resumed. Hosts whose changes declare no kind (nccl.conf,
slurm.conf options `scontrol reconfigure` takes) are changed in place, all at once, without
draining.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from clusterctl.change_kinds import kinds_at
from clusterctl.errors import (
    EXIT_HOSTS_FAILED,
    EXIT_UNREACHABLE,
    AnsibleFailed,
    ClusterctlError,
    HostsFailed,
    SlurmError,
    Unreachable,
    UsageError,
)
from clusterctl.runner import Change, RunResult


@dataclass(frozen=True)
class Component:
    name: str
    tags: str  # the site.yml tag that selects the component's roles
    why: str


COMPONENTS: dict[str, Component] = {
    c.name: c
    for c in (
        Component("nccl", "nccl", "NCCL settings are read when a job starts: never drains"),
        Component("slurm", "slurm",
                  "slurm.conf options are applied by `scontrol reconfigure`; a slurmd restart drains"),
        Component("roce", "roce", "QoS and MTU changes flap traffic on the port: drains"),
        Component("storage", "storage", "a remount breaks open files: drains"),
        Component("rdma", "rdma", "driver or package changes need the RDMA stack idle: drains"),
        Component("gpu", "gpu", "a new NVIDIA driver (or kernel) is active only after a reboot: drains, reboots "
                                "through Slurm, verifies, resumes"),
    )
}


@dataclass(frozen=True)
class Disruption:
    """A planned change that disturbs running work, with the kinds its task or handler declares."""

    task: str
    kinds: frozenset[str]

    def __str__(self) -> str:
        return f"{self.task} ({', '.join(sorted(self.kinds))})"


class BatchSpecError(UsageError, ValueError):
    pass


def batch_size(spec: str | None, total: int) -> int:
    """``N`` hosts or ``P%`` of ``total`` (rounded up, at least 1). Default: 1 host."""
    if total <= 0:
        return 0
    if spec is None or spec == "":
        return 1
    m = re.fullmatch(r"(\d+)(%?)", spec.strip())
    if not m or int(m.group(1)) == 0 or (m.group(2) and int(m.group(1)) > 100):
        raise BatchSpecError(f"--batch {spec!r}: expected a number of hosts (e.g. 4) or a percentage 1-100% (e.g. 25%)")
    n = int(m.group(1))
    if m.group(2):
        return max(1, math.ceil(total * n / 100))
    return min(n, total)


def batches(hosts: list[str], spec: str | None) -> list[list[str]]:
    size = batch_size(spec, len(hosts))
    return [hosts[i : i + size] for i in range(0, len(hosts), size)] if size else []


def disruptive_hosts(changes: dict[str, list[Change]]) -> dict[str, list[Disruption]]:
    """Host -> the planned changes on it whose task or handler declares a change kind."""
    out: dict[str, list[Disruption]] = {}
    for host, tasks in changes.items():
        hits = [Disruption(c.task, k) for c in tasks if (k := kinds_at(c.path))]
        if hits:
            out[host] = hits
    return out


# sinfo %T words of a node that is not fit to take work (a trailing '*': not responding).
_UNFIT = ("down", "fail", "not_responding", "unknown", "future", "power_down", "powered_down")


def unfit_nodes(nodes: list[str], states: dict[str, str]) -> dict[str, str]:
    """Nodes (of ``nodes``) whose sinfo ``%T`` state is not fit after a change, with that state.

    A node sinfo did not list is reported as ``missing``; ``down*``, ``idle*`` (not responding),
    ``fail``, ``unknown`` ... are unfit; ``drained`` / ``draining`` (the batch is drained on purpose)
    and ``idle``/``mixed``/``allocated`` are fit.
    """
    out: dict[str, str] = {}
    for n in nodes:
        s = states.get(n)
        if s is None:
            out[n] = "missing"
        elif s.endswith("*") or any(w in s.lower() for w in _UNFIT):
            out[n] = s
    return out


#: seconds a batch's nodes get to become (and stay) fit after a change, and again after resume
SETTLE_TIMEOUT = 90.0
#: seconds a rebooted batch gets to come back (a new BootTime, fit in two checks in a row)
REBOOT_TIMEOUT = 900.0
REBOOTS = "clusterctl_reboots"


def reboot_hosts(disruptive: dict[str, list[Disruption]], nodes: list[str]) -> list[str]:
    """Nodes (of ``nodes``) whose planned change declares the ``clusterctl_reboots`` kind."""
    return [n for n in nodes if any(REBOOTS in d.kinds for d in disruptive.get(n, []))]


#: sinfo %T suffixes of a node that is not back: not responding, reboot requested, reboot issued,
#: powering up, powered down, powering down, pending power down
_NOT_BACK_SUFFIXES = ("*", "@", "^", "#", "~", "%", "!")
_NOT_BACK_WORDS = ("reboot", "unknown", "future", "power", "fail")
#: sinfo %T words of a node that takes no new job (DRAIN flag or DOWN)
_OUT_OF_SERVICE = ("drain", "down")


def back_from_reboot(state: str) -> bool:
    """Whether a sinfo ``%T`` state says the node registered after its reboot: responding, no reboot
    pending or issued, not powering. With ``nextstate=DOWN`` that state is ``down`` (or ``drained``
    while our DRAIN flag stays): the node is back but takes no job until we resume it."""
    s = state.lower()
    return state != "missing" and not s.endswith(_NOT_BACK_SUFFIXES) and not any(w in s for w in _NOT_BACK_WORDS)


def out_of_service(state: str) -> bool:
    """Whether a sinfo ``%T`` state keeps new jobs off the node (``down``, ``drained``, ``draining``...)."""
    return any(w in state.lower() for w in _OUT_OF_SERVICE)


def wait_rebooted(nodes: list[str], before: dict[str, str], boot_times: Callable[[], dict[str, str]],
                  states: Callable[[], dict[str, str]], timeout: float = REBOOT_TIMEOUT, interval: float = 3.0,
                  clock: Callable[[], float] = time.monotonic,
                  sleep: Callable[[float], None] = time.sleep) -> dict[str, str]:
    """Wait until every node reports a BootTime other than ``before`` and a state that says it is back
    (:func:`back_from_reboot`; ``down`` is back: ``nextstate=DOWN``), in two checks in a row; {} then,
    else node -> what it still shows at ``timeout``."""
    deadline = clock() + timeout
    in_row = 0
    while True:
        boots, st = boot_times(), states()
        bad: dict[str, str] = {}
        for n in nodes:
            s = st.get(n, "missing")
            if boots.get(n) in (None, before.get(n)):
                bad[n] = f"not rebooted yet (BootTime {boots.get(n)}, {s})"
            elif not back_from_reboot(s):
                bad[n] = s
        in_row = 0 if bad else in_row + 1
        if in_row >= 2 or (bad and clock() >= deadline):
            return bad
        sleep(interval)


def reason_text(text: str, limit: int = 200) -> str:
    """``text`` as one line a Slurm reason (and Ansible's ad-hoc templating) takes: no quotes, no braces."""
    return re.sub(r"\s+", " ", re.sub(r"[\"'{}%#]", "", text)).strip()[:limit] or "failed"


def wait_fit(nodes: list[str], states: Callable[[], dict[str, str]], timeout: float = SETTLE_TIMEOUT,
             interval: float = 3.0, stable: int = 2, clock: Callable[[], float] = time.monotonic,
             sleep: Callable[[float], None] = time.sleep) -> dict[str, str]:
    """Poll ``states()`` (sinfo ``%T`` by node) until ``nodes`` are fit in ``stable`` checks in a row,
    ``interval`` s apart; {} then, else the unfit nodes of the last check when ``timeout`` passes.

    One snapshot is not enough: right after a slurmd restart a node can register (``idle``) and then
    miss slurmctld's next ping (``idle*``) on a loaded controller.
    """
    deadline = clock() + timeout
    in_row = 0
    while True:
        bad = unfit_nodes(nodes, states())
        in_row = 0 if bad else in_row + 1
        if in_row >= stable or (bad and clock() >= deadline):
            return bad
        sleep(interval)


def held_by_others(info: dict[str, tuple[str, str]], own_reason_prefix: str) -> dict[str, str]:
    """Nodes already out of service (drained, draining, down, fail) for a reason that is not ours.

    ``info`` maps node -> (sinfo ``%T`` state, ``%E`` reason). A rollout must neither overwrite
    those reasons nor resume those nodes: an admin (or ``clusterctl verify --drain``) took them out.
    Nodes drained by an earlier rollout (reason starting ``own_reason_prefix``) are not held.
    """
    out: dict[str, str] = {}
    for node, (state, reason) in info.items():
        s = state.lower()
        if any(w in s for w in ("drain", "down", "fail")) and not reason.startswith(own_reason_prefix):
            out[node] = f"{state}: {reason}" if reason and reason != "none" else state
    return out


REASON_PREFIX = "clusterctl:"


@dataclass
class RolloutPlan:
    """What a reconfigure does: hosts changed in place, then drained batches of compute nodes."""

    component: str
    in_place: list[str]
    batches: list[list[str]]
    disruptive: dict[str, list[Disruption]]

    def to_dict(self) -> dict[str, object]:
        return {"component": self.component, "in_place": self.in_place, "batches": self.batches,
                "disruptive": {h: [{"task": d.task, "kinds": sorted(d.kinds)} for d in ds]
                               for h, ds in self.disruptive.items()}}


def plan_rollout(component: str, changes: dict[str, list[Change]], compute: list[str],
                 batch: str | None) -> RolloutPlan:
    """Split a plan's changed hosts: compute nodes with a disruptive change go in drained batches
    (inventory order), every other changed host is changed in place."""
    disruptive = {h: d for h, d in disruptive_hosts(changes).items() if h in compute}
    in_place = sorted(h for h in changes if h not in disruptive)
    order = [h for h in compute if h in disruptive]
    return RolloutPlan(component, in_place, batches(order, batch), disruptive)


class SlurmNodes(Protocol):
    """What a rollout needs from Slurm (:class:`clusterctl.slurm.Slurm`)."""

    def drain(self, nodes: Sequence[str], reason: str) -> None: ...
    def resume(self, nodes: Sequence[str]) -> None: ...
    def jobs_on(self, nodes: Sequence[str]) -> list[str]: ...
    def node_info(self, nodes: Sequence[str]) -> dict[str, tuple[str, str]]: ...
    def node_states(self, nodes: Sequence[str]) -> dict[str, str]: ...
    def reboot(self, nodes: Sequence[str], reason: str) -> None: ...
    def boot_times(self, nodes: Sequence[str]) -> dict[str, str]: ...


def _failed(code: int, msg: str) -> ClusterctlError:
    cls = {EXIT_UNREACHABLE: Unreachable, EXIT_HOSTS_FAILED: HostsFailed}.get(code, AnsibleFailed)
    return cls(msg)


@dataclass
class Rollout:
    """Drain, wait, apply, verify and resume each batch in turn; stop at the first batch that fails.

    ``apply(nodes)`` changes the nodes (a run of the component's roles limited to them) and returns
    its :class:`~clusterctl.runner.RunResult`; ``say`` gets one line per step. Errors raised:
    :class:`HostsFailed` (a job outlived ``drain_timeout``, a node is unfit after the change),
    the apply run's own class (failed/unreachable hosts), :class:`SlurmError`/:class:`Unreachable`
    when a Slurm command failed. Each message says what stays drained and what is untouched.
    """

    slurm: SlurmNodes
    component: str
    apply: Callable[[list[str], int], RunResult]
    say: Callable[[str], None]
    drain_timeout: float = 3600
    settle_timeout: float = SETTLE_TIMEOUT
    #: node list -> node -> why it failed the quick verify ({} when all pass); run after a reboot
    verify: Callable[[list[str]], dict[str, str]] | None = None
    reboot_timeout: float = REBOOT_TIMEOUT
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep

    def run(self, plan: RolloutPlan) -> None:
        rollout = plan.batches
        for i, nodes in enumerate(rollout, 1):
            label = f"batch {i}/{len(rollout)} ({', '.join(nodes)})"
            untouched = ", ".join(h for b in rollout[i:] for h in b) or "-"
            drained: list[str] = []
            try:
                self._batch(i, label, nodes, untouched, drained, reboot_hosts(plan.disruptive, nodes))
            except (SlurmError, Unreachable) as exc:
                raise type(exc)(f"{label}: {exc}; rollout stopped; drained by this rollout: "
                                f"{', '.join(drained) or 'see sinfo'} (reason '{REASON_PREFIX} ...', "
                                f"`clusterctl resume` returns them); untouched: {untouched}") from None

    def _batch(self, index: int, label: str, nodes: list[str], untouched: str, drained: list[str],
               reboot: list[str] | None = None) -> None:
        reason = f"{REASON_PREFIX} reconfigure {self.component}"
        held = held_by_others(self.slurm.node_info(nodes), REASON_PREFIX + " reconfigure")
        ours = [n for n in nodes if n not in held]
        for n, why in held.items():
            self.say(f"{label}: {n} is already out of service ({why}): changed, but neither drained nor resumed "
                     "by this rollout")
        if ours:
            self.say(f"{label}: draining {', '.join(ours)}")
            self.slurm.drain(ours, reason)
            drained.extend(ours)
        deadline = self.clock() + self.drain_timeout
        jobs = self.slurm.jobs_on(nodes)
        while jobs and self.clock() < deadline:
            self.say(f"{label}: waiting for job(s) {', '.join(jobs)} to end")
            self.sleep(min(10.0, max(1.0, deadline - self.clock())))
            jobs = self.slurm.jobs_on(nodes)
        if jobs:
            if ours:
                self.slurm.resume(ours)
                drained.clear()
            raise HostsFailed(f"{label}: job(s) {', '.join(jobs)} still running after {self.drain_timeout:g}s "
                              f"(--drain-timeout); batch resumed unchanged; rollout stopped; untouched: {untouched}")
        res = self.apply(nodes, index)
        if res.exit_code:
            raise _failed(res.exit_code, f"{label}: apply failed on {', '.join(res.problem_hosts) or 'the batch'}; "
                                         f"the batch stays drained (reason '{reason}'); rollout stopped; "
                                         f"untouched: {untouched}")
        bad = wait_fit(ours, lambda: self.slurm.node_states(nodes), timeout=self.settle_timeout,
                       clock=self.clock, sleep=self.sleep)
        if bad:
            raise HostsFailed(f"{label}: verify failed: {', '.join(f'{n} {s}' for n, s in sorted(bad.items()))}; "
                              f"batch stays drained (reason '{reason}'); rollout stopped; untouched: {untouched}")
        rebooted = [n for n in reboot or [] if n in ours]
        if reboot:
            # resumes the rebooted nodes that pass the quick verify itself; raises when one fails
            self._reboot(label, rebooted, [n for n in reboot if n not in ours], reason, untouched, drained)
        if ours:
            rest = [n for n in ours if n not in rebooted]
            if rest:
                self.slurm.resume(rest)
            drained.clear()
            bad = wait_fit(ours, lambda: self.slurm.node_states(nodes), timeout=self.settle_timeout,
                           clock=self.clock, sleep=self.sleep)
            if bad:
                raise HostsFailed(f"{label}: resumed, but not fit: "
                                  f"{', '.join(f'{n} {s}' for n, s in sorted(bad.items()))}; rollout stopped; "
                                  f"untouched: {untouched}")
        self.say(f"{label}: changed, verified, resumed")

    def _reboot(self, label: str, ours: list[str], held: list[str], reason: str, untouched: str,
                drained: list[str]) -> None:
        """Reboot ``ours`` through Slurm (RebootProgram) with ``nextstate=DOWN``, wait for them, quick-verify
        them and resume only the nodes that pass: until then Slurm gives them no job (DOWN, and our DRAIN).
        A node that fails stays drained with a reason naming the failed check, and the rollout stops. A node
        whose reason is no longer ours by then (someone else drained it meanwhile) keeps its state.
        ``held`` (out of service for someone else's reason) are not rebooted: their reboot stays pending."""
        for n in held:
            self.say(f"{label}: {n} is held by someone else: not rebooted; the change is active after its next reboot")
        if not ours:
            return
        before = self.slurm.boot_times(ours)
        self.say(f"{label}: rebooting {', '.join(ours)} through Slurm (scontrol reboot ASAP nextstate=DOWN): no job "
                 "until the quick verify passed")
        self.slurm.reboot(ours, f"{reason}: reboot")
        bad = wait_rebooted(ours, before, lambda: self.slurm.boot_times(ours), lambda: self.slurm.node_states(ours),
                            timeout=self.reboot_timeout, clock=self.clock, sleep=self.sleep)
        if bad:
            raise HostsFailed(f"{label}: reboot not completed: {', '.join(f'{n} {s}' for n, s in sorted(bad.items()))}"
                              f"; they stay out of service (reason '{reason}: reboot'); rollout stopped; "
                              f"untouched: {untouched}")
        info = self.slurm.node_info(ours)
        early = sorted(n for n in ours if not out_of_service(info.get(n, ("missing", ""))[0]))
        # the reboot's completion drops the DRAIN flag (DOWN only), and with ReturnToService=2 the node's next
        # registration returns it to service, during the verify or before: a DRAIN flag now holds every one
        self.slurm.drain(ours, f"{reason}: awaiting verify after reboot")
        if early:
            self.say(f"{label}: {', '.join(early)} came back in service before the verify: drained again")
        self.say(f"{label}: {', '.join(ours)} back from the reboot (out of service until verified)")
        failed = self.verify(ours) if self.verify else {}
        for n, why in sorted(failed.items()):
            self.slurm.drain([n], reason_text(f"{reason}: verify failed after reboot: {why}"))
        passed = [n for n in ours if n not in failed]
        info = self.slurm.node_info(passed) if passed else {}
        others = {n: r for n, (_, r) in info.items() if not r.startswith(REASON_PREFIX)}
        for n, r in sorted(others.items()):
            self.say(f"{label}: {n} passed the quick verify but is out of service for another reason ({r}): "
                     "left as it is")
        back = [n for n in passed if n not in others]
        if back:
            self.slurm.resume(back)
            self.say(f"{label}: quick verify passed on {', '.join(back)}: resumed")
        drained[:] = sorted(failed)
        if failed:
            raise HostsFailed(f"{label}: quick verify failed after the reboot: "
                              f"{'; '.join(f'{n}: {w}' for n, w in sorted(failed.items()))}; "
                              f"{', '.join(sorted(failed))} stay drained (reason '{reason}: verify failed after "
                              f"reboot: ...'); resumed: {', '.join(back) or '-'}; rollout stopped; "
                              f"untouched: {untouched}")
