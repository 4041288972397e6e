"""One typed wrapper over ansible-runner: every command that runs Ansible goes through here.

:class:`AnsibleCall` is the one place that builds ansible-runner's arguments (playbook or ad-hoc
module, limit, tags, check/diff, Ansible's verbosity, a timeout, extra vars, a vault password
file); :func:`execute` runs it and returns per-host results. It sets the roles/plugins paths of
the installed package through the child's environment (never this process's), keeps a state
folder per inventory (artifacts of each run, the fact cache, the hosts that failed or were never
reached last time for ``--retry``), streams events to a progress display and to python logging
(``clusterctl.ansible``: Ansible's own output, ``clusterctl.runner``: what was run).

When every host of a play fails or is unreachable, ansible-playbook stops (event
``playbook_on_no_hosts_remaining``): later plays never run. :func:`run_playbook` then runs the
playbook again limited to the hosts it targets that got no result yet, until no new host is
reached or a pass runs to its end, and reports the hosts still without a result as *not reached*.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import io
import json
import logging
import os
import shlex
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from clusterctl import collection, extra_vars, leftovers, paths
from clusterctl.errors import EXIT_FAILED, EXIT_HOSTS_FAILED, EXIT_OK, EXIT_UNREACHABLE, UsageError

log = logging.getLogger("clusterctl.runner")
ansible_log = logging.getLogger("clusterctl.ansible")

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


@dataclass(frozen=True)
class Change:
    """One changed task or handler on a host: its name and where it is declared (``FILE:LINE``)."""

    task: str
    path: str = ""


@dataclass
class RunResult:
    rc: int
    status: str  # ansible-runner status: successful, failed, timeout, canceled
    artifacts_dir: Path
    hosts: dict[str, HostStats] = field(default_factory=dict)
    failed_hosts: dict[str, str] = field(default_factory=dict)  # host -> "task: message"
    unreachable_hosts: dict[str, str] = field(default_factory=dict)
    changes: dict[str, list[str]] = field(default_factory=dict)  # host -> tasks that changed
    changed_at: dict[str, list[Change]] = field(default_factory=dict)  # host -> the same, with task_path
    diffs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # host -> (task, diff text)
    not_reached: dict[str, str] = field(default_factory=dict)  # targeted hosts that got no result, why
    stopped_early: bool = False  # ansible-playbook stopped: every host of a play failed/was unreachable
    plays_started: int = 0
    passes: list[Path] = field(default_factory=list)  # artifacts of every pass (see run_playbook)
    seconds: float = 0.0
    leftovers: list[int] = field(default_factory=list)  # pids of the run's processes ended after it stopped

    @property
    def problem_hosts(self) -> list[str]:
        return sorted({*self.failed_hosts, *self.unreachable_hosts, *self.not_reached})

    @property
    def unreached(self) -> dict[str, str]:
        """Unreachable hosts and hosts the run never got to, with why."""
        return {**self.not_reached, **self.unreachable_hosts}

    @property
    def exit_code(self) -> int:
        """0 ok, 3 some host failed, 4 some host unreachable or never reached (and none failed),
        1 Ansible itself failed (or timed out) before any host failed."""
        if self.failed_hosts:
            return EXIT_HOSTS_FAILED
        if self.status in ("timeout", "canceled"):
            return EXIT_FAILED
        if self.unreachable_hosts or self.not_reached:
            return EXIT_UNREACHABLE
        return EXIT_OK if self.rc == 0 else EXIT_FAILED

    def merge(self, other: RunResult) -> None:
        """Fold a later pass of the same run into this result."""
        for host, st in other.hosts.items():
            mine = self.hosts.setdefault(host, HostStats())
            for f in ("ok", "changed", "failed", "unreachable", "skipped"):
                setattr(mine, f, getattr(mine, f) + getattr(st, f))
        for mine_d, theirs in ((self.failed_hosts, other.failed_hosts),
                               (self.unreachable_hosts, other.unreachable_hosts)):
            for h, why in theirs.items():
                mine_d.setdefault(h, why)
        for mine_l, theirs_l in ((self.changes, other.changes), (self.changed_at, other.changed_at),
                                 (self.diffs, other.diffs)):
            for h, items in theirs_l.items():
                mine_l.setdefault(h, []).extend(items)  # type: ignore[arg-type]
        self.passes.extend(other.passes)
        self.stopped_early = other.stopped_early
        self.plays_started = other.plays_started
        if other.rc != 0 and self.rc == 0:
            self.rc = other.rc
        if other.status != "successful":
            self.status = other.status
        self.seconds += other.seconds


@dataclass(frozen=True)
class RunOptions:
    """What a user passes through to Ansible, the same for every run of one command."""

    verbosity: int = 0  # -v, -vv ...: Ansible's own verbosity
    timeout: int | None = None  # seconds; ansible-runner stops the run (status "timeout")
    extra_vars: tuple[str, ...] = ()  # as typed after -e: "k=v k2=v2", JSON/YAML, or "@file"
    vault_password_file: Path | None = None


#: the options of the command being run (the CLI sets them once; a library caller may pass its own)
current_options: contextvars.ContextVar[RunOptions | None] = contextvars.ContextVar("clusterctl_run_options",
                                                                                    default=None)


def _options(given: RunOptions | None) -> RunOptions:
    return given or current_options.get() or RunOptions()


def state_dir(inventory: Path) -> Path:
    """Per-inventory state: ``$CLUSTERCTL_STATE_DIR`` or ``~/.local/state/clusterctl``, then a slug."""
    base = Path(os.environ.get("CLUSTERCTL_STATE_DIR") or Path.home() / ".local" / "state" / "clusterctl")
    real = inventory.resolve()
    slug = f"{real.name}-{hashlib.sha256(str(real).encode()).hexdigest()[:8]}"
    d = base / slug
    d.mkdir(parents=True, exist_ok=True)
    return d


def inventory_lock(inventory: Path, command: str) -> contextlib.AbstractContextManager[None]:
    """One changing run per inventory: ``<state dir>/lock``, held by provision, reconfigure, remediate
    (each run of its loop) and verify; a second run exits 6 naming the holder (:func:`paths.exclusive`)."""
    return paths.exclusive(state_dir(inventory) / "lock", f"clusterctl {command} {inventory}",
                           what=f"inventory {inventory}")


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


def write_state(path: Path, data: Any) -> None:
    """Write a JSON state file atomically: a temporary file in the same folder, then os.replace."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_state(path: Path, check: Callable[[Any], bool]) -> Any | None:
    """A JSON state file's content; None when absent. A file that is not JSON or fails ``check`` is
    reported (warning on the ``clusterctl`` logger), renamed ``<name>.corrupt`` and treated as absent."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        return _set_aside(path, f"cannot be read ({exc})")
    try:
        data = json.loads(text)
    except ValueError as exc:
        return _set_aside(path, f"is not JSON ({exc})")
    if not check(data):
        return _set_aside(path, "does not hold what clusterctl writes there")
    return data


def _set_aside(path: Path, why: str) -> Any | None:
    aside = path.with_name(path.name + ".corrupt")
    try:
        os.replace(path, aside)
        where = f"set aside as {aside}"
    except OSError as exc:
        where = f"could not be set aside ({exc})"
    log.warning("state file %s %s; %s and ignored", path, why, where)
    return None


def _is_last_failed(data: Any) -> bool:
    return (isinstance(data, dict) and isinstance(data.get("hosts"), dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in data["hosts"].items()))


def read_last_failed(inventory: Path) -> dict[str, str]:
    """Hosts that failed, were unreachable or never reached in the last run (host -> why)."""
    data = read_state(last_failed_file(inventory), _is_last_failed)
    return dict(data["hosts"]) if data else {}


def _summarise(event: dict[str, Any], result: RunResult) -> None:
    kind = event.get("event", "")
    if kind == "playbook_on_no_hosts_remaining":
        result.stopped_early = True
        return
    if kind == "playbook_on_play_start":
        result.plays_started += 1
        return
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
            result.changed_at.setdefault(host, []).append(Change(task, str(data.get("task_path") or "")))
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
    if kind == "runner_on_ok":
        # a loop task's diffs are its changed items' (res.results[i].diff), not the task's (issue 28:
        # the plan of the NCCL files, one loop task, showed the change without its diff)
        items = [r for r in res.get("results") or [] if isinstance(r, dict) and r.get("changed")]
        diffs = [res["diff"]] if res.get("diff") else [r["diff"] for r in items if r.get("diff")]
        text = "\n".join(t for t in map(_diff_text, diffs) if t)
        if text:
            result.diffs.setdefault(host, []).append((task, text))


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


def _extra_vars_args(options: RunOptions, tmpdir: Path, stack: contextlib.ExitStack) -> list[str]:
    """``-e`` arguments for the user's extra vars (read by :mod:`clusterctl.extra_vars`). ``@file``
    passes through; inline values (``k=v`` pairs, JSON or YAML) go into a 0600 file that is removed
    after the run, so that neither the process list nor the run's artifacts (``command``) show them."""
    out: list[str] = []
    for ev in extra_vars.read_all(options.extra_vars):
        if ev.file is not None:
            out += ["-e", f"@{ev.file}"]
            continue
        fd, name = tempfile.mkstemp(prefix="extravars-", suffix=".json", dir=tmpdir)
        stack.callback(Path(name).unlink, missing_ok=True)
        with os.fdopen(fd, "w") as out_file:
            json.dump(ev.data, out_file, default=str)
        out += ["-e", f"@{name}"]
    return out


