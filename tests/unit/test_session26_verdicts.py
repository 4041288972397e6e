"""Session 26 (issue 29): PCI class and vendor read from lspci's numbers, the links of fast NICs and NVMe disks judged,
and an HGX board's GPU count known from the products' own names.

Expected values are read off the text of each capture (quoted here or read from tests/corpus, with its source); a
derived form (``lspci -n``'s numbers, a GPU block gone from a table) is what the named tool prints for that case."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ccparse.common import ParseError
from conftest import corpus_capture, judge_text, parse_text
from conftest import finding_keys as _checks
from conftest import text_of as _text

from clusterctl.analysis.engine import analyze_dir

# --- lspci -nn / -n: the class and vendor as numbers ---

# round2/lspci/linuxpci-mps256-silicon-motion-sm2263-nvme-vvv-numeric-ids-2-5gts-x1-of-8gts-x4.txt
# (linux-pci mail 'PCIe: can't set Max Payload Size to 256'): an NVMe disk built for Gen3 x4, trained at Gen1 x1
NVME = _text(
    "04:00.0 Non-Volatile memory controller [0108]: Silicon Motion, Inc. Device [126f:2263] (rev 03) "
    "(prog-if 02 [NVM Express])",
    "        Subsystem: Silicon Motion, Inc. Device [126f:2263]",
    "        Capabilities: [70] Express (v2) Endpoint, MSI 00",
    "                LnkCap: Port #0, Speed 8GT/s, Width x4, ASPM not supported",
    "                        ClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+",
    "                LnkCtl: ASPM Disabled; RCB 64 bytes, Disabled- CommClk-",
    "                LnkSta: Speed 2.5GT/s (downgraded), Width x1 (downgraded)",
    "                        TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-")


def test_an_nvme_disk_at_gen1_x1_of_gen3_x4_is_a_link_that_failed_to_train() -> None:
    (d,) = parse_text("lspci", NVME)["devices"]
    assert d["class"] == "Non-Volatile memory controller"  # without -nn's '[0108]'
    assert _checks(judge_text("lspci", NVME)) == [("pcie_link", "critical", "n1/0000:04:00.0")]


# round2/lspci/linuxhw-c4140-tesla-v100-sxm2-af00-8gts-x16-ok.txt (linuxhw/LsPCI, hw-probe's 'lspci -vvnn' of a Dell
# PowerEdge C4140): the V100's header and its link lines
V100_HEAD = "af:00.0 3D controller [0302]: NVIDIA Corporation GV100GL [Tesla V100 SXM2 16GB] [10de:1db1] (rev a1)"
V100_LINK = ("\tCapabilities: [78] Express (v2) Endpoint, MSI 00",
             "\t\tLnkCap:\tPort #0, Speed 8GT/s, Width x16, ASPM not supported",
             "\t\tLnkSta:\tSpeed 8GT/s (ok), Width x16 (ok)")


def test_lspci_nn_class_numbers_still_name_a_gpu() -> None:
    (d,) = parse_text("lspci", _text(V100_HEAD, *V100_LINK))["devices"]
    assert (d["class"], d["vendor"], d["is_gpu"]) == ("3D controller", "nvidia", True)


def test_lspci_n_numbers_alone_name_a_gpu_and_its_narrow_link_is_judged() -> None:
    # 'lspci -n -vv' prints the same header as numbers only ('af:00.0 0302: 10de:1db1 (rev a1)'); the same GPU
    # trained at x8 of its x16 is a reduced link whatever form named it
    head = "af:00.0 0302: 10de:1db1 (rev a1)"
    (d,) = parse_text("lspci", _text(head, *V100_LINK))["devices"]
    assert (d["class"], d["vendor"], d["is_gpu"]) == ("3D controller", "nvidia", True)
    narrow = _text(head, V100_LINK[0], V100_LINK[1], "\t\tLnkSta:\tSpeed 8GT/s (ok), Width x8 (downgraded)")
    assert _checks(judge_text("lspci", narrow)) == [("pcie_link", "warning", "n1/0000:af:00.0")]


# round2/lspci/marcredhat-cmlgpu-xeon-e5v4-2x-tesla-p100-12gb-vvv-8gt-x16-ok-bcm5720-x1-root-ports.txt: the
# server's Broadcom BCM5720 1 GbE LOM is wired x1 and shows 'Width x0 (downgraded)' on its unused port
def test_a_one_lane_lom_is_not_judged_but_a_wide_non_mellanox_nic_is() -> None:
    text = corpus_capture("round2", "lspci/marcredhat-cmlgpu-xeon-e5v4-2x-tesla-p100-12gb-vvv-8gt-x16-ok-bcm5720-x1-"
                                    "root-ports.txt")
    assert [f for f in judge_text("lspci", text) if f.check == "pcie_link"] == []
    # a Broadcom RoCE NIC (BCM57508, x16) trained at x8: its RDMA traffic has half the PCIe bandwidth
    thor = _text("41:00.0 Ethernet controller: Broadcom Inc. and subsidiaries BCM57508 NetXtreme-E 10Gb/25Gb/40Gb/"
                 "50Gb/100Gb/200Gb Ethernet (rev 11)",
                 "\tCapabilities: [a0] Express (v2) Endpoint, MSI 00",
                 "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported",
                 "\t\tLnkSta:\tSpeed 16GT/s (ok), Width x8 (downgraded)")
    assert _checks(judge_text("lspci", thor)) == [("pcie_link", "warning", "n1/0000:41:00.0")]


# --- an HGX board's count from the product's name (no gpus_per_node) ---

# round2/nvidia-smi/gpud-550.90.07-h100x8-table-idle-ecc0.txt (leptonai/gpud test data): 8x 'NVIDIA H100 80GB HBM3',
# the SXM5 product's name, which holds no 'SXM'
GPUD = "nvidia-smi/gpud-550.90.07-h100x8-table-idle-ecc0.txt"


def _without_gpu(text: str, index: int) -> str:
    """The table as nvidia-smi prints it when GPU ``index`` has fallen off the bus: its block is not listed."""
    return re.sub(r"\|\s+" + str(index) + r"  NVIDIA H100[^\n]*\n(?:\|[^\n]*\n){2}\+[-+]+\+\n", "", text)


def test_seven_h100_hbm3_of_an_hgx_board_is_a_missing_gpu() -> None:
    text = corpus_capture("round2", GPUD)
    assert [f for f in judge_text("nvidia-smi", text) if f.check == "gpu_count"] == []
    seven = _without_gpu(text, 3)
    assert seven.count("NVIDIA H100 80GB HBM3") == 7 and "00000000:5D:00.0" not in seven
    (f,) = [f for f in judge_text("nvidia-smi", seven) if f.check == "gpu_count"]
    assert (f.severity, f.subject) == ("critical", "n1") and "8-GPU HGX board" in f.message


def test_the_old_layouts_cut_name_of_an_h100_sxm_counts_too() -> None:
    # nvidia-smi before 530 cuts the name to 'NVIDIA H100 80G...'; the PCIe card is 'NVIDIA H100 PCIe'
    seven = _without_gpu(corpus_capture("round2", GPUD), 3).replace("NVIDIA H100 80GB HBM3 ", "NVIDIA H100 80G...   ")
    assert seven.count("NVIDIA H100 80G...") == 7
    assert [f.severity for f in judge_text("nvidia-smi", seven) if f.check == "gpu_count"] == ["critical"]
    pcie = seven.replace("NVIDIA H100 80G...", "NVIDIA H100 PCIe  ")
    assert [f for f in judge_text("nvidia-smi", pcie) if f.check == "gpu_count"] == []


# --- nvidia-smi -L in a loop, then the driver out of reach ---

# round2/nvidia-smi/gpuop485-notice-kubectl-logs-nvidia-smi-L-loop-a100-pcie-twice-then-nvml-unknown-error-twice-after-
# daemon-reload.txt (NVIDIA/gpu-operator#485): a pod running 'nvidia-smi -L' every 5 s, read after a daemon-reload
LOOP = _text(
    "$ kubectl logs cuda-nvidia-smi-loop",
    "",
    "GPU 0: NVIDIA A100-PCIE-40GB (UUID: GPU-551720f0-caf0-22b7-f525-2a51a6ab478d)",
    "GPU 0: NVIDIA A100-PCIE-40GB (UUID: GPU-551720f0-caf0-22b7-f525-2a51a6ab478d)",
    "Failed to initialize NVML: Unknown Error",
    "Failed to initialize NVML: Unknown Error")


def test_a_listing_loop_counts_each_gpu_once_and_its_later_driver_error_is_judged() -> None:
    data = parse_text("nvidia-smi", LOOP)
    assert [g["uuid"] for g in data["listed"]] == ["GPU-551720f0-caf0-22b7-f525-2a51a6ab478d"]
    (f,) = judge_text("nvidia-smi", LOOP)
    assert (f.check, f.severity, f.subject) == ("gpu_driver", "critical", "n1") and "Unknown Error" in f.message
    # the listing alone, run twice, is one GPU listed by name (its count needs gpus_per_node)
    listing = _text(*LOOP.splitlines()[:4])
    assert [g["index"] for g in parse_text("nvidia-smi", listing)["listed"]] == [0]
    assert _checks(judge_text("nvidia-smi", listing, {"gpus_per_node": 1})) == []


# --- the shell says the tool is not installed: "tool missing", not an unreadable capture ---

# round2/nvidia-smi/miyabi-g3-ja-memo-bash-command-not-found-then-nvcc-12.6.txt (puwaer/puwaer_code_trans,
# miyabi_memo/nvidia_driver.md): bash on a GH200 system's login host
MIYABI = _text("[j26001@miyabi-g3 ~]$ nvidia-smi", "-bash: nvidia-smi: command not found", "",
               "[j26001@miyabi-g3 ~]$ nvcc --version", "nvcc: NVIDIA (R) Cuda compiler driver")


def test_a_shell_saying_the_tool_is_missing_is_read_as_tool_missing() -> None:
    assert parse_text("nvidia-smi", MIYABI) == {"tool_missing": "-bash: nvidia-smi: command not found"}


@pytest.mark.parametrize(("kind", "line"), [
    ("nvidia-smi", "-bash: nvidia-smi: command not found"),        # bash
    ("nvidia-smi-q", "zsh: command not found: nvidia-smi"),        # zsh names the command last
    ("ibstat", "sh: 1: ibstat: not found"),                        # dash (Debian's /bin/sh)
    ("dcgmi-diag", "/bin/sh: dcgmi: not found"),                   # busybox
    ("ibv_devinfo", "fish: Unknown command: ibv_devinfo"),         # fish
    ("nvidia-smi", "'nvidia-smi' is not recognized as an internal or external command,"),  # cmd.exe
    ("show_gids", 'OCI runtime exec failed: exec failed: unable to start container process: exec: "show_gids": '
                  "executable file not found in $PATH: unknown"),  # kubectl/docker exec
])
def test_each_shells_words_for_a_missing_tool(kind: str, line: str) -> None:
    assert parse_text(kind, _text("$ tool", line)) == {"tool_missing": line}


def test_another_commands_absence_is_not_the_tools() -> None:
    # 'foo' missing says nothing of ibstat: the capture stays unreadable (a parse failure, coverage)
    with pytest.raises(ParseError):
        parse_text("ibstat", _text("$ ibstat", "bash: foo: command not found"))


def test_tool_missing_is_cannot_judge_through_the_engine(tmp_path: Path) -> None:
    (tmp_path / "miyabi-g3").mkdir()
    (tmp_path / "miyabi-g3" / "nvidia-smi.txt").write_text(MIYABI)
    rep = analyze_dir(str(tmp_path), {}).hosts["miyabi-g3"]
    assert rep.status == "cannot judge" and rep.findings == []
    assert "tool missing" in rep.cannot_judge_reason and "command not found" in rep.cannot_judge_reason


# --- nvidia-smi's lost-GPU line after the paster's own words ---

# round2/nvidia-smi/chatglmft95-zh-prose-glued-chuxian-device-handle-gpu0000-05-00-unknown-error-3090.txt
# (liucongg/ChatGLM-Finetuning#95): '输入nvidia-smi' (typed nvidia-smi), then '出现' (appears) glued to the error
GLUED = _text("输入nvidia-smi", "出现Unable to determine the device handle for GPU0000:05:00.0: Unknown Error")


def test_a_lost_gpu_line_glued_to_prose_is_read() -> None:
    assert _checks(judge_text("nvidia-smi", GLUED)) == [("gpu_lost", "critical", "n1/00000000:05:00.0")]


# --- Hopper's security processor refusing the driver's boot ---

# round2/kernel-log/nvtrust19-cvm-root-none-prompt-conf-compute-f-console-nvrm-fsp-boot-cmds-failed-rm-cannot-boot-
# cut.txt (NVIDIA/nvtrust#19): the console of an H100 guest VM; the early messages print 'NVRM ' without its colon
FSP = _text(
    "root@(none):/# nvidia-smi conf-compute -f",
    "[  343.059154] NVRM kfspProcessCommandResponse_GH100: FSP response reported error. Task ID: 0x2 Command type: "
    "0x14 Error code: 0x6",
    "[  343.060592] NVRM kfspSendBootCommands_GH100: Sent following content to FSP:",
    "[  343.065531] NVRM kfspSendBootCommands_GH100: FSP boot cmds failed. RM cannot boot.",
    "[  343.066452] NVRM kfspDumpDebugState_GH100: FSP microcode v4.76")


def test_fsp_boot_commands_failed_is_a_gpu_the_driver_cannot_initialise() -> None:
    (f,) = judge_text("kernel-log", FSP)
    assert (f.check, f.severity) == ("kernel_gpu", "critical") and "FSP boot cmds failed" in f.message


# --- lspci's NVIDIA lines that are no GPU ---

# round2/lspci/miyabi-g3-ja-memo-grep-i-nvidia-13-grace-root-port-bridges-22b2-22b8-22b9-no-gpu-function.txt: the
# same notes' 'lspci | grep -i nvidia' on the login host: Grace root ports only (3 of its 13 lines here)
GRACE = _text("[j26001@miyabi-g3 ~]$ lspci | grep -i nvidia",
              "0000:00:00.0 PCI bridge: NVIDIA Corporation Device 22b2",
              "0001:00:00.0 PCI bridge: NVIDIA Corporation Device 22b8",
              "0008:00:00.0 PCI bridge: NVIDIA Corporation Device 22b9")


def test_a_listing_of_bridges_only_holds_nothing_to_judge() -> None:
    (f,) = judge_text("lspci", GRACE)
    assert (f.check, f.severity) == ("coverage", "info") and "none of them a GPU or a NIC" in f.message


# --- NCCL leaving out an HCA it cannot open, and using the others ---

# round2/nccl-log/imagereward65-k8s-pod-ibv-open-device-failed-mlx5_58-59-then-using-roce-mlx5_1-mlx5_18.txt
# (zai-org/ImageReward#65): a pod's ranks cannot open mlx5_58/mlx5_59 (not given to the pod) and use mlx5_1, mlx5_18
POD = "65826-86bd789679-2dxbs:80744:80744 [1] "
SKIPPED = _text(
    POD + "misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed",
    "",
    POD + "transport/net_ib.cc:149 NCCL WARN NET/IB : Unable to open device mlx5_58",
    POD + "NCCL INFO NET/IB : Using [0]mlx5_1:1/RoCE [1]mlx5_18:1/RoCE ; OOB eth0:33.117.221.247<0>",
    POD + "NCCL INFO Using network IB")


def test_an_hca_nccl_cannot_open_beside_those_it_uses_is_a_note() -> None:
    found = judge_text("nccl-log", SKIPPED)
    assert [(f.check, f.severity) for f in found] == [("nccl_warn", "info"), ("nccl_warn", "info")]
    assert all("mlx5_1, mlx5_18" in f.message for f in found)


def test_the_same_failure_with_no_hca_in_use_stays_a_fatal_transport_error() -> None:
    alone = _text(*SKIPPED.splitlines()[:3])  # the log ends before NCCL lists any HCA it uses
    assert ("nccl_transport", "critical") in [(f.check, f.severity) for f in judge_text("nccl-log", alone)]


# round2/nccl-log/strixhalo80-rccl-ray-double-prefix-peermem-dmabuf-fallback-warn-rocep3s0f0-qp-created-cut.txt
# (a Strix Halo RCCL thread): RCCL without the peer-memory module registers GPU memory through DMA-BUF
DMABUF = _text("toolbox:4775:4876 [0] /__w/rockrel/rockrel/build/comm-libs/rccl/build/hipify/src/transport/net_ib/"
               "connect_tmp.cc:1370 NCCL WARN NET/IB: Peermem not available, falling back to GPU Direct RDMA (DMAbuf) "
               "for device 0")


def test_rccls_dmabuf_fallback_is_still_gpudirect() -> None:
    (f,) = judge_text("nccl-log", DMABUF)
    assert (f.check, f.severity) == ("nccl_warn", "info") and "DMA-BUF" in f.message


# --- an RDMA device's completions in error, in the kernel log ---

# round2/kernel-log/iommu2022-nvmeof-rdma-epyc-cx6-mlx5_0-c1-00.0-amd-vi-io-page-fault-wc-error-4-local-protection-
# nvme15-error-recovery.txt (iommu list mail, 9 Feb 2022): NVMe-oF over mlx5_0, its receive completing in error
WC = _text(
    "[  408.368677] mlx5_core 0000:c1:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x002f address=0x24d08000 "
    "flags=0x0000]",
    "[  408.372201] infiniband mlx5_0: mlx5_handle_error_cqe:332:(pid 0): WC error: 4, Message: local protection error",
    "[  408.380181] infiniband mlx5_0: dump_cqe:272:(pid 0): dump error cqe",
    "[  408.380230] nvme nvme15: RECV for CQE 0x00000000ce392ed9 failed with status local protection error (4)",
    "[  408.380235] nvme nvme15: starting error recovery")


def test_an_rdma_work_completion_in_error_fails_the_device() -> None:
    (f,) = [f for f in judge_text("kernel-log", WC) if f.check == "kernel_net"]
    assert (f.severity, f.subject) == ("critical", "n1/mlx5_0") and "local protection error" in f.message


def test_flushed_work_requests_of_a_torn_down_queue_pair_are_not_judged() -> None:
    flushed = WC.replace("WC error: 4, Message: local protection error", "WC error: 5, Message: work request flushed "
                         "error")
    assert [f for f in judge_text("kernel-log", flushed) if f.check == "kernel_net"] == []


# round2/kernel-log/harvesterpcidev81-dmesg-T-vfio-pci-b3-00.0-p5000-bar1-cant-reserve-curly-apostrophe.txt
# (harvester/pcidevices#81): vfio-pci cannot claim the Quadro P5000's BAR 1 (the page's curly apostrophe kept)
BAR = _text("dmesg -T",
            "[Wed Jun 12 02:42:37 2024] vfio-pci 0000:b3:00.0: vfio_ecap_init: hiding ecap 0x19@0x900",
            "[Wed Jun 12 02:42:37 2024] vfio-pci 0000:b3:00.0: BAR 1: can\u2019t reserve [mem 0xe0000000-0xefffffff "
            "64bit pref]")


def test_a_driver_that_cannot_claim_its_bar_leaves_the_device_unusable() -> None:
    (f,) = judge_text("kernel-log", BAR)
    assert (f.check, f.severity, f.subject) == ("kernel_device", "critical", "n1/0000:b3:00.0")
    assert "vfio-pci cannot claim BAR 1" in f.message


# --- a drain reason written with underscores for spaces ---

# round2/scontrol-node/awsome195-idle-drain-gres-gpu-0-lt-1-rtx3090.txt (awslabs/awsome-distributed-ai#195): a drained
# node, its Reason as Slurm wrote it; an admin's own reason set without quotes ('scontrol update ... reason=Xid_79_GPU_
# fell_off_the_bus') reaches scontrol with underscores where the words had spaces
DRAINED = corpus_capture("round2", "scontrol-node/awsome195-idle-drain-gres-gpu-0-lt-1-rtx3090.txt")


def test_a_hardware_reason_written_with_underscores_is_lost_hardware() -> None:
    assert [(f.check, f.severity) for f in judge_text("scontrol-node", DRAINED)] == [("slurm_node_state", "critical")]
    admin = DRAINED.replace("Reason=gres/gpu count reported lower than configured (0 < 1)",
                            "Reason=Xid_79_GPU_fell_off_the_bus")
    assert [(f.check, f.severity) for f in judge_text("scontrol-node", admin)] == [("slurm_node_state", "critical")]
    maintenance = DRAINED.replace("Reason=gres/gpu count reported lower than configured (0 < 1)",
                                  "Reason=planned_maintenance")
    assert [(f.check, f.severity) for f in judge_text("scontrol-node", maintenance)] == [("slurm_node_state",
                                                                                             "warning")]


# --- a libfabric provider's completion error under NCCL's OFI plugin ---

# round2/nccl-log/awsofi346-120-rank-efa-libfabric-txe-invalid-address-peer-host-id-then-indented-nccl-channel-lines-
# cut.txt (aws/aws-ofi-nccl#346): the EFA provider fails a transmit to a peer instance
EFA = _text(
    "libfabric:451707:1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address My EFA "
    "addr: fi_addr_efa://[fe80::13:c2ff:fe6f:f03d]:0:1072483550 My host id: i-0db7083f3fcbebb65 Peer EFA addr: "
    "fi_addr_efa://[fe80::b8:aff:fe44:425]:0:947699476 Peer host id: i-0ce6d3d57139f053c (7)",
    "ip-172-31-69-127:451707:453373 [4] NCCL INFO Channel 00/0 : 0[4] -> 8[4] [send] via NET/AWS Libfabric/4/GDRDMA")


def test_an_efa_completion_error_is_a_fatal_transport_error() -> None:
    (f,) = judge_text("nccl-log", EFA)
    assert (f.check, f.severity) == ("nccl_transport", "critical") and "Invalid address" in f.message
