"""Session 17 (issue 29): the rest misses of blind batches 29-31 that a general rule fixes; expected values
are read off the text of each capture."""

from __future__ import annotations

import pytest
from ccparse import registry
from ccparse.common import ParseError
from conftest import judge_text


def test_a_probe_failure_in_the_driver_cores_kernel_6_words_is_a_device_the_driver_did_not_bind() -> None:
    # round2/kernel-log/cosmic3411-...: the open module refuses a pre-GSP GPU, the driver core of kernel 6.18
    # says so in its own words (drivers/base/dd.c: 'probe with driver %s failed with error %d')
    text = ("[   60.058486] NVRM: The NVIDIA GPU 0000:2c:00.0 (PCI ID: 10de:1d16)\n"
            "               NVRM: installed in this system is not supported by open\n"
            "[   60.063350] nvidia 0000:2c:00.0: probe with driver nvidia failed with error -1\n")
    found = [(f.severity, f.subject) for f in judge_text("kernel-log", text) if f.check == "kernel_device"]
    assert found == [("critical", "n1/0000:2c:00.0")]
    # the older words stay read
    old = "[    5.1] mlx5_core: probe of 0000:01:00.0 failed with error -22\n"
    assert [f.subject for f in judge_text("kernel-log", old) if f.check == "kernel_device"] == ["n1/0000:01:00.0"]


def test_a_registered_fabric_whose_health_says_unhealthy_is_degraded_in_each_gpu_format() -> None:
    # round2/nvidia-smi-q/dradriver626-...: 'nvidia-smi -q | grep -E -C3 ...' of a ComputeDomain node, grep's '--'
    # between groups; Fabric State Completed, Status Success, Health Summary Unhealthy, Bandwidth Full
    q = ("# nvidia-smi -q | grep -E -C3 \"ClusterUUID|CliqueId\"\n"
         "    Fabric\n        State                             : Completed\n"
         "        Status                            : Success\n        CliqueId                          : 2\n"
         "        Health\n            Summary                       : Unhealthy\n"
         "            Bandwidth                     : Full\n--\n")
    assert [(f.severity, f.message.split(":")[0]) for f in judge_text("nvidia-smi-q", q) if f.check == "gpu_fabric"] \
        == [("warning", "NVSwitch fabric registered but its health says Summary Unhealthy")]
    xml = ("<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<driver_version>570.86.15</driver_version>\n"
           "<attached_gpus>1</attached_gpus>\n<gpu id=\"00000000:04:00.0\">\n<product_name>NVIDIA H100 80GB HBM3"
           "</product_name>\n<fabric>\n<state>Completed</state>\n<status>Success</status>\n<health>\n"
           "<summary>Healthy</summary>\n<bandwidth>Degraded</bandwidth>\n<route_unhealthy>False</route_unhealthy>\n"
           "</health>\n</fabric>\n</gpu>\n</nvidia_smi_log>\n")
    assert [f.severity for f in judge_text("nvidia-smi-q-xml", xml) if f.check == "gpu_fabric"] == ["warning"]
    csv = ("index, fabric.state, fabric.status, fabric.health.summary, fabric.health.route_unhealthy\n"
           "0, Completed, Success, Healthy, False\n1, Completed, Success, Healthy, True\n")
    assert [f.subject for f in judge_text("nvidia-smi-query", csv) if f.check == "gpu_fabric"] == ["n1/gpu1"]
    # N/A everywhere (a PCIe board, or no NVSwitch): nothing
    na = csv.replace("Completed, Success, Healthy, False", "N/A, N/A, N/A, N/A").replace(
        "Completed, Success, Healthy, True", "N/A, N/A, N/A, N/A")
    assert [f for f in judge_text("nvidia-smi-query", na) if f.check == "gpu_fabric"] == []


def test_a_paste_cut_inside_its_last_nodes_record_judges_the_nodes_it_holds_whole() -> None:
    # round2/scontrol-node/slinky45-...: 'scontrol show nodes' cut inside the second node's record (no State=)
    text = ("NodeName=esc8000a-1 Arch=x86_64 CoresPerSocket=1 \n   CPUAlloc=0 CPUEfctv=11 CPUTot=12 CPULoad=3.45\n"
            "   State=IDLE+DYNAMIC_NORM ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
            "   Partitions=tn \n\nNodeName=esc8000a-0 Arch=x86_64 CoresPerSocket=1 \n"
            "   CPUAlloc=0 CPUEfctv=11 CPUTot=12 CPULoad=3.45\n")
    data = registry.parse("scontrol-node", text)
    assert [n["name"] for n in data["nodes"]] == ["esc8000a-1"] and "esc8000a-0" in data["cut"][0]
    assert judge_text("scontrol-node", text) == []
    # one node without State= alone is still not a node record that can be judged
    with pytest.raises(ParseError):
        registry.parse("scontrol-node", "NodeName=a State=IDLE\n\nNodeName=b Arch=x86_64\n\nNodeName=c State=IDLE\n")


