"""What a person sees during and after a run: live progress and the final host table."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from clusterctl.runner import RunResult

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


class RunProgress:
    """Event sink: a progress display on a terminal, one plain line per notable event otherwise.

    On a terminal, two rows: the run (tasks started, results so far by outcome, the run's clock) and
    the current task (hosts done of the run's hosts, the task's own clock, reset at each task). The
    run's row never completes, so its clock runs until the run ends (issue 28: rich stops a task's
    clock once it completes, which froze the clock after the first task every host finished), and
    rich redraws it on its own, so a long task shows time passing between events. Off a terminal, a
    task running for ``heartbeat`` seconds without an event gets a "still running" line (then one each
    ``heartbeat`` seconds). ``clock`` and ``out`` are for tests.
    """

    def __init__(self, hosts: int, interactive: bool | None = None, *, out: Console | None = None,
                 clock: Callable[[], float] = time.monotonic, heartbeat: float = 60.0) -> None:
        self.out = out or console
        self.interactive = (sys.stdout.isatty() if out is None else out.is_terminal) if interactive is None \
            else interactive
        self.hosts = max(hosts, 1)
        self.task = ""
        self.done_in_task = 0
        self.tasks = 0
        self.results: dict[str, int] = {"ok": 0, "changed": 0, "failed": 0, "unreachable": 0, "skipped": 0}
        self.clock = clock
        self.heartbeat = heartbeat
        self.started = self.task_started = self.last_line = clock()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._progress: Progress | None = None
        self._run: Any = None
        self._bar: Any = None

    def __enter__(self) -> RunProgress:
        self.started = self.task_started = self.last_line = self.clock()
        if self.interactive:
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                      TextColumn("{task.fields[count]}"), TimeElapsedColumn(),
                                      console=self.out, transient=True, get_time=self.clock)
            self._progress.start()
            self._run = self._progress.add_task(self._run_text(), total=None, count="")
            self._bar = self._progress.add_task("starting", total=self.hosts, count=self._count_text())
        else:
            self._thread = threading.Thread(target=self._beat, name="clusterctl-heartbeat", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._progress is not None:
            self._progress.stop()

    def _beat(self) -> None:
        while not self._stop.wait(min(self.heartbeat, 5.0)):
            self.tick()

    def _run_text(self) -> str:
        r = self.results
        bad = "".join(f", {r[k]} {k}" for k in ("failed", "unreachable") if r[k])
        return f"run: {self.tasks} task(s), {r['ok']} ok, {r['changed']} changed{bad}"

    def _count_text(self) -> str:
        return f"{min(self.done_in_task, self.hosts)}/{self.hosts} hosts"

    def tick(self) -> None:
        """Called every few seconds between events (off a terminal): the heartbeat line of a long task."""
        with self._lock:
            now = self.clock()
            if self.interactive or not self.task or now - self.last_line < self.heartbeat:
                return
            self.last_line = now
            self.out.print(f"  ... still running: {self.task} ({now - self.task_started:.0f}s, "
                           f"{self._count_text()} done; run {now - self.started:.0f}s)", markup=False)

    def __call__(self, event: dict[str, Any]) -> None:
        with self._lock:
            self._event(event)

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("event", "")
        data = event.get("event_data") or {}
        if kind in ("playbook_on_task_start", "playbook_on_handler_task_start"):
            self.task = str(data.get("task") or "")
            self.done_in_task = 0
            self.tasks += 1
            self.task_started = self.last_line = self.clock()
            if self._progress is not None:
                self._progress.reset(self._bar, total=self.hosts, description=self.task[:60],
                                     count=self._count_text())
                self._progress.update(self._run, description=self._run_text())
            return
        if kind == "playbook_on_play_start" and not self.interactive:
            self.out.print(f"PLAY {data.get('play', '')}", markup=False)
            self.last_line = self.clock()
            return
        if not kind.startswith("runner_on_") or kind == "runner_on_start":
            return
        host = data.get("host", "?")
        res = data.get("res") or {}
        self.done_in_task += 1
        status = {
            "runner_on_ok": "changed" if res.get("changed") else "ok",
            "runner_on_failed": "ignored" if data.get("ignore_errors") else "FAILED",
            "runner_on_unreachable": "UNREACHABLE",
            "runner_on_skipped": "skipped",
        }.get(kind, kind.removeprefix("runner_on_"))
        key = {"FAILED": "failed", "UNREACHABLE": "unreachable", "ignored": "ok"}.get(status, status)
        if key in self.results:
            self.results[key] += 1
        if self._progress is not None:
            self._progress.update(self._bar, completed=min(self.done_in_task, self.hosts), count=self._count_text())
            self._progress.update(self._run, description=self._run_text())
            if status in ("FAILED", "UNREACHABLE"):
                self._progress.console.print(f"[red]{status}[/red] {escape(host)}: {escape(self.task)}: "
                                             f"{escape(_msg(res))}")
        elif status in ("changed", "FAILED", "UNREACHABLE"):
            extra = f": {_msg(res)}" if status != "changed" else ""
            self.out.print(f"  {status:<11} {host:<20} {self.task}{extra}", markup=False)
            self.last_line = self.clock()


def _msg(res: dict[str, Any]) -> str:
    """First line of a result's message (or stderr), for one-line progress output."""
    lines = str(res.get("msg") or res.get("stderr") or "").strip().splitlines()
    return lines[0][:200] if lines else ""


