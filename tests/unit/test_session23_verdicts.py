"""Session 23 (issue 29): rules and readings of this session; expected values are read off the text of each
capture (quoted here, with the corpus file it comes from)."""

from __future__ import annotations

from conftest import finding_keys as _checks
from conftest import judge_text
from conftest import parse_text as _parse
from conftest import text_of as _text

# --- nvidia-smi -q: a vGPU guest without its licence ---

# round2/nvidia-smi-q/gpuoperator220-okd-vgpu-guest-q-excerpt-vgpu-software-licensed-product-vcs-unlicensed.txt
# (NVIDIA/gpu-operator#220)
UNLICENSED = _text(
    "    vGPU Software Licensed Product",
    "        Product Name                      : NVIDIA Virtual Compute Server",
    "        License Status                    : Unlicensed")


def test_an_unlicensed_vgpu_guest_is_degraded() -> None:
    (gpu,) = _parse("nvidia-smi-q", UNLICENSED)["gpus"]
    assert gpu["vgpu_license"] == {"product": "NVIDIA Virtual Compute Server", "status": "Unlicensed"}
    assert _checks(judge_text("nvidia-smi-q", UNLICENSED)) == [("gpu_vgpu", "warning", "n1/gpu0")]
    licensed = UNLICENSED.replace("Unlicensed", "Licensed (Expiry: 2023-3-8 2:59:59 GMT)")
    assert not [f for f in judge_text("nvidia-smi-q", licensed) if f.check == "gpu_vgpu"]
    # the older drivers' section name
    grid = UNLICENSED.replace("vGPU Software Licensed Product", "GRID Licensed Product")
    assert _checks(judge_text("nvidia-smi-q", grid)) == [("gpu_vgpu", "warning", "n1/gpu0")]


# --- nvidia-smi -i N -q: the report of the GPU the command selects ---

# round2/nvidia-smi-q/sirzzang-blog-rtx-pro-6000-i1-d-ecc-key-excerpt-dram-uncorrectable-2-volatile-and-aggregate.txt
SELECTED = _text(
    "my-user@gpu-node-a:~$ nvidia-smi -i 1 -q -d ECC",
    "ECC Mode",
    "    Current                  : Enabled",
    "    Pending                  : Enabled",
    "ECC Errors",
    "    Volatile",
    "        SRAM Correctable     : 0",
    "        DRAM Correctable     : 0",
    "        DRAM Uncorrectable   : 2",
    "    Aggregate",
    "        DRAM Uncorrectable   : 2")


def test_the_gpu_a_shown_command_selects_names_the_report() -> None:
    (f,) = judge_text("nvidia-smi-q", SELECTED)
    assert (f.check, f.severity, f.subject) == ("gpu_ecc", "critical", "n1/gpu1")
    # without the command the one block is the report's first GPU
    (f,) = judge_text("nvidia-smi-q", SELECTED.split("\n", 1)[1])
    assert f.subject == "n1/gpu0"


# --- nvidia-smi table trimmed to each GPU's first row ---

# round2/nvidia-smi/28gpucluster-2080ti-gpu-03-580.126.09-user-trimmed-identity-rows-7-of-8-gpus.txt
_BUSES = ("1B", "1C", "1D", "1E", "3D", "40", "41")
TRIMMED = _text(
    "+-----------------------------------------------------------------------------------------+",
    "| NVIDIA-SMI 580.126.09   Driver Version: 580.126.09   CUDA Version: 13.0               |",
    "+-----------------------------------------+------------------------+----------------------+",
    *(f"|   {i}  NVIDIA GeForce RTX 2080 Ti     Off |   00000000:{bus}:00.0 Off |                  N/A |"
      for i, bus in enumerate(_BUSES)),
    "+-----------------------------------------------------------------------------------------+")


