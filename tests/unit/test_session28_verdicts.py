"""Session 28 (issue 29): the SIGBUS line as the NCCL parser's own key, and the rules written from the rest's misses.

Expected values are read off the text of each capture (quoted here or read from tests/corpus, with its source); a
derived form is what the named tool prints for that case."""

from __future__ import annotations

from pathlib import Path

from conftest import finding_keys as _checks
from conftest import judge_text, parse_text
from conftest import text_of as _text

# --- NCCL logs: a rank killed by SIGBUS is the parser's own key; the check has no pattern of its own ---

# round2/nccl-log/deepspeed2638-docker-8gpu-2.14.3-...-caught-signal-7-bus-error-nonexistent-physical-address-cut.txt
# (deepspeedai/DeepSpeed#2638, an eight-GPU job in a Docker container)
UCX_SIGBUS = "[cf0b62962198:378934:0:382579] Caught signal 7 (Bus error: nonexistent physical address)"
SIGBUS = _text("cf0b62962198:378934:382525 [2] NCCL INFO Connected all trees", UCX_SIGBUS)


def test_the_sigbus_line_is_the_parsers_own_key() -> None:
    # after a 61-character line a mail wrap at 60-80 columns could have cut: UCX's own head says it is a line
    summary = parse_text("nccl-log", SIGBUS)
    assert summary["bus_errors"] == [UCX_SIGBUS]
    assert UCX_SIGBUS in summary["warnings"]  # still an error line of the job


def test_a_warn_line_carrying_the_sigbus_text_counts_once() -> None:
    # the handler's text inside an NCCL WARN (a plugin relaying it): one bus error, judged as one, not twice
    text = _text("node1:1234:1250 [0] NCCL INFO Connected all trees",
                 "node1:1234:1250 [0] NCCL WARN Caught signal 7 (Bus error: nonexistent physical address)")
    assert parse_text("nccl-log", text)["bus_errors"] == ["Caught signal 7 (Bus error: nonexistent physical address)"]
    assert _checks(judge_text("nccl-log", text)) == [("nccl_error", "critical", "n1")]


def test_a_dataloader_bus_error_is_a_bus_error() -> None:
    # PyTorch's DataLoader worker (its message names shared memory)
    line = ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
            "(shm).")
    text = _text("node1:1234:1250 [0] NCCL INFO Connected all trees", line)
    assert parse_text("nccl-log", text)["bus_errors"] == [line]
    assert _checks(judge_text("nccl-log", text)) == [("nccl_error", "critical", "n1")]


# --- NCCL logs: the socket connect retried after a timeout, the log cut before the WARN that ends the tries ---

# round2/nccl-log/oneflow3586-2node-socket-via-veth25f2e72-ipv6-linklocal-connect-timed-out-warn-cut.txt
# (Oneflow-Inc/oneflow#3586: rank 1 of two single-GPU nodes, NCCL 2.7-era), its NCCL lines
RETRIES = _text(
    "worker:101542:101542 [0] NCCL INFO Bootstrap : Using [0]eno1:172.18.40.41<0> "
    "[1]veth25f2e72:fe80::380d:bfff:fe5b:54d2%veth25f2e72<0>",
    "worker:101542:101542 [0] NCCL INFO NET/IB : No device found.",
    "worker:101542:101542 [0] NCCL INFO NET/Socket : Using [0]eno1:172.18.40.41<0> "
    "[1]veth25f2e72:fe80::380d:bfff:fe5b:54d2%veth25f2e72<0>",
    "worker:101542:101542 [0] NCCL INFO Using network Socket",
    "worker:101542:101934 [0] NCCL INFO Channel 00 : 0[18000] -> 1[18000] [receive] via NET/Socket/1",
    "worker:101542:101934 [0] NCCL INFO Channel 00 : 1[18000] -> 0[18000] [send] via NET/Socket/1",
    "worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying",
    "worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying")


def test_connect_retries_are_read_with_the_socket_device_of_the_channels() -> None:
    summary = parse_text("nccl-log", RETRIES)
    assert [r["error"] for r in summary["connect_retries"]] == ["Connection timed out"] * 2
    assert summary["socket_channel_devices"] == [1]
    assert summary["socket_interfaces"] == ["eno1", "veth25f2e72"]


