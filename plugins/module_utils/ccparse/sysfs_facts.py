"""The body of the sysfs fact modules (gpu_facts, rdma_facts): one place for what they share.

Each module keeps its own DOCUMENTATION and argument_spec (options ``sysfs_root``, a path, and
``fact_name``, the fact to set) and its own ``collect(sysfs_root) -> dict``; :func:`sysfs_facts_main`
checks the root, runs ``collect``, turns ParseError/OSError into ``fail_json`` and sets the fact.
Never ``changed``; the same in check mode (the modules only read).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .common import ParseError


def sysfs_facts_main(module_class: Callable[..., Any], collect: Callable[[str], dict],
                     argument_spec: dict, extra: Callable[[dict], dict] | None = None,
                     read_sysfs: Callable[[dict], bool] | None = None) -> None:
    """Run a fact module: ``module_class`` is the module's AnsibleModule (passed in, so ccparse
    imports nothing of Ansible), ``argument_spec`` its options (``sysfs_root``, ``fact_name``, and any
    the module adds); ``extra(params)``, when given, returns further keys of the result (read-only).
    ``read_sysfs(params)``, when given and false, skips sysfs entirely: no fact is set, only
    ``extra``'s keys are returned (a role that needs only those on some hosts keeps one task)."""
    module = module_class(argument_spec=argument_spec, supports_check_mode=True)
    if read_sysfs is not None and not read_sysfs(module.params):
        try:
            more = extra(module.params) if extra else {}
        except OSError as exc:
            module.fail_json(msg=str(exc), changed=False)
        module.exit_json(changed=False, **more)
    root = module.params["sysfs_root"]
    if not os.path.isdir(root):
        module.fail_json(msg=f"sysfs_root {root} is not a directory", sysfs_root=root, changed=False)
    try:
        facts = collect(root)
        more = extra(module.params) if extra else {}
    except ParseError as exc:
        module.fail_json(msg=str(exc), tool=exc.tool, reason=exc.reason, sysfs_root=root, changed=False)
    except OSError as exc:
        module.fail_json(msg=f"cannot read {root}: {exc}", sysfs_root=root, changed=False)
    module.exit_json(changed=False, ansible_facts={module.params["fact_name"]: facts}, **more)