def test_a_table_of_first_rows_lists_its_gpus_and_judges_their_count() -> None:
    gpus = _parse("nvidia-smi", TRIMMED)["gpus"]
    assert [g["bus_id"] for g in gpus] == [f"00000000:{b}:00.0" for b in _BUSES]
    assert all(g["cut_after_first_row"] and g["temperature_c"]["gpu"] is None for g in gpus)
    (f,) = judge_text("nvidia-smi", TRIMMED, {"gpus_per_node": 8})
    assert (f.check, f.severity) == ("gpu_count", "critical") and "7 GPU(s)" in f.message
    # no expected count: names and bus ids only, nothing judged (not healthy)
    (f,) = judge_text("nvidia-smi", TRIMMED)
    assert f.check == "coverage" and "first table row only" in f.message


def test_a_first_row_followed_by_anything_else_is_still_refused() -> None:
    import pytest
    from ccparse.common import ParseError
    from ccparse.nvidia_smi_table import parse_nvidia_smi_table

    lines = TRIMMED.splitlines()
    with pytest.raises(ParseError, match="second table row not understood"):
        parse_nvidia_smi_table(_text(*lines[:4], "| garbage |", *lines[4:]))


# --- kernel log: GPU peer memory that cannot load; GSP boot given up; a chip id of all ones ---

# round2/kernel-log/nvpeermem84-rhel78-n120-prompt-modprobe-then-from-dmesg-ellipsis-nv-peer-mem-unknown-symbol-err-0.txt  # noqa: E501
PEERMEM = _text(
    "[Fri Feb 12 11:47:20 2021] nv_peer_mem: Unknown symbol ib_register_peer_memory_client (err 0)",
    "[Fri Feb 12 11:47:20 2021] nv_peer_mem: Unknown symbol ib_unregister_peer_memory_client (err 0)")


def test_a_peer_memory_module_that_cannot_load_is_degraded() -> None:
    (f,) = judge_text("kernel-log", PEERMEM)
    assert (f.check, f.severity, f.subject) == ("kernel_gdr", "warning", "n1")
    assert "nv_peer_mem" in f.message and "2 line(s)" in f.message
    # its load succeeding says nothing of the kind
    assert not judge_text("kernel-log", "[   10.1] nvidia_peermem: module using GPL-only symbols\n")


# round2/kernel-log/ogkm935-5080-laptop-dmesg-H-relative-stamps-gsp-fmc-0xb-four-boot-attempts-exceeded-cut.txt
GSP_BOOT = _text(
    "[  +0.123791] NVRM: kgspBootstrap_GH100: GSP-FMC reported an error while attempting to boot GSP: 0xb",
    "[  +0.000001] NVRM: kgspInitRm_IMPL: Max GSP-RM boot attempts exceeded: 4/4",
    "[  +0.000021] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM")


def test_gsp_firmware_boot_given_up_is_the_gpu_lost() -> None:
    (f,) = judge_text("kernel-log", GSP_BOOT)
    assert (f.check, f.severity) == ("kernel_gpu", "critical")
    assert "GSP-RM boot attempts exceeded" in f.message and "Cannot initialize GSP firmware RM" in f.message


# round2/kernel-log/rpipcie26-pi5-gtx750ti-prompt-dmesg-grep-nouveau-unknown-chipset-ffffffff-two-lines.txt
ALL_ONES = _text(
    "[    3.121503] nouveau 0000:01:00.0: enabling device (0000 -> 0002)",
    "[    3.121599] nouveau 0000:01:00.0: unknown chipset (ffffffff)")


def test_a_chip_id_read_as_all_ones_is_a_device_that_does_not_answer() -> None:
    (f,) = judge_text("kernel-log", ALL_ONES)
    assert (f.check, f.severity, f.subject) == ("kernel_device", "critical", "n1/0000:01:00.0")
    assert "all ones" in f.message
    # a chipset nouveau does not know, read correctly, is not a dead device
    assert not judge_text("kernel-log", ALL_ONES.replace("ffffffff", "1b2000a1"))


# --- nvidia-smi nvlink -c: capabilities, not state ---

