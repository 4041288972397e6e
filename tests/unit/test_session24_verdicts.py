"""Session 24 (issue 29): rules and readings of this session; expected values are read off the text of each
capture (quoted here, with the source it comes from)."""

from __future__ import annotations

import pytest
from conftest import finding_keys as _checks
from conftest import judge_text
from conftest import parse_text as _parse
from conftest import text_of as _text

# --- nvidia-smi without its user-space library: no GPU usable, in every mode ---

# a Kubernetes node's GTX 1080s after a broken driver upgrade (public notes, 'Diagnosis' block: `$ nvidia-smi`)
NO_NVML = _text(
    "$ nvidia-smi",
    "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display "
    "Driver is properly installed and present in your system.",
    "Please also try adding directory that contains libnvidia-ml.so to your system PATH.",
    "$")


@pytest.mark.parametrize("kind", ["nvidia-smi", "nvidia-smi-q", "nvidia-smi-query"])
def test_nvidia_smi_without_its_library_is_a_failed_node(kind: str) -> None:
    (f,) = judge_text(kind, NO_NVML)
    assert (f.check, f.severity, f.subject) == ("gpu_driver", "critical", "n1")
    assert "libnvidia-ml.so" in f.message


# docker's `--gpus all ubuntu nvidia-smi` refused by the container runtime's cgroups (public setup notes): both lines
BLOCKED = _text(
    "Failed to initialize NVML: GPU access blocked by the operating system",
    "Failed to properly shut down NVML: GPU access blocked by the operating system")


def test_nvml_shut_down_line_alone_is_read_too() -> None:
    assert _checks(judge_text("nvidia-smi", BLOCKED)) == [("gpu_driver", "critical", "n1")]
    # the second line alone (the first lost in a paste) still says the driver cannot be reached
    shut = "Failed to properly shut down NVML: Driver Not Loaded\n"
    assert _checks(judge_text("nvidia-smi", shut)) == [("gpu_driver", "critical", "n1")]


# --- dcgmi diag: the client's own error lines say the diagnostic did not run (cannot judge, not a parse failure) ---

# round2/dcgmi-diag/dcgm254-4.4.1-v100x4-r3-cuda12-plugin-dir-removed-cannot-load-plugins-return-minus-30.txt
# (NVIDIA/DCGM#254)
NOT_RUN = _text(
    "$ dcgmi diag -i 0,1,2,3 -v -r 3",
    "Error: Unable to complete diagnostic for entities 0,1,2,3. Return: (-30) : DCGM GPU Diagnostic returned an "
    "error",
    "Error: Cannot load plugins. Unable to change to the plugin dir "
    "'/usr/libexec/datacenter-gpu-manager-4/plugins/cuda12/': 'No such file or directory'")


def test_dcgmi_error_lines_are_a_diagnostic_that_did_not_run() -> None:
    data = _parse("dcgmi-diag", NOT_RUN)
    assert data["results"] == [] and "Return: (-30)" in data["not_run"] and "Cannot load plugins" in data["not_run"]
    (f,) = judge_text("dcgmi-diag", NOT_RUN)
    assert (f.check, f.severity) == ("coverage", "info") and "did not run" in f.message


def test_dcgmi_json_runtime_error_is_a_diagnostic_that_did_not_run() -> None:
    # `dcgmi diag -j` when it cannot start: the document carries only its runtime error
    doc = ('{"DCGM GPU Diagnostic": {"runtime_error": '
           '"Diagnostic could not be run while other processes are using GPUs"}}\n')
    data = _parse("dcgmi-diag", doc)
    assert data["results"] == [] and "other processes are using GPUs" in data["not_run"]
    (f,) = judge_text("dcgmi-diag", doc)
    assert f.check == "coverage" and "did not run" in f.message


# --- mlnx_qos without an inventory: the one PFC-enabled priority is the site's lossless priority ---

