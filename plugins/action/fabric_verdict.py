"""Action plugin clusterctl.hpc.fabric_verdict: the verdicts of ``clusterctl verify`` inside a play.

Documentation: plugins/modules/fabric_verdict.py. The judgement is the Python package clusterctl's
(clusterctl.verify.verdict -> clusterctl.analysis): one code path with ``clusterctl verify`` and
``clusterctl analyze``; this plugin only reads its arguments and shapes the task result.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase


def _documented_spec() -> dict[str, Any]:
    """The argument spec of plugins/modules/fabric_verdict.py (the documented one), read from that
    file beside this plugin so that the two cannot drift."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location("_clusterctl_fabric_verdict_doc",
                                                  os.path.join(here, "modules", "fabric_verdict.py"))
    if spec is None or spec.loader is None:
        raise AnsibleActionFail("fabric_verdict: cannot read modules/fabric_verdict.py beside the action plugin")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.ARGUMENT_SPEC)


ARGUMENT_SPEC = _documented_spec()


def _import_library() -> Any:
    """clusterctl.verify.verdict; the collection's own module_utils serve ``ccparse`` when the
    installed package does not put it on the path."""
    try:
        import ccparse  # noqa: F401
    except ImportError:
        sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "module_utils"))
    try:
        from clusterctl.verify import verdict
    except ImportError as exc:
        raise AnsibleActionFail(f"fabric_verdict needs the Python package clusterctl on the controller "
                                f"(pip install clusterctl, or an execution environment with it): {exc}") from None
    return verdict


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False
    _requires_connection = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        verdict = _import_library()
        from pathlib import Path

        from clusterctl.errors import ClusterctlError
        from clusterctl.inventory import InventoryError

        host = str(task_vars.get("inventory_hostname", ""))
        inventory = args.get("inventory")
        if inventory is None:
            inv_dir = task_vars.get("inventory_dir")
            if inv_dir and os.path.isfile(os.path.join(str(inv_dir), "hosts.yml")):
                inventory = str(inv_dir)
        try:
            exp = verdict.expectations(Path(inventory) if inventory else None, args["spec"])
            report_dir = Path(args["report_dir"]) if args.get("report_dir") else None
            report = verdict.judged(Path(args["evidence_dir"]), exp, report_dir=report_dir, title=args["title"],
                                    prom=Path(args["prom"]) if args.get("prom") else None,
                                    junit=Path(args["junit"]) if args.get("junit") else None)
        except InventoryError as exc:
            raise AnsibleActionFail(f"fabric_verdict: inventory {exc.path} rejected: "
                                    + "; ".join(str(p) for p in exc.problems)) from None
        except (ClusterctlError, OSError) as exc:
            raise AnsibleActionFail(str(exc) if str(exc).startswith("fabric_verdict") else f"fabric_verdict: {exc}") \
                from None
        mine = verdict.host_verdict(report, host)
        result.update(changed=False, status=mine["status"], findings=mine["findings"],
                      summary=report.get("summary", {}), ansible_facts={"clusterctl_verdict": mine},
                      ansible_stats={"data": verdict.stats(report), "per_host": False, "aggregate": False})
        if report_dir is not None:
            result["report_json"] = str(report_dir / "verify-report.json")
        if mine.get("cannot_judge"):
            result["cannot_judge"] = mine["cannot_judge"]
        if mine["failed"]:
            crit = [f for f in mine["findings"] if f.get("severity") == "critical"] or mine["findings"]
            top = "; ".join(f"{f.get('check')}: {f.get('subject')}: {f.get('message')}" for f in crit[:3])
            more = f" (+{len(crit) - 3} more)" if len(crit) > 3 else ""
            result.update(failed=True, msg=f"{host}: {mine['status']}: {top or 'no evidence collected'}{more}")
        else:
            result["msg"] = f"{host}: {mine['status']}"
        return result