# round2/nvidia-smi-nvlink/ilgpu378-v100-sxm2-nvlink-capabilities-i0-gt-prompt-cut-at-link4.txt (m4rs-mt/ILGPU#378)
CAPS = _text(
    "GPU 0: Tesla V100-SXM2-32GB (UUID: GPU-45a9e850-260d-2a2c-dfab-376b0308a22f)",
    "         Link 0, P2P is supported: true",
    "         Link 0, Access to system memory supported: true",
    "         Link 0, SLI is supported: false",
    "         Link 0, Link is supported: false",
    "         Link 1, P2P is supported: true")


def test_nvlink_capabilities_are_read_and_cannot_judge_a_link() -> None:
    (gpu,) = _parse("nvidia-smi-nvlink", CAPS)["gpus"]
    assert gpu["capabilities"][0] == {"P2P is supported": True, "Access to system memory supported": True,
                                      "SLI is supported": False, "Link is supported": False}
    (f,) = judge_text("nvidia-smi-nvlink", CAPS)
    assert f.check == "coverage" and "capabilities" in f.message


# --- nvidia-smi nvlink -gt d: traffic counters, not state ---

# round2/nvidia-smi-nvlink/aau-aicloud-multi-gpu-keras-dgx2-v100-sxm3-nvlink-gt-d-start-elided-gpu3-link0-data-tx-rx-kib.txt  # noqa: E501
TRAFFIC = _text(
    "GPU 3: Tesla V100-SXM3-32GB (UUID: GPU-295726b4-8888-d1eb-5965-a70cbb91d136)",
    "\t Link 0: Data Tx: 19241022 KiB",
    "\t Link 0: Data Rx: 19255516 KiB")


def test_nvlink_traffic_counters_are_read_and_judge_no_link_state() -> None:
    (gpu,) = _parse("nvidia-smi-nvlink", TRAFFIC)["gpus"]
    assert gpu["traffic_kib"] == {0: {"data_tx": 19241022, "data_rx": 19255516}} and gpu["links"] == []
    assert judge_text("nvidia-smi-nvlink", TRAFFIC) == []


# --- ibstat: a port on another subnet is not compared with the ports of this one ---

# round2/ibstat/pytorchmpierr-eight-cas-tabs-edr-100-fdr-56-three-sm-lids-two-eth-ports.txt (NERSC Cori-GPU)
def _ca(name: str, rate: int, sm_lid: int, lid: int) -> str:
    return _text(f"CA '{name}'", "\tCA type: MT4119", "\tNumber of ports: 1", "\tPort 1:", "\t\tState: Active",
                 "\t\tPhysical state: LinkUp", f"\t\tRate: {rate}", f"\t\tBase lid: {lid}", "\t\tLMC: 0",
                 f"\t\tSM lid: {sm_lid}", "\t\tLink layer: InfiniBand")


SUBNETS = _ca("mlx5_0", 100, 10, 59) + _ca("mlx5_1", 56, 43, 325) + _ca("mlx5_2", 100, 10, 64) \
    + _ca("mlx5_5", 56, 344, 12)


def test_infiniband_ports_are_compared_within_their_subnet() -> None:
    assert not [f for f in judge_text("ibstat", SUBNETS) if f.check == "ib_port_rate"]
    # the same slower port on the faster ports' subnet (SM lid 10) is below its siblings
    same = SUBNETS.replace("SM lid: 43", "SM lid: 10")
    (f,) = [f for f in judge_text("ibstat", same) if f.check == "ib_port_rate"]
    assert f.subject == "n1/mlx5_1/1" and "56 Gb/s below 100 Gb/s" in f.message


# --- kernel log: EEH gave a device up; mlx5 could not initialise a function ---