def test_a_numbered_views_line_numbers_come_off_and_a_wrapped_lines_rest_stays() -> None:
    # round2/kernel-log/gpuoperator2511-...: dmesg lines pasted from a numbered view, the first number glued to
    # the time, long lines wrapped with an indent; each NIC's bandwidth without 'limited by' is healthy
    text = ("1700[   22.316553] mlx5_core 0000:13:00.0: mlx5_pcie_event:297:(pid 11): PCIe slot power capability "
            "was not advertised.\n"
            "1701 [   22.325345] mlx5_core 0000:63:00.0: 504.112 Gb/s available PCIe bandwidth "
            "(32.0 GT/s PCIe x16 link)\n"
            "1702 [   22.879706] input: AVOCENT  AVODSR XRIP SFIQ-VGA SMA as /devices/pci0000:70/0000:70:07.1/"
            "0000:71:00.4/usb4/4-1/4-1.\n     2/4-1.2.1/4-1.2.1:1.0/0003:0624:0307.0001/input/input2\n"
            "1703 [   28.1] mlx5_core 0000:75:00.0: 126.024 Gb/s available PCIe bandwidth, limited by 8.0 GT/s "
            "PCIe x16 link at 0000:74:01.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)\n")
    data = registry.parse("kernel-log", text)
    assert [e["pci"] for e in data["pcie_limited"]] == ["0000:75:00.0"]
    # numbers that do not go up by one are not a view's: the text's own (no kernel log line starts so)
    with pytest.raises(ParseError):
        registry.parse("kernel-log", text.replace("1702 [", "1709 ["))


@pytest.mark.parametrize("kind", ["nvidia-smi", "nvidia-smi-q", "nvidia-smi-query"])
def test_nvidias_failure_to_reach_the_driver_fails_the_node_in_every_mode(kind: str) -> None:
    # round2/nvidia-smi-q/py3status764-...: 'nvidia-smi -q -d TEMPERATURE' after a driver upgrade printed only
    # 'Failed to initialize NVML: Unknown Error' (exit 255): no GPU is usable, whichever mode asked
    for text in ("lasers~ nvidia-smi -q -d TEMPERATURE\nFailed to initialize NVML: Unknown Error\n",
                 "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
                 "latest NVIDIA driver is installed and running.\n"):
        assert [(f.check, f.severity) for f in judge_text(kind, text)] == [("gpu_driver", "critical")], text


def test_the_watchdog_line_of_torch_before_2_3_without_its_glog_date_is_read() -> None:
    # round2/nccl-log/megatron735-...: '[rank2]:[E ProcessGroupNCCL.cpp:754]' (no date after the level) beside
    # NCCL INFO service-thread lines: the watchdog's timeout names no fault of the node (cannot judge)
    text = ("[rank2]:[E ProcessGroupNCCL.cpp:754] [Rank 2] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=305, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600381 "
            "milliseconds before timing out.\n"
            "9aee1c01f3e7:6727:7168 [1] NCCL INFO [Service thread] Connection closed by localRank 2\n")
    data = registry.parse("nccl-log", text)
    assert [(t["rank"], t["seq"], t["op"]) for t in data["pg_timeouts"]] == [(2, 305, "ALLREDUCE")]


def test_a_power_limit_set_well_below_the_boards_default_is_degraded() -> None:
    # round2/nvidia-smi-q/hcideepdive-lab14-...: H100 GPU 0 with its limit lowered to 200 W of a 700 W default,
    # SW Power Cap active
    q = ("==============NVSMI LOG==============\n\nDriver Version                                    : 580.126.20\n\n"
         "Attached GPUs                                     : 8\nGPU 00000000:04:00.0\n"
         "    Clocks Event Reasons\n        SW Power Cap                                   : Active\n"
         "    GPU Power Readings\n        Average Power Draw                             : 209.55 W\n"
         "        Current Power Limit                            : 200.00 W\n"
         "        Default Power Limit                            : 700.00 W\n"
         "        Max Power Limit                                : 700.00 W\n")
    found = [(f.severity, f.subject) for f in judge_text("nvidia-smi-q", q) if f.check == "gpu_power"]
    assert found == [("warning", "n1/gpu0")]
    # at the default (or a rounding below it): nothing
    at_default = q.replace(": 200.00 W", ": 695.00 W")
    assert [f for f in judge_text("nvidia-smi-q", at_default) if f.check == "gpu_power"] == []
    csv = "index, power.limit [W], power.default_limit [W]\n0, 300.00 W, 400.00 W\n1, 400.00 W, 400.00 W\n"
    assert [f.subject for f in judge_text("nvidia-smi-query", csv) if f.check == "gpu_power"] == ["n1/gpu0"]


