"""clusterctl.role_vars: inventory role variables against the roles' meta/argument_specs.yml."""

from __future__ import annotations

from clusterctl import role_vars
from clusterctl.inventory import VaultValue


def messages(key: str, value: object) -> list[str]:
    return [p.message for p in role_vars.check("group_vars/all/x.yml", key, value)]


def test_known_variables_of_the_right_type_pass() -> None:
    assert messages("slurm_common_kill_wait", 31) == []
    assert messages("slurm_common_kill_wait", "31") == []  # Ansible converts it
    assert messages("rdma_allow_driver_reload", "yes") == []
    assert messages("slurm_compute_memlock_limit", "64G") == []
    assert messages("nccl_fabric", "roce") == []


def test_templated_and_vaulted_values_are_left_to_the_role() -> None:
    assert messages("slurm_common_kill_wait", "{{ my_wait }}") == []
    assert messages("munge_key", VaultValue()) == []


def test_not_a_role_variable() -> None:
    assert messages("clusterctl_verify_kinds", ["sysfs-ib"]) == []  # playbook variables: no role
    assert messages("ansible_user", "root") == []
    (msg,) = messages("rdma_stak", "doca")
    assert "not a variable of role rdma" in msg and "did you mean 'rdma_stack'" in msg


def test_types_and_choices() -> None:
    (msg,) = messages("rdma_allow_driver_reload", "sometimes")
    assert msg.startswith("must be true or false")
    (msg,) = messages("juicefs_volumes", {"name": "x"})
    assert msg.startswith("must be a list")
    (msg,) = messages("roce_qos_backend", "lldpad")
    assert msg == "must be one of auto, mlnx_qos, dcb (role roce_qos)"


def test_longest_role_prefix_wins() -> None:
    # slurm_compute_* belongs to slurm_compute, not to a shorter role name
    assert role_vars.owner("slurm_compute_memlock_limit") == "slurm_compute"
    assert role_vars.owner("slurm_common_kill_wait") == "slurm_common"
    assert role_vars.owner("gpus_per_node") is None