# round2/kernel-log/linuxppc-haleem-power-lpar-5.15-rc1-ipr-0134-80-eeh-failed-6-times-permanently-disabled-eehd-hung-no-ts.txt  # noqa: E501
EEH = _text(
    "EEH: PHB#134-PE#800000 has failed 6 times in the last hour and has been ",
    "permanently disabled.",
    "EEH: Unable to recover from failure from PHB#134-PE#800000.",
    "Please try reseating or replacing it",
    "EEH: of node=0134:80:00.0",
    "EEH: PCI device/vendor: 034a1014")


def test_a_device_eeh_cannot_recover_is_failed() -> None:
    (f,) = [f for f in judge_text("kernel-log", EEH) if f.check == "kernel_pcie"]
    assert (f.severity, f.subject) == ("critical", "n1/0134:80:00.0")
    # a frozen PE EEH recovers from ('will be permanently disabled after 5 failures') is not judged here
    recovered = "EEH: This PCI device has failed 1 times in the last hour and will be permanently disabled after 5 " \
                "failures.\nEEH: of node=0030:0d:00.0\n"
    assert not [f for f in judge_text("kernel-log", recovered) if f.check == "kernel_pcie"]


# round2/kernel-log/linuxppc-bloch-ppc64-mlx5-reload-0000-00-08-failed-to-alloc-irqs-init-one-19-both-functions-no-ts.txt  # noqa: E501
MLX5_INIT = _text(
    "mlx5_core 0000:00:08.0: mlx5_load:1266:(pid 1283): Failed to alloc IRQs",
    "mlx5_core 0000:00:08.0: probe_one:1959:(pid 1283): mlx5_init_one failed with error code -19")


def test_mlx5_init_one_failing_is_the_function_not_brought_up() -> None:
    (f,) = [f for f in judge_text("kernel-log", MLX5_INIT) if f.check == "kernel_device"]
    assert (f.check, f.severity, f.subject) == ("kernel_device", "critical", "n1/0000:00:08.0")
    assert "error -19" in f.message


# --- ip link: an SR-IOV physical function left down under VFs in use ---

# round2/ip-link/sriovnetop45-mlx-ens2f0-pf-admin-down-no-up-flag-mtu9000-vfs-link-state-auto-cut-at-vf3.txt
PF_DOWN = _text(
    "4: ens2f0: <BROADCAST,MULTICAST> mtu 9000 qdisc mq state DOWN mode DEFAULT group default qlen 1000",
    "    link/ether 0c:42:a1:2b:74:ae brd ff:ff:ff:ff:ff:ff",
    "    vf 0     link/ether 76:ed:fd:cf:eb:c9 brd ff:ff:ff:ff:ff:ff, spoof checking off, link-state auto, trust off",
    "    vf 1     link/ether 16:07:b5:d3:52:75 brd ff:ff:ff:ff:ff:ff, spoof checking off, link-state auto, trust off")


def test_an_sriov_pf_down_under_assigned_vfs_is_failed() -> None:
    (link,) = _parse("ip-link", PF_DOWN)["links"]
    assert (link["vfs"], link["vfs_assigned"]) == (2, 2)
    (f,) = judge_text("ip-link", PF_DOWN)
    assert (f.check, f.severity, f.subject) == ("netdev_link", "critical", "n1/ens2f0")
    # VFs just created (all-zero MACs, as round2/ip-link/magnate3ovs-...-two-zero-mac-vfs-... shows) are not in use
    fresh = PF_DOWN.replace("link/ether 76:ed:fd:cf:eb:c9", "MAC 00:00:00:00:00:00").replace(
        "link/ether 16:07:b5:d3:52:75", "MAC 00:00:00:00:00:00")
    assert _parse("ip-link", fresh)["links"][0]["vfs_assigned"] == 0 and not judge_text("ip-link", fresh)
    # the PF up: its VFs follow it
    assert not judge_text("ip-link", PF_DOWN.replace("<BROADCAST,MULTICAST>", "<BROADCAST,MULTICAST,UP,LOWER_UP>")
                          .replace("state DOWN", "state UP"))


# --- nccl-tests: a result row a harness relays behind '#' ---