def print_table(table: Table, con: Console | None = None) -> None:
    """A table on a terminal; otherwise (a pipe, a file, a log) its title, a header and one line per
    row, cells separated by tabs, never wrapped or cut, for grep, cut and awk."""
    con = con or console
    if con.is_terminal:
        con.print(table)
        return

    def plain(cell: Any) -> str:
        text = cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain
        return " ".join(text.split())

    if con.quiet:
        return
    lines = [f"# {plain(table.title)}"] if table.title else []
    cols = table.columns
    lines.append("\t".join(plain(c.header) for c in cols))
    lines += ["\t".join(plain(c) for c in row) for row in zip(*(list(c.cells) for c in cols), strict=True)]
    con.file.write("\n".join(lines) + "\n")  # written as is: rich would expand the tabs
    con.file.flush()


def host_table(result: RunResult, title: str) -> Table:
    t = Table(title=title)
    for col in ("host", "ok", "changed", "failed", "unreachable", "skipped"):
        t.add_column(col, justify="left" if col == "host" else "right")
    for host in sorted(result.hosts):
        s = result.hosts[host]
        style = "red" if s.failed or s.unreachable else ("yellow" if s.changed else "")
        t.add_row(host, str(s.ok), str(s.changed), str(s.failed), str(s.unreachable), str(s.skipped), style=style)
    for host in sorted(result.not_reached):
        t.add_row(host, "-", "-", "-", "-", "-", style="red")
    return t


def retry_hint(command: str, inventory: Path, hosts: list[str]) -> str:
    """How to run again on only ``hosts``, in the words ``command`` accepts (only provision keeps
    ``--retry``; plan and verify take ``--limit``; reconfigure re-runs the component)."""
    shown = ",".join(hosts)
    if command == "provision":
        return f"retry only these hosts with: clusterctl provision {inventory} --retry"
    if command in ("plan", "verify"):
        return f"run again on only these hosts with: clusterctl {command} {inventory} --limit {shown}"
    return (f"these hosts did not finish: {shown}; run the command again, or "
            f"clusterctl provision {inventory} --retry")


def lab_hint(result: RunResult, inventory: Path) -> str | None:
    """When no host could be reached and the inventory is the embedded lab: it is probably not up."""
    from clusterctl import lab

    hosts = set(result.hosts) | set(result.not_reached)
    reached = [h for h, s in result.hosts.items() if not s.unreachable]
    if not hosts or reached:
        return None
    try:
        same = Path(inventory).resolve() == lab.lab_inventory().resolve()
    except OSError:
        same = False
    return "no host of the lab answered: start it with clusterctl lab up" if same else None


def print_summary(result: RunResult, title: str, *, command: str = "", inventory: Path | None = None) -> None:
    """The host table and each failed, unreachable or never reached host with why; ``command`` and
    ``inventory`` (when given) choose the hint for running again on only those hosts."""
    print_table(host_table(result, title))
    for host, why in sorted(result.failed_hosts.items()):
        console.print(f"[red]failed[/red]      {host}: {why}")
    for host, why in sorted(result.unreachable_hosts.items()):
        console.print(f"[red]unreachable[/red] {host}: {why}")
    for host, why in sorted(result.not_reached.items()):
        console.print(f"[red]not reached[/red] {host}: {why}")
    if result.problem_hosts and inventory is not None:
        console.print(retry_hint(command, inventory, sorted(result.problem_hosts)), markup=False)
        hint = lab_hint(result, inventory)
        if hint:
            console.print(hint, markup=False)
    if result.status == "timeout":
        err_console.print("[red]the Ansible run was stopped by --timeout[/red]")
    elif result.rc != 0 and not result.problem_hosts:
        err_console.print(f"[red]ansible-playbook failed (rc {result.rc}) before any host failed:[/red]")
        stdout = result.artifacts_dir / "stdout"
        tail = stdout.read_text(errors="replace").splitlines()[-15:] if stdout.is_file() else []
        for line in tail:
            err_console.print(f"  {line}", markup=False)
    console.print(f"artifacts: {result.artifacts_dir}  ({result.seconds:.1f}s)")