# round2/mlnx_qos/spiderpool-roce-qos-doc-set-rdma-qos-q-eth0-dscp-pfc5-ecn-lines.txt (spidernet-io/spiderpool
# docs/usage/roce-qos.md): trust dscp, PFC on priority 5 alone, as the guide's GPU_RDMA_PRIORITY=5 sets it
PFC5 = _text(
    "    Priority trust state: dscp",
    "    PFC configuration:",
    "            priority    0   1   2   3   4   5   6   7",
    "            enabled     0   0   0   0   0   1   0   0   ",
    "            buffer      0   0   0   0   0   1   0   0   ")


def test_one_pfc_priority_without_inventory_is_the_sites_lossless_priority() -> None:
    assert judge_text("mlnx_qos", PFC5) == []
    # the inventory's priority still decides where it is given
    assert _checks(judge_text("mlnx_qos", PFC5, {"pfc_priority": 3})) == [("qos_pfc", "critical", "n1"),
                                                                         ("qos_pfc", "warning", "n1")]
    # PFC on two priorities states no single lossless priority: the default (3) judges them
    two = PFC5.replace("enabled     0   0   0   0   0   1", "enabled     0   0   0   0   1   1")
    assert ("qos_pfc", "critical", "n1") in _checks(judge_text("mlnx_qos", two))


# --- kernel log: NVSwitch SXids, mlx5 port modules in error, mlx5's unload after a firmware fatal ---

# round2/kernel-log/gpud-sxid-readme-blockquote-xid79-9100-then-sxid-20034-ltssm-fault-up-three-nvswitches.txt
# (leptonai/gpud components/accelerator/nvidia/error/sxid/README.md): two of its lines, and a non-fatal SXid as
# NVIDIA's Fabric Manager user guide prints one
SXIDS = _text(
    "> [6781753.400584] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",
    "> [6781753.404848] nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Severity 1 Engine instance 60 Sub-engine "
    "instance 00",
    "[ 5000.000000] nvidia-nvswitch2: SXid (PCI:0000:86:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error "
    "(First)")


def test_a_fatal_sxid_fails_the_node_a_non_fatal_one_degrades_it() -> None:
    data = _parse("kernel-log", SXIDS)
    assert [(e["pci"], e["sxid"], e["fatal"]) for e in data["sxids"]] == [("0000:06:00.0", 20034, True),
                                                                          ("0000:86:00.0", 12028, False)]
    got = [k for k in _checks(judge_text("kernel-log", SXIDS)) if k[0] == "kernel_nvswitch"]
    assert got == [("kernel_nvswitch", "critical", "n1/0000:06:00.0"), ("kernel_nvswitch", "warning",
                                                                            "n1/0000:86:00.0")]


# gpud's own test lines of the mlx5 message (leptonai/gpud, the accelerator's mlx5 kernel-message table), a blog's
# two bare lines of it (no timestamps), and the plain module event of a healthy probe (jishuzhan's mlx5 dmesg in
# round2/kernel-log/jishuzhan-mlx5-cx-module-cable-plugged-two-ports-link-up.txt)
MODULE = _text("[123.456794] mlx5_core 0000:5c:00.0: Port module event[error]: module 0, Cable error, High Temperature")
MODULE_BARE = _text("mlx5_core: Port module event[error]: module 0, Cable error, High Temperature",
                    "mlx5_core enp1s0f0np0: Link down")
PLUGGED = _text("[    1.734873] mlx5_core 0000:04:00.0: Port module event: module 0, Cable plugged")


def test_a_port_module_in_error_fails_its_adapter() -> None:
    (ev,) = _parse("kernel-log", MODULE)["nic_module"]
    assert (ev["pci"], ev["module"], ev["what"]) == ("0000:5c:00.0", 0, "Cable error, High Temperature")
    assert ("kernel_net", "critical", "n1/0000:5c:00.0") in _checks(judge_text("kernel-log", MODULE))
    assert ("kernel_net", "critical", "n1") in _checks(judge_text("kernel-log", MODULE_BARE))
    assert not [f for f in judge_text("kernel-log", PLUGGED) if f.severity != "info"]


