"""Session 22 (issue 29): rules and readings of this session; expected values are read off the text of each
capture (quoted here, with the corpus file it comes from)."""

from __future__ import annotations

from conftest import finding_keys as _checks
from conftest import judge_text
from conftest import parse_text as _parse
from conftest import text_of as _text

# --- NCCL: GPUDirect RDMA disabled lines singled out; lo beside a real interface ---

# round2/nccl-log/nccl1676-learn01-...-gpu-direct-rdma-disabled-for-hca-0-1-2.txt (NVIDIA/nccl#1676)
GDR_OFF = _text(
    "learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
    "learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'",
    "learn01:2228640:2230192 [4] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
    "learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 2 'mlx5_2'")


def test_gpudirect_rdma_disabled_lines_alone_are_degraded_unless_nccl_says_one_node() -> None:
    (f,) = [f for f in judge_text("nccl-log", GDR_OFF) if f.check == "nccl_gdr"]
    assert f.severity == "warning" and "mlx5_0, mlx5_1, mlx5_2" in f.message
    one = GDR_OFF + "learn01:2228637:2230195 [3] NCCL INFO comm 0x1 rank 3 nRanks 8 nNodes 1 localRanks 8 localRank 3\n"
    assert not [f for f in judge_text("nccl-log", one) if f.check == "nccl_gdr"]
    assert not [f for f in judge_text("nccl-log", GDR_OFF, {"nccl_gdr_expected": False}) if f.check == "nccl_gdr"]


# round2/nccl-log/pytorchoperator202-eks-master-pod-...-net-socket-lo-127.0.0.1-and-eth0-cut.txt (kubeflow)
LO_AND_ETH0 = ("kubeflow-pytorch-gpu-dist-job-master-0:1:1 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0> "
               "[1]eth0:192.168.4.230<0>\n")


def test_lo_listed_beside_a_real_interface_is_a_setting_for_several_nodes() -> None:
    (f,) = [f for f in judge_text("nccl-log", LO_AND_ETH0) if f.check == "nccl_transport" and f.subject == "n1/lo"]
    assert f.severity == "critical" and "beside eth0" in f.message
    # NCCL_SOCKET_IFNAME=lo alone (a one-node test), or nNodes 1: not judged
    alone = "a:1:1 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n"
    assert not [f for f in judge_text("nccl-log", alone) if f.subject == "n1/lo"]
    one = LO_AND_ETH0 + "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0\n"
    assert not [f for f in judge_text("nccl-log", one) if f.subject == "n1/lo"]


# --- nvidia-smi under WSL 2: GPU-Util ERR! is WSL's, not NVML losing the GPU ---

# round2/nvidia-smi/songzy-omen-wsl2-470.28-under-470.76-rtx-3090-class-24gb-gpu-util-err-display-on.txt
WSL = _text(
    "+-----------------------------------------------------------------------------+",
    "| NVIDIA-SMI 470.28       Driver Version: 470.76       CUDA Version: 11.4     |",
    "|-------------------------------+----------------------+----------------------+",
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |",
    "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |",
    "|                               |                      |               MIG M. |",
    "|===============================+======================+======================|",
    "|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0  On |                  N/A |",
    "| 30%   35C    P8    16W / 350W |   1782MiB / 24576MiB |    ERR!      Default |",
    "|                               |                      |                  N/A |",
    "+-------------------------------+----------------------+----------------------+")


def test_gpu_util_err_under_wsl2_is_a_note_and_on_linux_the_gpu_cannot_be_read() -> None:
    errs = [f for f in judge_text("nvidia-smi", WSL) if f.check == "gpu_field_error"]
    assert [(f.severity, "WSL 2" in f.message) for f in errs] == [("info", True)]
    linux = WSL.replace("NVIDIA-SMI 470.28 ", "NVIDIA-SMI 470.76 ")
    errs = [f for f in judge_text("nvidia-smi", linux) if f.check == "gpu_field_error"]
    assert [f.severity for f in errs] == ["critical"] and "utilization.gpu 'ERR!'" in errs[0].message
    # under WSL, an error token in another field is still NVML failing to read the GPU
    other = WSL.replace("| 30%   35C", "| 30%  ERR!")
    assert "critical" in [f.severity for f in judge_text("nvidia-smi", other) if f.check == "gpu_field_error"]


# --- sinfo: a nodelist shortened with '...' inside its brackets ---

