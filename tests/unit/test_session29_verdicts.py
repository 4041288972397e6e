"""Session 29 (issue 29): rules reached at every depth they apply, and the rules written from the rest's misses.

Expected values are read off the text of each capture (quoted here or read from tests/corpus, with its source); a
derived form is what the named tool prints for that case."""

from __future__ import annotations

from conftest import finding_keys as _checks
from conftest import judge_text, parse_text
from conftest import text_of as _text

# --- the enforced power limit held below the requested one, where no default limit is shown ---

# the query form of round2/nvidia-smi-q/slurmappliance975-root-prompt-q-d-power-595.71.05-4gpu-first-06-00-current-500w-
# requested-default-700w-elided.txt (stackhpc/ansible-slurm-appliance#975: 500 W enforced of 700 W requested), as
# 'nvidia-smi --query-gpu=pci.bus_id,name,power.limit,enforced.power.limit --format=csv' prints it: no default limit
HELD_QUERY = _text("pci.bus_id, name, power.limit [W], enforced.power.limit [W]",
                   "00000000:06:00.0, NVIDIA H100 80GB HBM3, 700.00 W, 500.00 W",
                   "00000000:07:00.0, NVIDIA H100 80GB HBM3, 700.00 W, 700.00 W")


def test_a_held_limit_is_judged_without_a_default_limit_shown() -> None:
    findings = [f for f in judge_text("nvidia-smi-query", HELD_QUERY) if f.check == "gpu_power"]
    assert [f.severity for f in findings] == ["warning"]
    assert "enforced power limit 500 W is below the 700 W requested" in findings[0].message
    assert "00000000:06:00.0" in findings[0].message


def test_a_lowered_requested_limit_is_one_finding_not_two() -> None:
    # the operator's own 'nvidia-smi -pl 300' on a 700 W board, enforced at 250 W: the lowered limit explains it
    text = _text("pci.bus_id, name, power.limit [W], enforced.power.limit [W], power.default_limit [W]",
                 "00000000:06:00.0, NVIDIA H100 80GB HBM3, 300.00 W, 250.00 W, 700.00 W")
    findings = [f for f in judge_text("nvidia-smi-query", text) if f.check == "gpu_power"]
    assert len(findings) == 1 and "below the board's default 700 W" in findings[0].message


def test_a_grace_hopper_module_is_not_held_without_a_default_shown() -> None:
    # GH200: 700 W enforced of 900 W requested by design (the module's budget shared with the Grace CPU)
    text = _text("pci.bus_id, name, power.limit [W], enforced.power.limit [W]",
                 "00000009:01:00.0, NVIDIA GH200 480GB, 900.00 W, 700.00 W")
    assert [f for f in judge_text("nvidia-smi-query", text) if f.check == "gpu_power"] == []


# --- the application's NCCL result line is the parser's own key; the check has no pattern of its own ---

# tests/corpus/gpu/nccl-log/nccltests287-2x5090-debug-info-failure.txt (NVIDIA/nccl-tests#287: two RTX 5090 of one
# host), a line of its device table, an INFO line (longer than a mail wrap's width) and nccl-tests' own line of the
# failed call's result
APP_LINE = "GENOA-06: Test NCCL failure common.cu:392 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '"
APP = _text("#  Rank  0 Group  0 Pid   4766 on   GENOA-06 device  0 [0x21] NVIDIA GeForce RTX 5090",
            "GENOA-06:4766:4780 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. "
            "Using internal network plugin.",
            APP_LINE)


def test_the_applications_result_line_is_marked_by_the_parser() -> None:
    summary = parse_text("nccl-log", APP)
    assert summary["app_errors"] == [APP_LINE]
    assert APP_LINE in summary["warnings"]  # still an error line of the job


