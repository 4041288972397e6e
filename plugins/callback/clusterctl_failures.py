"""Callback plugin: at the end of a plain ``ansible-playbook`` run, list failed and unreachable hosts
with the task and reason, and the ``--limit`` that retries only them (what ``clusterctl provision
--retry`` does for CLI runs)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: clusterctl_failures
type: aggregate
short_description: Summarise failed/unreachable hosts and how to retry them
description:
  - At the end of the run prints each failed or unreachable host with its task and message,
    and an C(--limit) expression retrying only those hosts.
requirements:
  - enable in ansible.cfg with C(callbacks_enabled = clusterctl.hpc.clusterctl_failures)
"""

from typing import Any  # noqa: E402

from ansible.plugins.callback import CallbackBase  # noqa: E402


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "clusterctl.hpc.clusterctl_failures"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self) -> None:
        super().__init__()
        self.problems: dict[str, str] = {}

    def _note(self, result: Any, kind: str) -> None:
        host = result._host.get_name()
        msg = str(result._result.get("msg", "")).strip().splitlines()
        self.problems.setdefault(host, f"{kind}: {result._task.get_name()}: {msg[0][:200] if msg else ''}")

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        if not ignore_errors:
            self._note(result, "failed")

    def v2_runner_on_unreachable(self, result: Any) -> None:
        self._note(result, "unreachable")

    def v2_playbook_on_stats(self, stats: Any) -> None:
        if not self.problems:
            return
        self._display.display("clusterctl: hosts that did not finish:")
        for host, why in sorted(self.problems.items()):
            self._display.display(f"  {host}: {why}")
        self._display.display(f"retry only these with: --limit {','.join(sorted(self.problems))}")
