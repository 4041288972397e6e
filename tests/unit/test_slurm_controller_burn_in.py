"""Issue 25: the Slurm roles hold the nodes new to a running cluster for burn-in at registration.

slurm_common reads, once per playbook run on the controller and before it renders slurm.conf, the nodes the
running slurmctld knows (`sinfo --noheader --Node --format=%N`); slurm_controller drains, after slurmctld's
restart and before their slurmd first starts, the compute nodes of the new slurm.conf it did not know (with the
loop and its burn-in gate on). Both roles' own expressions are rendered here by ansible-core's Templar from what
the command registers (rc and stdout lines); the lab runs them for real
(tests/integration/test_slurm_cases.py: the scale-out node registers drained).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[2] / "roles"
COMPUTE = ["gpu01", "gpu02", "gpu03", "gpu04"]


def _template(expr: str, variables: dict[str, Any]) -> Any:
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    try:  # ansible-core 2.19+ templates only strings trusted as templates (a role's files are)
        from ansible.template import trust_as_template
    except ImportError:  # older ansible-core templates every string
        def trust_as_template(value: str) -> str:
            return value

    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(expr))


def nodes_before(registered: dict[str, Any]) -> list[str]:
    """slurm_common's fact from what its sinfo task registered."""
    tasks = yaml.safe_load((ROLES / "slurm_common" / "tasks" / "main.yml").read_text())
    [task] = [t for t in tasks if t["name"] == "Keep the nodes the running slurmctld knew before this run"]
    return list(_template(task["ansible.builtin.set_fact"]["__slurm_common_nodes_before"],
                          {"__slurm_common_sinfo_before": registered}))


def new_nodes(before: list[str], enabled: bool = True, burn_in: bool = True) -> list[str]:
    internals = yaml.safe_load((ROLES / "slurm_controller" / "vars" / "main.yml").read_text())
    variables = {"__slurm_common_compute_names": COMPUTE, "__slurm_common_nodes_before": before,
                 "slurm_controller_remediate_enabled": enabled, "slurm_controller_remediate_burn_in": burn_in}
    return list(_template(internals["__slurm_controller_new_nodes"], variables))


@pytest.mark.parametrize(("registered", "before", "expect"), [
    # a running cluster of two nodes (listed once per partition, padded) gains gpu03 and gpu04
    ({"rc": 0, "stdout_lines": ["gpu01", "gpu02", "gpu01", "gpu02 "]}, ["gpu01", "gpu02"], ["gpu03", "gpu04"]),
    # the same cluster on its second run: nothing new
    ({"rc": 0, "stdout_lines": COMPUTE}, COMPUTE, []),
    # day one: slurmctld not installed or not answering (sinfo failed), or knowing no node
    ({"rc": 2, "stdout_lines": []}, [], []),
    ({"rc": 1, "stdout_lines": ["slurm_load_partitions: Unable to contact slurm controller"]}, [], []),
    ({"rc": 0, "stdout_lines": []}, [], []),
    ({"rc": 0, "stdout_lines": [""]}, [], []),
])
def test_new_nodes_are_the_ones_the_running_controller_did_not_know(registered: dict[str, Any], before: list[str],
                                                                     expect: list[str]) -> None:
    assert nodes_before(registered) == before
    assert new_nodes(before) == expect


def test_nothing_is_held_with_the_loop_or_its_gate_off() -> None:
    assert new_nodes(["gpu01"]) == ["gpu02", "gpu03", "gpu04"]
    assert new_nodes(["gpu01"], enabled=False) == new_nodes(["gpu01"], burn_in=False) == []


def test_the_drain_reason_is_the_loops_burn_in_reason() -> None:
    from clusterctl.lifecycle.burnin import changes
    from clusterctl.lifecycle.core import BURN_IN_PREFIX

    reason = yaml.safe_load((ROLES / "slurm_controller" / "vars" / "main.yml").read_text())[
        "__slurm_controller_burn_in_reason"]
    assert reason == f"{BURN_IN_PREFIX}: {changes(None, {})}" == "clusterctl: burn-in: new node"