def test_the_applications_result_line_is_not_named_as_an_nccl_warn() -> None:
    (failed,) = [f for f in judge_text("nccl-log", APP) if f.severity == "critical"]
    assert "the application's NCCL call returned" in failed.message
    assert "after NCCL WARN" not in failed.message  # nccl-tests' line is the result, not NCCL's WARN of a cause


def test_ncclS_own_warn_before_the_result_is_named_as_its_cause() -> None:
    warn = "GENOA-06:4766:4781 [1] transport/p2p.cc:275 NCCL WARN Cuda failure 'invalid device ordinal'"
    text = APP.replace(APP_LINE, f"{warn}\n{APP_LINE}")
    (failed,) = [f for f in judge_text("nccl-log", text) if f.severity == "critical"]
    assert "Cuda failure 'invalid device ordinal'" in failed.message


# --- kernel messages of a lost or failing device, each read where it stood unjudged ---

def _kernel(*lines: str) -> list[tuple[str, str, str]]:
    """The verdict's findings of a kernel log (not its notes: lines without a time are read, the flap count says so)."""
    return sorted(k for k in _checks(judge_text("kernel-log", _text(*lines))) if k[1] != "info")


def test_a_gpu_without_its_power_cables_is_lost() -> None:
    # open-gpu-kernel-modules' RmInitAdapter on NV_ERR_INSUFFICIENT_POWER: 'GPU does not have the necessary power
    # cables connected.' (a Tesla P40's 8-pin left unplugged; the RmInitAdapter line after it can be grep'd away)
    line = "[   12.104511] NVRM: GPU 0000:13:00.0: GPU does not have the necessary power cables connected."
    findings = judge_text("kernel-log", _text(line))
    assert _checks(findings) == [("kernel_gpu", "critical", "n1/0000:13:00.0")]
    assert "power cables are not connected" in findings[0].message


def test_ipoib_transmit_timeout_is_a_stopped_queue() -> None:
    # Leon Romanovsky's netdev patch to dev_watchdog (2020) quotes an IPoIB interface's watchdog report:
    # '[  281.260866] ib1: transmit timeout: latency 1120 msecs'
    assert _kernel("[  281.260866] ib1: transmit timeout: latency 1120 msecs",
                   "[  281.262730] ib1: queue stopped 1, tx_head 167838, tx_tail 167710") == [
        ("kernel_net", "critical", "n1/ib1")]


def test_a_dpc_containment_of_err_fatal_is_a_fatal_pcie_error_of_its_source() -> None:
    # Linux 5.19+ (drivers/pci/pcie/dpc.c): the port names the device whose ERR_FATAL it contained, no AER line
    assert _kernel("pcieport 0015:00:00.0: DPC: containment event, status:0x200d, ERR_FATAL received from 0015:01:00.0",
                   "pcieport 0015:00:00.0: AER: broadcast error_detected message") == [
        ("kernel_pcie", "critical", "n1/0015:01:00.0")]


def test_the_older_dpc_form_names_the_source_by_its_bus_and_devfn() -> None:
    # before 5.19: 'source:0x3400' is bus 0x34, device 0, function 0 under the port's domain
    assert _kernel("[  245.287466] pcieport 0000:30:03.0: DPC: containment event, status:0x0005 source:0x3400",
                   "[  245.295372] pcieport 0000:30:03.0: DPC: ERR_FATAL detected",
                   "[  245.307540] nvme nvme0: frozen state error detected, reset controller") == [
        ("kernel_pcie", "critical", "n1/0000:34:00.0")]


def test_a_dpc_of_an_unmasked_error_is_judged_by_its_aer_lines() -> None:
    assert _kernel("[   50.947816] pcieport 0000:00:1b.0: DPC: containment event, status:0x1f01 source:0x0000",
                   "[   50.947817] pcieport 0000:00:1b.0: DPC: unmasked uncorrectable error detected",
                   "[   50.947829] pcieport 0000:00:1b.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), "
                   "type=Transaction Layer, (Receiver ID)") == [("kernel_pcie", "warning", "n1/0000:00:1b.0")]


