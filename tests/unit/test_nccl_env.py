"""nccl_env filter and the nccl role templates rendered for real fixtures."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import jinja2
import pytest
import simfabric
from ccparse import registry
from ccparse.sysfs_ib import read_sysfs_root
from conftest import LOCAL_FIXTURES, REPO, read_fixture

sys.path.insert(0, str(REPO / "plugins" / "filter"))
from nccl_env import FilterModule, fabric_ports, nccl_env

TEMPLATES = REPO / "roles" / "nccl" / "templates"


def render(name: str, env: list[dict[str, Any]], fabric: str) -> str:
    """Render a role template the way ansible.builtin.template does (trim_blocks on)."""
    jenv = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        trim_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    jenv.filters["quote"] = shlex.quote
    return jenv.get_template(name).render(__nccl_env=env, nccl_fabric=fabric, nccl_conf_path="/etc/nccl.conf")


def test_filter_registered() -> None:
    assert FilterModule().filters()["nccl_env"] is nccl_env


def test_ib_node_gpud_capture_rendered() -> None:
    """8x NDR IB node (gpud sysfs capture): mlx5_0,1,4..9 InfiniBand ACTIVE; mlx5_bond_0 is Ethernet."""
    rdma = registry.parse("sysfs-ib", read_fixture("sysfs-infiniband/gpud-h100-cx7-ndr-plus-bf3-bond.txt"))
    env = nccl_env(rdma, "infiniband", socket_ifname="bond0")
    assert render("nccl.conf.j2", env, "infiniband") == (
        "# Managed by clusterctl (role nccl); fabric profile: infiniband.\n"
        "# Values are derived from this node's RDMA facts; change them with nccl_overrides, not here.\n"
        "# NCCL_IB_HCA: rdma_facts: ACTIVE InfiniBand ports; skipped mlx5_bond_0:1 Ethernet\n"
        "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1\n"
        "# NCCL_NET_GDR_LEVEL: nccl_gdr_level (GPUs present)\n"
        "NCCL_NET_GDR_LEVEL=PHB\n"
        "# NCCL_SOCKET_IFNAME: default-route interface (nccl_socket_ifname)\n"
        "NCCL_SOCKET_IFNAME=bond0\n"
    )
    assert render("nccl.sh.j2", env, "infiniband").splitlines()[2] == (
        "export NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1"
    )


def test_ib_node_ibstat_capture_natural_order_and_skips() -> None:
    """ibstat h100-cx7-ib-ndr-cx6dx-eth-disabled: 8 IB ACTIVE (mlx5_0,3..6,9,10,11), CX-6 Dx Ethernet."""
    rdma = registry.parse("ibstat", read_fixture("ibstat/h100-cx7-ib-ndr-cx6dx-eth-disabled.txt"))
    env = {e["key"]: e for e in nccl_env(rdma, "infiniband", gdr_level=None)}
    assert env["NCCL_IB_HCA"]["value"] == "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1"
    assert "mlx5_2:1 Ethernet" in env["NCCL_IB_HCA"]["source"]
    assert set(env) == {"NCCL_IB_HCA"}


def _roce_node(tmp_path: Path) -> dict[str, Any]:
    desc = simfabric.load(LOCAL_FIXTURES / "simfabric/roce-h100-frontend.yml")
    return read_sysfs_root(str(simfabric.build(desc, tmp_path)))


def test_roce_node_with_frontend_nics_rendered(tmp_path: Path) -> None:
    """RoCE node after ibstat h100-cx7-roce-all-active: CX-6 Dx mlx5_1,2,7,8 are front-end NICs."""
    env = nccl_env(
        _roce_node(tmp_path),
        "roce",
        frontend_nics=["mlx5_1", "mlx5_2", "fe2", "mlx5_8"],
        roce_dscp=26,
        socket_ifname="fe0",
        overrides={"NCCL_IB_QPS_PER_CONNECTION": 2},
    )
    assert render("nccl.conf.j2", env, "roce") == (
        "# Managed by clusterctl (role nccl); fabric profile: roce.\n"
        "# Values are derived from this node's RDMA facts; change them with nccl_overrides, not here.\n"
        "# NCCL_IB_HCA: rdma_facts: ACTIVE Ethernet ports; skipped mlx5_1:1 front-end, mlx5_2:1 front-end, "
        "mlx5_7:1 front-end, mlx5_8:1 front-end\n"
        "NCCL_IB_HCA==mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1\n"
        "# NCCL_IB_GID_INDEX: rdma_facts: RoCE v2 GID with IPv4 address\n"
        "NCCL_IB_GID_INDEX=3\n"
        "# NCCL_IB_TC: roce_dscp=26 << 2\n"
        "NCCL_IB_TC=104\n"
        "# NCCL_NET_GDR_LEVEL: nccl_gdr_level (GPUs present)\n"
        "NCCL_NET_GDR_LEVEL=PHB\n"
        "# NCCL_SOCKET_IFNAME: default-route interface (nccl_socket_ifname)\n"
        "NCCL_SOCKET_IFNAME=fe0\n"
        "# NCCL_IB_QPS_PER_CONNECTION: nccl_overrides (inventory)\n"
        "NCCL_IB_QPS_PER_CONNECTION=2\n"
    )


def test_roce_missing_v2_gid_and_down_port(tmp_path: Path) -> None:
    desc = {
        "devices": [
            {
                "name": "mlx5_0",
                "ports": [{"link_layer": "Ethernet", "netdev": "e0", "ipv4": "10.0.0.1", "faults": ["no_roce_v2_gid"]}],
            },
            {"name": "mlx5_1", "ports": [{"link_layer": "Ethernet", "netdev": "e1", "faults": ["port_down"]}]},
        ]
    }
    rdma = read_sysfs_root(str(simfabric.build(desc, tmp_path)))
    env = {e["key"]: e for e in nccl_env(rdma, "roce", roce_dscp=26)}
    assert env["NCCL_IB_HCA"]["value"] == "=mlx5_0:1"
    assert "mlx5_1:1 DOWN" in env["NCCL_IB_HCA"]["source"]
    assert env["NCCL_IB_GID_INDEX"]["value"] is None
    text = render("nccl.conf.j2", list(env.values()), "roce")
    assert "# NCCL_IB_GID_INDEX left unset\n" in text
    assert "NCCL_IB_GID_INDEX=" not in text


def test_roce_gid_index_disagreement_named(tmp_path: Path) -> None:
    rdma = _roce_node(tmp_path)
    rdma["devices"][0]["ports"][0]["roce_v2_gid_index"] = 5  # mlx5_0 only
    env = {e["key"]: e for e in nccl_env(rdma, "roce")}
    assert env["NCCL_IB_GID_INDEX"]["value"] == "3"
    assert env["NCCL_IB_GID_INDEX"]["source"].endswith("differs on mlx5_0:1")


def test_ethernet_profile_and_overrides() -> None:
    env = nccl_env(
        None,
        "ethernet",
        socket_ifname="eth0",
        overrides={"NCCL_SOCKET_IFNAME": "=eth1", "NCCL_DEBUG": "WARN", "NCCL_IB_DISABLE": None},
    )
    assert [(e["key"], e["value"]) for e in env] == [("NCCL_SOCKET_IFNAME", "=eth1"), ("NCCL_DEBUG", "WARN")]
    assert render("nccl.sh.j2", env, "ethernet").splitlines()[-1] == "export NCCL_DEBUG=WARN"


def test_no_usable_port() -> None:
    env = nccl_env({"devices": []}, "infiniband")
    assert env[0] == {"key": "NCCL_IB_HCA", "value": None, "source": "rdma_facts: no ACTIVE InfiniBand port found"}


@pytest.mark.parametrize(("fabric", "dscp"), [("omnipath", None), ("roce", 64)])
def test_bad_arguments(fabric: str, dscp: int | None) -> None:
    with pytest.raises(ValueError):
        nccl_env({"devices": []}, fabric, roce_dscp=dscp)


def test_fabric_ports_for_roce_qos(tmp_path: Path) -> None:
    ports = fabric_ports(_roce_node(tmp_path), "roce", ["mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"])
    assert [p["netdev"] for p in ports] == [f"rdma{i}" for i in range(8)]
    assert ports[0] == {"device": "mlx5_0", "port": 1, "netdev": "rdma0"}
