"""plugins/modules/gpu_facts.py and ccparse.sysfs_pci over simulated PCI trees (tests/simpci.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import simpci
from ccparse.common import ParseError
from ccparse.sysfs_pci import parse_function
from conftest import LOCAL_FIXTURES
from fabric_modrun import run_module


def _facts(res: dict) -> dict:
    assert not res.get("failed"), res
    assert res["changed"] is False
    return res["ansible_facts"]["clusterctl_gpu"]


def test_hgx_board_has_four_nvswitches(tmp_path: Path) -> None:
    root = simpci.build(simpci.load(LOCAL_FIXTURES / "simpci/hgx-h200.yml"), tmp_path)
    facts = _facts(run_module("gpu_facts", {"sysfs_root": str(root)}, check_mode=True))
    # The description lists 05-08:00.0 as 10de:22a3 class 0x068000 and eight 10de:2335 GPUs.
    assert facts["status"] == "ok"
    assert facts["nvswitch_present"] is True
    assert [s["pci"] for s in facts["nvswitches"]] == [f"0000:0{i}:00.0" for i in range(5, 9)]
    assert {s["device"] for s in facts["nvswitches"]} == {"0x22a3"}
    assert len(facts["gpus"]) == 8 and {g["device"] for g in facts["gpus"]} == {"0x2335"}
    assert facts["gpus"][-1] == {"pci": "0000:db:00.0", "vendor": "0x10de", "device": "0x2335",
                                 "class": "0x030200", "numa_node": 1}


def test_pcie_node_has_no_nvswitch(tmp_path: Path) -> None:
    root = simpci.build(simpci.load(LOCAL_FIXTURES / "simpci/pcie-h100.yml"), tmp_path)
    facts = _facts(run_module("gpu_facts", {"sysfs_root": str(root)}))
    assert facts["nvswitch_present"] is False and facts["nvswitches"] == []
    assert [g["pci"] for g in facts["gpus"]] == ["0000:17:00.0", "0000:65:00.0"]


def test_no_pci_bus_vs_no_nvidia_vs_error(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    assert _facts(run_module("gpu_facts", {"sysfs_root": str(tmp_path / "bare")}))["status"] == "no_pci_bus"
    nic_only = simpci.build({"functions": [{"pci": "0000:0c:00.0", "vendor": "0x15b3", "device": "0x1021",
                                            "class": "0x020700"}]}, tmp_path / "nic")
    assert _facts(run_module("gpu_facts", {"sysfs_root": str(nic_only)}))["status"] == "no_nvidia_devices"
    missing = run_module("gpu_facts", {"sysfs_root": str(tmp_path / "nope")})
    assert missing["failed"] and "not a directory" in missing["msg"]
    broken = simpci.build({"functions": [{"pci": "0000:05:00.0", "vendor": "0x10de", "device": "0x22a3",
                                          "class": "0x068000"}]}, tmp_path / "broken")
    (broken / "devices/pci0000:05/0000:05:00.0/class").write_text("bridge\n")
    res = run_module("gpu_facts", {"sysfs_root": str(broken)})
    assert res["failed"] and res["tool"] == "sysfs-pci" and "'bridge'" in res["msg"]


def test_nvidia_function_of_other_class_is_neither() -> None:
    # an NVIDIA audio function (class 0x0403) next to a consumer GPU is neither GPU nor switch
    from ccparse.sysfs_pci import kind_of

    fn = parse_function("0000:01:00.1", {"vendor": "0x10de\n", "device": "0x10f0\n", "class": "0x040300\n"})
    assert kind_of(fn) is None and fn["numa_node"] == -1


def test_bad_attribute_names_the_path() -> None:
    with pytest.raises(ParseError, match=r"0000:05:00.0/vendor: missing"):
        parse_function("0000:05:00.0", {"device": "0x22a3", "class": "0x068000"})
