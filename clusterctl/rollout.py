"""Day-2 rollout logic: which component's change disturbs running work, and in what batches.

Pure functions; the reconfigure command does the Slurm calls and Ansible runs around them.

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
from collections.abc import Callable
from dataclasses import dataclass

from clusterctl.change_kinds import kinds_at
from clusterctl.runner import Change


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
    )
}


@dataclass(frozen=True)
class Disruption:
    """A planned change that disturbs running work, with the kinds its task or handler declares."""

    task: str
    kinds: frozenset[str]

    def __str__(self) -> str:
        return f"{self.task} ({', '.join(sorted(self.kinds))})"


class BatchSpecError(ValueError):
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
