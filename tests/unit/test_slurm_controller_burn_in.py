"""Issue 25: the slurm_controller role holds the nodes new to a running cluster for burn-in at registration.

The role reads the nodes the running slurmctld knows (`sinfo --noheader --Node --format=%N`, before the restart
its slurm.conf change notified) and drains, after the restart and before their slurmd first starts, the compute
nodes of the new slurm.conf it did not know. vars/main.yml's expression is rendered here by ansible-core's own
Templar with what the command registers (rc and stdout lines); the lab runs it for real
(tests/integration/test_slurm_cases.py: the scale-out node registers drained).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROLE = Path(__file__).resolve().parents[2] / "roles" / "slurm_controller"


def new_nodes(compute: list[str], registered: dict[str, Any]) -> list[str]:
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    try:  # ansible-core 2.19+ templates only strings trusted as templates (a role's vars file is)
        from ansible.template import trust_as_template
    except ImportError:  # older ansible-core templates every string
        def trust_as_template(value: str) -> str:
            return value

    internals = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())
    variables = {"__slurm_common_compute_names": compute, "__slurm_controller_nodes_before": registered,
                 **{k: v for k, v in internals.items() if k != "__slurm_controller_new_nodes"}}
    expr = trust_as_template(internals["__slurm_controller_new_nodes"])
    got = Templar(loader=DataLoader(), variables=variables).template(expr)
    return list(got)


@pytest.mark.parametrize(("registered", "expect"), [
    # a running cluster of two nodes (one listed once per partition) gains gpu03 and gpu04
    ({"rc": 0, "stdout_lines": ["gpu01", "gpu02", "gpu01", "gpu02 "]}, ["gpu03", "gpu04"]),
    # the same cluster on its second run: nothing new
    ({"rc": 0, "stdout_lines": ["gpu01", "gpu02", "gpu03", "gpu04"]}, []),
    # day one: slurmctld not installed or not answering (sinfo failed), or knowing no node
    ({"rc": 2, "stdout_lines": []}, []),
    ({"rc": 1, "stdout_lines": ["slurm_load_partitions: Unable to contact slurm controller"]}, []),
    ({"rc": 0, "stdout_lines": []}, []),
    ({"rc": 0, "stdout_lines": [""]}, []),
    # the read skipped (the loop or its burn-in gate turned off)
    ({"changed": False, "skipped": True}, []),
])
def test_new_nodes_are_the_ones_the_running_controller_did_not_know(registered: dict[str, Any],
                                                                     expect: list[str]) -> None:
    assert new_nodes(["gpu01", "gpu02", "gpu03", "gpu04"], registered) == expect


def test_the_drain_reason_is_the_loops_burn_in_reason() -> None:
    from clusterctl.lifecycle.burnin import changes
    from clusterctl.lifecycle.core import BURN_IN_PREFIX

    reason = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["__slurm_controller_burn_in_reason"]
    assert reason == f"{BURN_IN_PREFIX}: {changes(None, {})}" == "clusterctl: burn-in: new node"