def test_an_mlx5_temperature_warning_degrades_the_adapter() -> None:
    # mlx5_core's events.c temp_warn ('High temperature on sensors with bit set %llx %llx'), both functions of one card
    warn = "temp_warn:170:(pid 0): High temperature on sensors with bit set 0 1"
    lines = (f"[   51.227747] mlx5_core 0000:41:00.1: {warn}", f"[   51.227791] mlx5_core 0000:41:00.0: {warn}")
    assert _kernel(*lines) == [
        ("kernel_net", "warning", "n1/0000:41:00.0"), ("kernel_net", "warning", "n1/0000:41:00.1")]


def test_x86_and_arm64_oops_heads_are_crashes() -> None:
    # x86 die() names its trap ('invalid opcode: 0000 [#1] SMP' is a BUG()'s ud2: open-mpi users list 2010/05/12907,
    # round2/kernel-log/ompiusers12907-...); arm64's __die() prints 'Internal error: Oops: ... [#1]'
    for head in ("invalid opcode: 0000 [#1] SMP", "stack segment: 0000 [#1] SMP NOPTI",
                 "Internal error: Oops: 0000000096000004 [#1] PREEMPT SMP",
                 "Unable to handle kernel NULL pointer dereference at virtual address 0000000000000008"):
        assert _kernel(f"[  100.123456] {head}") == [("kernel_oops", "critical", "n1")], head


def test_a_driver_line_naming_an_opcode_is_no_oops() -> None:
    assert _kernel("[    5.000000] mlx5_core 0000:17:00.0: firmware version: 28.39.1002") == []


def test_an_rcu_stall_degrades_the_node() -> None:
    # open-mpi users list 2013/04/21462 (round2/kernel-log/ompiusers21462-...): the stall detector names CPUs 12, 13
    findings = judge_text("kernel-log", _text(
        "[ 1273.079260] INFO: rcu_sched detected stalls on CPUs/tasks: { 12 13} (detected by 17, t=60002 jiffies)"))
    assert [(f.check, f.severity) for f in findings] == [("kernel_task", "warning")]
    assert "CPU 12, CPU 13" in findings[0].message


def test_a_kernel_panic_fails_the_node() -> None:
    # open-mpi users list 2015/02/26375 (round2/kernel-log/ompiusers26375-...): syslogd's console broadcast
    findings = judge_text("kernel-log", _text("Message from syslogd@localhost at Feb 23 22:42:17 ...",
                                              " kernel:Kernel panic - not syncing: Out of memory: system-wide "
                                              "panic_on_oom is enabled"))
    (panic,) = [f for f in findings if f.severity != "info"]
    assert (panic.check, panic.severity) == ("kernel_task", "critical")
    assert "Out of memory" in panic.message


def test_the_host_of_a_journals_lines_is_named_in_each_finding() -> None:
    # open-gpu-kernel-modules#688 (round2/kernel-log/ogkm688-...): journal lines of one DGX Station
    line = ("Feb 17 08:02:06 abggdna-DGX-Station-A100 kernel: NVRM: _issueRpcAndWait: rpcSendMessage failed with "
            "status 0x0000000f for fn 76!")
    assert parse_text("kernel-log", _text(line))["named_host"] == {"host": "abggdna-DGX-Station-A100",
                                                                   "by": "syslog line head"}


def test_lines_of_two_hosts_name_none() -> None:
    text = _text("Feb 17 08:02:06 gpu01 kernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05",
                 "Feb 17 08:02:07 gpu02 kernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05")
    assert "named_host" not in parse_text("kernel-log", text)


def test_a_mail_archives_at_in_a_prompt_is_a_prompt() -> None:
    # the Open MPI list archive writes a prompt's '@' as '_at_' (users 2009/10768, round2/proc-limits/ompiusers2009-...)
    assert _checks(judge_text("proc-limits", _text("asnrcw_at_dmc129:~> ulimit -l", "unlimited"))) == []
    assert _checks(judge_text("proc-limits", _text("[root_at_node01 ~]# ulimit -l", "64"))) == [
        ("memlock", "warning", "n1/process")]


