"""The errors clusterctl's library raises; each one carries the exit status the CLI gives it.

Library modules raise these and return results; only the command modules (``clusterctl.commands``)
print them and turn them into exit statuses (one place: ``commands/common.py``). A subclass names
its exit status in its class line (``class X(ClusterctlError, exit_code=EXIT_...)``); without one
it keeps its base's.
"""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1  # unexpected error, or Ansible/Slurm itself failed
EXIT_BAD_INPUT = 2  # inventory/arguments rejected; nothing ran
EXIT_HOSTS_FAILED = 3  # some hosts failed (or verify found failed nodes)
EXIT_UNREACHABLE = 4  # some hosts were unreachable or never reached (and none failed)
EXIT_CANNOT_JUDGE = 5  # analyze, verify: a host could not be judged (unreadable, or needs an inventory key)
EXIT_BUSY = 6  # another clusterctl run holds the inventory's lock; nothing ran


class ClusterctlError(Exception):
    """Base of every error clusterctl reports without a traceback (exit status 1)."""

    exit_code = EXIT_FAILED

    def __init__(self, *args: Any, file: str | None = None, line: int | None = None, key: str | None = None) -> None:
        """``file``, ``line``, ``key``: where the problem is, when known (the ``--json`` problem object)."""
        super().__init__(*args)
        self.file, self.line, self.key = file, line, key

    def __init_subclass__(cls, *, exit_code: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if exit_code is not None:
            cls.exit_code = exit_code


class UsageError(ClusterctlError, exit_code=EXIT_BAD_INPUT):
    """Bad arguments or input: nothing was run on any host."""


class HostsFailed(ClusterctlError, exit_code=EXIT_HOSTS_FAILED):
    """Some hosts failed (a task failed, a node is unfit, a job outlived the drain timeout)."""


class Unreachable(ClusterctlError, exit_code=EXIT_UNREACHABLE):
    """Hosts could not be reached (and none failed)."""


class Busy(ClusterctlError, exit_code=EXIT_BUSY):
    """Another clusterctl run holds the lock (of the inventory, or of the remediation loop); nothing ran."""


class AnsibleFailed(ClusterctlError):
    """ansible-playbook/ansible itself failed (syntax error, timeout) before any host failed."""


class SlurmError(ClusterctlError):
    """A Slurm command (scontrol, sinfo, squeue) failed on the controller."""


class NoEvidence(ClusterctlError):
    """verify's capture wrote no evidence at all (every host failed or was not reached)."""
