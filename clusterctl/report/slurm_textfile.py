"""The Slurm textfile on the controller (issue 26): slurmctld's health as Prometheus metrics.

A systemd timer of the monitoring role runs this on the first Slurm controller every
``monitoring_slurm_textfile_interval``, from the node check's bundle (:mod:`clusterctl.lifecycle.bundle`:
the standard library, the ccparse parsers and :mod:`clusterctl.report.prom`)::

    python3 -m clusterctl.report.slurm_textfile --out /var/lib/prometheus/node-exporter/clusterctl-slurm.prom

Each run asks ``sdiag`` and ``sinfo --all --Node --format=%N|%T|%E`` (each cut at ``--timeout``
seconds: the run is bounded, a hung slurmctld leaves ``clusterctl_slurm_tool_status{status="timeout"}``),
parses them with the ``sdiag`` and ``sinfo`` parsers, and writes :data:`FAMILIES` atomically (a
scrape never sees half a file) through :func:`clusterctl.report.prom.render_families`. A tool that is
missing, fails, times out or prints what its parser cannot read is told apart in
``clusterctl_slurm_tool_status`` and its families are left out (no made-up zeros).

Drained nodes are counted by the class of their reason (:func:`reason_class`): ``clusterctl`` (a drain
clusterctl made: ``clusterctl: ...``), ``other`` (a drain Slurm made itself: :data:`SLURM_REASONS`, or
no reason) and ``admin`` (any other text: an operator's ``scontrol update ... reason=...``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ccparse import registry
from ccparse.common import ParseError

from clusterctl.paths import write_atomic
from clusterctl.report.prom import render_families

#: the file name in node_exporter's textfile folder (next to the node check's clusterctl.prom)
TEXTFILE = "clusterctl-slurm.prom"
#: the reason prefix of every drain clusterctl makes (clusterctl.slurm.PREFIX; not imported: the
#: bundle carries no ansible-runner)
CLUSTERCTL_PREFIX = "clusterctl:"
#: reasons Slurm itself sets when it drains or downs a node (slurmctld's node_mgr.c, job_mgr.c,
#: proc_req.c, read_config.c); matched at the start of the reason, case-insensitively
SLURM_REASONS = ("Not responding", "Kill task failed", "Node unexpectedly rebooted", "Prolog error",
                 "Epilog error", "batch job complete failure", "Low RealMemory", "Low socket*core*thread count",
                 "Low CPUs", "Low TmpDisk", "NO NETWORK ADDRESS FOUND", "Duplicate jobid",
                 "SlurmdSpoolDir is full", "reboot complete", "Reboot ASAP")
REASON_CLASSES = ("clusterctl", "admin", "other")
TOOL_STATUSES = ("ok", "missing", "failed", "timeout", "unreadable")
DRAINED = frozenset({"drain", "drained", "draining", "drng"})
SINFO_ARGV = ("--all", "--Node", "--format=%N|%T|%E")

#: name -> (type, help), in the order written; every one is documented in roles/monitoring/README.md
FAMILIES: dict[str, tuple[str, str]] = {
    "clusterctl_slurm_tool_status": (
        "gauge", "1 for how the tool answered at the last run (ok, missing, failed, timeout, unreadable), "
                 "0 for the others"),
    "clusterctl_slurm_scheduler_cycle_seconds": (
        "gauge", "slurmctld scheduling cycle duration by scheduler (main, backfill) and cycle (last, mean, max) "
                 "since the statistics were reset (sdiag)"),
    "clusterctl_slurm_scheduler_cycles": (
        "gauge", "Scheduling cycles by scheduler since the statistics were reset (sdiag Total cycles)"),
    "clusterctl_slurm_scheduler_queue_length": (
        "gauge", "Jobs the scheduler looked at in its last cycle, by scheduler (sdiag Last queue length)"),
    "clusterctl_slurm_jobs": (
        "gauge", "Jobs by state (pending, running) as slurmctld counts them (sdiag Jobs pending/running)"),
    "clusterctl_slurm_job_events": (
        "gauge", "Jobs submitted, started, completed, canceled, failed since the statistics were reset (sdiag)"),
    "clusterctl_slurm_server_threads": (
        "gauge", "Active slurmctld threads (sdiag Server thread count)"),
    "clusterctl_slurm_agent_queue_size": (
        "gauge", "Outgoing RPCs to slurmd queued for retry (sdiag Agent queue size)"),
    "clusterctl_slurm_dbd_agent_queue_size": (
        "gauge", "Messages to slurmdbd queued (sdiag DBD Agent queue size); grows while slurmdbd is down"),
    "clusterctl_slurm_rpcs": (
        "gauge", "RPCs slurmctld served since the statistics were reset, by message type (sdiag)"),
    "clusterctl_slurm_rpc_seconds": (
        "gauge", "Time slurmctld spent serving RPCs since the statistics were reset, by message type (sdiag)"),
    "clusterctl_slurm_rpcs_pending": (
        "gauge", "RPCs waiting in slurmctld's queues (sdiag Pending RPC statistics, summed)"),
    "clusterctl_slurm_stats_reset_timestamp_seconds": (
        "gauge", "Unix time sdiag's statistics were last reset (sdiag Data since)"),
    "clusterctl_slurm_nodes": (
        "gauge", "Slurm nodes by state (sinfo %T without its suffix)"),
    "clusterctl_slurm_nodes_not_responding": (
        "gauge", "Slurm nodes whose slurmd does not respond (sinfo state suffix *)"),
    "clusterctl_slurm_nodes_drained": (
        "gauge", "Drained or draining Slurm nodes by reason class: clusterctl (reason 'clusterctl: ...'), "
                 "admin (an operator's reason), other (Slurm's own reason, or none)"),
    "clusterctl_slurm_textfile_timestamp_seconds": (
        "gauge", "Unix time this file was written"),
}

Sample = tuple[dict[str, str], float]


def reason_class(reason: str | None) -> str:
    """``clusterctl``, ``admin`` or ``other`` for a drain reason (see the module docstring)."""
    text = (reason or "").strip()
    if text.startswith(CLUSTERCTL_PREFIX):
        return "clusterctl"
    if not text or any(text.lower().startswith(r.lower()) for r in SLURM_REASONS):
        return "other"
    return "admin"


def sdiag_samples(data: Mapping[str, Any]) -> dict[str, list[Sample]]:
    """Samples of the ``sdiag`` parse ``data`` (the keys it has; an excerpt gives what it shows)."""
    out: dict[str, list[Sample]] = {}

    def add(name: str, labels: dict[str, str], value: float | None) -> None:
        if value is not None:
            out.setdefault(name, []).append((labels, float(value)))

    for sched in ("main", "backfill"):
        sec = data.get(sched) or {}
        for cycle in ("last", "mean", "max"):
            v = sec.get(f"{cycle}_cycle")
            add("clusterctl_slurm_scheduler_cycle_seconds", {"scheduler": sched, "cycle": cycle},
                None if v is None else v / 1e6)
        add("clusterctl_slurm_scheduler_cycles", {"scheduler": sched}, sec.get("total_cycles"))
        add("clusterctl_slurm_scheduler_queue_length", {"scheduler": sched}, sec.get("last_queue_length"))
    jobs = data.get("jobs") or {}
    for state in ("pending", "running"):
        add("clusterctl_slurm_jobs", {"state": state}, jobs.get(state))
    for event in ("submitted", "started", "completed", "canceled", "failed"):
        add("clusterctl_slurm_job_events", {"event": event}, jobs.get(event))
    server = data.get("server") or {}
    add("clusterctl_slurm_server_threads", {}, server.get("server_thread_count"))
    add("clusterctl_slurm_agent_queue_size", {}, server.get("agent_queue_size"))
    add("clusterctl_slurm_dbd_agent_queue_size", {}, server.get("dbd_agent_queue_size"))
    seen: set[str] = set()
    for rpc in data.get("rpc_types") or ():
        if rpc["name"] in seen:
            continue
        seen.add(rpc["name"])
        add("clusterctl_slurm_rpcs", {"type": rpc["name"]}, rpc["count"])
        add("clusterctl_slurm_rpc_seconds", {"type": rpc["name"]}, rpc["total_time"] / 1e6)
    if "rpc_pending" in (data.get("sections") or ()):  # Slurm 20.11+ prints the pending RPCs
        add("clusterctl_slurm_rpcs_pending", {}, sum(r["count"] for r in data.get("rpc_pending") or ()))
    add("clusterctl_slurm_stats_reset_timestamp_seconds", {}, data.get("since"))
    return out


def sinfo_samples(data: Mapping[str, Any]) -> dict[str, list[Sample]]:
    """Samples of the ``sinfo`` parse ``data``: nodes by state, not responding, drained by reason class."""
    states: Counter[str] = Counter()
    drained: Counter[str] = Counter()
    silent = 0
    for node in (data.get("nodes") or {}).values():
        bases = [b.lower() for b in node.get("base_states") or ()]
        states[bases[0] if bases else "unknown"] += 1
        silent += bool(node.get("not_responding"))
        if DRAINED & set(bases):
            reasons = node.get("reasons") or [None]
            drained[reason_class(reasons[0])] += 1
    return {
        "clusterctl_slurm_nodes": [({"state": s}, float(n)) for s, n in sorted(states.items())],
        "clusterctl_slurm_nodes_not_responding": [({}, float(silent))],
        "clusterctl_slurm_nodes_drained": [({"reason_class": c}, float(drained[c])) for c in REASON_CLASSES],
    }


def run_tool(argv: Sequence[str], timeout: float) -> tuple[str, str]:
    """(status, stdout or the reason) of one tool run: ok, missing, failed or timeout."""
    exe = shutil.which(argv[0])
    if exe is None:
        return "missing", f"{argv[0]}: not found on PATH"
    try:
        proc = subprocess.Popen([exe, *argv[1:]], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                errors="replace", start_new_session=True)
    except OSError as exc:
        return "failed", f"{argv[0]}: {exc}"
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)  # the tool and anything it started: nothing outlives the run
        proc.communicate()
        return "timeout", f"{argv[0]}: no answer within {timeout:g}s"
    if proc.returncode != 0:
        return "failed", f"{argv[0]}: exit {proc.returncode}: {stderr.strip()[-300:]}"
    return "ok", stdout


def _parse(kind: str, status: str, text: str) -> tuple[str, Any, str]:
    if status != "ok":
        return status, None, text
    rows = [ln for ln in text.splitlines() if ln.strip()]
    if kind == "sinfo" and len(rows) == 1 and rows[0].split("|")[:2] == ["NODELIST", "STATE"]:
        return "ok", {"nodes": {}}, ""  # the header alone: a cluster without nodes
    try:
        return "ok", registry.parse(kind, text), ""
    except ParseError as exc:
        return "unreadable", None, str(exc)


def render(tools: Mapping[str, tuple[str, Any]], now: float) -> str:
    """The textfile for ``tools`` (``sdiag``/``sinfo`` -> (status, parse or None))."""
    samples: dict[str, list[Sample]] = {name: [] for name in FAMILIES}
    for tool in ("sdiag", "sinfo"):
        status, data = tools[tool]
        for s in TOOL_STATUSES:
            samples["clusterctl_slurm_tool_status"].append(({"tool": tool, "status": s}, 1.0 if s == status else 0.0))
        if data is None:
            continue
        for name, got in (sdiag_samples(data) if tool == "sdiag" else sinfo_samples(data)).items():
            samples[name].extend(got)
    samples["clusterctl_slurm_textfile_timestamp_seconds"].append(({}, float(now)))
    return render_families(FAMILIES, samples)


def collect(timeout: float, sdiag: str = "sdiag", sinfo: str = "sinfo") -> tuple[dict[str, tuple[str, Any]], list[str]]:
    """Run both tools: (tool -> (status, parse)), the problems to report."""
    tools: dict[str, tuple[str, Any]] = {}
    problems: list[str] = []
    for kind, argv in (("sdiag", [sdiag]), ("sinfo", [sinfo, *SINFO_ARGV])):
        status, data, why = _parse(kind, *run_tool(argv, timeout))
        tools[kind] = (status, data)
        if why:
            problems.append(why)
    return tools, problems


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="clusterctl-slurm-textfile", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help=f"the textfile to write (…/{TEXTFILE})")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds each tool may take (default 20)")
    ap.add_argument("--sdiag", default="sdiag", help="the sdiag program")
    ap.add_argument("--sinfo", default="sinfo", help="the sinfo program")
    args = ap.parse_args(argv)
    if not 0 < args.timeout <= 600:
        ap.error(f"--timeout={args.timeout:g}: must be above 0 and at most 600 seconds")
    tools, problems = collect(args.timeout, args.sdiag, args.sinfo)
    for p in problems:
        print(p, file=sys.stderr)
    try:
        write_atomic(args.out, render(tools, time.time()))
    except OSError as exc:
        print(f"cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