# mlx5's devlink fw_fatal reporter giving up (drivers/net/ethernet/mellanox/mlx5/core/health.c prints it; a CI
# script of a public repository waits for exactly this line): the adapter's driver unloads
UNLOADED = _text("[ 8123.000001] mlx5_core 0000:c1:00.0: mlx5_fw_fatal_reporter_err_work:756:(pid 1234): Driver is "
                 "in error state. Unloading")


def test_mlx5_driver_unloaded_in_error_state_fails_the_adapter() -> None:
    assert ("kernel_net", "critical", "n1/0000:c1:00.0") in _checks(judge_text("kernel-log", UNLOADED))


# --- nvidia-smi -q (535+): the T.Limit scale; the fabric's recovery flags ---

# round2/nvidia-smi-q/thamada-rtx4090-x8-550.127.05-q-full-76k.txt (thamada/nvidia-smi gls/RTX4090_smi.py): one GPU's
# Temperature section as 550 prints it (no absolute 'GPU Max Operating Temp': the T.Limit scale only)
TLIMIT = _text(
    "GPU 00000000:01:00.0",
    "    Temperature",
    "        GPU Current Temp                  : 28 C",
    "        GPU T.Limit Temp                  : 56 C",
    "        GPU Shutdown T.Limit Temp         : -7 C",
    "        GPU Slowdown T.Limit Temp         : -2 C",
    "        GPU Max Operating T.Limit Temp    : 0 C",
    "        GPU Target Temperature            : 84 C")


def test_a_gpu_at_its_t_limit_is_held_at_its_operating_limit() -> None:
    assert not [f for f in judge_text("nvidia-smi-q", TLIMIT) if f.check == "gpu_throttle"]
    hot = TLIMIT.replace("GPU T.Limit Temp                  : 56 C", "GPU T.Limit Temp                  : 1 C")
    assert ("gpu_throttle", "warning", "n1/gpu0") in _checks(judge_text("nvidia-smi-q", hot))
    # N/A headroom (a GPU that does not report it) is not judged
    na = TLIMIT.replace("GPU T.Limit Temp                  : 56 C", "GPU T.Limit Temp                  : N/A")
    assert not [f for f in judge_text("nvidia-smi-q", na) if f.check == "gpu_throttle"]


# the Fabric section as 570 prints it (round2 nvidia-smi-q captures of H100 hosts carry it with N/A values); a route
# recovery in progress is NVML's fabric health mask saying the NVLink routes are being rebuilt
FABRIC = _text(
    "GPU 00000000:18:00.0",
    "    Fabric",
    "        State                                  : Completed",
    "        Status                                 : Success",
    "        Health",
    "            Bandwidth                          : Full",
    "            Route Recovery in progress         : True",
    "            Route Unhealthy                    : False",
    "            Access Timeout Recovery            : False")


def test_a_fabric_route_recovery_in_progress_is_degraded() -> None:
    assert ("gpu_fabric", "warning", "n1/gpu0") in _checks(judge_text("nvidia-smi-q", FABRIC))
    done = FABRIC.replace("in progress         : True", "in progress         : False")
    assert not [f for f in judge_text("nvidia-smi-q", done) if f.check == "gpu_fabric"]


# --- nvidia-smi --query-gpu: SRAM threshold exceeded, the field 595 drivers print ---

# tests/corpus/gpu/nvidia-smi-query/ne-rtx-2080-595.71.05.txt prints the field as [N/A] (a GeForce without ECC)
def test_query_sram_threshold_exceeded_is_judged_like_the_q_report() -> None:
    head = "index, pci.bus_id, ecc.errors.uncorrected.aggregate.sram.thresholdExceeded"
    ok = _text(head, "0, 00000000:01:00.0, [N/A]")
    assert not [f for f in judge_text("nvidia-smi-query", ok) if f.check == "gpu_ecc"]
    bad = _text(head, "0, 00000000:01:00.0, Yes")
    assert ("gpu_ecc", "critical", "n1/gpu0") in _checks(judge_text("nvidia-smi-query", bad))


# --- the fabric manager's journal line of an NVSwitch error ---