@dataclass
class AnsibleCall:
    """Everything one ansible-runner run needs; :meth:`kwargs` is the only place its arguments are built."""

    inventory: Path
    playbook: Path | None = None  # a playbook run, or
    module: str | None = None  # an ad-hoc module run on ``pattern``
    module_args: str | None = None
    pattern: str | None = None
    limit: str | None = None
    tags: str | None = None
    check: bool = False
    diff: bool = False
    forks: int | None = None
    extravars: dict[str, Any] = field(default_factory=dict)  # clusterctl's own variables
    label: str = "run"
    options: RunOptions = field(default_factory=RunOptions)

    def cmdline(self, stack: contextlib.ExitStack) -> list[str]:
        args: list[str] = []
        if self.check:
            args.append("--check")
        if self.diff:
            args.append("--diff")
        if self.options.vault_password_file is not None:
            f = self.options.vault_password_file.expanduser()
            if not f.is_file():
                raise UsageError(f"--vault-password-file {f}: no such file")
            args += ["--vault-password-file", str(f.resolve())]
        args += _extra_vars_args(self.options, state_dir(self.inventory) / "tmp", stack)
        return args

    def kwargs(self, ident: str, stack: contextlib.ExitStack) -> dict[str, Any]:
        st = state_dir(self.inventory)
        (st / "tmp").mkdir(mode=0o700, exist_ok=True)
        (st / "runs").mkdir(exist_ok=True)
        (st / "facts").mkdir(mode=0o700, exist_ok=True)  # a file there: one line naming it, before Ansible runs
        kw: dict[str, Any] = {
            "private_data_dir": str(st),
            "artifact_dir": str(st / "runs"),
            "ident": ident,
            "inventory": str(self.inventory.resolve()),
            "envvars": ansible_env(self.inventory),
            # ansible-runner points the fact cache at each run's own artifacts unless told otherwise (an
            # absolute path is kept as it is): one cache per inventory, read by the next run (tagged runs)
            "fact_cache": str(st / "facts"),
            "fact_cache_type": "jsonfile",
            "quiet": True,
            "suppress_env_files": True,
            "rotate_artifacts": 50,
            "verbosity": self.options.verbosity or None,
            "timeout": self.options.timeout,
            "extravars": self.extravars,
            "cmdline": shlex.join(self.cmdline(stack)) or None,
        }
        if self.module is not None:
            kw.update(host_pattern=self.pattern or "all", module=self.module, module_args=self.module_args)
        else:
            assert self.playbook is not None
            kw.update(playbook=str(self.playbook), limit=self.limit, tags=self.tags, forks=self.forks)
        return kw


