"""``clusterctl verify --prom``: the verdict also on each node, in its node_exporter textfile folder (issue 26).

``--prom FILE`` writes the whole report where clusterctl runs; with it, every verified host whose inventory
sets ``monitoring_enabled`` also gets its own part (the same families and labels, that host only: what the
node check writes there, so the last verdict about the node wins) as ``<textfile folder>/clusterctl.prom``,
the folder being the host's ``node_health_textfile_dir``, else ``monitoring_textfile_dir``, else Debian's
``/var/lib/prometheus/node-exporter``. The parts are rendered into ``<evidence>/prom/<host>.prom`` and sent by
one ad-hoc ``ansible.builtin.copy`` run per distinct folder (``src`` templated per host on the controller: no
file content on a command line, however many hosts), written atomically by the copy module (mode 0644).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterctl.paths import write_atomic
from clusterctl.report import prom

DEFAULT_DIR = "/var/lib/prometheus/node-exporter"
_TRUE = ("1", "true", "yes", "on")


@dataclass
class _One:
    hosts: dict[str, Any]


def _truthy(v: Any) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() in _TRUE) or (isinstance(v, int) and v == 1)


def targets(hosts: Iterable[str], host_vars: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """host -> its textfile folder, for the hosts with ``monitoring_enabled`` (a templated folder is left out:
    only Ansible knows its value, and a guess would write where node_exporter does not read)."""
    out: dict[str, str] = {}
    for h in hosts:
        hv = host_vars.get(h) or {}
        if not _truthy(hv.get("monitoring_enabled")):
            continue
        folder = str(hv.get("node_health_textfile_dir") or hv.get("monitoring_textfile_dir") or DEFAULT_DIR)
        if "{{" in folder or "{%" in folder or not folder.startswith("/"):
            continue
        out[h] = folder.rstrip("/") or "/"
    return out


def write_local(report: Any, folders: Mapping[str, str], out: Path, now: float | None = None,
                drained: Iterable[str] = ()) -> dict[str, Path]:
    """Each target host's part of ``report`` as ``out/<host>.prom``; host -> file."""
    gone = set(drained)
    files: dict[str, Path] = {}
    for host in sorted(folders):
        if host not in report.hosts:
            continue
        text = prom.render(_One({host: report.hosts[host]}), now, drained=[host] if host in gone else [])
        files[host] = out / f"{host}.prom"
        write_atomic(files[host], text)
    return files


def push(inventory: Path, folders: Mapping[str, str], out: Path,
         run: Callable[..., dict[str, dict[str, Any]]] | None = None) -> dict[str, str]:
    """Copy ``out/<host>.prom`` to ``<folder>/clusterctl.prom`` on each host in one ad-hoc run; host -> why
    it was not written (absent: written)."""
    if not folders:
        return {}
    if run is None:
        from clusterctl.runner import run_module

        run = run_module
    groups: dict[str, list[str]] = {}
    for host, folder in sorted(folders.items()):
        groups.setdefault(folder, []).append(host)
    problems: dict[str, str] = {}
    for folder, hosts in sorted(groups.items()):  # one run per folder: usually one for all
        results = run(inventory, ":".join(hosts), "ansible.builtin.copy",
                      {"src": f"{out}/{{{{ inventory_hostname }}}}.prom", "dest": f"{folder}/{prom.TEXTFILE}",
                       "mode": "0644"})
        for host in hosts:
            res = results.get(host)
            if res is None:
                problems[host] = "no result from Ansible"
            elif res.get("_event") != "runner_on_ok":
                problems[host] = str(res.get("msg") or res.get("_event") or "failed")[:300]
    return problems