# round2/kernel-log/devopsrustem-slurmv4-aihub0007-systemctl-status-fabricmanager-nvswitch-non-fatal-22013-physical-id-
# 3-port-60.txt (devopsrustem/slurmv4 3/13.sh): its last journal line
FM_SXID = _text("Mar 03 18:39:57 tpgds-aihub0007 nv-fabricmanager[5183]: detected NVSwitch non-fatal error 22013 on "
                "NodeId 0 on NVSwitch pci bus id 00000000:08:00.0 physical id 3 port 60")


def test_the_fabric_managers_nvswitch_error_line_is_an_sxid() -> None:
    (ev,) = _parse("kernel-log", FM_SXID)["sxids"]
    assert (ev["pci"], ev["sxid"], ev["fatal"]) == ("00000000:08:00.0", 22013, False)
    assert ("kernel_nvswitch", "warning", "n1/00000000:08:00.0") in _checks(judge_text("kernel-log", FM_SXID))


# --- perftest on QDR InfiniBand: 'Rate: 40' is a signalling rate, 32 Gb/s of data ---

# round2/ib_write_bw/stmatengss-tmpsh-container-mlx4_0-qdr-write-bw-a-iter-20000-host-wrapped-3665mbs.txt
# (stmatengss/useful_shell_instructions tmp.sh): the banner's link type and the largest row (MB/sec)
QDR = _text(
    "                    RDMA_Write BW Test",
    " Dual-port       : OFF          Device         : mlx4_0",
    " Link type       : IB",
    " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
    " 8388608    20000            3666.83            3665.42            0.000458")


def test_a_qdr_link_is_judged_against_its_data_rate() -> None:
    # 3665.42 MB/s = 30.7 Gb/s: 96 % of QDR's 32 Gb/s of data (77 % of the 40 Gb/s signalling rate)
    assert not [f for f in judge_text("ib_write_bw", QDR, {"ib_rate_gbps": 40}) if f.severity != "info"]
    # a RoCE port's 40 Gb/s is a data rate: the same result is below 90 % of it
    eth = QDR.replace("Link type       : IB", "Link type       : Ethernet")
    assert ("ib_write_bw", "warning", "n1/mlx4_0/1") in _checks(judge_text("ib_write_bw", eth, {"ib_rate_gbps": 40}))


# --- ip -br addr: the brief listing's states ---

# round2/ip-link/devopsrustem-slurmv4-aihub0012-conda-prompt-ip-br-c-a-eight-ens-rails-up-f1-ports-eno-down.txt
BRIEF = _text(
    "((sglang-0.5.9) ) [dcbsr_dev@tpgds-aihub0012 ~]$ ip -br -c a",
    "lo               UNKNOWN        127.0.0.1/8 ",
    "eno1             DOWN           ",
    "ens3np0          UP             10.99.91.43/31 ",
    "ens12f0np0       UP             ",
    "ens12f1np1       DOWN           ",
    "bond0            UP             10.73.175.161/29 ")


def test_the_brief_listing_is_read_and_its_down_rdma_port_judged() -> None:
    data = _parse("ip-link", BRIEF)
    assert data["brief"] is True
    assert [(x["ifname"], x["state"], x["carrier"]) for x in data["links"]] == [
        ("lo", "UNKNOWN", None), ("eno1", "DOWN", None), ("ens3np0", "UP", True), ("ens12f0np0", "UP", True),
        ("ens12f1np1", "DOWN", None), ("bond0", "UP", True)]
    got = [k for k in _checks(judge_text("ip-link", BRIEF, {"fabric": "roce"})) if k[2] != "n1"]
    assert got == [("rdma_netdev_link", "warning", "n1/ens12f1np1")]  # eno1 is no RDMA uplink


# --- show_gids cut after a v1 row: the v2 row of that address is the part cut off ---

