"""Session 18 (issue 29): general rules found by review and by the rest misses of blind batches 38-40;
expected values are read off the text of each capture."""

from __future__ import annotations

import pytest
from ccparse import registry
from ccparse.common import ParseError
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
\tCA type: MT0
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


def test_a_paste_with_every_line_in_backticks_and_a_gentoo_root_prompt_is_read() -> None:
    # round2/scontrol-node/slinky57-...: every line of the paste in its own backticks, one line also bold;
    # round2/scontrol-node/jxliu-gentoo-...: Gentoo's root prompt 'heq /var/log/slurm # ' before the command
    record = ("NodeName=cu201 Arch=x86_64 CoresPerSocket=24\n   CPUAlloc=0 CPUTot=48 CPULoad=0.00\n"
              "   Gres=(null)\n   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1\n"
              "   Reason=Low RealMemory [root@2022-05-18T17:20:20]\n")
    ticked = "`slurm@ctl-0:/tmp$ scontrol show node`\n" + "".join(
        f"   `{'**' + ln.strip() + '**' if 'Gres' in ln else ln.strip()}`\n" for ln in record.splitlines())
    gentoo = "heq /var/log/slurm # scontrol show node\n" + record
    for text in (ticked, gentoo):
        (node,) = registry.parse("scontrol-node", text)["nodes"]
        assert node["name"] == "cu201" and node["gres"] in (None, "(null)", "")
        assert [(f.severity, f.subject) for f in judge_text("scontrol-node", text)
                if f.check == "slurm_node_state"] == [("critical", "cu201")]


def test_a_node_record_whose_times_hold_a_blank_is_read() -> None:
    # round2/scontrol-node/soperator1288-...: SLURM_TIME_FORMAT '%F %T.%Z' prints 'BootTime=2025-07-21 14:35:22.UTC'
    text = ("NodeName=worker-1 Arch=x86_64 CoresPerSocket=8\n"
            "   State=IDLE+DRAIN+DYNAMIC_NORM ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
            "   BootTime=2025-07-21 14:35:22.UTC SlurmdStartTime=2025-07-23 05:46:39.UTC\n")
    (node,) = registry.parse("scontrol-node", text)["nodes"]
    assert "DRAIN" in node["state"]
    # a word without '=' elsewhere is still refused (a record that is not scontrol's)
    with pytest.raises(ParseError):
        registry.parse("scontrol-node", text.replace("Weight=1", "Weight=1 oops"))


def test_an_unused_virtual_functions_port_is_down_by_design_beside_working_ports() -> None:
    # round2/ibstat/openshiftdocs-rdma-sriov-client-pod-...: a pod's ibstat: PF MT4123 Active, VFs MT4124 Down/Disabled
    def ca(name: str, ca_type: str, state: str, phys: str) -> str:
        return (f"CA '{name}'\n\tCA type: {ca_type}\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: {state}\n"
                f"\t\tPhysical state: {phys}\n\t\tRate: 200\n\t\tLink layer: Ethernet\n")
    pod = ca("mlx5_0", "MT4123", "Active", "LinkUp") + ca("mlx5_3", "MT4124", "Down", "Disabled")
    assert [f.severity for f in judge_text("ibstat", pod) if f.check == "ib_port_state"] == ["info"]
    # a PF down beside it stays critical; a VF shown alone, or one in another state, is judged as any port
    pf_down = pod.replace("MT4124", "MT4123")
    assert [f.severity for f in judge_text("ibstat", pf_down) if f.check == "ib_port_state"] == ["critical"]
    alone = ca("mlx5_3", "MT4124", "Down", "Disabled")
    assert [f.severity for f in judge_text("ibstat", alone) if f.check == "ib_port_state"] == ["critical"]


def test_a_bridged_h100_pcie_card_uses_twelve_of_its_eighteen_links() -> None:
    # round2/nvidia-smi-nvlink/hpejp-dl380a-...: 2x H100 PCIe with three NVLink bridges: links 4, 5, 10, 11, 16, 17
    # <inactive>, the other twelve at 26.562 GB/s
    def gpu(i: int, inactive: set[int]) -> str:
        return f"GPU {i}: NVIDIA H100 PCIe (UUID: GPU-{i})\n" + "".join(
            f"\t Link {n}: {'<inactive>' if n in inactive else '26.562 GB/s'}\n" for n in range(18))
    by_design = {4, 5, 10, 11, 16, 17}
    assert judge_text("nvidia-smi-nvlink", gpu(0, by_design) + gpu(1, by_design)) == []
    # a thirteenth link down is one bridge link lost
    worse = judge_text("nvidia-smi-nvlink", gpu(0, by_design | {0}) + gpu(1, by_design))
    assert [(f.severity, f.subject) for f in worse] == [("critical", "n1/gpu0")]