# round2/nccl-tests/optcast-eval-2node-v100-pcie-mixed-16gb-32gb-nccl-ring-512m-single-iteration-hash-prefixed-row.txt
HASH_ROW = _text(
    "#                                                              out-of-place                       in-place",
    "#       size         count      type   redop    root     "
    "time   algbw   busbw #wrong     time   algbw   busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    "#  536870912     134217728     float     sum      -1    "
    "80965    6.63    9.95      0    77677    6.91   10.37      0",
    "# Out of bounds values : 0 OK",
    "# Avg bus bandwidth    : 10.1569")


def test_a_result_row_behind_a_hash_is_read() -> None:
    (row,) = _parse("nccl-tests", HASH_ROW)["rows"]
    assert row["size_bytes"] == 536870912 and row["out_of_place"]["busbw_GBps"] == 9.95
    # a comment line of digits that is no row (fewer fields than the header) stays a comment
    assert not _parse("nccl-tests", HASH_ROW.replace("#  536870912     134217728     float", "#  536870912"))["rows"]


# --- sinfo: a custom format without a STATE column ---

# round2/sinfo/unigehpc3664-yggdrasil-new-cpu151-158-sinfo-N-format-root-prompt-gres-null-two-partitions-no-state-column.txt  # noqa: E501
NO_STATE = _text(
    "NODELIST    NODES PARTITION            CPUS    S:C:T MEMORY TMP_DISK GRES          AVAIL_FEATURES",
    "cpu151          1 shared-cpu            128   2:64:1 515500   150000 (null)        EPYC-7763,AMD_EPYC_7763,V8",
    "cpu151          1 private-astro-pairs   128   2:64:1 515500   150000 (null)        EPYC-7763,AMD_EPYC_7763,V8")


def test_sinfo_without_a_state_column_cannot_judge() -> None:
    assert _parse("sinfo", NO_STATE)["no_state_column"] is True
    (f,) = judge_text("sinfo", NO_STATE)
    assert f.check == "coverage" and "no STATE column" in f.message


# --- perftest: a queue pair that cannot be connected over RDMA ---

# round2/ib_write_bw/mooncake166-ib-send-bw-client-mlx5_0-to-mlx5_1-same-host-gid1-mtu2048-failed-modify-qp-rtr.txt
QP_RTR = _text(
    "ib_send_bw -d mlx5_0 -x 1 -D 10 -F 192.168.1.2",
    "---------------------------------------------------------------------------------------",
    "                    Send BW Test",
    " Dual-port       : OFF          Device         : mlx5_0",
    " Number of qps   : 1            Transport type : IB",
    " Connection type : RC           Using SRQ      : OFF",
    " Mtu             : 2048[B]",
    " Link type       : Ethernet",
    " GID index       : 1",
    "---------------------------------------------------------------------------------------",
    "Failed to modify QP 1399 to RTR",
    " Unable to Connect the HCA's through the link")


def test_a_queue_pair_that_cannot_connect_is_failed() -> None:
    (f,) = judge_text("ib_write_bw", QP_RTR)
    assert (f.check, f.severity, f.subject) == ("ib_write_bw", "critical", "n1/mlx5_0")
    assert "Failed to modify QP 1399 to RTR" in f.message
    # the banner alone, cut before any message: nothing measured, nothing failed (cannot judge)
    (f,) = judge_text("ib_write_bw", QP_RTR.rsplit("Failed", 1)[0])
    assert f.check == "coverage"


# --- kernel log: journalctl -o short-monotonic (a dmesg-style time, then the host and 'kernel:') ---

# round2/kernel-log/linuxppc-horak-talos-power9-journal-host-prefix-eeh-frozen-phb30-nvme-behind-switch-permanent-failure.txt  # noqa: E501
MONOTONIC = _text(
    "[  246.683699] talos.danny.cz kernel: nvme 0030:0d:00.0: Unable to change power state from D3cold to D0, "
    "device inaccessible",
    "[  246.855030] talos.danny.cz kernel: EEH: Unable to recover from failure from PHB#30-PE#1fb.",
    "[  246.856319] talos.danny.cz kernel: EEH: of node=0030:0d:00.0")


