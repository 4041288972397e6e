"""tests/simfabric.py: trees laid like the kernel's, faults, and cross-checks against captures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import simfabric
from ccparse import registry
from ccparse.sysfs_ib import read_sysfs_root
from conftest import LOCAL_FIXTURES, REPO, read_fixture

PORT_KEYS = (
    "port",
    "state",
    "phys_state",
    "rate_gbps",
    "width",
    "speed",
    "link_layer",
    "netdev",
    "netdev_operstate",
    "netdev_mtu",
)


def _project(result: dict[str, Any], with_pci: bool) -> list[dict[str, Any]]:
    out = []
    for d in result["devices"]:
        rec = {k: d[k] for k in ("name", "ca_type", "fw_version", "board_id")}
        if with_pci:
            rec["pci"] = d["pci"]
        rec["ports"] = [{k: p[k] for k in PORT_KEYS} for p in d["ports"]]
        out.append(rec)
    return out


def _sim(tmp_path: Path, desc: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(desc, str):
        desc = simfabric.load(LOCAL_FIXTURES / "simfabric" / desc)
    root = simfabric.build(desc, tmp_path / "sys")
    return read_sysfs_root(str(root))


@pytest.mark.parametrize(
    ("desc", "capture", "with_pci"),
    [
        ("gcm-hdr-good.yml", "gcm-hdr-good-sysfs-json.txt", True),
        ("gpud-h100-ndr.yml", "gpud-h100-cx7-ndr-plus-bf3-bond.txt", False),
    ],
)
def test_sim_tree_parses_like_the_capture(tmp_path: Path, desc: str, capture: str, with_pci: bool) -> None:
    sim = _sim(tmp_path, desc)
    real = registry.parse("sysfs-ib", read_fixture(f"sysfs-infiniband/{capture}"))
    assert _project(sim, with_pci) == _project(real, with_pci)


def test_kernel_layout_and_links(tmp_path: Path) -> None:
    desc = {
        "devices": [
            {
                "name": "mlx5_0",
                "pci": "0000:0c:00.0",
                "numa_node": 1,
                "ports": [{"link_layer": "Ethernet", "netdev": "eth2", "ipv4": "10.0.0.5"}],
            }
        ]
    }
    root = simfabric.build(desc, tmp_path)
    cls = root / "class/infiniband/mlx5_0"
    assert cls.is_symlink()
    assert os.readlink(cls) == "../../devices/pci0000:0c/0000:0c:00.0/infiniband/mlx5_0"
    assert os.readlink(cls / "device") == "../../../0000:0c:00.0"
    assert (cls / "device/numa_node").read_text() == "1\n"
    assert (cls / "ports/1/state").read_text() == "4: ACTIVE\n"
    assert (cls / "ports/1/phys_state").read_text() == "5: LinkUp\n"
    assert (cls / "ports/1/rate").read_text() == "400 Gb/sec (4X NDR)\n"
    assert (cls / "ports/1/gid_attrs/types/3").read_text() == "RoCE v2\n"
    assert (cls / "ports/1/gids/3").read_text() == "0000:0000:0000:0000:0000:ffff:0a00:0005\n"
    assert not (cls / "ports/1/gid_attrs/types/4").exists()  # unused entry: EINVAL on a host
    assert (root / "class/net/eth2/mtu").read_text() == "1500\n"
    assert (root / "class/net/eth2/ecn/roce_np/enable/3").read_text() == "0\n"
    assert (root / "class/net/eth2/ecn/roce_rp/enable/7").exists()
    assert (root / "kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos").read_text() == "0\n"
    assert (cls / "tc/1/traffic_class").exists()
    assert json.loads((root / "qos-state.json").read_text()) == {"eth2": {"pfc": [0] * 8, "trust": "pcp"}}
    (d,) = read_sysfs_root(str(root))["devices"]
    assert (d["pci"], d["numa_node"]) == ("0000:0c:00.0", 1)
    assert d["ports"][0]["roce_v2_gid_index"] == 3


@pytest.mark.parametrize(
    ("fault", "check"),
    [
        ("port_down", lambda p: (p["state"], p["phys_state"], p["netdev_operstate"]) == ("DOWN", "Disabled", "down")),
        ("port_polling", lambda p: (p["state"], p["phys_state"]) == ("DOWN", "Polling")),
        ("rate_degraded", lambda p: (p["rate_gbps"], p["width"], p["speed"]) == (200.0, "2X", "NDR")),
        (
            "no_roce_v2_gid",
            lambda p: p["roce_v2_gid_index"] is None and {g["type"] for g in p["gids"]} == {"IB/RoCE v1"},
        ),
    ],
)
def test_faults(tmp_path: Path, fault: str, check: Any) -> None:
    desc = {
        "devices": [
            {
                "name": "mlx5_0",
                "ports": [{"link_layer": "Ethernet", "netdev": "eth2", "ipv4": "10.0.0.5", "faults": [fault]}],
            }
        ]
    }
    (d,) = _sim(tmp_path, desc)["devices"]
    assert check(d["ports"][0])


def test_pfc_off_fault_overrides_qos_state(tmp_path: Path) -> None:
    desc = {
        "qos": {"eth2": {"trust": "dscp", "pfc": [0, 0, 0, 1, 0, 0, 0, 0]}},
        "devices": [{"name": "mlx5_0", "ports": [{"link_layer": "Ethernet", "netdev": "eth2", "faults": ["pfc_off"]}]}],
    }
    root = simfabric.build(desc, tmp_path)
    assert json.loads((root / "qos-state.json").read_text())["eth2"] == {"trust": "dscp", "pfc": [0] * 8}


def test_unknown_fault_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown faults"):
        simfabric.build({"devices": [{"name": "x", "ports": [{"faults": ["melted"]}]}]}, tmp_path)


def test_rate_text_matches_kernel_format() -> None:
    assert simfabric.rate_text(2.5, 1) == "2.5 Gb/sec (1X)"
    assert simfabric.rate_text(5, 1) == "5 Gb/sec (1X DDR)"
    assert simfabric.rate_text(200, 4) == "200 Gb/sec (4X HDR)"


def test_cli(tmp_path: Path) -> None:
    out = tmp_path / "tree"
    res = subprocess.run(
        [
            sys.executable,
            str(REPO / "tests/simfabric.py"),
            str(LOCAL_FIXTURES / "simfabric/roce-h100-frontend.yml"),
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    devs = read_sysfs_root(str(out))["devices"]
    assert len(devs) == 12
    res = subprocess.run([sys.executable, str(REPO / "tests/simfabric.py")], capture_output=True, check=False)
    assert res.returncode == 2


def test_roce_sim_matches_ibstat_capture(tmp_path: Path) -> None:
    """roce-h100-frontend.yml is built after ibstat h100-cx7-roce-all-active: same shared-shape fields."""
    sim = _sim(tmp_path, "roce-h100-frontend.yml")
    real = registry.parse("ibstat", read_fixture("ibstat/h100-cx7-roce-all-active.txt"))

    def shape(result: dict[str, Any]) -> list[tuple]:
        return sorted(
            (
                d["name"],
                d["ca_type"],
                d["fw_version"],
                p["port"],
                p["state"],
                p["phys_state"],
                p["rate_gbps"],
                p["link_layer"],
            )
            for d in result["devices"]
            for p in d["ports"]
        )

    assert shape(sim) == shape(real)


def _node_exporter_metrics(root: Path) -> str:
    """node_exporter's infiniband collector over the tree ``root`` (--path.sysfs), one scrape."""
    import shutil
    import socket
    import time
    import urllib.request

    exe = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if exe is None:
        pytest.skip("prometheus-node-exporter missing (apt-get install prometheus-node-exporter)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    proc = subprocess.Popen([exe, f"--path.sysfs={root}", "--collector.disable-defaults", "--collector.infiniband",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    return str(r.read().decode())
            except OSError:
                time.sleep(0.1)
        raise AssertionError("node_exporter did not answer")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_port_counters_laid_like_the_kernel_and_read_by_node_exporter(tmp_path: Path) -> None:
    """Issue 26: ports/<n>/counters/<name> (ib_core's PMA counters) with the description's values;
    node_exporter's infiniband collector reads them (port_rcv_data counts 4-octet words, so
    node_exporter reports 4x bytes) and sees them move."""
    # node_exporter needs board_id, fw_ver and hca_type of a device (else its collector fails)
    desc = {"devices": [{"name": "mlx5_0", "board_id": "MT_0000000838", "hca_type": "MT4129", "fw_ver": "28.39.1002",
                         "ports": [{"port": 1, "counters": {"port_rcv_data": 250, "symbol_error": 3}}]}]}
    root = simfabric.build(desc, tmp_path / "sys")
    counters = root / "class" / "infiniband" / "mlx5_0" / "ports" / "1" / "counters"
    assert sorted(p.name for p in counters.iterdir()) == sorted(simfabric.COUNTERS)
    assert (counters / "port_rcv_data").read_text() == "250\n" and (counters / "link_downed").read_text() == "0\n"
    with pytest.raises(ValueError, match="unknown counters"):
        simfabric.build({"devices": [{"name": "x", "ports": [{"counters": {"nope": 1}}]}]}, tmp_path / "bad")

    def sample(text: str, name: str) -> float:
        line = next(ln for ln in text.splitlines() if ln.startswith(name + "{") and 'device="mlx5_0"' in ln)
        return float(line.rsplit(" ", 1)[1])

    text = _node_exporter_metrics(root)
    assert sample(text, "node_infiniband_port_data_received_bytes_total") == 4 * 250
    assert sample(text, "node_infiniband_symbol_error_total") == 3
    assert simfabric.bump(root, "mlx5_0", 1, "port_rcv_data", 1000) == 1250
    assert sample(_node_exporter_metrics(root), "node_infiniband_port_data_received_bytes_total") == 4 * 1250