def test_timed_out_connect_retries_fail_the_node_naming_the_interface() -> None:
    findings = judge_text("nccl-log", RETRIES)
    assert [k for k in _checks(findings) if k[1] == "critical"] == [("nccl_error", "critical", "n1")]
    (failed,) = [f for f in findings if f.severity == "critical"]
    assert "veth25f2e72 fe80::380d:bfff:fe5b:54d2%veth25f2e72 (an IPv6 link-local address" in failed.message
    assert "eno1" not in failed.message  # device 1 carries the channels, not device 0


def test_refused_connect_retries_alone_are_not_judged() -> None:
    # the peer not yet listening: NCCL retries a refused connect while the job starts
    text = RETRIES.replace("Connection timed out", "Connection refused")
    assert not [f for f in judge_text("nccl-log", text) if f.severity == "critical"]


# --- NCCL 2.4-2.6: GPUDirect RDMA decided per GPU, off for the GPUs beyond NCCL_NET_GDR_LEVEL ---

# round2/nccl-log/dle383-bert-tf-squad-node-1-gdr-level-phb-gdr-enabled-86000-af000-disabled-18000-3b000-distance-5-
# cut.txt
# (NVIDIA/DeepLearningExamples#383: four GPUs and one HCA, NCCL_NET_GDR_LEVEL=PHB), rank 0's lines
GDR_PER_GPU = _text(
    "node-1:32726:33054 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to PHB",
    "node-1:32726:33054 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 5 > 4)",
    "node-1:32726:33054 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 3b000 / HCA 0 (distance 5 > 4)",
    "node-1:32726:33054 [0] NCCL INFO GPU Direct RDMA Enabled for GPU 86000 / HCA 0 (distance 4 <= 4), read 0",
    "node-1:32726:33054 [0] NCCL INFO GPU Direct RDMA Enabled for GPU af000 / HCA 0 (distance 4 <= 4), read 0")


def test_the_per_gpu_gdr_decision_is_read() -> None:
    summary = parse_text("nccl-log", GDR_PER_GPU)
    assert summary["gdr_gpus"] == {"18000": False, "3b000": False, "86000": True, "af000": True}
    assert summary["gdr"] is True  # some GPUs have it


def test_gdr_off_for_some_gpus_degrades_the_node_naming_them() -> None:
    findings = judge_text("nccl-log", GDR_PER_GPU)
    assert _checks(findings) == [("nccl_gdr", "warning", "n1")]
    assert "disabled for GPU 18000, 3b000 (enabled for GPU 86000, af000) (on node-1)" in findings[0].message


def test_gdr_on_for_every_gpu_is_no_finding() -> None:
    text = GDR_PER_GPU.replace("Disabled", "Enabled").replace("> 4)", "<= 4), read 0")
    assert [f for f in judge_text("nccl-log", text) if f.check == "nccl_gdr"] == []


def test_gdr_off_for_every_gpu_is_gdr_off() -> None:
    text = _text(*[ln for ln in GDR_PER_GPU.splitlines() if "Enabled" not in ln])
    assert parse_text("nccl-log", text)["gdr"] is False
    findings = [f for f in judge_text("nccl-log", text) if f.check == "nccl_gdr"]
    assert [f.severity for f in findings] == ["warning"] and "GPU 18000, GPU 3b000" in findings[0].message


# --- an application's line of an NCCL result as vLLM's pynccl prints it ---

# round2/nccl-log/vllm18997-kuberay-torn-pod-name-pynccl-ncclcomminitrank-internal-error-init-device-traceback-cut.txt
# (vllm-project/vllm#18997), its first line without the torn pod name before it
PYNCCL = ("ERROR 05-30 22:22:26 [pynccl.py:153] [DEBUG] ncclCommInitRank failed with error: NCCL error: internal "
          "error - please report this issue to the NCCL developers")


def test_pynccl_result_line_fails_the_node_as_the_call_that_failed() -> None:
    summary = parse_text("nccl-log", PYNCCL)
    assert summary["error_returns"] == [{"at": "application", "code": 3, "line": 1}]
    findings = judge_text("nccl-log", PYNCCL)
    (failed,) = [f for f in findings if f.severity == "critical"]
    assert failed.check == "nccl_error" and "ncclInternalError" in failed.message
    assert "after NCCL WARN" not in failed.message  # the application's own line is no NCCL WARN it followed