# --- a coding agent's transcript of a shell tool call ---

# round2/sinfo/clipccbench-claude-code-transcript-...: Claude Code's call, its result marker and collapsed rest
AGENT = _text('● Bash(sinfo -o "%P %D %N %G %l %C" | head -20)',
              "  ⎿  PARTITION NODES NODELIST GRES TIMELIMIT CPUS(A/I/O/T)",
              "     all-gpu 5 g[001-005] gpu:2 14-00:00:00 48/144/48/240",
              "     all-gpu 2 lg[001-002] gpu:4 14-00:00:00 48/0/48/96",
              "     … +2 lines (ctrl+o to expand)")


def test_an_agent_transcript_is_read_as_a_shell_session() -> None:
    from ccparse.capture import clean_capture

    cleaned = clean_capture(AGENT, "sinfo")
    assert cleaned.commands == ['sinfo -o "%P %D %N %G %l %C" | head -20']
    assert cleaned.elided  # the display's collapsed rest is the paster's '...'
    assert cleaned.text.split("\n")[1].split() == ["PARTITION", "NODES", "NODELIST", "GRES", "TIMELIMIT",
                                                   "CPUS(A/I/O/T)"]


# --- sinfo's summary counts: allocated / idle / other / total ---

def test_cpus_counted_other_degrade_without_naming_a_node() -> None:
    findings = judge_text("sinfo", AGENT)
    assert [(f.check, f.severity, f.subject) for f in findings if f.severity != "info"] == [
        ("slurm_node_state", "warning", "n1")]
    assert "96 cpus counted Other" in findings[0].message


def test_a_summary_without_other_is_healthy() -> None:
    # UC Davis' Hive (round2/sinfo/ucdavisdatalab-remote-computing-hive-...): sinfo --summarize, every node idle
    text = _text("sinfo --summarize", "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST",
                 "low          up 1-00:00:00          0/8/0/8 hive-dc-7-10-[18,22,26,30,42,46,50,54]",
                 "high*        up 30-00:00:0          0/8/0/8 hive-dc-7-10-[18,22,26,30,42,46,50,54]")
    assert parse_text("sinfo", text)["aiot_counts"][1] == {
        "partition": "high", "avail": "up", "counted": "nodes", "allocated": 0, "idle": 8, "other": 0, "total": 8,
        "nodelist": "hive-dc-7-10-[18,22,26,30,42,46,50,54]", "line": 4}
    assert [f for f in judge_text("sinfo", text) if f.severity != "info"] == []


def test_a_summary_partition_down_is_judged() -> None:
    text = _text("PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST",
                 "gpu        down 2-00:00:00          0/4/0/4 gpu[01-04]")
    assert _checks(judge_text("sinfo", text)) == [("slurm_partition", "warning", "gpu")]


# --- concatenated one-field --query-gpu runs ---

# round2/nvidia-smi-query/zabbixint6-four-single-field-queries-...: each run's command line, then its answer
RUNS = _text(" nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0", "16130",
             " nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i 0", "0")


def test_one_field_runs_are_read_as_one_query() -> None:
    gpu = parse_text("nvidia-smi-query", RUNS)["gpus"][0]
    assert gpu["utilization_pct"]["gpu"] == 0


def test_header_and_value_pairs_are_read_as_one_query() -> None:
    # possatti/collectd-nvidia-smi's sample (round2/nvidia-smi-query/possatti-collectd-...): each field's header line
    # then its value; a value that looks dotted ('G001.0000.01.04', an InfoROM image) is no header
    text = _text("name", "GeForce GTX 1060 6GB", "pci.bus_id", "00000000:01:00.0", "inforom.img", "G001.0000.01.04",
                 "pcie.link.width.current", "8", "pcie.link.width.max", "16", "utilization.gpu [%]", "3 %")
    findings = judge_text("nvidia-smi-query", text)
    assert [(f.check, f.severity) for f in findings] == [("gpu_pcie", "warning")]
    assert "x8, device maximum x16 (00000000:01:00.0)" in findings[0].message