def test_an_older_edac_line_names_its_count_after_the_location() -> None:
    # round2/kernel-log/cldntiki-...: sb_edac's 'EDAC MC1: CE row 1, channel 0, label "...": 1 Unknown error(s): ...'
    line = ('Jun 8 04:46:55 array01 kernel: EDAC MC1: CE row 1, channel 0, label "CPU_SrcID#1_Channel#0_DIMM#1": '
            '{n} Unknown error(s): memory scrubbing on FATAL area : cpu=6\n')
    (ev,) = registry.parse("kernel-log", line.format(n=3))["edac"]
    assert (ev["mc"], ev["kind"], ev["count"]) == ("MC1", "CE", 3)
    twice = line.format(n=1) + line.format(n=1).replace("04:46:55", "04:57:46")
    assert [(f.severity, f.subject) for f in judge_text("kernel-log", twice) if f.check.startswith("kernel_mem")] \
        == [("warning", "n1/MC1")]


def test_an_xid_whose_address_the_paster_redacted_is_judged_on_the_host() -> None:
    # round2/kernel-log/nccl2241-...: 'NVRM: Xid (PCI:...): 137, RLW_RXPIPE interrupt hit on link 11 ...'
    text = ("kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (0x00000004 0x00000000)\n"
            "kernel: NVRM: Xid (PCI:...): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV Error\n")
    found = [(f.severity, f.subject) for f in judge_text("kernel-log", text) if f.check == "xid"]
    assert found and {s for _sev, s in found} == {"n1"} and "critical" not in {sev for sev, _s in found}


@pytest.mark.parametrize("line", [
    # round2/kernel-log/ucx7738-...: a DCT command the firmware never completed (pdsh's host prefix off)
    "[14280.445226] mlx5_core 0000:61:00.0: wait_func:1132:(pid 141181): CREATE_DCT(0x710) timeout. Will cause "
    "a leak of a command resource",
    "[14280.445220] mlx5_core 0000:61:00.0: wait_func_handle_exec_timeout:1104:(pid 141183): cmd[22]: "
    "CREATE_DCT(0x710) No done completion",
    # the driver's health poller (drivers/net/ethernet/mellanox/mlx5/core/health.c)
    "[198542.853543] mlx5_core 0000:61:00.0: device's health compromised - reached miss count",
    "[  301.1] mlx5_core 0000:61:00.0: poll_health:800:(pid 0): Fatal error 1 detected",
])
def test_an_mlx5_adapter_whose_firmware_stopped_answering_is_failed(line: str) -> None:
    found = [(f.severity, f.subject) for f in judge_text("kernel-log", line + "\n") if f.check == "kernel_net"]
    assert found == [("critical", "n1/0000:61:00.0")]


def test_an_mlx5_command_that_failed_with_a_status_is_not_the_firmware_rule() -> None:
    # a command the firmware answered with an error (a bad request, not a silent firmware) is no such finding
    line = ("[ 12.1] mlx5_core 0000:61:00.0: mlx5_cmd_check:794:(pid 1): CREATE_MKEY(0x200) op_mod(0x0) failed, "
            "status bad parameter(0x3), syndrome (0x2aa3e5)\n")
    assert [f for f in judge_text("kernel-log", line) if f.check == "kernel_net"] == []