# round2/sinfo/archer2-docs-scheduler-ln01-...-nodelists-cut-with-dots.txt (ARCHER2 user guide)
ARCHER2 = _text(
    "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST",
    "standard     up 1-00:00:00    105  down* nid[001006,...,002014]",
    "standard     up 1-00:00:00     12  drain nid[001016,...,001969]",
    "standard     up 1-00:00:00      5   resv nid[001000,001002-001004,001114]",
    "standard     up 1-00:00:00    683  alloc nid[001001,...,001970-001991]",
    "standard     up 1-00:00:00      2   down nid[001021,001050]")


def test_an_elided_nodelist_names_the_hosts_around_its_dots() -> None:
    rows = _parse("sinfo", ARCHER2)["partitions"]
    assert rows[0]["hosts"] == ["nid001006", "nid002014"]
    assert rows[3]["hosts"] == ["nid001001", *(f"nid{n:06d}" for n in range(1970, 1992))]
    down = {f.subject for f in judge_text("sinfo", ARCHER2) if f.severity == "critical"}
    assert down == {"nid001006", "nid002014", "nid001021", "nid001050"}


def test_the_hostlist_filters_still_refuse_dots() -> None:
    import pytest
    from ccparse.hostlist import HostlistError, expand_hostlist

    with pytest.raises(HostlistError):
        expand_hostlist("nid[001006,...,002014]")


# --- limits: a listing trimmed to other rows states no memlock ---

# round2/proc-limits/goodcommand-rst-centos-me-prompt-ulimit-a-trimmed-to-max-user-processes-4096-no-memlock-row.txt
TRIMMED = _text("[me@centos ffmpeg]$ ulimit -a", "", "max user processes              (-u) 4096")


def test_a_limits_listing_without_its_memlock_row_parses_and_cannot_be_judged() -> None:
    data = _parse("proc-limits", TRIMMED)
    assert data["limits"]["max_user_processes"]["soft"] == 4096 and "max_locked_memory" not in data["limits"]
    (f,) = judge_text("proc-limits", TRIMMED)
    assert f.check == "memlock" and f.message.startswith("cannot judge: nothing judgeable: ")
    proc = _text("Limit                     Soft Limit           Hard Limit           Units",
                 "Max open files            1024                 4096                 files")
    (f,) = judge_text("proc-limits", proc)
    assert f.message.startswith("cannot judge: nothing judgeable: ")


# --- ip link: a bond up without carrier; an IPoIB netdev never brought up ---

# round2/ip-link/dlotterman-metal-rescue-clone-...-bond0-no-carrier-keeps-source-host-ips-....txt
BOND = _text(
    "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000",
    "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00",
    "2: ens3f0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP group default qlen 1000",
    "    link/ether 40:a6:b7:74:c2:d0 brd ff:ff:ff:ff:ff:ff",
    "4: bond0: <NO-CARRIER,BROADCAST,MULTICAST,MASTER,UP> mtu 1500 qdisc noqueue state DOWN group default qlen 1000",
    "    link/ether ca:aa:67:a9:c2:c7 brd ff:ff:ff:ff:ff:ff",
    "    inet 139.178.91.219/31 scope global noprefixroute bond0")


def test_a_bond_up_without_carrier_is_degraded_and_a_bond_left_down_is_not_judged() -> None:
    assert _checks(judge_text("ip-link", BOND)) == [("netdev_link", "warning", "n1/bond0")]
    down = BOND.replace("<NO-CARRIER,BROADCAST,MULTICAST,MASTER,UP> mtu 1500 qdisc noqueue",
                        "<BROADCAST,MULTICAST,MASTER> mtu 1500 qdisc noop")
    assert judge_text("ip-link", down) == []


# round2/ip-link/felixfu520-node01-prompt-ip-a-after-ofed-install-ib0-4092-noop-down-never-brought-up-....txt
IB0 = _text(
    "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1",
    "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00",
    "6: ib0: <BROADCAST,MULTICAST> mtu 4092 qdisc noop state DOWN group default qlen 256",
    "    link/infiniband a0:00:02:20:fe:80:00:00:00:00:00:00:00:02:c9:03:00:ea:99:41 brd "
    "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff")


def test_an_ipoib_netdev_never_brought_up_is_a_note_and_one_up_without_carrier_is_not() -> None:
    spec = {"fabric": "infiniband"}
    assert [(f.check, f.severity) for f in judge_text("ip-link", IB0, spec)] == [("rdma_netdev_link", "info")]
    up = IB0.replace("<BROADCAST,MULTICAST> mtu 4092 qdisc noop state DOWN",
                     "<NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 4092 qdisc mq state DOWN")
    assert [(f.check, f.severity) for f in judge_text("ip-link", up, spec)] == [("rdma_netdev_link", "warning")]


# --- kernel log: Xid's GPU by function 0; a device that does not wake; firmware-first AER; an oops ---