def execute(call: AnsibleCall, on_event: EventHandler | None = None) -> RunResult:
    """Run one call; never raises for host failures (they are in the result)."""
    import ansible_runner

    runs = state_dir(call.inventory) / "runs"
    runs.mkdir(exist_ok=True)
    ident = _run_ident(runs, call.label)
    result = RunResult(rc=-1, status="unstarted", artifacts_dir=runs / ident, passes=[runs / ident])

    def handler(event: dict[str, Any]) -> bool:
        _summarise(event, result)
        text = event.get("stdout")
        if text:
            ansible_log.debug("%s", text)
        if on_event is not None:
            on_event(event)
        return True

    with contextlib.ExitStack() as stack:
        kw = call.kwargs(ident, stack)
        what = call.playbook.name if call.playbook is not None else f"{call.module} on {call.pattern}"
        log.info("ansible %s: %s limit=%s tags=%s check=%s timeout=%s artifacts=%s", call.label, what,
                 call.limit, call.tags, call.check, call.options.timeout, result.artifacts_dir)
        mark = f"{ident}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        kw["envvars"] = {**(kw.get("envvars") or {}), leftovers.MARKER: mark}
        started = time.monotonic()
        try:
            r = ansible_runner.run(event_handler=handler, **kw)
        finally:
            # a timed-out or interrupted run leaves ansible-core's setsid() workers running: end them
            result.leftovers = leftovers.end(mark)
        result.seconds = time.monotonic() - started
    command = getattr(getattr(r, "config", None), "command", None)
    if command:
        log.debug("ran: %s", shlex.join(map(str, command)))
    result.rc = int(r.rc if r.rc is not None else 1)
    result.status = str(r.status)
    for host, n in (r.stats or {}).get("dark", {}).items():
        result.hosts.setdefault(host, HostStats()).unreachable = max(n, result.hosts[host].unreachable)
        result.unreachable_hosts.setdefault(host, "unreachable")
    for host in (r.stats or {}).get("processed", {}):
        result.hosts.setdefault(host, HostStats())
    log.info("ansible %s: %s (rc %s) in %.1fs", call.label, result.status, result.rc, result.seconds)
    return result