def test_a_topo_p2p_matrix_is_read_and_a_refused_pair_is_degraded() -> None:
    # round2/nvidia-smi-topo/mleng-netdebug-topo-p2p-r-*: 'nvidia-smi topo -p2p r' on 2x L4 (CNS) and 8x H100 (OK)
    two = "$ nvidia-smi topo -p2p r\n        GPU0    GPU1\n GPU0   X       CNS\n GPU1   CNS     X\n"
    found = [(f.check, f.severity, f.subject) for f in judge_text("nvidia-smi-topo", two)]
    assert found == [("gpu_topology", "warning", "n1/GPU0"), ("gpu_topology", "warning", "n1/GPU1")]
    head = "        " + "    ".join(f"GPU{i}" for i in range(4)) + "\n"
    rows = "".join(f" GPU{i}   " + "       ".join("X" if j == i else "OK" for j in range(4)) + "\n" for i in range(4))
    assert registry.parse("nvidia-smi-topo", head + rows)["p2p"] is True
    assert judge_text("nvidia-smi-topo", head + rows) == []


def test_an_active_port_of_a_device_that_reports_no_physical_state_is_not_down() -> None:
    # round2/ibv_devinfo/ompiusers9253-...: a Chelsio cxgb3 (iWARP) port PORT_ACTIVE with 'phys_state: invalid
    # physical state (0)' (iWARP adapters report none); an IB port's 'Polling' stays a fault
    port = ("hca_id: cxgb3_0\n        transport:                      iWARP (1)\n"
            "                 port:   1\n                         state:                  PORT_ACTIVE (4)\n"
            "                         active_width:           4X (2)\n"
            "                         active_speed:           5.0 Gbps (2)\n"
            "                         phys_state:             {phys}\n")
    assert judge_text("ibv_devinfo", port.format(phys="invalid physical state (0)")) == []
    down = port.format(phys="POLLING (2)").replace("PORT_ACTIVE (4)", "PORT_DOWN (1)")
    assert [f.severity for f in judge_text("ibv_devinfo", down) if f.check == "ib_port_state"] == ["critical"]


def test_an_edac_reports_count_of_corrected_errors_is_read_as_its_number() -> None:
    # round2/kernel-log/illinoisscicomp66-...: one EDAC line counting 262 corrected errors on MC1 (OVERFLOW); the
    # count was read in base 1 (no number) and the line taken for a single error
    text = ("[Mon Oct  3 13:52:42 2022] EDAC MC1: 262 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 "
            "(channel:1 slot:0 page:0x2031c14 offset:0x940 grain:32 syndrome:0x0 -  OVERFLOW area:DRAM)\n")
    assert [e["count"] for e in registry.parse("kernel-log", text)["edac"]] == [262]
    assert [(f.severity, f.subject) for f in judge_text("kernel-log", text) if f.check == "kernel_memory"] == [
        ("warning", "n1/MC1")]


def test_a_table_rows_bus_id_with_its_domain_shortened_by_the_copy_is_read() -> None:
    # round2/nvidia-smi/accelerate3104-...: the page's copy collapsed the box rules and printed the bus id as
    # '0:53:00.0'; both GPU rows (100% busy, no ECC error) are read
    text = ("+-+\n| NVIDIA-SMI 535.183.01             Driver Version: 535.183.01   CUDA Version: 12.2     |\n"
            "|=+=+=|\n|   0  NVIDIA H100 80GB HBM3          On  | 0:53:00.0 Off |                           0 |\n"
            "| N/A   37C    P0             112W / 700W |  46103MiB / 81559MiB |    100%      Default |\n"
            "+-+-+-+\n")
    assert [g["bus_id"] for g in registry.parse("nvidia-smi", text)["gpus"]] == ["00000000:53:00.0"]