# round2/kernel-log/duaneya-toolman-bug-report-...-xid13-62-32-31-45-many-pids-chinese-journal.txt
XID = "11月 15 12:43:10 sdu-dpai kernel: NVRM: Xid (PCI:0000:03:00): 62, pid=3074, 0cb5(2d50) 00000000 00000000\n"


def test_an_xid_names_its_gpu_by_function_0() -> None:
    (f,) = [f for f in judge_text("kernel-log", XID) if f.check == "xid"]
    assert f.subject == "n1/0000:03:00.0" and f.severity == "critical" and "PCI:0000:03:00:" in f.message


# round2/kernel-log/linuxpci2021-canonical-laptop-s2idle-...-d3cold-to-d0-config-space-inaccessible-wrapped.txt
D3COLD = _text(
    "[ 292.746508] pcieport 0000:00:01.0: waiting 100 ms for downstream",
    "link, after activation",
    "[ 292.882296] pci 0000:01:00.0: waiting additional 100 ms to become accessible",
    "[ 316.876997] pci 0000:01:00.0: can't change power state from D3cold",
    "to D0 (config space inaccessible)")


def test_a_device_that_does_not_wake_from_d3cold_is_off_the_bus() -> None:
    (f,) = judge_text("kernel-log", D3COLD)
    assert (f.check, f.severity, f.subject) == ("kernel_pcie", "critical", "n1/0000:01:00.0")
    newer = "[  12.000001] nvidia 0000:41:00.0: Unable to change power state from D3cold to D0, device inaccessible\n"
    assert _checks(judge_text("kernel-log", newer)) == [("kernel_pcie", "critical", "n1/0000:41:00.0")]


# round2/kernel-log/linuxpci2023-hibernate-resume-ghes-firmware-first-aer-status-layer-lines-...-wrapped.txt
def _ghes(t: str) -> str:
    return _text(f"[   {t}] nvme 0000:70:00.0: AER: aer_status: 0x00000001, aer_mask: 0x00000000",
                 f"[   {t}] nvme 0000:70:00.0:    [ 0] RxErr                  (First)",
                 f"[   {t}] nvme 0000:70:00.0: AER: aer_layer=Physical Layer, aer_agent=Receiver ID")


def test_firmware_first_aer_lines_count_one_corrected_error_each() -> None:
    data = _parse("kernel-log", _ghes("79.322014"))
    assert [e["pci"] for e in data["aer_corrected"]] == ["0000:70:00.0"]
    many = "".join(_ghes(f"8{i}.371223") for i in range(10))
    assert ("kernel_pcie", "warning", "n1/0000:70:00.0") in _checks(judge_text("kernel-log", many))
    # an uncorrectable status's bit (the register the name belongs to) is not a corrected error
    uncorrected = _ghes("79.322014").replace("[ 0] RxErr", "[14] CmpltTO")
    assert _parse("kernel-log", uncorrected)["aer_corrected"] == []


# round2/kernel-log/linuxrdma2023-manet-x10dri-journal-modprobe-mlx5-81-00.0-...-page-fault-oops-....txt
OOPS = _text(
    "May 27 15:47:46 manet kernel: mlx5_core 0000:81:00.0: Port module event: module 0, Cable plugged",
    "May 27 15:47:47 manet kernel: BUG: unable to handle page fault for address: ffffffffb9ef3f80",
    "May 27 15:47:47 manet kernel: #PF: supervisor read access in kernel mode",
    "May 27 15:47:47 manet kernel: Oops: 0000 [#1] PREEMPT SMP PTI",
    "May 27 15:47:47 manet kernel: RIP: 0010:__bitmap_or+0x11/0x30",
    "May 27 15:47:47 manet kernel: Call Trace:",
    "May 27 15:47:47 manet kernel:  <TASK>",
    "May 27 15:47:47 manet kernel:  irq_matrix_reserve_managed+0x2d/0x70",
    "May 27 15:47:47 manet kernel:  mlx5_irq_alloc+0x22f/0x3d0 [mlx5_core 11229579f576884e9585dbff83cf9d4f8d975d71]")


def test_a_kernel_oops_is_failed_naming_the_module_and_its_device() -> None:
    (ev,) = _parse("kernel-log", OOPS)["oops"]
    assert (ev["module"], ev["pci"]) == ("mlx5_core", "0000:81:00.0")
    (f,) = judge_text("kernel-log", OOPS)
    assert (f.check, f.severity, f.subject) == ("kernel_oops", "critical", "n1/0000:81:00.0")
    # a soft lockup's 'BUG:' and a WARNING are not an oops
    other = _text("[  5.1] watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [kworker/3:1:123]",
                  "[  5.2] WARNING: CPU: 0 PID: 1 at drivers/base/core.c:100 foo+0x1/0x2")
    assert _parse("kernel-log", other)["oops"] == []


