"""Every command/shell task's ``changed_when`` must be honest when the task does not run its command.

Found on the live H200 (bench/device/h200_gpu_tools.sh, 2026-12-03): ``make`` guarded by ``creates:``
with ``changed_when: true`` reported "changed" on every later run although Ansible skipped the
command ("Did not run command since ... exists"), so the role's second run was not change-free. The
guard: such a task has ``creates``/``removes`` *and* an unconditional ``changed_when`` only if the
condition also looks at the result; a plain ``true`` is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMMANDS = {"command", "shell", "ansible.builtin.command", "ansible.builtin.shell", "raw", "ansible.builtin.raw",
            "script", "ansible.builtin.script"}


def _tasks(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        yield node
        for key in ("block", "rescue", "always", "tasks", "handlers", "pre_tasks", "post_tasks"):
            if key in node:
                yield from _tasks(node[key])


def _task_files() -> list[Path]:
    files = sorted((REPO / "roles").glob("*/tasks/*.yml")) + sorted((REPO / "roles").glob("*/handlers/*.yml"))
    files += sorted((REPO / "playbooks").glob("*.yml"))
    return files


def _guarded_unconditional(task: dict[str, Any]) -> bool:
    action = next((k for k in task if k in COMMANDS), None)
    if action is None:
        return False
    args = task[action] if isinstance(task[action], dict) else {}
    guarded = "creates" in args or "removes" in args or "creates" in task.get("args", {}) \
        or "removes" in task.get("args", {})
    return guarded and task.get("changed_when") in (True, "true", "True", "yes")


@pytest.mark.parametrize("path", _task_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_creates_with_changed_when_true(path: Path) -> None:
    bad = [t.get("name", "?") for t in _tasks(yaml.safe_load(path.read_text()) or []) if _guarded_unconditional(t)]
    rel = path.relative_to(REPO)
    assert not bad, f"{rel}: creates/removes with changed_when: true (a skipped run reads as changed): {bad}"


def test_the_guard_catches_the_h200_case() -> None:
    """The rule refuses the exact shape the live run found, so this test can fail."""
    task = {"name": "Build", "ansible.builtin.command": {"argv": ["make"], "creates": "/x"}, "changed_when": True}
    assert _guarded_unconditional(task)
    task["changed_when"] = "__r.rc is defined and 'Did not run' not in __r.msg | default('')"
    assert not _guarded_unconditional(task)
