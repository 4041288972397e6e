"""Ending the processes a stopped Ansible run leaves behind.

ansible-runner stops a run that timed out (or was cancelled) by killing the process group of
``ansible-playbook``; but ansible-core's worker processes call ``setsid()`` and so live in groups of their
own: they survive, and go on with the task they were running (a command on a host, a pause) with nobody
left to read their result. Every process of one call carries a marker in its environment
(:data:`MARKER`, set by clusterctl.runner); :func:`end` finds the processes of this user that carry a
given value in ``/proc/<pid>/environ`` and ends them (SIGTERM, then SIGKILL after ``grace`` seconds).
Linux only; elsewhere (no /proc) nothing is found.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from pathlib import Path

log = logging.getLogger("clusterctl.runner")

#: The environment variable whose value names one Ansible call.
MARKER = "CLUSTERCTL_RUN_MARK"


def carrying(value: str, proc: Path = Path("/proc")) -> list[int]:
    """The pids (not this process) whose environment holds ``MARKER=value``."""
    needle = f"{MARKER}={value}".encode()
    me, uid = os.getpid(), os.getuid()
    found = []
    try:
        entries = list(proc.iterdir())
    except OSError:
        return []
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            env = (entry / "environ").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if needle in env.split(b"\0"):
            found.append(int(entry.name))
    return sorted(found)


def end(value: str, grace: float = 2.0, proc: Path = Path("/proc")) -> list[int]:
    """End every process carrying ``value``; returns the pids that were still running."""
    pids = carrying(value, proc)
    if not pids:
        return []
    log.warning("ending %d process(es) the stopped run left behind: %s", len(pids), pids)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and carrying(value, proc):
            time.sleep(0.05)
        if not carrying(value, proc):
            break
    return pids