def play_patterns(playbook: Path) -> list[str] | None:
    """The ``hosts:`` pattern of each play of ``playbook``; None when that cannot be told (an
    imported playbook, a templated pattern, an unreadable file)."""
    try:
        plays = yaml.safe_load(playbook.read_text())
    except (OSError, yaml.YAMLError):
        return None
    if not isinstance(plays, list):
        return None
    patterns = []
    for play in plays:
        if not isinstance(play, dict) or "import_playbook" in play:
            return None
        hosts = play.get("hosts")
        if isinstance(hosts, list):
            hosts = ":".join(map(str, hosts))
        if not isinstance(hosts, str) or "{{" in hosts:
            return None
        patterns.append(hosts)
    return patterns


def targets(patterns: list[str], inventory: Path, limit: str | None) -> list[str] | None:
    """Inventory hosts (within ``limit``) that the play ``patterns`` target, in inventory order;
    None when Ansible cannot read the inventory (the run itself says why)."""
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader

    quiet = io.StringIO()  # Ansible warns on stderr about patterns matching nothing
    try:
        with contextlib.redirect_stderr(quiet), contextlib.redirect_stdout(quiet):
            im = InventoryManager(DataLoader(), sources=[str(inventory.resolve())])
            if limit:
                im.subset(limit)
            seen: dict[str, None] = {}
            for pat in patterns:
                for h in im.get_hosts(pat):
                    seen.setdefault(h.name, None)
    except Exception as exc:
        log.debug("cannot tell the hosts of %s: %s", patterns, exc)
        return None
    return list(seen)


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
    options: RunOptions | None = None,
) -> RunResult:
    """Run ``playbooks/<playbook>`` against ``inventory``; never raises for host failures.

    When ansible-playbook stops early (every host of a play failed or was unreachable), the
    playbook runs again limited to the targeted hosts without a result yet (later plays' hosts),
    until no new host is reached; hosts still without a result are ``not_reached``. Failed,
    unreachable and not-reached hosts are remembered for ``--retry``.
    """
    pb = Path(playbook) if Path(playbook).is_absolute() else paths.playbooks() / playbook
    call = AnsibleCall(inventory, playbook=pb, limit=limit, tags=tags, check=check, diff=diff, forks=forks,
                       extravars=extravars or {}, label=label, options=_options(options))
    result = execute(call, on_event)
    patterns = play_patterns(pb)

    def stopped(r: RunResult) -> bool:
        """Every host of a play failed or was unreachable: ansible-playbook skipped the later plays."""
        return r.rc != 0 and (r.stopped_early or (patterns is not None and r.plays_started < len(patterns)))

    early = stopped(result)
    cut = result.status in ("timeout", "canceled")  # --timeout, or Ctrl-C/SIGTERM (ansible-runner's handler)
    wanted = targets(patterns or ["all"], inventory, limit) if (patterns and early) or cut else None
    if wanted is not None:
        for n in range(2, len(wanted) + 2):
            missing = [h for h in wanted if h not in result.hosts]
            if not missing or not early or result.status in ("timeout", "canceled"):
                break
            log.warning("ansible-playbook stopped before %s (every host of a play failed or was unreachable); "
                        "running the later plays for them", ",".join(missing))
            more = execute(replace(call, limit=",".join(missing), label=f"{label}-cont{n}"), on_event)
            early = stopped(more)
            result.merge(more)
            if not any(h in more.hosts for h in missing):
                break
        # hosts without a result count as not reached only when the run stopped before them (a host
        # whose plays had nothing to do under --tags gets no result either, and is fine)
        if cut:
            # a cut run finished no host: every targeted host that did not fail is "not known to be done"
            # (a host with some ok tasks may still be missing later ones), so --retry covers it
            why = "the run timed out before it finished" if result.status == "timeout" else \
                "the run was interrupted (Ctrl-C or SIGTERM) before it finished"
            done = {**result.failed_hosts, **result.unreachable_hosts}
            result.not_reached = {h: why for h in wanted if h not in done}
        elif early:
            why = "never reached (the run stopped before its plays)"
            result.not_reached = {h: why for h in wanted if h not in result.hosts}
    if record_failures and not check:
        _record_failures(inventory, result, limit)
    return result


