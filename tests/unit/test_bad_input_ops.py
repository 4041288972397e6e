"""Issue 28, bad input round 3 (branch ops): class 4, one variable set to two values by two groups of
equal depth and priority that share a host; class 5, YAML merge keys (``<<:``) in an inventory.

The rejected inventories are in tests/bad_inventories (test_validate.py runs each through the CLI):
``group-vars-equal-depth``, ``merge-key-two-default-partitions``, ``merge-key-host-address``,
``merge-key-partition-options``. Here: what is still accepted, and that the message's claim (which
group Ansible takes) and the merged values clusterctl checks are ansible-core's own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clusterctl.cli import app
from clusterctl.inventory import load_checked
from clusterctl.inventory.loading import load

REPO = Path(__file__).resolve().parents[2]
BAD = REPO / "tests" / "bad_inventories"
KEY = "slurm_compute_memlock_limit"


@pytest.fixture
def equal_depth(tmp_path: Path) -> Path:
    inv = tmp_path / "inv"
    shutil.copytree(BAD / "group-vars-equal-depth", inv)
    (inv / "EXPECT.txt").unlink()
    return inv


def test_message_names_both_files_and_the_group_ansible_takes(equal_depth: Path) -> None:
    res = CliRunner().invoke(app, ["validate", str(equal_depth)])
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert f"group_vars/rack_a/slurm.yml: {KEY}: set to another value in group_vars/h100/slurm.yml" in text
    assert "host node02" in text and "Ansible takes group rack_a's" in text
    # ... which is what ansible-core itself gives node02 (and node01, in rack_a only, is not ambiguous)
    seen = load(equal_depth).host_vars
    assert seen["node02"][KEY] == "64G" and seen["node01"][KEY] == "64G"


def test_ansible_group_priority_settles_it(equal_depth: Path) -> None:
    # in the inventory source: Ansible reads ansible_group_priority there only (never from group_vars)
    hosts = equal_depth / "hosts.yml"
    hosts.write_text(hosts.read_text().replace("    h100:\n", "    h100:\n      vars: {ansible_group_priority: 10}\n"))
    inv = load_checked(equal_depth)
    assert inv.host_vars["node02"][KEY] == "4M"  # the higher priority wins, as the message says to do


def test_same_value_or_different_depth_is_accepted(equal_depth: Path) -> None:
    (equal_depth / "group_vars" / "h100" / "slurm.yml").write_text(f"---\n{KEY}: 64G\n")
    load_checked(equal_depth)  # same value twice: not ambiguous
    (equal_depth / "group_vars" / "h100" / "slurm.yml").write_text(f"---\n{KEY}: 4M\n")
    hosts = (equal_depth / "hosts.yml").read_text()
    # h100 becomes a child of rack_a: deeper, so it wins by Ansible's rule, not by name order
    hosts = hosts.replace("    rack_a:\n      hosts:\n        node01:\n        node02:\n    h100:\n      hosts:\n"
                          "        node02:\n",
                          "    rack_a:\n      hosts:\n        node01:\n      children:\n        h100:\n"
                          "          hosts:\n            node02:\n")
    (equal_depth / "hosts.yml").write_text(hosts)
    inv = load_checked(equal_depth)
    assert inv.host_vars["node02"][KEY] == "4M" and inv.host_vars["node01"][KEY] == "64G"


MERGED = """---
cluster_name: test
fabric: ethernet
rdma_devices_per_node: 0
mtu: 1500
slurm_partitions:
  - &batch
    name: batch
    default: true
    max_time: "1-00:00:00"
  - <<: *batch
    name: debug
    default: false
  - <<: [{max_time: "2:00:00", options: "OverSubscribe=NO"}, *batch]
    name: long
    default: false
slurm_common_extra_config: &extra
  SlurmctldDebug: info
nccl_overrides:
  <<: [{NCCL_IB_TIMEOUT: "20", NCCL_DEBUG: WARN}, {NCCL_DEBUG: TRACE, NCCL_IB_RETRY_CNT: "7"}]
  NCCL_DEBUG: INFO
"""


def test_merge_keys_are_checked_as_ansible_builds_them(tmp_path: Path) -> None:
    """Every merged value clusterctl's rules read (its own YAML reading of the files) is the value
    ansible-core's loader builds (explicit keys override merged ones; a merge list as PyYAML merges it)."""
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    inv_dir = tmp_path / "inv"
    shutil.copytree(BAD / "merge-key-host-address", inv_dir)
    (inv_dir / "EXPECT.txt").unlink()
    (inv_dir / "hosts.yml").write_text((inv_dir / "hosts.yml").read_text().replace(
        "        node02:\n          <<: *node\n", "        node02:\n          <<: *node\n"
        "          ansible_host: 192.0.2.12\n"))
    (inv_dir / "group_vars" / "all" / "cluster.yml").write_text(MERGED)
    inv = load_checked(inv_dir)
    dl = DataLoader()
    dl.set_basedir(str(inv_dir))
    im = InventoryManager(loader=dl, sources=[str(inv_dir)])
    theirs = VariableManager(loader=dl, inventory=im).get_vars(host=im.get_host("node02"), include_hostvars=False)
    ours = {d.key: d.value for d in inv.definitions if d.owner == "group:all"}
    for key in ("slurm_partitions", "slurm_common_extra_config", "nccl_overrides"):
        assert ours[key] == theirs[key], key
    # the merges took effect (which map of a merge list wins is PyYAML's rule, the same on both sides)
    assert ours["slurm_partitions"][1]["max_time"] == "1-00:00:00" and ours["slurm_partitions"][1]["default"] is False
    assert ours["slurm_partitions"][2]["options"] == "OverSubscribe=NO"
    assert ours["nccl_overrides"]["NCCL_DEBUG"] == "INFO"  # an explicit key wins over every merged one
    assert {"NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT"} <= set(ours["nccl_overrides"])
    assert inv.host_vars["node02"]["ansible_user"] == "root"  # merged from node01's anchor