# --- topo -m whose tabs a web page's copy lost ---

def test_glued_topo_columns_are_split() -> None:
    # vllm-project/vllm#6737 (round2/nvidia-smi-topo/vllm6737-...): 'NIC6NIC7' in the header, 'SYSSYS' in the rows
    text = _text("\tGPU0\tGPU1\tNIC0\tNIC1NIC2\tCPU Affinity\tNUMA Affinity",
                 "GPU0\t X \tNV8\tPIX\tSYSSYS\t0-47\t0",
                 "GPU1\tNV8\t X \tSYS\tPIXSYS\t0-47\t0")
    data = parse_text("nvidia-smi-topo", text)
    assert [g["links"] for g in data["gpus"]][1] == {"GPU0": "NV8", "NIC0": "SYS", "NIC1": "PIX", "NIC2": "SYS"}


# --- nccl-tests rows without a rank list: the run's own busbw/algbw says how many ranks it had at least ---

# NVIDIA/nccl-tests#78 (round2/nccl-tests/nccltests78-ngc7292-8node-...): eight nodes of eight V100 on a 100 Gb/s
# InfiniBand fabric (the comment says so); the rows and trailer as pasted, without the device list
ROWS78 = _text(
    "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
    "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    "   268435456      67108864     float     sum   122131    2.20    4.33  2e-06   122165    2.20    4.33  2e-06",
    "   536870912     134217728     float     sum   244833    2.19    4.32  2e-06   244844    2.19    4.32  2e-06",
    "# Out of bounds values : 0 OK",
    "# Avg bus bandwidth    : 4.32178")
SPEC78 = {"gpus_per_node": 8, "fabric": "infiniband", "ib_rate_gbps": 100}


def test_a_run_below_half_of_one_ports_line_rate_fails() -> None:
    findings = [f for f in judge_text("nccl-tests", ROWS78, SPEC78) if f.check == "nccl_busbw"]
    assert [f.severity for f in findings] == ["critical"]
    assert "inter-node, at least 58 (by busbw/algbw) ranks" in findings[0].message  # 2/(2 - 4.325/2.195)
    assert "35% of one 100 Gb/s port's 12.5 GB/s line rate" in findings[0].message


def test_without_a_line_rate_the_run_has_no_floor() -> None:
    spec = {k: v for k, v in SPEC78.items() if k != "ib_rate_gbps"}
    assert [f.severity for f in judge_text("nccl-tests", ROWS78, spec) if f.check == "nccl_busbw"] == ["info"]


def test_eight_ranks_by_the_ratio_stay_inside_a_node() -> None:
    # busbw/algbw = 1.75 is 2(n-1)/n for n = 8: one node's GPUs, not judged against a port's line rate
    rows = ROWS78.replace("2.20    4.33", "2.20    3.85").replace("2.19    4.32", "2.20    3.85")
    findings = [f for f in judge_text("nccl-tests", rows, SPEC78) if f.check == "nccl_busbw"]
    assert [f.severity for f in findings] == ["info"] and "intra-node" in findings[0].message


# --- kernel log forms and messages of blind batches 129-136 ---

def test_the_printk_caller_after_the_time_is_read() -> None:
    # a HiSilicon arm64 server's oops (round2/kernel-log/linuxpci2026-hisilicon-...): CONFIG_PRINTK_CALLER's '[ T2808]'
    assert _kernel("[ 1484.742859][ T2808] Unable to handle kernel NULL pointer dereference at virtual address "
                   "0000000000000010") == [("kernel_oops", "critical", "n1")]


