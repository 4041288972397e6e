"""ccparse.sysfs_ib over the real captures (KIND sysfs-ib) and over hand-laid kernel trees."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ccparse import registry
from ccparse.common import ParseError
from ccparse.sysfs_ib import gid_ipv4, parse_phys_state, parse_rate, parse_state, read_sysfs_root
from conftest import read_fixture

SHAPE_DEVICE = {"name", "ca_type", "fw_version", "ports"}
SHAPE_PORT = {"port", "state", "phys_state", "rate_gbps", "link_layer", "netdev"}


def _parse(name: str) -> dict:
    return registry.parse("sysfs-ib", read_fixture(f"sysfs-infiniband/{name}"))


def _by_name(result: dict) -> dict:
    return {d["name"]: d for d in result["devices"]}


def test_kind_registered() -> None:
    assert "sysfs-ib" in registry.kinds()


def test_gpud_h100_ndr_plus_bond() -> None:
    devs = _by_name(_parse("gpud-h100-cx7-ndr-plus-bf3-bond.txt"))
    # The capture lists mlx5_0, 1, 4..9 and mlx5_bond_0.
    assert sorted(devs) == sorted(
        ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9", "mlx5_bond_0"]
    )
    for name in ("mlx5_0", "mlx5_9"):
        d = devs[name]
        assert set(d) >= SHAPE_DEVICE
        assert d["ca_type"] == "MT4129"
        assert d["fw_version"] == "28.41.1000"
        assert d["board_id"] == "MT_0000000838"
        (p,) = d["ports"]
        assert set(p) >= SHAPE_PORT
        assert (p["port"], p["state"], p["phys_state"]) == (1, "ACTIVE", "LinkUp")
        assert (p["rate_gbps"], p["width"], p["speed"]) == (400.0, "4X", "NDR")
        assert p["link_layer"] == "InfiniBand"
        assert p["netdev"] is None and p["gids"] == [] and p["roce_v2_gid_index"] is None
    bond = devs["mlx5_bond_0"]
    assert (bond["ca_type"], bond["fw_version"]) == ("MT41692", "32.38.3056")
    p = bond["ports"][0]
    assert (p["link_layer"], p["rate_gbps"], p["width"]) == ("Ethernet", 200.0, "2X")


def test_gcm_good_resolves_pci_and_ipoib_netdevs() -> None:
    devs = _by_name(_parse("gcm-hdr-good-sysfs-json.txt"))
    assert len(devs) == 8
    d = devs["mlx5_0"]
    assert d["pci"] == "0000:0c:00.0"
    assert d["fw_version"] == "20.31.2354"
    p = d["ports"][0]
    assert (p["state"], p["rate_gbps"], p["speed"]) == ("ACTIVE", 200.0, "HDR")
    assert (p["netdev"], p["netdev_operstate"], p["netdev_mtu"]) == ("ib0", "up", 2044)
    # mlx5_8 sits on 0000:ba:00.0 whose net/ is ib6.
    assert devs["mlx5_8"]["pci"] == "0000:ba:00.0"
    assert devs["mlx5_8"]["ports"][0]["netdev"] == "ib6"


def test_gcm_stuck_init() -> None:
    devs = _by_name(_parse("gcm-hdr-stuck-init-sysfs-json.txt"))
    stuck = sorted(n for n, d in devs.items() if d["ports"][0]["state"] == "INIT")
    assert stuck == ["mlx5_6", "mlx5_8"]
    assert devs["mlx5_8"]["ports"][0]["phys_state"] == "LinkUp"
    assert devs["mlx5_8"]["ports"][0]["netdev_operstate"] == "down"
    assert devs["mlx5_8"]["ports"][0]["netdev_mtu"] == 4092


def test_gcm_bad_rate() -> None:
    devs = _by_name(_parse("gcm-hdr-bad-rate-100-edr-sysfs-json.txt"))
    assert {d["ports"][0]["rate_gbps"] for d in devs.values()} == {100.0}
    assert {d["ports"][0]["speed"] for d in devs.values()} == {"EDR"}
    assert devs["mlx5_0"]["fw_version"] == "fw_ver"  # the capture's placeholder, verbatim


def test_azure_bare_port_files() -> None:
    (d,) = _parse("azure-endure-phys-state-unknown-1x-ddr.txt")["devices"]
    p = d["ports"][0]
    assert p["state"] == "ACTIVE"
    # phys_state '0: <unknown>': the device reports no physical state (judged on its state alone)
    assert (p["phys_state"], p["phys_state_num"]) == (None, 0)
    assert (p["rate_gbps"], p["width"], p["speed"]) == (5.0, "1X", "DDR")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4: ACTIVE\n", (4, "ACTIVE")),
        ("1: DOWN", (1, "DOWN")),
        ("5: ACTIVE_DEFER", (5, "ACTIVE_DEFER")),
        (None, (None, None)),
    ],
)
def test_parse_state(text: str | None, expected: tuple) -> None:
    assert parse_state(text) == expected


def test_parse_phys_state_words() -> None:
    assert parse_phys_state("2: Polling") == (2, "Polling")
    assert parse_phys_state("7: Phy Test") == (7, "PhyTest")
    assert parse_phys_state("3: Disabled\n") == (3, "Disabled")


def test_parse_rate_formats() -> None:
    assert parse_rate("2.5 Gb/sec (1X)")["speed"] == "SDR"
    assert parse_rate("2.5 Gb/sec (1X)")["rate_gbps"] == 2.5
    assert parse_rate("56 Gb/sec (4X FDR)")["rate_gbps"] == 56.0
    with pytest.raises(ParseError):
        parse_rate("fast")


def test_gid_ipv4() -> None:
    assert gid_ipv4("0000:0000:0000:0000:0000:ffff:0a0a:000b") == "10.10.0.11"
    assert gid_ipv4("fe80:0000:0000:0000:0ec4:7aff:fe8e:bfc2") is None


def test_bad_input() -> None:
    with pytest.raises(ParseError):
        registry.parse("sysfs-ib", "")
    with pytest.raises(ParseError):
        registry.parse("sysfs-ib", "{not json")
    with pytest.raises(ParseError):
        registry.parse("sysfs-ib", '{"/sys/class/net/eth0/mtu": "1500"}')
    with pytest.raises(ParseError):
        registry.parse("sysfs-ib", "this is not a dump\n")


def _w(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def test_handlaid_kernel_tree_roce_gid_and_dev_port(tmp_path: Path) -> None:
    """A tree laid by hand the way the kernel does (no simfabric), dual-port mlx4-style function."""
    pci = tmp_path / "devices/pci0000:00/0000:00:02.0/0000:3b:00.0"
    ib = pci / "infiniband/mlx4_0"
    _w(pci, "numa_node", "1\n")
    _w(ib, "fw_ver", "2.42.5000\n")
    for n, ifname in ((1, "ens1"), (2, "ens1d1")):
        _w(ib, f"ports/{n}/state", "4: ACTIVE\n")
        _w(ib, f"ports/{n}/phys_state", "5: LinkUp\n")
        _w(ib, f"ports/{n}/rate", "40 Gb/sec (4X QDR)\n")
        _w(ib, f"ports/{n}/link_layer", "Ethernet\n")
        _w(ib, f"ports/{n}/gids/0", "fe80:0000:0000:0000:0202:c9ff:fe00:0001\n")
        _w(ib, f"ports/{n}/gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n")
        _w(ib, f"ports/{n}/gids/2", f"0000:0000:0000:0000:0000:ffff:0a00:000{n}\n")
        _w(ib, f"ports/{n}/gid_attrs/types/0", "IB/RoCE v1\n")
        _w(ib, f"ports/{n}/gid_attrs/types/2", "RoCE v2\n")
        _w(pci, f"net/{ifname}/dev_port", f"{n - 1}\n")
    os.symlink("../../../0000:3b:00.0", ib / "device")
    (tmp_path / "class/infiniband").mkdir(parents=True)
    os.symlink(
        "../../devices/pci0000:00/0000:00:02.0/0000:3b:00.0/infiniband/mlx4_0", tmp_path / "class/infiniband/mlx4_0"
    )
    (d,) = read_sysfs_root(str(tmp_path))["devices"]
    assert (d["pci"], d["numa_node"], d["fw_version"]) == ("0000:3b:00.0", 1, "2.42.5000")
    p1, p2 = d["ports"]
    # No gid_attrs/ndevs files: the netdev comes from device/net/*/dev_port.
    assert (p1["netdev"], p2["netdev"]) == ("ens1", "ens1d1")
    assert [g["index"] for g in p1["gids"]] == [0, 2]  # the all-zero entry is skipped
    assert p1["gids"][1]["type"] == "RoCE v2"
    assert (p1["roce_v2_gid_index"], p1["roce_v2_ipv4"]) == (2, "10.0.0.1")
    assert p2["roce_v2_ipv4"] == "10.0.0.2"


def test_no_class_infiniband(tmp_path: Path) -> None:
    assert read_sysfs_root(str(tmp_path)) == {"devices": []}
