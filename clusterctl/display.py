"""What a person sees during and after a run: live progress and the final host table."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from clusterctl.runner import RunResult

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


class RunProgress:
    """Event sink: a progress bar on a terminal, one plain line per notable event otherwise."""

    def __init__(self, hosts: int, interactive: bool | None = None) -> None:
        self.interactive = sys.stdout.isatty() if interactive is None else interactive
        self.hosts = max(hosts, 1)
        self.task = ""
        self.done_in_task = 0
        self._progress: Progress | None = None
        self._bar: Any = None

    def __enter__(self) -> RunProgress:
        if self.interactive:
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                      TextColumn("{task.completed}/{task.total} hosts"), TimeElapsedColumn(),
                                      console=console, transient=True)
            self._progress.start()
            self._bar = self._progress.add_task("starting", total=self.hosts)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event", "")
        data = event.get("event_data") or {}
        if kind == "playbook_on_task_start":
            self.task = str(data.get("task") or "")
            self.done_in_task = 0
            if self._progress is not None:
                self._progress.update(self._bar, description=self.task[:60], completed=0)
            return
        if kind == "playbook_on_play_start" and not self.interactive:
            console.print(f"PLAY {data.get('play', '')}")
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
        if self._progress is not None:
            self._progress.update(self._bar, completed=min(self.done_in_task, self.hosts))
            if status in ("FAILED", "UNREACHABLE"):
                self._progress.console.print(f"[red]{status}[/red] {host}: {self.task}: {_msg(res)}")
        elif status in ("changed", "FAILED", "UNREACHABLE"):
            extra = f": {_msg(res)}" if status != "changed" else ""
            console.print(f"  {status:<11} {host:<20} {self.task}{extra}")


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