def test_an_aer_recovery_that_gave_up_fails_the_device() -> None:
    # linux-pci 2020 (round2/kernel-log/linuxpci2020-b450-...): a non-fatal error whose recovery failed
    found = _kernel("[   55.679423] amdgpu 0000:0a:00.0: AER: can't recover (no error_detected callback)",
                    "[   55.679455] pcieport 0000:00:03.1: AER: device recovery failed")
    assert found == [("kernel_pcie", "critical", "n1/0000:0a:00.0")]


def test_an_intel_nics_lost_pcie_link_is_a_removed_adapter() -> None:
    # intel-wired-lan 2024 (round2/kernel-log/iwl2024-x670e-igc-...): dmesg -T in a German locale ('So' is Sunday)
    assert _kernel("[So Feb 25 13:36:36 2024] igc 0000:0b:00.0 eno1: PCIe link lost, device now detached") == [
        ("kernel_net", "critical", "n1/0000:0b:00.0")]


def test_bridges_gone_behind_a_link_that_did_not_train_are_lost_not_unplugged() -> None:
    # linux-pci 2023 (round2/kernel-log/linuxpci2023-intel-dg2-...): an Arc A770's own switch and GPU after resume
    lines = ("[ 15.049948] pcieport 0000:00:01.0: Data Link Layer Link Active not set in 1000 msec",
             "[ 15.050024] pcieport 0000:01:00.0: Unable to change power state from D3cold to D0, device inaccessible",
             "[ 17.286576] vfio-pci 0000:03:00.0: Unable to change power state from D3cold to D0, device inaccessible")
    assert _kernel(*lines) == [("kernel_pcie", "critical", "n1/0000:01:00.0"),
                               ("kernel_pcie", "critical", "n1/0000:03:00.0")]
    # without the port's line: a subtree unplugged at once (session 22's dock), a note
    assert _kernel(*lines[1:]) == []


def test_dmesg_h_with_a_decimal_comma_is_read() -> None:
    # linux-nvme 2020 (round2/kernel-log/linuxnvme2020-...): '[  +0,000089] INFO: task ... blocked for more than 120 s'
    assert _kernel("[  +0,000089] INFO: task kworker/u593:0:82293 blocked for more than 120 seconds.") == [
        ("kernel_task", "warning", "n1")]


# --- NCCL logs of blind batches 129-136 ---

def test_gpu_pairs_without_p2p_degrade_the_node() -> None:
    # huggingface/transformers#15618 (round2/nccl-log/transformers15618-...): neighbouring GPUs without peer access
    text = _text("ava-s0:537554:537627 [1] NCCL INFO Could not enable P2P between dev 1(=1b000) and dev 0(=1a000)",
                 "ava-s0:537558:537635 [5] NCCL INFO Could not enable P2P between dev 5(=89000) and dev 4(=88000)",
                 "ava-s0:537558:537635 [5] NCCL INFO Could not enable P2P between dev 5(=89000) and dev 4(=88000)")
    assert parse_text("nccl-log", text)["p2p_not_enabled"] == [["1a000", "1b000"], ["88000", "89000"]]
    findings = judge_text("nccl-log", text)
    assert [(f.check, f.severity) for f in findings] == [("nccl_p2p", "warning")]
    assert "2 GPU pair(s) (1a000/1b000, 88000/89000)" in findings[0].message


def test_a_log_of_ncclS_settings_alone_holds_nothing_to_judge() -> None:
    # mlcommons/training_results v2.1, Azure (round2/nccl-log/mlperf21-...): NCCL_DEBUG_SUBSYS=ENV's lines only
    text = _text("ip-0A23040B:84438:84438 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0",
                 "ip-0A23040B:84438:84438 [0] NCCL INFO NCCL_IB_PCI_RELAXED_ORDERING set by environment to 1.")
    findings = judge_text("nccl-log", text)
    assert [(f.check, f.severity) for f in findings] == [("coverage", "info")]
    assert "NCCL's settings only" in findings[0].message
