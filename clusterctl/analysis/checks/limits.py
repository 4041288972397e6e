"""Judge the resource limits slurmd runs with (KIND ``proc-limits``, the ``# process: slurmd`` capture).

Every Slurm job step inherits slurmd's limits (slurm.conf ``PropagateResourceLimitsExcept=MEMLOCK``,
set by the slurm_common role). RDMA memory registration (NCCL over InfiniBand/RoCE, GPUDirect
RDMA) pins pages against the memlock limit; under systemd's 8 MiB default ``ibv_reg_mr`` fails
and NCCL jobs abort or fall back to sockets.

Expectation:

``slurm_compute_memlock_limit``
    the value the slurm_compute role gives slurmd's ``LimitMEMLOCK`` (default
    :data:`DEFAULT_MEMLOCK` ``"infinity"``, the role's default): ``infinity`` or a systemd size
    (``64G``; K, M, G, T are powers of 1024). ``""`` (the role writes no limit) is not judged.

Finding (subject ``host/slurmd``): the soft memlock limit below the expected value (warning: the
node works, but RDMA jobs on it fail; slurmd was not restarted after the change, or a drop-in
of its own overrides the role's). A capture naming no process (a pasted ``/proc/<pid>/limits`` or its grep'd
row, or a shell's ``ulimit -a``) is judged the same way (subject ``host/process``), except that a finite limit
above the defaults known to break registration (64 KiB, systemd's 8 MiB) is a note there (a value set on
purpose): an RDMA job registers memory against whichever process's limits those are. Captures the collector
names as another process are not judged here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clusterctl.analysis.model import NOTHING, CheckResult, Finding, check
from clusterctl.analysis.severity import sev as rule_sev

#: the slurm_compute role's default for slurmd's LimitMEMLOCK (roles/slurm_compute/defaults/main.yml)
DEFAULT_MEMLOCK = "infinity"
DEFAULTS = {"slurm_compute_memlock_limit": DEFAULT_MEMLOCK}

_SIZE = re.compile(r"^([1-9][0-9]*)([KMGT]?)$")


def systemd_size(value: str) -> int | None:
    """Bytes of a systemd limit value (``infinity`` -> None). Raises ValueError on anything else."""
    if value == "infinity":
        return None
    m = _SIZE.match(value)
    if not m:
        raise ValueError(value)
    return int(m.group(1)) * 1024 ** "_KMGT".index(m.group(2) or "_")


def _human(n: int | None) -> str:
    if n is None:
        return "unlimited"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


@check("proc-limits")
def judge_slurmd_memlock(host: str, data: Mapping[str, Any], expectations: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    process = data.get("process")
    if process not in ("slurmd", None):
        return res  # the collector named another process: not slurmd's limits
    want_text = str(expectations.get("slurm_compute_memlock_limit", DEFAULT_MEMLOCK)).strip()
    if not want_text:
        return res
    # a pasted /proc/<pid>/limits (or its grep'd row) names no process: the limits of whatever the operator looked
    # at (slurmd, a job step), judged the same way since an RDMA job registers memory against them
    who = "slurmd" if process == "slurmd" else "the shell ('ulimit -a')" if data.get("shell") else "the process"
    subject = f"{host}/{process or 'process'}"
    try:
        want = systemd_size(want_text)
    except ValueError:
        res.findings.append(Finding(host, "memlock", rule_sev("memlock.bad_setting"), subject,
                                    f"slurm_compute_memlock_limit={want_text!r} is not infinity or a size "
                                    "such as 64G: memlock not judged"))
        return res
    if "max_locked_memory" not in data["limits"]:
        # rows of other limits only (a listing trimmed or cut before its locked-memory row)
        res.findings.append(Finding(host, "memlock", rule_sev("memlock.not_shown"), subject,
                                    f"{NOTHING}the limits listing shows no locked-memory row (trimmed or cut): "
                                    "memlock not judged"))
        return res
    soft = data["limits"]["max_locked_memory"]["soft"]
    enough = soft is None if want is None else (soft is None or soft >= want)
    if enough:
        return res
    pid = f" (pid {data['pid']})" if data.get("pid") else ""
    # any finite limit below the inventory's, a pasted one too (64 MiB, 4.9 GiB): RDMA registrations of a job's
    # buffers are capped by it (severity.yml memlock.limited; session 21 withdrew the note for large pasted values)
    res.findings.append(Finding(
        host, "memlock", rule_sev("memlock.limited"), subject,
        f"{who}{pid} runs with memlock {_human(soft)}, expected {_human(want)} "
        f"(slurm_compute_memlock_limit={want_text}): job steps inherit it and RDMA memory "
        "registration fails; restart slurmd after draining the node, or look for a drop-in overriding LimitMEMLOCK"))
    return res
