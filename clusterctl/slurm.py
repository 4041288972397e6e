"""The one place clusterctl talks to Slurm: argument lists for scontrol/sinfo/squeue, run on the
first Slurm controller through ansible-runner's ad-hoc path (``ansible.builtin.command`` with
``argv``: no shell, nothing quoted by hand).

Every drain clusterctl makes carries a reason starting ``clusterctl:`` (see
:mod:`clusterctl.slurm_drain`, which decides what to drain and what may be resumed).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from clusterctl.errors import SlurmError, Unreachable, UsageError
from clusterctl.runner import run_module

log = logging.getLogger("clusterctl.slurm")

PREFIX = "clusterctl:"
#: a node name or hostlist expression as Slurm takes it (gpu01, gpu[01-08])
_NODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]*(\[[0-9,\-]+\][A-Za-z0-9._\-]*)*")
# Ansible templates ad-hoc arguments: a reason must not hold Jinja markers
_JINJA = re.compile(r"\{\{|\{%|\{#|\}\}|%\}|#\}")

ModuleRunner = Callable[..., dict[str, dict[str, Any]]]


def node_list(nodes: Sequence[str]) -> str:
    """``a,b,c`` for Slurm; each name must be a plain node name or hostlist expression."""
    if not nodes:
        raise UsageError("no Slurm nodes given")
    for n in nodes:
        if not _NODE.fullmatch(n):
            raise UsageError(f"{n!r} is not a Slurm node name")
    return ",".join(nodes)


def check_reason(reason: str) -> str:
    if "\n" in reason or "\r" in reason or _JINJA.search(reason) or not reason.strip():
        raise UsageError(f"drain reason {reason!r}: one non-empty line without {{ }} markers")
    return reason


def drain_argv(nodes: Sequence[str] | str, reason: str) -> list[str]:
    """``scontrol update NodeName=... State=DRAIN Reason=...`` (argv, no shell)."""
    names = node_list([nodes] if isinstance(nodes, str) else nodes)
    return _update_argv(names, "DRAIN", reason)


def _update_argv(names: str, state: str, reason: str) -> list[str]:
    return ["scontrol", "update", f"NodeName={names}", f"State={state}", f"Reason={check_reason(reason)}"]


def fail_argv(nodes: Sequence[str] | str, reason: str) -> list[str]:
    """``scontrol update NodeName=... State=FAIL Reason=...``: a hold that lasts through a reboot Slurm issued.

    Slurm clears a node's DRAIN flag when the reboot it issued completes (``nextstate=DOWN`` leaves it
    DOWN), and with ``ReturnToService=2`` the node's next registration returns a DOWN node to service:
    a drained node is back in service within minutes of its reboot, before anyone verified it. The FAIL
    flag survives both (slurm 22.05 in the lab: ``DOWN+FAIL`` after the reboot, ``IDLE+FAIL`` after the
    next registration, the reason kept) until ``State=RESUME``."""
    return _update_argv(node_list([nodes] if isinstance(nodes, str) else nodes), "FAIL", reason)


def resume_argv(nodes: Sequence[str] | str) -> list[str]:
    return ["scontrol", "update", f"NodeName={node_list([nodes] if isinstance(nodes, str) else nodes)}",
            "State=RESUME"]


def reboot_argv(nodes: Sequence[str], reason: str) -> list[str]:
    """``scontrol reboot ASAP nextstate=DOWN reason=... NODES``: slurmd runs the RebootProgram once the
    node is idle (ASAP: DRAIN meanwhile); when slurmd registers with a new boot time the node is set
    DOWN (reason suffixed ``: reboot complete``) and takes no job until ``State=RESUME`` (the rollout
    resumes it after its quick verify passed)."""
    return ["scontrol", "reboot", "ASAP", "nextstate=DOWN", f"reason={check_reason(reason)}", node_list(nodes)]


def boot_times_argv(nodes: Sequence[str]) -> list[str]:
    return ["scontrol", "--oneliner", "show", "node", node_list(nodes)]


def parse_boot_times(text: str) -> dict[str, str]:
    """node -> its ``BootTime=`` value from ``scontrol --oneliner show node`` (one node per line)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        name = re.search(r"(?:^|\s)NodeName=(\S+)", line)
        boot = re.search(r"(?:^|\s)BootTime=(\S+)", line)
        if name and boot:
            out[name.group(1)] = boot.group(1)
    return out