def _record_failures(inventory: Path, result: RunResult, limit: str | None) -> None:
    """Remember failed/unreachable/not-reached hosts for ``--retry``; a clean run clears them."""
    previous = read_last_failed(inventory)
    hosts = {**result.not_reached, **result.failed_hosts, **result.unreachable_hosts}
    if limit is not None:
        # a partial run only settles the hosts it touched
        for h in result.hosts:
            previous.pop(h, None)
        hosts = {**previous, **hosts}
    write_state(last_failed_file(inventory), {"hosts": hosts, "artifacts": str(result.artifacts_dir)})


def run_module(
    inventory: Path,
    pattern: str,
    module: str,
    args: dict[str, Any] | str,
    *,
    check: bool = False,
    options: RunOptions | None = None,
) -> dict[str, dict[str, Any]]:
    """Run one module ad hoc on ``pattern``; return host -> result (``res`` of the event, with
    ``_event``: runner_on_ok, runner_on_failed, runner_on_unreachable). A dict ``args`` is passed as
    JSON (Ansible's ad-hoc ``-a`` takes JSON), so lists such as ``argv`` need no quoting."""
    results: dict[str, dict[str, Any]] = {}

    def collect(event: dict[str, Any]) -> None:
        data = event.get("event_data") or {}
        if event.get("event", "").startswith("runner_on_") and event["event"] != "runner_on_start" \
                and data.get("host"):
            res = dict(data.get("res") or {})
            res["_event"] = event["event"]
            results[data["host"]] = res

    opts = _options(options)
    call = AnsibleCall(inventory, module=module, pattern=pattern, check=check, label="adhoc",
                       module_args=json.dumps(args) if isinstance(args, dict) else args,
                       options=replace(opts, extra_vars=()))  # playbook vars are not for ad-hoc commands
    execute(call, collect)
    return results