# round2/show_gids/ucx10420-client-root-prompt-ucx118-dir-mlx5_bond_0-1-on-bond0-bond1-v2-ipv4-cut-before-bond_1-
# index3.txt (openucx/ucx#10420)
GIDS_CUT = _text(
    "DEV     PORT    INDEX   GID                                     IPv4            VER     DEV",
    "---     ----    -----   ---                                     ------------    ---     ---",
    "mlx5_bond_0     1       2       0000:0000:0000:0000:0000:ffff:0a10:1d0d 10.16.29.13     v1      bond0",
    "mlx5_bond_0     1       3       0000:0000:0000:0000:0000:ffff:0a10:1d0d 10.16.29.13     v2      bond0",
    "mlx5_bond_1     1       0       fe80:0000:0000:0000:a288:c2ff:feb4:b04a                 v1      bond1",
    "mlx5_bond_1     1       2       0000:0000:0000:0000:0000:ffff:0a10:270d 10.16.39.13     v1      bond1")


def test_a_gid_table_cut_after_a_v1_row_does_not_judge_that_device() -> None:
    assert not [f for f in judge_text("show_gids", GIDS_CUT) if f.check == "roce_v2_gid"]
    # the same device ending on its link-local rows lacks a routable v2 GID
    linklocal = GIDS_CUT.rsplit("\n", 2)[0] + "\n"
    assert ("roce_v2_gid", "warning", "n1/mlx5_bond_1/1") in _checks(judge_text("show_gids", linklocal))


# --- a background job's output after the shell's next prompt ---

# round2/ib_write_bw/amd-alibaba-readme-aliyun1-ionic_7-server-background-job-bidir-4qp-host-mem-779gbps.txt
# (prasad-nair-amd/alibaba README.md): the server started with '&', its output going on after the next prompt
BACKGROUND = _text(
    "[vultr@Aliyun1 ~]$ sudo ib_write_bw -d ionic_7 -x 1 -b -q 4 -F -a -n 5000 --report_gbits -p 10000 &",
    "[1] 650300",
    "[vultr@Aliyun1 ~]$ Using sampled CPU speed 3295 MHz over reported speed 5037 MHz",
    "                    RDMA_Write Bidirectional BW Test",
    " Dual-port       : OFF          Device         : ionic_7",
    " Link type       : Ethernet",
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
    " 8388608    5000             779.31             779.20              0.011611")


def test_a_background_jobs_output_after_the_next_prompt_is_read() -> None:
    data = _parse("ib_write_bw", BACKGROUND)
    assert (data["device"], data["bw_avg_gbps"]) == ("ionic_7", 779.2)


# --- nvidia-smi -q: the head of a whole report; the recovery action as a health field ---

# round2/nvidia-smi-q/nvdocker1439-zsh-arrow-prompt-a-450.80.02-quadro-p2200-head-cut-at-inforom.txt
# (NVIDIA/nvidia-docker#1439): the report's head, identity fields only
HEAD_ONLY = _text(
    "Attached GPUs                             : 1",
    "GPU 00000000:83:00.0",
    "    Product Name                          : Quadro P2200",
    "    Product Brand                         : Quadro",
    "    Persistence Mode                      : Enabled",
    "    VBIOS Version                         : 86.06.77.00.03")


def test_the_recovery_action_is_a_health_field() -> None:
    # the head alone: its count (Attached GPUs 1, one block) is met and nothing else is shown: nothing to judge
    # (session 27; session 24 judged it by that count), unless the inventory holds it to a count
    assert [(f.check, f.severity) for f in judge_text("nvidia-smi-q", HEAD_ONLY)] == [("coverage", "info")]
    assert judge_text("nvidia-smi-q", HEAD_ONLY, {"gpus_per_node": 1}) == []
    # without the count a listing of identities cannot judge; the driver's own recovery answer (570+) is a health
    # field: None says no reset, reboot or drain is asked
    bare = HEAD_ONLY.split("\n", 1)[1]
    assert [f.check for f in judge_text("nvidia-smi-q", bare)] == ["gpu_count"]
    recovery = bare + "    GPU Recovery Action                   : None\n"
    assert judge_text("nvidia-smi-q", recovery) == []


# --- srun -l: an empty output line is the label alone ---