def test_a_remote_error_line_is_not_read_as_this_ranks_failure() -> None:
    # ncclRemoteError's words name no fault of this rank's
    text = _text("node1:1234:1250 [0] NCCL INFO Connected all trees",
                 PYNCCL.replace("internal error - please report this issue to the NCCL developers",
                                "remote process exited or there was a network error"))
    assert not [f for f in judge_text("nccl-log", text) if f.severity == "critical"]


# --- an NCCL WARN names the host of NCCL's lines ---

# round2/nccl-log/nccl1297-vllm-ray-head-master-ib-hca-rxe0-soft-roce-warn-no-real-path-cut.txt (NVIDIA/nccl#1297)
def test_an_nccl_warn_finding_names_the_host_of_its_lines() -> None:
    text = _text("master:608:608 [0] NCCL INFO NCCL_IB_HCA set to rxe0",
                 "master:608:608 [0] transport/net_ib.cc:115 NCCL WARN Could not find real path of rxe0 "
                 "(/sys/class/infiniband/rxe0/device)")
    (warn,) = judge_text("nccl-log", text)
    assert (warn.check, warn.severity) == ("nccl_warn", "warning")
    assert warn.message.endswith("(on master)")


# --- the tool refused access: nothing of the node shown, cannot judge ---

# round2/kernel-log/cudfspark14709-databricks-azure-collector-dmesg-grep-nvrm-read-kernel-buffer-failed-operation-not-
# permitted.txt (NVIDIA/cudf-spark#14709: dmesg in a Databricks container)
DMESG_REFUSED = _text("sudo dmesg | grep -i nvrm : ", "dmesg: read kernel buffer failed: Operation not permitted")
# round2/nvidia-smi/nvctk210-rootless-podman-cdi-nvidia-smi-L-insufficient-permissions-twice-group-add-27.txt
# (NVIDIA/nvidia-container-toolkit#210: rootless podman)
NVML_REFUSED = "Failed to initialize NVML: Insufficient Permissions"


def test_a_refused_dmesg_is_read_as_refused() -> None:
    assert parse_text("kernel-log", DMESG_REFUSED) == {
        "tool_refused": "dmesg: read kernel buffer failed: Operation not permitted"}


def test_a_refused_dmesg_under_a_time_on_every_line_is_still_refused() -> None:
    # kubectl logs --timestamps: the label and the refusal each behind a time (a kernel log's lines are stamped too)
    stamped = "".join(f"2024-03-05T10:21:33.123456789Z {ln}\n" for ln in DMESG_REFUSED.splitlines())
    assert parse_text("kernel-log", stamped) == {
        "tool_refused": "dmesg: read kernel buffer failed: Operation not permitted"}


def test_a_log_with_a_refused_line_among_its_own_is_read() -> None:
    # one refused dmesg in a log of other lines: the lines there are read and judged
    text = _text("[    1.000000] Linux version 6.8.0", "[    2.000000] pci 0000:00:00.0: [8086:1234] type 00",
                 "[    3.000000] nvidia: loading out-of-tree module taints kernel.",
                 "dmesg: read kernel buffer failed: Operation not permitted")
    assert "tool_refused" not in parse_text("kernel-log", text)


def test_nvml_without_permission_is_refused_not_a_lost_driver() -> None:
    assert parse_text("nvidia-smi", NVML_REFUSED) == {"tool_refused": NVML_REFUSED}


def test_a_refused_tool_leaves_the_host_cannot_judge(tmp_path: Path) -> None:
    from clusterctl.analysis import checks
    from clusterctl.analysis.engine import analyze_dir

    checks.load_all()
    for kind, text in (("kernel-log", DMESG_REFUSED), ("nvidia-smi", NVML_REFUSED)):
        host = tmp_path / kind / "n1"
        host.mkdir(parents=True)
        (host / f"{kind}.txt").write_text(text + "\n")
        rep = analyze_dir(str(tmp_path / kind), {}).hosts["n1"]
        assert rep.status == "cannot judge" and not rep.findings
        assert any("refused access" in f.message for f in rep.notes)


def test_a_lost_driver_is_still_a_lost_driver() -> None:
    text = "Failed to initialize NVML: Driver/library version mismatch"
    assert _checks(judge_text("nvidia-smi", text)) == [("gpu_driver", "critical", "n1")]


