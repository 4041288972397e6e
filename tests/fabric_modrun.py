"""Run an Ansible module's main() in-process with given params (fabric module tests).

``ansible.module_utils.ccparse`` is aliased to the ``ccparse`` package so modules import the same
parser code Ansible ships to hosts.
"""

from __future__ import annotations

import importlib
import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from ansible.module_utils import basic
from ansible.module_utils.common import warnings
from ansible.module_utils.common.text.converters import to_bytes

REPO = Path(__file__).resolve().parent.parent
MODULES = REPO / "plugins" / "modules"


def _alias_ccparse() -> None:
    import ccparse
    from ccparse import registry

    registry._load_all()
    sys.modules["ansible.module_utils.ccparse"] = ccparse
    for name, mod in list(sys.modules.items()):
        if name.startswith("ccparse."):
            sys.modules["ansible.module_utils." + name] = mod


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