# round2/nccl-tests/nccltests290-srun-label-0-prefix-node005-node007-2x8-h100-ndr-validation-0-na-8m-8g-busbw-155-of-
# 8x400g.txt (NVIDIA/nccl-tests#290): the run under 'srun -l', its last line ' 0:' (the empty line all_reduce_perf
# prints at the end, labelled); the ranks' device lines cut to two of each node here
SRUN = _text(
    " 0: # nThread 1 nGpus 1 minBytes 8388608 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 200 "
    "agg iters: 1 validation: 0 graph: 0",
    " 0: # Using devices",
    " 0: #  Rank  0 Group  0 Pid 291005 on    node005 device  0 [0x18] NVIDIA H100 80GB HBM3",
    " 0: #  Rank  1 Group  0 Pid 541703 on    node007 device  0 [0x18] NVIDIA H100 80GB HBM3",
    " 0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
    "#wrong",
    " 0:   8589934592    2147483648     float     sum      -1   103530   82.97  155.57    N/A   103538   82.96  "
    "155.56    N/A",
    " 0: # Avg bus bandwidth    : 142.735",
    " 0:")


def test_an_srun_label_alone_on_the_last_line_keeps_the_prefix_read() -> None:
    data = _parse("nccl-tests", SRUN)
    assert [r["size_bytes"] for r in data["rows"]] == [8589934592] and data["hosts"] == ["node005", "node007"]


# --- nccl-tests over the SHARP plugin's IBext network: InfiniBand, judged by the default floor ---

# round2/nccl-tests/nccltests293-test1-test2-r7525-a100-pcie-hdr-gpu-nic-sys-gdr-level-sys-ibext-sharp-info-interleaved-
# busbw-6.44-of-25.txt (NVIDIA/nccl-tests#293): two A100 hosts, one rank each, 'Using network IBext_v8'
IBEXT = _text(
    "#  Rank  0 Group  0 Pid   5425 on      test1 device  0 [0x81] NVIDIA A100-PCIE-40GB",
    "#  Rank  1 Group  0 Pid   4962 on      test2 device  0 [0x81] NVIDIA A100-PCIE-40GB",
    "test1:5425:5439 [0] NCCL INFO Using network IBext_v8",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
    "#wrong",
    "  1073741824     268435456     float     sum      -1   166733    6.44    6.44      0   167090    6.43    6.43  "
    "    0",
    "# Avg bus bandwidth    : 2.36313")


def test_the_sharp_plugins_ibext_network_is_infiniband() -> None:
    (f,) = [f for f in judge_text("nccl-tests", IBEXT) if f.check == "nccl_busbw"]
    assert f.severity == "critical" and "default for A100 inter-node" in f.message  # 6.44 of 19.4 GB/s (1 rank/node)
    efa = IBEXT.replace("IBext_v8", "AWS Libfabric")
    assert not [f for f in judge_text("nccl-tests", efa) if f.check == "nccl_busbw" and f.severity != "info"]


# --- an application's report of NCCL's error string ---

# round2/nccl-log/llamacpp22476-ph3a-sm-tensor-two-gpus-ggml-cuda-error-unhandled-cuda-error-ncclgroupend-interleaved-
# with-nccl-info-init-cut.txt (llama.cpp#22476): ggml's report of a failed ncclGroupEnd between NCCL's INFO lines
GGML = _text(
    "ph3a:1:103 [0] NCCL INFO Channel 03/04 : 0 1",
    "CUDA error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    "  current device: 0, in function ggml_backend_cuda_comm_allreduce_tensor at "
    "/app/ggml/src/ggml-cuda/ggml-cuda.cu:1237",
    "  ncclGroupEnd()",
    "/app/ggml/src/ggml-cuda/ggml-cuda.cu:97: CUDA error",
    "ph3a:1:103 [0] NCCL INFO P2P Chunksize set to 131072")


def test_ncclgeterrorstrings_words_in_an_application_line_fail_the_call() -> None:
    assert ("nccl_error", "critical", "n1") in _checks(judge_text("nccl-log", GGML))
