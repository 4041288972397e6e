"""The loop's real side effects on the nodes, through Ansible (ad hoc, ``argv``, no shell):

- :func:`node_check_verifier`: re-verify a node with the node check itself
  (``clusterctl-node-check --no-drain``, the HealthCheckProgram's code), and at ``quick`` also the
  quick ``clusterctl verify`` of that node; the evidence is the check's output or the report;
- :func:`burn_in_verifier`: the burn-in gate's checks: the node check, then at ``full`` a
  ``clusterctl verify --level full`` of the node with a known-good partner (DCGM diagnostics where
  dcgmi is installed, nccl-tests within the node, the compute floor: clusterctl-gemm per GPU
  against its model's floor and its node's median (checks/gemm.py), the ib_write_bw and nccl-tests pair rounds);
- :func:`gpu_resetter`: ``nvidia-smi --gpu-reset`` on an idle, drained node;
- :func:`identifier`: every node's hardware identity for the burn-in gate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clusterctl.lifecycle.core import one_line
from clusterctl.lifecycle.flow import BurnInVerifier, Identifier, Resetter, Verifier
from clusterctl.runner import run_module

NODE_CHECK = "/usr/local/sbin/clusterctl-node-check"
REVERIFY = ("node", "quick")
#: the burn-in gate's levels: node, quick (as REVERIFY) or full (a full verify with a known-good partner)
BURN_IN = ("node", "quick", "full")
#: seconds the node check and the GPU reset may take on a node
TOOL_TIMEOUT = 300


def _command(inventory: Path, node: str, argv: list[str]) -> tuple[int, str]:
    """(rc, output) of ``argv`` on ``node``; rc 255 when it was not reached."""
    res = run_module(inventory, node, "ansible.builtin.command", {"argv": argv, "expand_argument_vars": False})
    r = res.get(node) or next(iter(res.values()), {})
    if not r:
        return 255, f"{node}: no result (not in the inventory?)"
    if r.get("_event") == "runner_on_unreachable":
        return 255, f"{node} unreachable: {str(r.get('msg', '')).strip()}"
    out = "\n".join(x for x in (str(r.get("stdout") or ""), str(r.get("stderr") or "")) if x).strip()
    return int(r.get("rc", 1) if r.get("rc") is not None else 1), out or str(r.get("msg") or "")


def node_check_verifier(inventory: Path, *, level: str = "quick", program: str = NODE_CHECK) -> Verifier:
    def verify(node: str) -> tuple[bool, str]:
        rc, out = _command(inventory, node, ["timeout", str(TOOL_TIMEOUT), program, "--no-drain"])
        if rc != 0:
            return False, one_line(out or f"node check exit {rc}", 400)
        if level == "quick":
            from clusterctl.inventory import load_checked
            from clusterctl.verify import quick_verify

            failed = quick_verify(inventory, load_checked(inventory), [node])
            if node in failed:
                return False, one_line(f"quick verify: {failed[node]}", 400)
        return True, one_line(out or "node check passed" + (", quick verify passed" if level == "quick" else ""), 400)

    return verify


def burn_in_verifier(inventory: Path, *, level: str = "full", program: str = NODE_CHECK) -> BurnInVerifier:
    """The burn-in gate's checks of a node. ``node``/``quick``: as :func:`node_check_verifier`. ``full``:
    the node check, then ``verify --level full`` of the node and its known-good partners (without one, the
    node stays in burn-in: "no idle known-good partner"); it passes when the full verify does not fail it."""
    check = node_check_verifier(inventory, level="node" if level == "node" else "quick", program=program)

    def verify(node: str, partners: list[str]) -> tuple[bool, str]:
        ok, evidence = check(node)
        if not ok or level != "full":
            return ok, evidence
        if not partners:
            return False, f"full verify not run: no idle known-good partner of {node} for its pair tests"
        return full_verify(inventory, node, partners)

    return verify


def full_verify(inventory: Path, node: str, partners: list[str]) -> tuple[bool, str]:
    """``clusterctl verify --level full`` over ``node`` and ``partners``; (whether ``node`` passed, evidence)."""
    import time

    from clusterctl.errors import NoEvidence
    from clusterctl.verify import analyse, collect, plan

    hosts = ",".join([node, *partners])
    p = plan(inventory, level="full", hosts=hosts, limit=hosts,
             name=f"burn-in-{time.strftime('%Y%m%dT%H%M%S')}-{node}")
    try:
        v = analyse(collect(p, label="burn-in"))
    except NoEvidence as exc:
        return False, one_line(f"full verify: {exc} ({p.evidence})", 400)
    host = v.report.hosts.get(node)
    if host is None:
        return False, one_line(f"full verify: no evidence from {node} ({p.evidence})", 400)
    if host.status == "failed":
        why = "; ".join(f"{f.check}: {f.message}" for f in host.findings if f.severity == "critical")
        return False, one_line(f"full verify failed: {why or 'failed'} ({v.report_json})", 400)
    return True, one_line(f"full verify {host.status} with {', '.join(partners)} ({v.report_json})", 400)


def identifier(inventory: Path, *, pattern: str = "slurm_compute", program: str = NODE_CHECK) -> Identifier:
    """Every node's hardware identity (``clusterctl-node-check --identity``, one ad-hoc run); nodes that do
    not answer (unreachable, no node check) are left out: the gate does nothing about them this run."""
    import json

    def identify() -> dict[str, dict[str, Any]]:
        res = run_module(inventory, pattern, "ansible.builtin.command",
                         {"argv": ["timeout", str(TOOL_TIMEOUT), program, "--identity"], "expand_argument_vars": False})
        out: dict[str, dict[str, Any]] = {}
        for host, r in res.items():
            if r.get("_event") != "runner_on_ok" or r.get("rc") != 0:
                continue
            try:
                data = json.loads(str(r.get("stdout") or ""))
            except ValueError:
                continue
            if isinstance(data, dict) and not data.get("errors"):
                out[host] = data
        return out

    return identify


def gpu_resetter(inventory: Path) -> Resetter:
    def reset(node: str) -> tuple[bool, str]:
        rc, out = _command(inventory, node, ["timeout", str(TOOL_TIMEOUT), "nvidia-smi", "--gpu-reset"])
        return rc == 0, one_line(out or f"nvidia-smi --gpu-reset exit {rc}", 400)

    return reset
