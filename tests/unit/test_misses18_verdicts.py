"""Session 18 (issue 29): general rules found by review and by the rest misses of blind batches 38-40;
expected values are read off the text of each capture."""

from __future__ import annotations

import pytest
from ccparse import registry
from conftest import REPO, judge_text

IBSTATUS = """Infiniband device 'cxgb4_0' port 1 status:
\tdefault gid:\t 0007:4306:48a8:0000:0000:0000:0000:0000
\tbase lid:\t 0x0
\tsm lid:\t\t 0x0
\tstate:\t\t 4: ACTIVE
\tphys state:\t {phys}
\trate:\t\t 40 Gb/sec (4X QDR)
\tlink_layer:\t Ethernet
"""
IBSTAT = """CA 'cxgb4_0'
\tCA type: 
\tNumber of ports: 1
\tPort 1:
\t\tState: Active
\t\tPhysical state: {phys}
\t\tRate: 40
\t\tBase lid: 0
\t\tLink layer: Ethernet
"""


@pytest.mark.parametrize(("kind", "text", "phys"), [
    ("ibstatus", IBSTATUS, "0: <unknown>"),            # the kernel's sysfs word for 0, as ibstatus prints it
    ("ibstat", IBSTAT, "No state change"),             # rdma-core ibstat's word for 0
    ("ibv_devinfo", "hca_id: cxgb3_0\n\tport:\t1\n\t\tstate:\t\tPORT_ACTIVE (4)\n\t\tphys_state:\t\t{phys}\n",
     "invalid physical state (0)"),
])
def test_physical_state_zero_is_none_reported_in_every_port_tool(kind: str, text: str, phys: str) -> None:
    # an iWARP adapter leaves the physical state unset (0): its ACTIVE port is judged on its state alone, as
    # ibv_devinfo's spelling already was (session 17); a real Polling port of the same tool stays critical
    assert registry.parse(kind, text.format(phys=phys))["devices"][0]["ports"][0]["phys_state"] is None
    assert judge_text(kind, text.format(phys=phys)) == []
    polling = {"ibstatus": "2: Polling", "ibstat": "Polling", "ibv_devinfo": "POLLING (2)"}[kind]
    assert [f.severity for f in judge_text(kind, text.format(phys=polling)) if f.check == "ib_port_state"] == [
        "critical"]


def test_an_active_sysfs_port_with_physical_state_unknown_is_not_down() -> None:
    # tests/corpus/network/sysfs-ib/azure-endure-...: Azure's endure sample, state '4: ACTIVE', phys_state
    # '0: <unknown>', rate '5 Gb/sec (1X DDR)' (a node's own sysfs, read by fabric_evidence in production)
    path = next((REPO / "tests").rglob("azure-endure-phys-state-unknown-1x-ddr.txt"))
    text = path.read_text(encoding="utf-8")
    assert [f for f in judge_text("sysfs-ib", text) if f.check == "ib_port_state"] == []


@pytest.mark.parametrize(("line", "subject"), [
    # round2/kernel-log/incusui115-...: e1000e's hang report (journal prefix, the adapter's odd netdev name)
    ("kernel: e1000e 0000:00:1f.6 _p2cf05d501bfb: Detected Hardware Unit Hang:", "n1/0000:00:1f.6"),
    # igb names the device without a netdev; e1000 before the driver model names only the netdev
    ("[ 8812.31] igb 0000:01:00.0: Detected Tx Unit Hang", "n1/0000:01:00.0"),
    ("Mar  2 10:01:02 node7 kernel: e1000: eth0: e1000_clean_tx_irq: Detected Tx Unit Hang", "n1/eth0"),
    # mlx5's report and the kernel's watchdog, both forms of the watchdog
    ("[ 1201.5] mlx5_core 0000:3b:00.0 ens1f0np0: TX timeout detected", "n1/0000:3b:00.0"),
    ("[ 1201.4] NETDEV WATCHDOG: eth2 (ixgbe): transmit queue 7 timed out", "n1/eth2"),
    ("[ 1201.4] bnxt_en 0000:5e:00.1 ens2f1np1: NETDEV WATCHDOG: CPU: 2: transmit queue 3 timed out 5232 ms",
     "n1/0000:5e:00.1"),
])
def test_a_network_adapter_whose_transmit_queue_hung_is_failed(line: str, subject: str) -> None:
    found = [(f.severity, f.subject) for f in judge_text("kernel-log", line + "\n") if f.check == "kernel_net"]
    assert found == [("critical", subject)]


def test_the_watchdog_and_the_drivers_lines_of_one_adapter_are_one_finding() -> None:
    text = ("[ 1201.4] NETDEV WATCHDOG: ens1f0np0 (mlx5_core): transmit queue 3 timed out\n"
            "[ 1201.5] mlx5_core 0000:3b:00.0 ens1f0np0: TX timeout detected\n"
            "[ 1201.5] mlx5_core 0000:3b:00.0 ens1f0np0: TX timeout on queue: 3, SQ: 0x1a7, CQ: 0x4c2\n")
    found = [f for f in judge_text("kernel-log", text) if f.check == "kernel_net"]
    assert [(f.severity, f.subject) for f in found] == [("critical", "n1/0000:3b:00.0")]
    assert "3 hang/timeout line(s)" in found[0].message and "ens1f0np0" in found[0].message
    # a timeout that is not a transmit queue's is not this rule
    assert [f for f in judge_text("kernel-log", "[ 5.1] mlx5_core 0000:3b:00.0: cmd timeout\n")
            if f.check == "kernel_net"] == []
