"""Run an Ansible module's main() in-process with given params (fabric module tests).

The modules import their parsers by FQCN (``ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse``);
that name is aliased to the ``ccparse`` package so modules run on the same parser objects the tests use,
the code Ansible ships to hosts.
"""

from __future__ import annotations

import importlib
import io
import json
import sys
import types
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from ansible.module_utils import basic
from ansible.module_utils.common import warnings
from ansible.module_utils.common.text.converters import to_bytes

REPO = Path(__file__).resolve().parent.parent
MODULES = REPO / "plugins" / "modules"
FQCN_UTILS = "ansible_collections.clusterctl.hpc.plugins.module_utils"


def _alias_ccparse() -> None:
    import ccparse
    from ccparse import registry

    registry._load_all()
    parts = FQCN_UTILS.split(".")
    for i in range(2, len(parts)):  # empty parents: ansible_collections.clusterctl, ...hpc, ...plugins, ...
        sys.modules.setdefault(".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))
    sys.modules[FQCN_UTILS + ".ccparse"] = ccparse
    for name, mod in list(sys.modules.items()):
        if name.startswith("ccparse."):
            sys.modules[FQCN_UTILS + "." + name] = mod


def load_module(name: str) -> Any:
    _alias_ccparse()
    if str(MODULES) not in sys.path:
        sys.path.insert(0, str(MODULES))
    return importlib.import_module(name)


def run_module(name: str, params: dict[str, Any], check_mode: bool = False, diff: bool = False) -> dict:
    """main() of plugins/modules/<name>.py; returns its JSON result (``failed`` set on fail_json)."""
    mod = load_module(name)
    args = dict(params)
    args["_ansible_check_mode"] = check_mode
    args["_ansible_diff"] = diff
    basic._ANSIBLE_ARGS = to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    basic._ANSIBLE_PROFILE = "legacy"
    warnings._global_warnings.clear()
    warnings._global_deprecations.clear()
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            mod.main()
    except SystemExit:
        pass
    finally:
        basic._ANSIBLE_ARGS = None
    return json.loads(out.getvalue())
