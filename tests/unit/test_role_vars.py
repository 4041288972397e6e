"""clusterctl.inventory.role_vars: inventory role variables against the roles' meta/argument_specs.yml."""

from __future__ import annotations

from clusterctl.inventory import VaultValue, role_vars


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
    assert "not a valid boolean" in msg
    assert any("cannot be converted to a list" in m for m in messages("juicefs_volumes", {"name": "x"}))
    (msg,) = messages("roce_qos_backend", "lldpad")
    assert "must be one of: auto, mlnx_qos, dcb, got: lldpad (role roce_qos" in msg


def test_nested_options_are_checked_where_declared() -> None:
    """juicefs_volumes entries: suboption typo (with a did-you-mean) and a missing required name."""
    (msg,) = messages("juicefs_volumes", [{"name": "data", "mountpoint": "/mnt/d", "cache_sise": 3}])
    assert "unknown option" in msg and "cache_sise" in msg and "did you mean 'cache_size_mib'" in msg
    (msg,) = messages("juicefs_volumes", [{"mountpoint": "/mnt/d"}])
    assert "missing required arguments: name" in msg


def test_longest_role_prefix_wins() -> None:
    # slurm_compute_* belongs to slurm_compute, not to a shorter role name
    assert role_vars.owner("slurm_compute_memlock_limit") == "slurm_compute"
    assert role_vars.owner("slurm_common_kill_wait") == "slurm_common"
    assert role_vars.owner("gpus_per_node") is None
