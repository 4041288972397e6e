"""RoCE v2 GID and MTU checks, on a simulated kernel sysfs tree (same reader as production) and on
the show_gids format fixture."""

from __future__ import annotations

import copy
from pathlib import Path

import simfabric
from ccparse import registry
from ccparse.sysfs_ib import read_sysfs_root
from conftest import LOCAL_FIXTURES, read_fixture

from clusterctl.analysis.checks import roce

DESC = simfabric.load(LOCAL_FIXTURES / "simfabric" / "roce-h100-frontend.yml")
FRONTEND = ["mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"]  # the MT4125 100G NICs of that description
EXP = {"fabric": "roce", "mtu": 9000, "frontend_nics": FRONTEND}


def _tree(tmp_path: Path, desc: dict) -> dict:
    root = simfabric.build(desc, tmp_path / "sys")
    return read_sysfs_root(str(root))


def test_healthy_roce_node_has_no_findings(tmp_path: Path) -> None:
    data = _tree(tmp_path, DESC)
    assert list(roce.sysfs_roce("n1", data, EXP)) == []


def test_missing_roce_v2_gid_and_low_mtu_are_named(tmp_path: Path) -> None:
    desc = copy.deepcopy(DESC)
    desc["devices"][3]["ports"][0]["faults"] = ["no_roce_v2_gid"]  # mlx5_3 (rdma1)
    desc["devices"][4]["ports"][0]["mtu"] = 1500  # mlx5_4 (rdma2)
    found = {(f.check, f.severity, f.subject) for f in roce.sysfs_roce("n1", _tree(tmp_path, desc), EXP)}
    assert found == {("roce_v2_gid", "critical", "n1/mlx5_3/1"), ("mtu", "critical", "n1/mlx5_4/1")}


def test_frontend_nics_and_non_roce_fabrics_are_not_judged(tmp_path: Path) -> None:
    data = _tree(tmp_path, DESC)
    # the front-end NICs run MTU 1500: judged only if not excluded
    assert {f.subject for f in roce.sysfs_roce("n1", data, {**EXP, "frontend_nics": []})} == {
        f"n1/{d}/1" for d in FRONTEND}
    assert list(roce.sysfs_roce("n1", data, {**EXP, "fabric": "infiniband"})) == []


def test_show_gids_port_without_ipv4_v2_gid() -> None:
    # fixture: mlx5_0 has v2 GID 10.0.11.21; mlx5_1 (eth3) has only link-local GIDs; mlx5_2 only a v1 GID
    data = registry.parse("show_gids", read_fixture("show_gids/roce-two-ports-one-without-ipv4.txt"))
    subjects = sorted(f.subject for f in roce.show_gids_roce("n1", data, {"fabric": "roce"}))
    assert subjects == ["n1/mlx5_1/1", "n1/mlx5_2/1"]


def test_ip_link_mtu_only_for_named_netdevs() -> None:
    data = registry.parse("ip-link", read_fixture("ip-link/gpu-node-roce-bond-ipoib-vlan.txt"))
    assert list(roce.ip_link_mtu("n1", data, {"mtu": 9000})) == []
    small = [link for link in data["links"] if isinstance(link.get("mtu"), int) and link["mtu"] < 9000]
    name = small[0]["ifname"]
    found = list(roce.ip_link_mtu("n1", data, {"mtu": 9000, "rdma_netdevs": [name]}))
    assert [f.subject for f in found] == [f"n1/{name}"]
