"""The errors clusterctl's library raises; each one carries the exit status the CLI gives it.

Library modules raise these and return results; only the command modules (``clusterctl.commands``)
print them and turn them into exit statuses (one place: ``commands/common.py``).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1  # unexpected error, or Ansible/Slurm itself failed
EXIT_BAD_INPUT = 2  # inventory/arguments rejected; nothing ran
EXIT_HOSTS_FAILED = 3  # some hosts failed (or verify found failed nodes)
EXIT_UNREACHABLE = 4  # some hosts were unreachable or never reached (and none failed)


class ClusterctlError(Exception):
    """Base of every error clusterctl reports without a traceback."""

    exit_code = EXIT_FAILED


class UsageError(ClusterctlError):
    """Bad arguments or input: nothing was run on any host."""

    exit_code = EXIT_BAD_INPUT


class HostsFailed(ClusterctlError):
    """Some hosts failed (a task failed, a node is unfit, a job outlived the drain timeout)."""

    exit_code = EXIT_HOSTS_FAILED


class Unreachable(ClusterctlError):
    """Hosts could not be reached (and none failed)."""

    exit_code = EXIT_UNREACHABLE


class AnsibleFailed(ClusterctlError):
    """ansible-playbook/ansible itself failed (syntax error, timeout) before any host failed."""

    exit_code = EXIT_FAILED


class SlurmError(ClusterctlError):
    """A Slurm command (scontrol, sinfo, squeue) failed on the controller."""

    exit_code = EXIT_FAILED