def test_a_veth_peer_without_carrier_is_a_virtual_link_not_a_lost_cable() -> None:
    # round2/ip-link/unixse619068-...: 'ip link show type veth' of a pair whose peer was never brought up
    pair = ("2: vethb@vetha: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN mode DEFAULT group default "
            "qlen 1000\n"
            "    link/ether 02:a0:3b:9a:ad:4d brd ff:ff:ff:ff:ff:ff\n"
            "3: vetha@vethb: <NO-CARRIER,BROADCAST,MULTICAST,UP,M-DOWN> mtu 1500 qdisc noqueue state LOWERLAYERDOWN "
            "mode DEFAULT group default qlen 1000\n    link/ether 36:e3:62:1b:a8:1f brd ff:ff:ff:ff:ff:ff\n")
    assert judge_text("ip-link", pair) == []
    # a physical port up without carrier, singled out, stays reported
    nic = ("3: ens1f0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc mq state DOWN mode DEFAULT group default "
           "qlen 1000\n    link/ether 36:e3:62:1b:a8:1f brd ff:ff:ff:ff:ff:ff\n")
    assert [f.check for f in judge_text("ip-link", nic)] == ["netdev_link"]


def test_sinfo_node_oriented_then_default_in_one_paste_reads_both_runs() -> None:
    # round2/sinfo/azurehpc-simple-slurm-...: 'sinfo -Nel' then 'sinfo' behind a prompt: two layouts, one after
    # the other; a node drained in the second run is read
    text = ("[hpcuser@headnode ~]$ sinfo -Nel\nFri Jul 09 16:55:43 2021\n"
            "NODELIST       NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON\n"
            "compute000000      1  compute*        idle 44     2:22:1 354545        0      1   (null) none\n"
            "[hpcuser@headnode ~]$ sinfo\nPARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "compute*     up   infinite      1  drain compute000003\n")
    data = registry.parse("sinfo", text)
    assert sorted(data["nodes"]) == ["compute000000", "compute000003"]
    assert data["nodes"]["compute000003"]["states"] == ["drain"]


def test_an_enforced_limit_below_the_requested_one_of_a_shared_module_is_the_design() -> None:
    # tests/fixtures/labelled/set2/nvidia-smi-q/gh200-...: GH200 'Current Power Limit 700 W', 'Requested Power Limit
    # 900 W', 'Default Power Limit 900 W', then its 'Module Power Readings' (the module's 1000 W shared with the Grace
    # CPU): healthy
    q = ("Attached GPUs                     : 1\nGPU 00000000:DD:00.0\n    GPU Power Readings\n"
         "        Current Power Limit               : 700.00 W\n        Requested Power Limit             : 900.00 W\n"
         "        Default Power Limit               : 900.00 W\n        Max Power Limit                   : 900.00 W\n"
         "    Module Power Readings\n        Current Power Limit               : 1000.00 W\n")
    assert [f for f in judge_text("nvidia-smi-q", q) if f.check == "gpu_power"] == []
    lowered = q.replace("Requested Power Limit             : 900.00 W", "Requested Power Limit             : 500.00 W")
    assert [f.check for f in judge_text("nvidia-smi-q", lowered) if f.check == "gpu_power"] == ["gpu_power"]


def test_freebsds_and_a_routers_switch_port_link_events_are_read() -> None:
    # round2/kernel-log/asuswrtmerlin792-... (a router's Broadcom switch port) and opnsense4214-... (FreeBSD ifnet)
    router = ("Jun 14 13:37:09 kernel: eth3 (Int switch port: 7) (Logical Port: 7) (phyId: 15) Link DOWN.\n"
              "Jun 14 13:37:12 kernel: eth3 (Int switch port: 7) (Logical Port: 7) (phyId: 15) Link Up at 100 mbps "
              "full duplex AN: On\n"
              "Jun 14 13:37:17 kernel: eth3 (Int switch port: 7) (Logical Port: 7) (phyId: 15) Link DOWN.\n"
              "Jun 14 13:40:26 kernel: eth3 (Int switch port: 7) (Logical Port: 7) (phyId: 15) Link Up at 1000 mbps "
              "full duplex AN: On\n")
    flaps = registry.parse("kernel-log", router)["link_flaps"]
    assert flaps["eth3"]["downs"] == 2 and flaps["eth3"]["ups"] == 2
    bsd = ("Jul 20 21:12:13 kernel: igb1: link state changed to DOWN\n"
           "Jul 20 21:13:06 kernel: igb1: link state changed to UP\n")
    assert registry.parse("kernel-log", bsd)["link_flaps"]["igb1"]["downs"] == 1
