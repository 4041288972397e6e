"""One typed wrapper over ansible-runner: every command that runs Ansible goes through here.

It sets the roles/plugins paths of the installed package (no ANSIBLE_* variable needed from
the user), keeps a state folder per inventory (artifacts of each run, the fact cache, the hosts
that failed last time for ``--retry``), streams events to a progress display, and returns
per-host results.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusterctl import collection, paths

EventHandler = Callable[[dict[str, Any]], None]


@dataclass
class HostStats:
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: int = 0
    skipped: int = 0

    @property
    def state(self) -> str:
        if self.unreachable:
            return "unreachable"
        if self.failed:
            return "failed"
        if self.changed:
            return "changed"
        return "ok"


@dataclass
class RunResult:
    rc: int
    status: str  # ansible-runner status: successful, failed, timeout, canceled
    artifacts_dir: Path
    hosts: dict[str, HostStats] = field(default_factory=dict)
    failed_hosts: dict[str, str] = field(default_factory=dict)  # host -> "task: message"
    unreachable_hosts: dict[str, str] = field(default_factory=dict)
    changes: dict[str, list[str]] = field(default_factory=dict)  # host -> tasks that changed
    diffs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # host -> (task, diff text)
    seconds: float = 0.0

    @property
    def problem_hosts(self) -> list[str]:
        return sorted({*self.failed_hosts, *self.unreachable_hosts})

    @property
    def exit_code(self) -> int:
        """0 ok, 3 some host failed, 4 some host unreachable (and none failed), 1 Ansible itself failed."""
        if self.failed_hosts:
            return 3
        if self.unreachable_hosts:
            return 4
        return 0 if self.rc == 0 else 1


def state_dir(inventory: Path) -> Path:
    """Per-inventory state: ``$CLUSTERCTL_STATE_DIR`` or ``~/.local/state/clusterctl``, then a slug."""
    base = Path(os.environ.get("CLUSTERCTL_STATE_DIR") or Path.home() / ".local" / "state" / "clusterctl")
    real = inventory.resolve()
    slug = f"{real.name}-{hashlib.sha256(str(real).encode()).hexdigest()[:8]}"
    d = base / slug
    d.mkdir(parents=True, exist_ok=True)
    return d


def ansible_env(inventory: Path) -> dict[str, str]:
    """Environment that makes Ansible find clusterctl's roles and plugins."""
    root = paths.data_root()
    st = state_dir(inventory)
    bindir = str(Path(sys.executable).parent)  # ansible-playbook of the same installation
    path = os.environ.get("PATH", "/usr/bin:/bin")
    return {
        "PATH": path if path.split(":")[0] == bindir else f"{bindir}:{path}",
        "ANSIBLE_CONFIG": str(root / "ansible.cfg"),
        **collection.ansible_env(),  # roles, modules, filters, callback: clusterctl.hpc.*
        "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(st / "facts"),
        "ANSIBLE_LOCAL_TEMP": str(st / "tmp"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
    }


def last_failed_file(inventory: Path) -> Path:
    return state_dir(inventory) / "last-failed.json"


def read_last_failed(inventory: Path) -> dict[str, str]:
    f = last_failed_file(inventory)
    if not f.is_file():
        return {}
    data = json.loads(f.read_text())
    return dict(data.get("hosts", {}))


def _summarise(event: dict[str, Any], result: RunResult) -> None:
    kind = event.get("event", "")
    data = event.get("event_data") or {}
    host = data.get("host") or data.get("remote_addr")
    if not host:
        return
    task = str(data.get("task") or "")
    res = data.get("res") or {}
    stats = result.hosts.setdefault(host, HostStats())
    if kind == "runner_on_ok":
        stats.ok += 1
        if res.get("changed"):
            stats.changed += 1
            result.changes.setdefault(host, []).append(task)
    elif kind == "runner_on_failed" and not data.get("ignore_errors"):
        stats.failed += 1
        msg = res.get("msg") or res.get("stderr") or res.get("reason") or "failed"
        result.failed_hosts.setdefault(host, f"{task}: {str(msg).strip()[:400]}")
    elif kind == "runner_on_unreachable":
        stats.unreachable += 1
        msg = res.get("msg") or "unreachable"
        result.unreachable_hosts.setdefault(host, f"{task}: {str(msg).strip()[:400]}")
    elif kind == "runner_on_skipped":
        stats.skipped += 1
    if kind == "runner_on_ok" and res.get("diff"):
        result.diffs.setdefault(host, []).append((task, _diff_text(res["diff"])))


def _diff_text(diff: Any) -> str:
    items = diff if isinstance(diff, list) else [diff]
    out: list[str] = []
    for d in items:
        if not isinstance(d, dict):
            continue
        if d.get("prepared"):
            out.append(str(d["prepared"]))
            continue
        before, after = d.get("before"), d.get("after")
        header = d.get("after_header") or d.get("before_header") or ""
        if isinstance(before, str) and isinstance(after, str):
            import difflib

            out.extend(difflib.unified_diff(before.splitlines(), after.splitlines(), "before: " + header,
                                            "after: " + header, lineterm=""))
        elif before != after:
            out.append(f"{header} before: {before!r} after: {after!r}")
    return "\n".join(out)


def _run_ident(runs: Path, label: str) -> str:
    """``<time>-<label>-<pid>``, with ``-2``, ``-3``... when a run of the same second already has it
    (a rollout runs several ad-hoc commands a second; each keeps its own artifacts)."""
    base = time.strftime("%Y%m%d-%H%M%S-") + label + f"-{os.getpid()}"
    ident, n = base, 1
    while (runs / ident).exists():
        n += 1
        ident = f"{base}-{n}"
    return ident


def run_playbook(
    playbook: str,
    inventory: Path,
    *,
    limit: str | None = None,
    tags: str | None = None,
    check: bool = False,
    diff: bool = False,
    forks: int | None = None,
    extravars: dict[str, Any] | None = None,
    on_event: EventHandler | None = None,
    label: str = "run",
    record_failures: bool = True,
) -> RunResult:
    """Run ``playbooks/<playbook>`` against ``inventory``; never raises for host failures."""
    import ansible_runner

    st = state_dir(inventory)
    runs = st / "runs"
    runs.mkdir(exist_ok=True)
    ident = _run_ident(runs, label)
    (st / "tmp").mkdir(exist_ok=True)
    pb = Path(playbook) if Path(playbook).is_absolute() else paths.playbooks() / playbook
    cmdline: list[str] = []
    if check:
        cmdline.append("--check")
    if diff:
        cmdline.append("--diff")
    result = RunResult(rc=-1, status="unstarted", artifacts_dir=runs / ident)

    def handler(event: dict[str, Any]) -> bool:
        _summarise(event, result)
        if on_event is not None:
            on_event(event)
        return True

    env = ansible_env(inventory)
    os.environ["PATH"] = env["PATH"]  # ansible-runner looks the binary up in our own PATH
    started = time.monotonic()
    r = ansible_runner.run(
        private_data_dir=str(st),
        artifact_dir=str(runs),
        ident=ident,
        playbook=str(pb),
        inventory=str(inventory.resolve()),
        limit=limit,
        tags=tags,
        forks=forks,
        cmdline=" ".join(cmdline) or None,
        extravars=extravars or {},
        envvars=env,
        event_handler=handler,
        quiet=True,
        suppress_env_files=True,
        rotate_artifacts=50,
    )
    result.seconds = time.monotonic() - started
    result.rc = int(r.rc if r.rc is not None else 1)
    result.status = str(r.status)
    for host, n in (r.stats or {}).get("dark", {}).items():
        result.hosts.setdefault(host, HostStats()).unreachable = max(n, result.hosts[host].unreachable)
        result.unreachable_hosts.setdefault(host, "unreachable")
    for host in (r.stats or {}).get("processed", {}):
        result.hosts.setdefault(host, HostStats())
    if record_failures and not check:
        _record_failures(inventory, result, limit)
    return result


def _record_failures(inventory: Path, result: RunResult, limit: str | None) -> None:
    """Remember failed/unreachable hosts for ``--retry``; a clean run clears them."""
    f = last_failed_file(inventory)
    previous = read_last_failed(inventory)
    hosts = {**result.failed_hosts, **result.unreachable_hosts}
    if limit is not None:
        # a partial run only settles the hosts it touched
        for h in result.hosts:
            previous.pop(h, None)
        hosts = {**previous, **hosts}
    f.write_text(json.dumps({"hosts": hosts, "artifacts": str(result.artifacts_dir)}, indent=2))


def run_module(
    inventory: Path,
    pattern: str,
    module: str,
    args: str,
    *,
    check: bool = False,
) -> dict[str, dict[str, Any]]:
    """Run one module ad hoc on ``pattern``; return host -> result (``res`` of the event)."""
    import ansible_runner

    st = state_dir(inventory)
    (st / "tmp").mkdir(exist_ok=True)
    env = ansible_env(inventory)
    os.environ["PATH"] = env["PATH"]
    results: dict[str, dict[str, Any]] = {}

    def handler(event: dict[str, Any]) -> bool:
        data = event.get("event_data") or {}
        if event.get("event", "").startswith("runner_on_") and data.get("host"):
            res = dict(data.get("res") or {})
            res["_event"] = event["event"]
            results[data["host"]] = res
        return True

    ansible_runner.run(
        private_data_dir=str(st), artifact_dir=str(st / "runs"), ident=_run_ident(st / "runs", "adhoc"),
        host_pattern=pattern, module=module, module_args=args,
        inventory=str(inventory.resolve()), envvars=env, event_handler=handler, quiet=True,
        suppress_env_files=True, rotate_artifacts=50, cmdline="--check" if check else None,
    )
    return results