# --- the enforced power limit held below the requested one from outside nvidia-smi ---

# round2/nvidia-smi-q/slurmappliance975-root-prompt-q-d-power-595.71.05-4gpu-first-06-00-current-500w-requested-default-
# 700w-elided.txt (stackhpc/ansible-slurm-appliance#975), its first GPU
HELD = _text("Attached GPUs                                          : 1",
             "GPU 00000000:06:00.0",
             "    GPU Power Readings",
             "        Average Power Draw                             : 78.83 W",
             "        Instantaneous Power Draw                       : 78.75 W",
             "        Current Power Limit                            : 500.00 W",
             "        Requested Power Limit                          : 700.00 W",
             "        Default Power Limit                            : 700.00 W",
             "        Min Power Limit                                : 200.00 W",
             "        Max Power Limit                                : 700.00 W")


def test_an_enforced_limit_held_below_the_requested_one_degrades_the_gpu() -> None:
    findings = judge_text("nvidia-smi-q", HELD)
    assert [(f.check, f.severity) for f in findings] == [("gpu_power", "warning")]
    assert "enforced power limit 500 W is below the 700 W requested" in findings[0].message
    assert "00000000:06:00.0" in findings[0].message


def test_a_module_sharing_its_power_is_not_held() -> None:
    shared = HELD + "    Module Power Readings\n        Current Power Limit                            : 1000.00 W\n"
    assert parse_text("nvidia-smi-q", shared)["gpus"][0]["module_power"] is True
    assert [f for f in judge_text("nvidia-smi-q", shared) if f.check == "gpu_power"] == []


def test_an_enforced_limit_near_the_requested_one_is_no_finding() -> None:
    near = HELD.replace("Current Power Limit                            : 500.00 W",
                        "Current Power Limit                            : 690.00 W")
    assert [f for f in judge_text("nvidia-smi-q", near) if f.check == "gpu_power"] == []


# --- perftest that could not time its transfers (CPU frequency scaling) measured nothing ---

# round2/ib_write_bw/ompiusers20147-2012-no-prompt-sdr-mthca0-conflicting-cpu-frequency-65536b-bw-0.00-html.txt
# (open-mpi users list 2012/09/20147: two i7 nodes with SDR HCAs), the table
FREQ = _text(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]",
             "Conflicting CPU frequency values detected: 1600.000000 != 3301.000000",
             " 65536     5000           0.00               0.00   ")


def test_zero_bandwidth_after_the_cpu_frequency_conflict_is_no_measurement() -> None:
    data = parse_text("ib_write_bw", FREQ)
    assert data["cpu_freq_conflict"] == "Conflicting CPU frequency values detected: 1600.000000 != 3301.000000"
    findings = judge_text("ib_write_bw", FREQ, {"ib_rate_gbps": 10})
    assert _checks(findings) == [("coverage", "info", "n1")]
    assert "could not time the transfers" in findings[0].message


def test_a_measured_bandwidth_beside_the_warning_is_still_judged() -> None:
    measured = FREQ.replace("0.00               0.00", "937.60             937.60")
    findings = judge_text("ib_write_bw", measured, {"ib_rate_gbps": 10})
    assert [f.check for f in findings if f.check == "coverage"] == []


# --- --query-gpu CSV without its header: the cells' units say what some of them are ---

# round2/nvidia-smi-query/tgi2238-rtx-a6000-19-field-csv-no-header-p8-idle-two-whole-lines.txt
# (huggingface/text-generation-inference#2238), its first row
NOHEADER = ("NVIDIA RTX A6000, 00000000:01:00.0, 550.54.15, P8, 4, 1, 44, 0 %, 0 %, 49140 MiB, 48668 MiB, 1 MiB, No, "
            "[N/A], 8.6, [N/A], [N/A], 18.51 W, 300.00 W")


def test_a_rows_units_name_its_pstate_power_and_utilisation() -> None:
    (g,) = parse_text("nvidia-smi-query", NOHEADER)["gpus"]
    assert (g["name"], g["bus_id"], g["performance_state"]) == ("NVIDIA RTX A6000", "00000000:01:00.0", "P8")
    assert (g["power_w"]["draw"], g["power_w"]["limit"]) == (18.51, 300.0)
    assert (g["utilization_pct"]["gpu"], g["utilization_pct"]["memory"]) == (0.0, 0.0)