def test_the_journals_short_monotonic_lines_are_read_as_the_kernels_own() -> None:
    from ccparse.kernel_log import parse_kernel_log

    data = parse_kernel_log(MONOTONIC)
    assert [(e["pci"], e["state"]) for e in data["pci_inaccessible"]] == [("0030:0d:00.0", "D3cold")]
    assert [e["pci"] for e in data["eeh_lost"]] == ["0030:0d:00.0"]


# --- port tools that found no RDMA device: read, cannot judge without rdma_devices_per_node ---

# round2/ibstatus/oneflow9115-openibd-stopped-ibv-devinfo-function-not-implemented-then-ibstatus-fatal-no-devices-illegal-number.txt  # noqa: E501
def test_port_tools_that_list_no_device_say_so() -> None:
    for kind, line in (("ibstatus", "Fatal error:  No devices"),
                       ("ibv_devinfo", "Failed to get IB devices list: Function not implemented")):
        assert _parse(kind, line + "\n")["devices"] == []
        (f,) = judge_text(kind, line + "\n")
        assert f.check == "ib_hca_count" and "needs rdma_devices_per_node" in f.message
        (f,) = judge_text(kind, line + "\n", {"rdma_devices_per_node": 8})
        assert (f.check, f.severity) == ("ib_hca_count", "critical")


# round2/ibstat/azhpc213-nd96amsr-a100-v4-dollar-ibstat-ibpanic-mlx5_an0-accelnet.txt (Azure/azhpc-images#213)
def test_ibstat_that_aborts_at_its_first_device_is_read_and_cannot_judge() -> None:
    text = "ibpanic: [769778] main: stat of IB device 'mlx5_an0' failed: No such file or directory\n"
    data = _parse("ibstat", text)
    assert data["devices"] == [] and data["aborted"] is True
    (f,) = judge_text("ibstat", text)
    assert f.check == "coverage" and "mlx5_an0" in f.message


# round2/nvidia-smi/ocijp-gpu-with-ubuntu-bm-gpu4.8-openacc-bg-job-nvidia-smi-tail-3-process-row-only.txt
PROCESSES = _text(
    "|=========================================================================================|",
    "|    0   N/A  N/A           18096      C   ./gpu.exe                              4234MiB |",
    "+-----------------------------------------------------------------------------------------+")


def test_the_processes_box_alone_is_read_and_cannot_judge() -> None:
    data = _parse("nvidia-smi", PROCESSES)
    assert data["gpus"] == [] and data["processes_only"] == 1 and data["excerpt"] is True
    (f,) = judge_text("nvidia-smi", PROCESSES, {"gpus_per_node": 8})
    assert f.check == "coverage" and "processes box" in f.message
    # a driver before 450 prints no GI/CI columns
    old = "|    0      4321      C   python                                        1234MiB |\n"
    assert _parse("nvidia-smi", old)["processes_only"] == 1


# --- second round (batches 88-92) ---

# round2/kernel-log/ahelpme-x520-2-pcie2-x4-slot-ixgbe-16gts-available-not-sufficient-20gts-required-two-ports.txt
IXGBE = _text(
    "[ 2.695531] ixgbe 0000:82:00.1: PCI Express bandwidth of 16GT/s available",
    "[ 2.696087] ixgbe 0000:82:00.1: (Speed:5.0GT/s, Width: x4, Encoding Loss:20%)",
    "[ 2.696631] ixgbe 0000:82:00.1: This is not sufficient for optimal performance of this card.",
    "[ 2.697181] ixgbe 0000:82:00.1: For optimal performance, at least 20GT/s of bandwidth is required.")


