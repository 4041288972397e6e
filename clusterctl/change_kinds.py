"""Change kinds: what a task or handler does to running work, declared where it happens.

A task or handler whose change disturbs running jobs says so with one of the tags below, on the
task itself or on a block around it::

    - name: Restart slurmd
      ansible.builtin.systemd_service: {name: slurmd, state: restarted}
      tags: [clusterctl_restarts_slurmd]

The rollout (``clusterctl reconfigure``) reads these tags, never task names: each changed task of
a plan comes with its ``task_path`` (``FILE:LINE``, in ansible-runner's event data, which carries
no tags), and :func:`kinds_at` finds the task or handler at that line in that file and returns
the kinds it declares. Renaming a task or handler therefore changes nothing; a disruptive step
without a kind tag is changed in place, without a drain (``tests/unit/test_change_kinds.py``
checks that the known disruptive handlers of the roles carry theirs).

The vocabulary is closed: a tag starting ``clusterctl_`` that is not listed here is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

#: kind -> what it means; every kind here makes the rollout drain the node first
KINDS: dict[str, str] = {
    "clusterctl_disrupts_jobs": "disturbs running jobs on the node (link flap, driver reload, remount)",
    "clusterctl_restarts_slurmd": "restarts slurmd on the node (running job steps can be lost)",
    "clusterctl_reboots": "reboots the node",
}

PREFIX = "clusterctl_"


class UnknownKindError(ValueError):
    """A ``clusterctl_*`` tag that is not in :data:`KINDS` (a typo would silently not drain)."""


@dataclass(frozen=True)
class _Task:
    first: int  # 1-based line of the task's mapping (Ansible's task_path line)
    last: int
    kinds: frozenset[str]


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps the line span of every mapping and accepts Ansible's own tags."""


def _mapping(loader: _Loader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    out = {loader.construct_object(k, deep=True): loader.construct_object(v, deep=True) for k, v in node.value}
    out["__lines__"] = (node.start_mark.line + 1, node.end_mark.line + 1)
    return out


def _unknown(loader: _Loader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return _mapping(loader, node)  # type: ignore[arg-type]


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_Loader.add_multi_constructor("!", _unknown)


def _tags(task: dict[str, Any]) -> set[str]:
    t = task.get("tags")
    if isinstance(t, str):
        return {x.strip() for x in t.split(",")}
    if isinstance(t, list):
        return {str(x) for x in t}
    return set()


def _walk(items: Any, inherited: frozenset[str], where: str, out: list[_Task]) -> None:
    if not isinstance(items, list):
        return
    for task in items:
        if not isinstance(task, dict) or "__lines__" not in task:
            continue
        own = {t for t in _tags(task) if t.startswith(PREFIX)}
        unknown = sorted(own - KINDS.keys())
        if unknown:
            raise UnknownKindError(f"{where}:{task['__lines__'][0]}: tags: {', '.join(unknown)}: not a change kind "
                                   f"(known: {', '.join(KINDS)})")
        kinds = inherited | own
        first, last = task["__lines__"]
        out.append(_Task(first, last, frozenset(kinds)))
        for key in ("block", "rescue", "always"):
            _walk(task.get(key), frozenset(kinds), where, out)


@lru_cache(maxsize=256)
def _declared(path: str, mtime_ns: int) -> tuple[_Task, ...]:
    data = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_Loader)  # a SafeLoader subclass
    out: list[_Task] = []
    if isinstance(data, list):
        if all(isinstance(p, dict) and ("hosts" in p or "import_playbook" in p) for p in data if isinstance(p, dict)):
            for play in data:  # a playbook: its plays' tasks and handlers
                if isinstance(play, dict):
                    for key in ("pre_tasks", "tasks", "post_tasks", "handlers"):
                        _walk(play.get(key), frozenset(), path, out)
        else:
            _walk(data, frozenset(), path, out)
    return tuple(out)


def declared(path: str | Path) -> tuple[_Task, ...]:
    """Every task/handler of a tasks, handlers or playbook file with its line span and kinds."""
    p = Path(path)
    return _declared(str(p), p.stat().st_mtime_ns)


def kinds_at(task_path: str | None) -> frozenset[str]:
    """Kinds declared by the task at ``FILE:LINE`` (ansible-runner's ``task_path``); empty when the
    file cannot be read or no task starts there. The innermost task spanning the line wins."""
    if not task_path or ":" not in task_path:
        return frozenset()
    file, _, line = task_path.rpartition(":")
    if not line.isdigit():
        return frozenset()
    n = int(line)
    try:
        tasks = declared(file)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return frozenset()
    exact = [t for t in tasks if t.first == n]
    if exact:
        return exact[-1].kinds
    spanning = [t for t in tasks if t.first <= n <= t.last]
    return min(spanning, key=lambda t: t.last - t.first).kinds if spanning else frozenset()
