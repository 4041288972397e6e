"""Verdicts inside Ansible: what the ``clusterctl.hpc.fabric_verdict`` action plugin asks of the library.

The play's evidence folder is judged by :func:`clusterctl.analysis.engine.analyze_dir` against
:func:`clusterctl.analysis.expectations.build` of the inventory's cluster spec: the same two calls
``clusterctl verify`` (quick) and ``clusterctl analyze`` make. Every host of the play runs the
action; the folder is judged once (:func:`judged`: the first host judges under a lock and leaves
the report beside the evidence, ``_verdict.json``, keyed by the evidence files and the
expectations; the others read it), so a play of N hosts judges once, not N times, and each host
fails on its own verdict.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clusterctl.analysis.engine import CANNOT_JUDGE, NO_EVIDENCE, analyze_dir, host_dirs
from clusterctl.analysis.expectations import build
from clusterctl.errors import UsageError

#: the judged report of a folder, beside its evidence (``_`` names are never read as host folders)
CACHE = "_verdict.json"
LOCK = ".verdict.lock"
#: host statuses that fail the host's task (as ``clusterctl verify`` exits 3 for them)
FAILING = ("failed", NO_EVIDENCE)


def expectations(inventory: Path | None, spec: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``build`` of the inventory's cluster spec (read and checked as every command reads it: a bad
    inventory is :class:`clusterctl.inventory.InventoryError`), with ``spec`` over it."""
    from clusterctl.inventory import load_checked

    base = load_checked(inventory).spec() if inventory is not None else {}
    return build({**base, **(spec or {})})


def _fingerprint(evidence: Path, exp: Mapping[str, Any]) -> str:
    h = hashlib.sha256(json.dumps(exp, sort_keys=True, default=str).encode())
    for _, folder in host_dirs(evidence):
        for f in sorted(folder.rglob("*")):
            st = f.lstat()
            h.update(f"{f.relative_to(evidence)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def judged(evidence: Path, exp: Mapping[str, Any], *, report_dir: Path | None = None,
           title: str = "clusterctl verify", prom: Path | None = None, junit: Path | None = None) -> dict[str, Any]:
    """The report of ``evidence`` (``Report.to_dict()``), judged once per content of the folder; the
    JSON and HTML reports written to ``report_dir`` (``verify-report.json``/``.html``), the
    Prometheus textfile to ``prom`` and JUnit XML to ``junit`` (clusterctl/report/) when given."""
    wanted = [p for p in (report_dir / "verify-report.json" if report_dir else None, prom, junit) if p is not None]
    if not evidence.is_dir():
        raise UsageError(f"fabric_verdict: evidence_dir {evidence} is not a folder", file=str(evidence),
                         key="evidence_dir")
    fd = os.open(evidence / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        key = _fingerprint(evidence, exp)
        cache = evidence / CACHE
        try:
            doc = json.loads(cache.read_text())
            if doc.get("fingerprint") == key and all(p.is_file() for p in wanted):
                return dict(doc["report"])
        except (OSError, ValueError, AttributeError):
            pass
        report = analyze_dir(evidence, exp, jobs=1)  # one process: an Ansible worker may not fork a pool
        if report_dir is not None:
            from clusterctl.report_table import write_outputs

            report_dir.mkdir(parents=True, exist_ok=True)
            write_outputs(report, report_dir / "verify-report.json", report_dir / "verify-report.html", title=title)
        if prom is not None:
            from clusterctl.report import prom as prom_out

            prom_out.write(report, prom)
        if junit is not None:
            from clusterctl.report import junit as junit_out

            junit_out.write(report, junit)
        out = report.to_dict()
        tmp = cache.with_name(cache.name + ".tmp")
        tmp.write_text(json.dumps({"fingerprint": key, "report": out}, default=str))
        os.replace(tmp, cache)
        return out
    finally:
        os.close(fd)


def host_verdict(report: Mapping[str, Any], host: str) -> dict[str, Any]:
    """One host's verdict from a judged report: status (``no evidence`` when the folder has none),
    findings, and whether it fails the host's task."""
    entry = report.get("hosts", {}).get(host) or {"status": NO_EVIDENCE, "findings": []}
    status = str(entry["status"])
    out = {"host": host, "status": status, "findings": list(entry.get("findings", [])),
           "failed": status in FAILING}
    if status == CANNOT_JUDGE:
        out["cannot_judge"] = entry.get("cannot_judge", "")
    return out


def stats(report: Mapping[str, Any]) -> dict[str, Any]:
    """The play's verdicts for ``set_stats`` (AWX shows them with the job): host -> status, the
    summary counts, the failed hosts."""
    hosts = {h: v["status"] for h, v in sorted(report.get("hosts", {}).items())}
    return {"clusterctl_verdicts": {"hosts": hosts, "summary": dict(report.get("summary", {})),
                                    "failed": sorted(h for h, s in hosts.items() if s in FAILING)}}
