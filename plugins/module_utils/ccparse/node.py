"""Node-side readers and runners shared by the collector modules (fabric_evidence, fabric_pairtest, nccl_pairtest).

Kernel/procfs paths read:

``<sysfs_root>/class/infiniband/<dev>``
    one entry per RDMA device (drivers/infiniband/core/sysfs.c).
``<proc_root>/<pid>/comm``
    the process name; a ``slurmstepd`` means a Slurm job step runs on the node.
``<proc_root>/<pid>/limits``
    the process's resource limits (fs/proc/base.c), read for ``slurmd`` (parsed by ccparse.proc_limits).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable

#: Environment every collector runs its tools with (stable, untranslated output).
ENV = {"LC_ALL": "C", "LANG": "C"}


def rdma_devices(sysfs_root: str) -> list[str]:
    """Names of the RDMA devices under ``sysfs_root``, sorted; [] when there is no RDMA stack."""
    d = os.path.join(sysfs_root, "class", "infiniband")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def pids_named(proc_root: str, comm: str) -> list[int]:
    """PIDs under ``proc_root`` whose ``comm`` is ``comm``, ascending ([] when procfs cannot be read)."""
    try:
        pids = sorted(int(p) for p in os.listdir(proc_root) if p.isdigit())
    except OSError:
        return []
    out = []
    for pid in pids:
        try:
            with open(os.path.join(proc_root, str(pid), "comm")) as f:
                if f.read().strip() == comm:
                    out.append(pid)
        except OSError:
            continue
    return out


def running_job_steps(proc_root: str) -> int:
    """Number of ``slurmstepd`` processes under ``proc_root`` (0 when it cannot be read)."""
    return len(pids_named(proc_root, "slurmstepd"))


def entry(status: str, rc: int | None = None, stdout: str = "", stderr: str = "", cmd: list | None = None) -> dict:
    """One collector result: ``status`` is ok, tool_missing, device_absent, skipped or error."""
    return {"status": status, "rc": rc, "stdout": stdout, "stderr": stderr, "cmd": cmd or []}


def communicate(cmd: list, timeout: float, env: dict | None = None,
                started: Callable[[subprocess.Popen], None] | None = None) -> tuple[int | None, str, str]:
    """Run ``cmd`` with :data:`ENV` (and ``env``) for at most ``timeout`` s: (rc, stdout, stderr).

    rc is None when it was killed at the timeout; an exec failure raises OSError. ``started`` gets
    the process (so another thread can end it early).
    """
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **ENV, **(env or {})))
    if started is not None:
        started(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return None, out, err
    return proc.returncode, out, err


def summarise(result: dict) -> dict:
    """``{key: {"status", "rc", "stderr"}}`` of a collector's results: the first line of stderr only, no output."""
    return {k: {"status": v["status"], "rc": v["rc"], "stderr": (v["stderr"] or "").strip().split("\n")[0][:300]}
            for k, v in result.items()}