def test_ixgbe_saying_its_slot_is_not_sufficient_is_a_link_below_capability() -> None:
    (f,) = [f for f in judge_text("kernel-log", IXGBE) if f.check == "kernel_pcie"]
    assert (f.severity, f.subject) == ("warning", "n1/0000:82:00.1") and "5.0GT/s x4" in f.message
    # i40e/ice print 'may be insufficient' for any link below Gen3 x8, whatever the ports need: not read
    # (round2/kernel-log/clu6-supermicro-...-i40e-x4-bandwidth-warning.txt, labelled healthy)
    i40e = ("[ 5.099663] i40e 0000:02:00.0: PCI-Express: Speed 8.0GT/s Width x4\n"
            "[ 5.099666] i40e 0000:02:00.0: PCI-Express bandwidth available for this device may be insufficient for "
            "optimal performance.\n")
    assert not [f for f in judge_text("kernel-log", i40e) if f.check == "kernel_pcie"]


# round2/kernel-log/powerformer-liberate-z790-rtx-550-144-dmesg-seven-xid31-mmu-fault-pde-virt-read-ch8-pid-unknown.txt
BOOT_LINK = _text(
    "[    7.832783] r8169 0000:07:00.0 enp7s0: Link is Down",
    "[   10.177875] r8169 0000:07:00.0 enp7s0: Link is Up - 1Gbps/Full - flow control rx/tx")


def test_a_ports_one_down_then_up_at_boot_is_its_bring_up() -> None:
    (f,) = [f for f in judge_text("kernel-log", BOOT_LINK) if f.check == "link_flap"]
    assert f.severity == "info" and "brought up" in f.message
    # the same an hour into the run is a flap
    late = BOOT_LINK.replace("    7.832783", " 3607.832783").replace("   10.177875", " 3610.177875")
    (f,) = [f for f in judge_text("kernel-log", late) if f.check == "link_flap"]
    assert f.severity == "warning"


# round2/lspci/manouchehri-aws-g2-2xlarge-xen-grid-k520-vv-nonroot-capabilities-access-denied.txt and
# round2/lspci/marcredhat-cmlgpu-oc-debug-worker-014-lspci-vvv-grep-downgraded-13-lnksta-no-device-names-vpd-read-failed.txt  # noqa: E501
def test_lspci_without_a_link_to_judge_cannot_judge() -> None:
    denied = _text("00:03.0 VGA compatible controller: NVIDIA Corporation GK104GL [GRID K520] (rev a1)",
                   "\tSubsystem: NVIDIA Corporation Device 1014",
                   "\tCapabilities: <access denied>")
    (f,) = judge_text("lspci", denied)
    assert f.check == "coverage" and "access denied" in f.message
    grepped = _text("\t\tLnkSta:\tSpeed 5GT/s (downgraded), Width x1 (downgraded)",
                    "\t\tLnkSta:\tSpeed 8GT/s, Width x4 (downgraded)")
    (f,) = judge_text("lspci", grepped)
    assert f.check == "coverage" and "downgraded" in f.message
    # round2/lspci/lact334-rx7800xt-lnksta-16gts-x16-lnkcap2-no-lnkcap.txt: a full link with no downgrade is no doubt
    assert not judge_text("lspci", "LnkSta: Speed 16GT/s, Width x16\n")


# round2/sinfo/dasandata-openhpc-ko-guide-blockquote-sinfo-and-R-equals-separator-bold-drain-node1-low-socket-core-thread.txt  # noqa: E501
BOLD_DRAIN = _text(
    ">PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST  ",
    "normal*      up 1-00:00:00      1  **drain** node1  ",
    "==========   ",
    "REASON               USER      TIMESTAMP           NODELIST  ",
    "Low socket*core*thre slurm     2018-02-25T11:45:44 node1  ")


def test_sinfo_in_bold_behind_a_quote_then_its_reasons() -> None:
    data = _parse("sinfo", BOLD_DRAIN)
    assert "drain" in data["nodes"]["node1"]["base_states"]  # and the -R table's row (no state of its own)
    (f,) = judge_text("sinfo", BOLD_DRAIN)
    assert (f.check, f.severity, f.subject) == ("slurm_node_state", "critical", "node1")


