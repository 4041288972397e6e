"""Issue 28: the terminal progress display froze (rich stops a task's clock once it completes, and the
one bar completed at the first task every host finished) and counted hosts per task, not the run.

A fake event stream (the shapes ansible-runner hands to the event handler) and a fake clock drive
clusterctl.display.RunProgress; what a person sees is rendered by rich into a string.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from clusterctl.display import RunProgress


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def task(name: str) -> dict[str, Any]:
    return {"event": "playbook_on_task_start", "event_data": {"task": name}}


def ok(host: str, changed: bool = False) -> dict[str, Any]:
    return {"event": "runner_on_ok", "event_data": {"host": host, "res": {"changed": changed}}}


def screen(p: RunProgress) -> str:
    """What the live display shows now, as text."""
    assert p._progress is not None
    buf = io.StringIO()
    Console(file=buf, force_terminal=True, color_system=None, width=160).print(p._progress.get_renderable())
    return buf.getvalue()


def test_terminal_clock_keeps_running_through_a_long_task_after_a_completed_one() -> None:
    clock = Clock()
    term = Console(file=io.StringIO(), force_terminal=True, width=160)
    with RunProgress(2, out=term, clock=clock) as p:
        assert p.interactive
        p(task("Gathering Facts"))
        p(ok("n1"))
        p(ok("n2", changed=True))  # the first task ends on every host
        clock.now += 5
        p(task("Build nccl-tests"))
        clock.now += 300  # five minutes without an event
        shown = screen(p)
    run_row, task_row = [ln for ln in shown.splitlines() if ln.strip()][:2]
    assert "run: 2 task(s), 1 ok, 1 changed" in run_row and "0:05:05" in run_row  # the run's clock
    assert "Build nccl-tests" in task_row and "0/2 hosts" in task_row and "0:05:00" in task_row


def test_run_row_counts_the_run_not_the_task() -> None:
    clock = Clock()
    term = Console(file=io.StringIO(), force_terminal=True, width=160)
    with RunProgress(2, out=term, clock=clock) as p:
        for t in ("a", "b", "c"):
            p(task(t))
            p(ok("n1", changed=t == "b"))
            p(ok("n2"))
        p({"event": "runner_on_failed", "event_data": {"host": "n2", "res": {"msg": "boom"}}})
        shown = screen(p)
    assert "run: 3 task(s), 5 ok, 1 changed, 1 failed" in shown
    assert "2/2 hosts" in shown  # the current task's count, capped at the run's hosts


def test_plain_output_says_a_long_task_is_still_running() -> None:
    clock = Clock()
    buf = io.StringIO()
    out = Console(file=buf, force_terminal=False, width=200)
    with RunProgress(2, out=out, clock=clock, heartbeat=60) as p:
        assert not p.interactive
        p(task("Build nccl-tests"))
        p(ok("n1"))
        clock.now += 30
        p.tick()
        assert "still running" not in buf.getvalue()  # not yet a heartbeat
        clock.now += 31
        p.tick()
        p.tick()  # once per heartbeat, not per tick
        clock.now += 60
        p.tick()
    lines = [ln for ln in buf.getvalue().splitlines() if "still running" in ln]
    assert lines == ["  ... still running: Build nccl-tests (61s, 1/2 hosts done; run 61s)",
                     "  ... still running: Build nccl-tests (121s, 1/2 hosts done; run 121s)"]