def test_a_headerless_row_with_readings_that_answer_is_healthy() -> None:
    assert judge_text("nvidia-smi-query", NOHEADER) == []


def test_a_headerless_row_of_identity_only_holds_nothing_to_judge() -> None:
    findings = judge_text("nvidia-smi-query", "NVIDIA RTX A6000, 00000000:01:00.0, 550.54.15")
    assert [f.check for f in findings] in (["coverage"], ["gpu_count"])


# --- sinfo: nodes counted by state (no names), and the process table psnode prints after the node's row ---

# round2/sinfo/vpensoexporter-testdata-sinfo-h-o-D-T-state-counts-20-mixed-2-drained-star-5-drained.txt
# (vpenso/prometheus-slurm-exporter's test data of 'sinfo -h -o %D,%T')
COUNTS = _text("20,mixed", "9,idle", "1,allocated", "2,drained*", "5,drained")


def test_state_counts_are_read_without_node_names() -> None:
    data = parse_text("sinfo", COUNTS)
    assert [(c["count"], c["state"]) for c in data["state_counts"]] == [
        (20, "mixed"), (9, "idle"), (1, "allocated"), (2, "drained*"), (5, "drained")]
    assert data["nodes"] == {}


def test_counted_nodes_are_judged_by_their_state() -> None:
    findings = judge_text("sinfo", COUNTS)
    assert [(f.severity, f.subject) for f in findings] == [("critical", "2 node(s)"), ("warning", "5 node(s)")]
    assert "not responding" in findings[0].message


def test_counts_of_healthy_states_are_healthy() -> None:
    assert judge_text("sinfo", _text("20 mixed", "9 idle")) == []


# round2/sinfo/slurmtools-psnode-2017-a058-xeon8-mixed-reason-none-ps-table.txt (OleHolmNielsen/Slurm_tools' psnode)
PSNODE = _text(
    "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON              ",
    "a058           1    xeon8*       mixed    8    2:4:1  23900    32752      1 xeon5570 none                ",
    "  PID S USER      STARTED     TIME %CPU   RSS COMMAND",
    " 1213 S user01   20:27:07 00:00:00  0.0  1684 /bin/bash /var/spool/slurmd/job127132/slurm_script")


def test_psnodes_process_table_ends_the_sinfo_rows() -> None:
    data = parse_text("sinfo", PSNODE)
    assert list(data["nodes"]) == ["a058"] and data["nodes"]["a058"]["states"] == ["mixed"]
    assert judge_text("sinfo", PSNODE) == []
    drained = PSNODE.replace("  mixed  ", "drained  ")
    assert [f.subject for f in judge_text("sinfo", drained)] == ["a058"]


# --- --query-gpu after the plain table a job script printed first ---

# round2/nvidia-smi-query/semiactiveseizure-job-gpu-stats-495.44-v100-sxm2-32gb-smi-table-then-query-csv-54-rows-...txt
# (theabrusch/semi_active_seizure's gpu_stats.csv), its table's frame and the query's header and first row
TABLE_THEN_QUERY = _text(
    "Mon Dec  6 10:11:47 2021       ",
    "+-----------------------------------------------------------------------------+",
    "| NVIDIA-SMI 495.44       Driver Version: 495.44       CUDA Version: 11.5     |",
    "|   0  Tesla V100-SXM2...  On   | 00000000:3A:00.0 Off |                    0 |",
    "+-------------------------------+----------------------+----------------------+",
    "index, name, memory.total [MiB], memory.used [MiB], memory.free [MiB], temperature.gpu, pstate, "
    "utilization.gpu [%], utilization.memory [%]",
    "0, Tesla V100-SXM2-32GB, 32510 MiB, 0 MiB, 32510 MiB, 27, P0, 0 %, 0 %")


def test_the_query_after_a_table_is_read() -> None:
    (g,) = parse_text("nvidia-smi-query", TABLE_THEN_QUERY)["gpus"]
    assert (g["name"], g["temperature_c"]["gpu"], g["performance_state"]) == ("Tesla V100-SXM2-32GB", 27.0, "P0")
    assert judge_text("nvidia-smi-query", TABLE_THEN_QUERY) == []


# --- perftest's later unit name, MiB/sec ---

