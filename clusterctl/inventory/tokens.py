"""The single-token rules of values written into configuration files, units and scripts, as
inventory problems. The rules live once, in the collection's ``plugins/filter/tokens.py`` (which each
role's ``tasks/validate.yml`` uses through the ``clusterctl.hpc.token_problems`` filter); this module
only loads them and turns each finding into a :class:`~clusterctl.inventory.model.Problem`.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from types import ModuleType
from typing import Any

from clusterctl import paths
from clusterctl.inventory.model import Problem


@cache
def rules() -> ModuleType:
    """The collection's ``plugins/filter/tokens.py``, loaded by path (it is no package of ours)."""
    path = paths.plugins() / "filter" / "tokens.py"
    spec = importlib.util.spec_from_file_location("clusterctl_hpc_filter_tokens", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(file: str, key: str, value: Any, shown_key: str | None = None) -> list[Problem]:
    """Problems of variable ``key`` (shown as ``shown_key``) against its token rule, if it has one."""
    return [Problem(file, where, v, msg) for where, v, msg in rules().problems(key, value, shown_key or key)]