# --- second round (batches 76-79's rest) ---

# round2/kernel-log/linuxpci-menzel-xps13-9360-indented-dmesg-...-usbc-adapter-removed-in-suspend-....txt
SUBTREE = _text(
    "[43210.058173] pcieport 0000:01:00.0: Unable to change power state from unknown to D0, device inaccessible",
    "[43210.062058] pcieport 0000:02:00.0: Unable to change power state from D3hot to D0, device inaccessible",
    "[43210.130505] xhci_hcd 0000:39:00.0: Unable to change power state from D3cold to D0, device inaccessible",
    "[43210.130529] xhci_hcd 0000:39:00.0: HC died; cleaning up")


def test_a_subtree_gone_with_its_bridges_is_a_hot_unplug_note() -> None:
    pcie = [f for f in judge_text("kernel-log", SUBTREE) if f.check == "kernel_pcie"]
    assert [(f.severity, f.subject) for f in pcie] == [("info", "n1/0000:39:00.0")]
    assert "0000:01:00.0, 0000:02:00.0" in pcie[0].message
    # the device alone (its bridges answer): off the bus
    alone = SUBTREE.split("\n", 2)[2]
    assert [(f.check, f.severity) for f in judge_text("kernel-log", alone)] == [("kernel_pcie", "critical")]


# round2/nccl-tests/sheffieldhpc-bessemer-node026-4x-v100-pcie-no-nvlink-...: '[0x3d] Tesla V100-PCIE-32GB'
def test_a_pcie_cards_intra_node_busbw_is_not_held_to_the_sxm_floor() -> None:
    from clusterctl.analysis.checks.nccl import _floor

    data = {"devices": [{"model": "Tesla V100-PCIE-32GB"}]}
    assert _floor(data, {}, "intra")[0] is None and "PCIe card" in _floor(data, {}, "intra")[1]
    assert _floor({"devices": [{"model": "Tesla V100-SXM2-32GB"}]}, {}, "intra")[0] == 105.0
    assert _floor(data, {"nccl_busbw_floor_GBps": 9.0}, "intra")[0] == 9.0  # the inventory's own floor still counts


# round2/nvidia-smi-nvlink/mleng-debug-nvlink-e-h100-redacted-uuid-links-0-1-17-bracket-elision-all-zero.txt
NVLINK_E = _text(
    "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)",
    "         Link 0: Replay Errors: 0",
    "         Link 0: Recovery Errors: 0",
    "         Link 0: CRC Errors: 0",
    "",
    "         [...]",
    "",
    "         Link 17: Replay Errors: 0",
    "         Link 17: Recovery Errors: 0",
    "         Link 17: CRC Errors: 0")


def test_nvlink_error_counters_are_read_and_nonzero_ones_noted() -> None:
    (gpu,) = _parse("nvidia-smi-nvlink", NVLINK_E)["gpus"]
    assert gpu["error_counts"] == {"Replay": 0, "Recovery": 0, "CRC": 0} and gpu["links"] == []
    assert judge_text("nvidia-smi-nvlink", NVLINK_E) == []
    rising = NVLINK_E.replace("Link 17: CRC Errors: 0", "Link 17: CRC Errors: 12")
    (f,) = judge_text("nvidia-smi-nvlink", rising)
    assert (f.check, f.severity) == ("gpu_nvlink", "info") and "CRC 12" in f.message
    # session 31: one link's counter at 100 or more is a marginal link (gpu_nvlink.errors_many)
    (f,) = judge_text("nvidia-smi-nvlink", NVLINK_E.replace("Link 17: CRC Errors: 0", "Link 17: CRC Errors: 412"))
    assert (f.check, f.severity) == ("gpu_nvlink", "warning") and "link 17 CRC errors 412" in f.message


# round2/kernel-log/linuxs390-patch-mail-mlx5-error-recovery-test-health-recovery-aborted-hung-kmcheck-....txt
HEALTH = ("[10144.859042] mlx5_core 0000:00:00.1: mlx5_health_try_recover:338:(pid 5553): health recovery flow "
          "aborted, PCI reads still not working\n")


def test_an_mlx5_health_recovery_that_gave_up_is_failed() -> None:
    (f,) = [f for f in judge_text("kernel-log", HEALTH) if f.check == "kernel_net"]
    assert (f.severity, f.subject) == ("critical", "n1/0000:00:00.1")