# round2/ib_write_bw/strixhalowiki-bare-command-then-one-row-65536-3293.63-mibs-fdr-cx3-behind-pcie3-x4-no-header.txt
# (kyuz0/strixhalo-homelab: two ConnectX-3 cards on PCIe 3.0 x4 adapters, FDR 56 Gb/s)
MIB = _text("#bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]",
            " 65536      5000             3293.63            3293.56             0.052697")


def test_mib_per_second_is_perftests_two_to_the_twenty_bytes() -> None:
    (row,) = parse_text("ib_write_bw", MIB)["results"]
    assert round(row["bw_avg_gbps"], 2) == round(3293.56 * 1048576 * 8 / 1e9, 2) == 27.63


def test_half_the_fdr_line_rate_is_judged() -> None:
    findings = judge_text("ib_write_bw", MIB, {"ib_rate_gbps": 56})
    assert [f.check for f in findings] == ["ib_write_bw"] and "49% of the 56 Gb/s" in findings[0].message


# --- the GSP's RPCs failing with NV_ERR_GPU_IS_LOST: a lost GPU without an Xid ---

# round2/kernel-log/ninfer12-anthill-journal-us-ts-gsp-rpc-status-0xf-gspRmFree-failed-fullchip-reset-asserts-mid-
# paste.txt (Neroued/ninfer#12, host anthill)
GSP_LOST = _text(
    "Aug 10 22:40:59.893888 anthill kernel: NVRM: GPU0 _issueRpcAndWait: rpcSendMessage failed with status "
    "0x0000000f for fn 10 sequence 800!",
    "Aug 10 22:40:59.893943 anthill kernel: NVRM: GPU0 nvAssertFailedNoLog: Assertion failed: (status == NV_OK) || "
    "(status == NV_ERR_GPU_IN_FULLCHIP_RESET) @ vaspace_api.c:573")


def test_gsp_rpcs_failing_with_gpu_is_lost_fail_the_gpu() -> None:
    (ev,) = parse_text("kernel-log", GSP_LOST)["gpu_fatal"]
    assert (ev["gpu"], ev["what"]) == ("GPU0", "GSP RPC failed: GPU lost (NV_ERR_GPU_IS_LOST)")
    assert [k for k in _checks(judge_text("kernel-log", GSP_LOST)) if k[1] != "info"] == [
        ("kernel_gpu", "critical", "n1/GPU0")]


def test_a_gsp_rpc_failing_with_another_status_is_not_a_lost_gpu() -> None:
    text = GSP_LOST.replace("status 0x0000000f", "status 0x00000065")
    assert parse_text("kernel-log", text)["gpu_fatal"] == []


# --- a RoCE GID the kernel could not program ---

# round2/kernel-log/linuxrdma2023-cx6-vpi-eth-mode-set-roce-address-bad-parameter-syndrome-0x63c66-gid-add-failed-
# mlx5_2-mail-wrapped.txt (linux-rdma, 2023-07-18: a ConnectX-6 VPI in Ethernet mode), its lines unwrapped
GID = _text("[    9.863871] mlx5_core 0000:01:00.0: mlx5_cmd_out_err:803:(pid 1440): SET_ROCE_ADDRESS(0x761) "
            "op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x63c66), err(-22)",
            "[    9.881250] infiniband mlx5_2: add_roce_gid GID add failed port=1 index=0",
            "[    9.889095] __ib_cache_gid_add: unable to add gid fe80:0000:0000:0000:ad3e:e3ff:fe92:b31b error=-22")


def test_a_gid_add_failure_is_read_once_with_its_adapter() -> None:
    (ev,) = parse_text("kernel-log", GID)["roce_gid_failed"]
    assert (ev["ibdev"], ev["port"], ev["index"], ev["pci"]) == ("mlx5_2", 1, 0, "0000:01:00.0")


def test_a_gid_add_failure_fails_the_adapter() -> None:
    assert _checks(judge_text("kernel-log", GID)) == [("kernel_net", "critical", "n1/mlx5_2 0000:01:00.0")]


def test_the_cache_line_alone_is_a_gid_add_failure_too() -> None:
    text = _text("[    9.889095] __ib_cache_gid_add: unable to add gid fe80:0000:0000:0000:ad3e:e3ff:fe92:b31b "
                 "error=-22")
    assert _checks(judge_text("kernel-log", text)) == [("kernel_net", "critical", "n1")]