def show_nodes_argv() -> list[str]:
    return ["scontrol", "show", "node"]


def sinfo_argv(nodes: Sequence[str]) -> list[str]:
    """One ``node|state|reason`` line per node (``-N``), even for a node in several partitions."""
    return ["sinfo", "--noheader", "--Node", f"--nodes={node_list(nodes)}", "--format=%N|%T|%E"]


def squeue_argv(nodes: Sequence[str]) -> list[str]:
    return ["squeue", "--noheader", f"--nodelist={node_list(nodes)}", "--format=%i"]


def parse_sinfo(text: str) -> dict[str, tuple[str, str]]:
    """node -> (``%T`` state, ``%E`` reason) from :func:`sinfo_argv` output."""
    info: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        parts = line.strip().split("|", 2)
        if len(parts) == 3:
            info.setdefault(parts[0], (parts[1], parts[2]))
    return info


class Slurm:
    """Slurm commands on the first host of ``slurm_controller`` of an inventory."""

    def __init__(self, inventory: Path, controller: str = "slurm_controller[0]",
                 run: ModuleRunner = run_module) -> None:
        self.inventory = inventory
        self.controller = controller
        self._run_module = run

    def run(self, argv: list[str]) -> str:
        """stdout of ``argv`` on the controller; :class:`Unreachable` or :class:`SlurmError` otherwise."""
        log.info("slurm on %s: %s", self.controller, argv)
        # expand_argument_vars off: the command module would otherwise expand $VARS inside a reason
        results = self._run_module(self.inventory, self.controller, "ansible.builtin.command",
                                   {"argv": argv, "expand_argument_vars": False})
        if not results:
            raise SlurmError(f"{' '.join(argv[:2])}: no host matched {self.controller} (is the slurm_controller "
                             "group empty?)")
        host, res = next(iter(results.items()))
        if res.get("_event") == "runner_on_unreachable":
            raise Unreachable(f"Slurm controller {host} is unreachable: {str(res.get('msg', '')).strip()}")
        if res.get("_event") == "runner_on_failed" or res.get("rc", 0) != 0:
            why = (str(res.get("stderr") or "") or str(res.get("msg") or "")).strip()
            raise SlurmError(f"{' '.join(argv[:2])} failed on {host} (rc {res.get('rc', '?')}): {why[:400]}")
        return str(res.get("stdout") or "")

    def drain(self, nodes: Sequence[str], reason: str) -> None:
        self.run(drain_argv(nodes, reason))

    def resume(self, nodes: Sequence[str]) -> None:
        self.run(resume_argv(nodes))

    def fail(self, nodes: Sequence[str], reason: str) -> None:
        self.run(fail_argv(nodes, reason))

    def jobs_on(self, nodes: Sequence[str]) -> list[str]:
        return self.run(squeue_argv(nodes)).split()

    def node_info(self, nodes: Sequence[str]) -> dict[str, tuple[str, str]]:
        return parse_sinfo(self.run(sinfo_argv(nodes)))

    def node_states(self, nodes: Sequence[str]) -> dict[str, str]:
        return {n: state for n, (state, _) in self.node_info(nodes).items()}

    def reboot(self, nodes: Sequence[str], reason: str) -> None:
        self.run(reboot_argv(nodes, reason))

    def boot_times(self, nodes: Sequence[str]) -> dict[str, str]:
        return parse_boot_times(self.run(boot_times_argv(nodes)))

    def show_nodes(self) -> str:
        """``scontrol show node`` text (for the ``scontrol-node`` parser)."""
        return self.run(show_nodes_argv())