# round2/nvidia-smi-query/sirzzang-k8s-gpu-workers-ssh-loop-index-driver-name-noheader-worker1-3-nvml-mismatch-580.159-worker2-rtx5090-excerpt-crlf.txt  # noqa: E501
SSH_LOOP = _text(
    "~$ for h in $GPU_WORKERS; do",
    '    echo "=== $h ==="',
    '    ssh $h "nvidia-smi --query-gpu=index,driver_version,name --format=csv,noheader 2>&1 | head -3"',
    "  done",
    "=== gpu-worker-1 ===",
    "Failed to initialize NVML: Driver/library version mismatch",
    "NVML library version: 580.159")


def test_a_lone_word_is_no_query_header_and_the_drivers_refusal_is_read() -> None:
    data = _parse("nvidia-smi-query", SSH_LOOP)
    assert data["gpus"] == [] and "version mismatch" in data["driver_unreachable"]
    (f,) = judge_text("nvidia-smi-query", SSH_LOOP)
    assert (f.check, f.severity) == ("gpu_driver", "critical")


# round2/nvidia-smi-q-xml/telegraftd-513.46-grid-p4-1q-vgpu-guest-wddm-licensed-temp-0c.txt (its licence element)
def test_the_xml_reports_vgpu_licence_is_read_as_the_texts() -> None:
    import xml.etree.ElementTree as ET

    from ccparse.nvidia_smi_xml import _vgpu_license

    gpu = ET.fromstring(
        "<gpu><vgpu_software_licensed_product><licensed_product_name>NVIDIA RTX Virtual Workstation"
        "</licensed_product_name><license_status>Licensed (Expiry: 2022-9-22 6:57:30 GMT)</license_status>"
        "</vgpu_software_licensed_product></gpu>")
    assert _vgpu_license(gpu) == {"product": "NVIDIA RTX Virtual Workstation",
                                  "status": "Licensed (Expiry: 2022-9-22 6:57:30 GMT)"}


# round2/nccl-tests/odissei-snellius-gcn151-gcn154-2x4-h100-hdr-gdrdma-all-reduce-info-lines-spliced-into-rows-8g-busbw-156.txt  # noqa: E501
def _two_by_four(busbw: float, ranks: tuple[int, ...] = tuple(range(8))) -> str:
    devices = "".join(f"#  Rank {r:2d} Group  0 Pid {1000 + r} on {'gcn151' if r < 4 else 'gcn154'} device  {r % 4} "
                      "[0x18] NVIDIA H100\n" for r in ranks)
    return ("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 "
            "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n" + devices +
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
            "busbw #wrong\n"
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
            f"(GB/s)\n  8589934592    2147483648     float     sum      -1    96000   89.20  {busbw:6.2f}      0    "
            f"96000   89.20  {busbw:6.2f}      0\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 50.0\n")


def test_the_inter_node_floor_scales_with_the_ranks_a_node_holds() -> None:
    # four H100s a node: the default of eight a node (288 GB/s) times 4/8
    (f,) = [f for f in judge_text("nccl-tests", _two_by_four(156.1)) if f.check == "nccl_busbw"]
    assert f.severity == "info" and "144 GB/s floor" in f.message and "[ranks on gcn151, gcn154]" in f.message
    (f,) = [f for f in judge_text("nccl-tests", _two_by_four(120.0)) if f.check == "nccl_busbw"]
    assert f.severity == "warning"
    # a device list the paster cut (ranks 0-2 and 7 only) says nothing of a node's GPUs: the default floor
    (f,) = [f for f in judge_text("nccl-tests", _two_by_four(156.1, (0, 1, 2, 7))) if f.check == "nccl_busbw"]
    assert f.severity == "warning" and "288 GB/s floor" in f.message