def _nccl_tests(size: int, busbw: float, head: str = "") -> str:
    bw = f"{busbw * 8 / 15:6.2f}  {busbw:6.2f}      0"
    return (head + "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 2(factor) warmup iters: 5 "
            "iters: 20\n"
            "#  Rank  0 Group  0 Pid  101 on     node-0 device  0 [0x18] NVIDIA H200\n"
            "#  Rank  8 Group  0 Pid  201 on     node-1 device  0 [0x18] NVIDIA H200\n"
            "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place\n"
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
            "busbw #wrong\n"
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
            "(GB/s)\n"
            f"  {size:>10}  {size // 4:>12}     float     sum      -1   1000.0  {bw}   1000.0  {bw}\n"
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 100.0 \n#\n")


def test_a_run_that_stops_before_the_floors_message_size_is_not_judged_just_below_it() -> None:
    # round2/nccl-tests/datacrunch-...: 2x H200, 16 ranks, 267.8 GB/s at 1 GiB against the 288 GB/s default (8 GiB)
    found = [(f.rule if hasattr(f, "rule") else f.check, f.severity)
             for f in judge_text("nccl-tests", _nccl_tests(1 << 30, 267.8)) if f.check == "nccl_busbw"]
    assert found and all(sev == "info" for _c, sev in found)
    # at 8 GiB the same shortfall is judged; far below the floor at 1 GiB too
    assert "warning" in {f.severity for f in judge_text("nccl-tests", _nccl_tests(8 << 30, 267.8))}
    assert "warning" in {f.severity for f in judge_text("nccl-tests", _nccl_tests(1 << 30, 200.0))}


def test_a_net_plugins_network_gets_no_default_inter_node_floor() -> None:
    # round2/nccl-tests/awsefaeks-...: 2x p4d over EFA ('Using network AWS Libfabric'), 43.8 GB/s: the default A100
    # floor is an InfiniBand rail set's, not the instance's 4x100 Gb/s
    head = ("node-0:25:25 [0] NCCL INFO NET/OFI Selected Provider is efa\n"
            "node-0:25:25 [0] NCCL INFO Using network AWS Libfabric\n")
    text = _nccl_tests(8 << 30, 43.8, head).replace("H200", "A100-SXM4-40GB")
    assert {f.severity for f in judge_text("nccl-tests", text) if f.check == "nccl_busbw"} == {"info"}
    assert "warning" in {f.severity for f in judge_text("nccl-tests", text, {"nccl_busbw_floor_GBps": 80})}


def test_nccl_lines_flattened_onto_one_and_a_lone_socket_network_line_are_read() -> None:
    # round2/nccl-log/llamafactory6111-...: a quoted reply whose line breaks were lost; areal639-...: one line alone
    flat = ("> > [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0. [0] NCCL INFO NET/IB : No device found. "
            "[0] NCCL INFO NET/Socket : Using [0]eth0:10.47.14.218<0> [0] NCCL INFO Using network Socket\n")
    parsed = registry.parse("nccl-log", flat)
    assert parsed["ib_no_device"] and parsed["network"] == "Socket"
    assert "critical" in {f.severity for f in judge_text("nccl-log", flat, {"fabric": "infiniband"})}
    alone = "NCCL INFO NET/Socket : Using [0]bond0:200.8.184.2<0>\n"
    assert registry.parse("nccl-log", alone)["network"] == "Socket"
    assert "critical" in {f.severity for f in judge_text("nccl-log", alone, {"fabric": "roce"})}
    # beside an IB device the socket line does not name the network
    ib = "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n" + alone
    assert registry.parse("nccl-log", ib)["network"] != "Socket"


def test_perftest_completion_error_is_failed_and_a_rejected_rdma_cm_connection_did_not_run() -> None:
    # round2/ib_write_bw/perftest173-...: a work completion in error mid-run (no result table)
    failed = ("Completion with error at client\n  Failed status 4: wr_id 0 syndrom 0x51\nscnt=828, ccnt=700\n"
              "  Failed to complete run_iter_bw function successfully\n")
    assert [(f.check, f.severity) for f in judge_text("ib_write_bw", failed)] == [("ib_write_bw", "critical")]
    # round2/ib_write_bw/perftest54-...: -R, the server rejected the RDMA CM connection: nothing was measured
    rejected = ("RDMA CM event error:\nEvent: RDMA_CM_EVENT_REJECTED; error: -111.\n\nFailed to handle RDMA CM event.\n"
                "Failed to connect RDMA CM events.\n")
    assert [(f.severity, f.message.startswith("cannot judge")) for f in judge_text("ib_write_bw", rejected)] == [
        ("info", True)]


def test_kernel_log_events_of_batch_41_are_read_and_judged() -> None:
    def found(text: str, check: str) -> list[tuple[str, str]]:
        return [(f.severity, f.subject) for f in judge_text("kernel-log", text) if f.check == check]
    # round2/kernel-log/ucrcs100-...: AMD's decoded northbridge machine check, a corrected DRAM ECC error on node 3
    amd = (" kernel:[Hardware Error]: MC4 Error (node 3): DRAM ECC error detected on the NB.\n"
           " kernel:[Hardware Error]: CPU:18 (10:9:1) MC4_STATUS[Over|CE|MiscV|-|AddrV|CECC]: 0xdc5c410004080a13\n")
    (ev,) = registry.parse("kernel-log", amd)["edac"]
    assert (ev["mc"], ev["kind"]) == ("MC4 node 3", "CE")
    # one corrected error is a DIMM to watch (degraded since session 18), an uncorrected one failed
    assert [sev for sev, _s in found(amd, "kernel_memory")] == ["warning"]
    assert [sev for sev, _s in found(amd.replace("|CE|", "|UE|"), "kernel_memory")] == ["critical"]
    # round2/kernel-log/linuxnfs2026-...: the hung-task watchdog, no timestamps (a mail's copy)
    hung = ("INFO: task node:1646922 blocked for more than 122 seconds.\n"
            "      Tainted: G            E       6.18.20-1.el9.esat.x86_64 #1\n")
    assert found(hung, "kernel_task") == [("warning", "n1")]
    # round2/kernel-log/linuxpci2024-proxmox8-...: ixgbe read all ones and gave the adapter up
    gone = "  ixgbe 0000:05:00.0: enabling device (0000 -> 0002)\n  ixgbe 0000:05:00.0: Adapter removed\n"
    assert found(gone, "kernel_net") == [("critical", "n1/0000:05:00.0")]
    # round2/kernel-log/linuxrdma2020-...: mlx5's command interface could not allocate a command entry
    cmd = ("Nov 17 01:12:58 store01 kernel: mlx5_core 0000:01:00.0: cmd_work_handler:887:(pid 383): failed to allocate "
           "command entry\n")
    assert found(cmd, "kernel_net") == [("critical", "n1/0000:01:00.0")]


def test_a_link_below_capability_in_a_virtual_machine_is_the_emulated_ports() -> None:
    # round2/kernel-log/linuxpci2024-dgx-h100-kvm-guest-...: H100s passed through to a KVM guest behind root ports
    # that advertise 16 GT/s
    limited = ("[    5.1] pci 0000:06:00.0: 252.048 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x16 "
               "link at 0000:00:01.5 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)\n")
    guest = "[    0.000000] Hypervisor detected: KVM\n" + limited
    assert [f.severity for f in judge_text("kernel-log", guest) if f.check == "kernel_pcie"] == ["info"]
    assert [f.severity for f in judge_text("kernel-log", limited) if f.check == "kernel_pcie"] == ["warning"]
    bare = "[    0.1] Booting paravirtualized kernel on bare hardware\n" + limited
    assert [f.severity for f in judge_text("kernel-log", bare) if f.check == "kernel_pcie"] == ["warning"]


def test_a_gpu_the_driver_does_not_support_is_a_device_it_did_not_bind() -> None:
    # round2/kernel-log/aicr1858-...: the driver wraps its refusal over two lines, then counts the failed probe
    text = ("NVRM: The NVIDIA GPU 000a:00:00.0 (PCI ID: 10de:2330) installed in this system\n"
            "      is not supported by the NVIDIA 580.126.09 driver release.\n"
            "NVRM: The NVIDIA probe routine failed for 1 device(s).\n")
    assert [(f.severity, f.subject) for f in judge_text("kernel-log", text) if f.check == "kernel_device"] == [
        ("critical", "n1/000a:00:00.0")]


def test_a_topology_of_one_gpu_and_no_nic_holds_nothing_to_judge() -> None:
    # round2/nvidia-smi-topo/hami99-...: a single Tesla P4, NUMA affinity N/A
    one = "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-7\t\tN/A\t\tN/A\n"
    assert [(f.check, f.severity) for f in judge_text("nvidia-smi-topo", one)] == [("coverage", "info")]
    two = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tPIX\t0-7\t0\nGPU1\tPIX\t X \t0-7\t0\n")
    assert judge_text("nvidia-smi-topo", two) == []


def test_a_mail_wrapped_kernel_log_pasted_indented_is_unwrapped() -> None:
    # round2/kernel-log/linuxpci2023-...: syslog lines wrapped after the device, the whole paste indented
    text = ("    Dec 11 23:52:05 node-4 kernel: [183519.565000] pcieport 0000:80:03.2:\n"
            "    pciehp: Slot(14): Link Down\n"
            "    Dec 11 23:52:06 node-4 kernel: [183519.639070] pci 0000:83:00.0:\n"
            "    Removing from iommu group 41\n")
    assert [(f.severity, f.subject) for f in judge_text("kernel-log", text) if f.check == "kernel_pcie"] == [
        ("critical", "n1/0000:80:03.2")]
    # a rest left alone on its line (no head to join) still names the slot
    alone = "Dec 11 23:52:05 node-4 kernel: pciehp: Slot(14): Link Down\n"
    assert [(f.severity, f.subject) for f in judge_text("kernel-log", alone) if f.check == "kernel_pcie"] == [
        ("critical", "n1/slot 14")]
