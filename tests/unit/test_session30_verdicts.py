"""Session 30 (issue 29): the rules written from the rest's misses of blind batches 137-142.

Expected values are read off the text of each capture (quoted here or read from tests/corpus, with its source); a
derived form is what the named tool prints for that case."""

from __future__ import annotations

from conftest import corpus_capture, judge_text, parse_text
from conftest import text_of as _text

# --- x86 machine checks: the bank's status says whether the hardware corrected the error ---

# round2/kernel-log/aslab-kb123-opteron-console-mce-4-bank4-tsc-addr-kernel-panic-not-syncing-machine-check.txt
# (https://www.aslab.com/support/kb/123.html): console lines with no timestamp or syslog head
MCE_PANIC = _text("CPU 1: Machine Check Exception: 4 Bank 4: f60c200100000813",
                  "TSC 377366e1b8aa ADDR 1fef51800",
                  "Kernel panic - not syncing: Machine check")


def test_console_lines_of_a_machine_check_panic_are_a_kernel_log() -> None:
    summary = parse_text("kernel-log", MCE_PANIC)
    # f60c2001...: bit 61 (UC) and bit 57 (PCC) are set (0xf6 = 1111 0110 in the top byte)
    [mce] = summary["machine_checks"]
    assert (mce["cpu"], mce["bank"], mce["status"]) == (1, 4, "f60c200100000813")
    assert mce["uncorrected"] and mce["context_corrupt"]
    assert [p["why"] for p in summary["panics"]] == ["Machine check"]


def test_an_uncorrected_machine_check_fails_the_node_naming_cpu_and_bank() -> None:
    findings = [f for f in judge_text("kernel-log", MCE_PANIC) if f.check == "kernel_mce"]
    assert [(f.severity, f.subject.split("/", 1)[1]) for f in findings] == [("critical", "CPU 1 bank 4")]
    assert "not corrected" in findings[0].message


def test_a_corrected_machine_check_is_a_warning() -> None:
    # __print_mce's form without 'Exception' (MCIP clear); status 8c00004000010091: VAL, EN, MISCV set, UC/PCC clear
    # (0x8c = 1000 1100: bits 63, 59, 58), as mcelog's corrected memory read error on an Intel bank 5
    text = "[  312.114510] mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 5: 8c00004000010091"
    findings = [f for f in judge_text("kernel-log", text) if f.check == "kernel_mce"]
    assert [f.severity for f in findings] == ["warning"] and "corrected by the hardware" in findings[0].message


def test_a_machine_check_without_a_bank_status_is_not_one() -> None:
    # the polling summary carries no status: nothing to judge
    text = "[  312.114510] mce: [Hardware Error]: Machine check events logged"
    assert parse_text("kernel-log", text)["machine_checks"] == []


# --- a --query-gpu command line the terminal wrapped at its width ---

# round2/nvidia-smi-query/beszel262-working-host-noheader-nounits-2x-rtx2080ti-535.183.01-idle.txt
# (henrygd/beszel#262, the commenter's "Working system" block)
WRAPPED = _text("$ nvidia-smi --query-gpu=index,name,temperature.gpu,memory.used,memory.total,utilizat",
                "ion.gpu,power.draw --format=csv,noheader,nounits",
                "0, NVIDIA GeForce RTX 2080 Ti, 36, 633, 11264, 0, 29.54",
                "1, NVIDIA GeForce RTX 2080 Ti, 28, 225, 11264, 0, 3.03")


def test_a_wrapped_query_command_names_the_fields() -> None:
    summary = parse_text("nvidia-smi-query", WRAPPED)
    assert summary["fields"] == ["index", "name", "temperature.gpu", "memory.used", "memory.total",
                                 "utilization.gpu", "power.draw"]
    assert [g["temperature_c"]["gpu"] for g in summary["gpus"]] == [36, 28]
    assert [f for f in judge_text("nvidia-smi-query", WRAPPED) if f.severity != "info"] == []


def test_skx_edac_machine_check_events_are_corrected_errors_per_bank() -> None:
    # round2/kernel-log/edac-tluck-icelake-skx-edac-corrected-mc-events-4-controllers-injected-grep-crlf.txt
    # (linux-edac, Jan 2026): status 0x8c... has UC (bit 61) and PCC (bit 57) clear
    text = _text("[  662.632988] EDAC skx MC4: CPU 40: Machine Check Event: 0x0 Bank 13: 0x8c00014200800090",
                 "[  662.727377] EDAC skx MC6: CPU 40: Machine Check Event: 0x0 Bank 21: 0x8c0000c200800090",
                 "[  990.283484] EDAC skx MC4: CPU 121: Machine Check Event: 0x0 Bank 13: 0x8c00010200800090")
    findings = [f for f in judge_text("kernel-log", text) if f.check == "kernel_mce"]
    assert sorted((f.severity, f.subject.split("/", 1)[1]) for f in findings) == [
        ("warning", "bank 13"), ("warning", "bank 21")]
    [bank13] = [f for f in findings if f.subject.endswith("bank 13")]
    assert bank13.message.startswith("2 machine check(s) on bank 13") and "CPU 40, CPU 121" in bank13.message


# --- memory: firmware (GHES) error records and memory without ECC ---

# round2/kernel-log/edac-sr650-kdump-kernel-ghes-fatal-memory-error-dimm8-panic-elided.txt (linux-edac, Nov 2020)
GHES = _text("[    2.610529] {1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 4",
             "[    2.611493] {1}[Hardware Error]: event severity: fatal",
             "[    2.611493] {1}[Hardware Error]:  Error 0, type: fatal",
             "[    2.611493] {1}[Hardware Error]:  fru_text: Card03, ChnA, DIMM0",
             "[    2.611493] {1}[Hardware Error]:   section_type: memory error",
             "[    2.611493] {1}[Hardware Error]:   error_status: 0x0000000000000000",
             "[    2.611493] {1}[Hardware Error]:   physical_address: 0x0000005c7a4df000",
             "[    2.611493] {1}[Hardware Error]:   DIMM location: CPU 1 DIMM 8 ",
             "[    2.611493] Kernel panic - not syncing: Fatal hardware error!")


def test_a_fatal_firmware_memory_record_names_its_dimm() -> None:
    findings = judge_text("kernel-log", GHES)
    memory = [f for f in findings if f.check == "kernel_memory"]
    assert [(f.severity, f.subject.split("/", 1)[1]) for f in memory] == [("critical", "CPU 1 DIMM 8")]
    assert "uncorrected" in memory[0].message


def test_a_corrected_firmware_record_of_a_pcie_error_is_no_memory_error() -> None:
    text = GHES.replace("event severity: fatal", "event severity: corrected").replace(
        "section_type: memory error", "section_type: PCIe error")
    assert [f for f in judge_text("kernel-log", text) if f.check == "kernel_memory"] == []


def test_memory_without_ecc_is_degraded() -> None:
    # round2/kernel-log/edac-bp-epyc-128cpu-amd64-edac-f17h-8-nodes-dram-ecc-disabled-grep.txt (linux-edac, Dec 2020)
    text = _text("[    2.693470] EDAC MC: Ver: 3.0.0",
                 "[    8.284461] EDAC amd64: F17h detected (node 0).",
                 "[    8.287953] EDAC amd64: Node 0: DRAM ECC disabled.",
                 "[    8.381430] EDAC amd64: F17h detected (node 1).",
                 "[    8.384684] EDAC amd64: Node 1: DRAM ECC disabled.")
    assert [e["node"] for e in parse_text("kernel-log", text)["ecc_disabled"]] == ["0", "1"]
    findings = [f for f in judge_text("kernel-log", text) if f.check == "kernel_memory"]
    assert [f.severity for f in findings] == ["warning"] and "node(s) 0, 1" in findings[0].message


# --- amdgpu's failed recovery of a hung GPU ---

def test_a_failed_amdgpu_reset_loses_the_gpu() -> None:
    # round2/kernel-log/iommu-emerson-mcom10-raven-r1305g-ring-gfx-timeout-psp-resume-failed-gpu-reset-failed-crlf.txt
    text = _text("[   52.772466] amdgpu 0000:0b:00.0: GPU reset begin!",
                 "[   53.933861] amdgpu 0000:0b:00.0: GPU reset succeeded, trying to resume",
                 "[   78.098041] [drm:psp_resume [amdgpu]] *ERROR* PSP resume failed",
                 "[   78.098418] amdgpu 0000:0b:00.0: GPU reset(2) failed",
                 "[   78.098999] amdgpu 0000:0b:00.0: GPU reset end with ret = -22")
    findings = [f for f in judge_text("kernel-log", text) if f.check == "kernel_gpu"]
    assert [(f.severity, f.subject.split("/", 1)[1]) for f in findings] == [("critical", "0000:0b:00.0")]
    assert findings[0].message.startswith("amdgpu driver lost")


def test_a_successful_amdgpu_reset_is_not_a_lost_gpu() -> None:
    text = _text("[   52.772466] amdgpu 0000:0b:00.0: GPU reset begin!",
                 "[   53.933861] amdgpu 0000:0b:00.0: GPU reset succeeded, trying to resume")
    assert [f for f in judge_text("kernel-log", text) if f.check == "kernel_gpu"] == []


# --- nccl-tests on one rank: no bus bandwidth measured ---

# round2/nccl-tests/mlperf50-supermicro-b200-alltoall-one-rank-busbw-zero.txt (mlcommons/training_results_v5.0,
# Supermicro SYS-A21GE-NBRT): the MPI build's binary, one rank, busbw 0.00
ONE_RANK = corpus_capture("round2", "nccl-tests/mlperf50-supermicro-b200-alltoall-one-rank-busbw-zero.txt")


def test_an_mpi_builds_binary_names_the_collective() -> None:
    assert parse_text("nccl-tests", ONE_RANK)["collective"] == "alltoall_perf"


def test_one_rank_without_bus_bandwidth_cannot_be_judged() -> None:
    findings = judge_text("nccl-tests", ONE_RANK)
    assert [f.check for f in findings] == ["coverage"]
    assert findings[0].message.startswith("cannot judge: nothing judgeable: nccl-tests alltoall ran on a single rank")


# --- a local disk's errors: lost, failing I/O, stalled, or one worn sector ---

# round2/kernel-log/blklist2021-fedora-5-12-rc8-nvme0-controller-is-down-csts-ffffffff-removed-xfs-shutdown-after-usb-
# headset.txt (linux-block, 2021): lines as the mail quotes them (cut at its wrap width)
NVME_LOST = _text("[  517.603789] nvme nvme0: controller is down; will reset:",
                  "[  517.636899] nvme nvme0: Removing after probe failure status: -19",
                  "[  517.654772] nvme0n1: detected capacity change from 937703088 to 0",
                  "[  517.654778] blk_update_request: I/O error, dev nvme0n1, sector",
                  "[  517.654795] XFS (nvme0n1p2): log I/O error -5")


def test_a_removed_nvme_controller_is_a_lost_disk() -> None:
    findings = [f for f in judge_text("kernel-log", NVME_LOST) if f.check == "kernel_storage"]
    assert sorted((f.severity, f.subject.split("/", 1)[1]) for f in findings) == [
        ("critical", "nvme0"), ("critical", "nvme0n1")]
    assert "gave the disk up" in next(f.message for f in findings if f.subject.endswith("/nvme0"))


def test_nvme_timeouts_without_timestamps_are_a_stalled_disk() -> None:
    # round2/kernel-log/blklist2022-6-2-rc1-thinkpad-x1-nvme0-qid2-timeouts-reset-controller-quoted-gt-no-timestamps.txt
    text = _text("> nvme nvme0: I/O 0 (I/O Cmd) QID 2 timeout, aborting",
                 "> nvme nvme0: I/O 1 (I/O Cmd) QID 2 timeout, aborting",
                 "> nvme nvme0: I/O 2 (I/O Cmd) QID 2 timeout, aborting",
                 "> nvme nvme0: Abort status: 0x0",
                 "> nvme nvme0: I/O 0 QID 2 timeout, reset controller")
    summary = parse_text("kernel-log", text)
    assert [e["kind"] for e in summary["storage_errors"]] == ["timeout"] * 4
    findings = [f for f in judge_text("kernel-log", text) if f.check == "kernel_storage"]
    assert [(f.severity, f.subject.split("/", 1)[1]) for f in findings] == [("critical", "nvme0")]


def test_one_nvme_timeout_is_watched() -> None:
    text = "[   92.196122] nvme nvme0: I/O 512 (I/O Cmd) QID 1 timeout, aborting"
    assert [f.severity for f in judge_text("kernel-log", text) if f.check == "kernel_storage"] == ["warning"]


def test_one_unreadable_sector_is_a_worn_disk_not_a_failed_one() -> None:
    # round2/kernel-log/raidlist2020-ata6-sdd-read-fpdma-queued-unc-medium-error-auto-reallocate-failed-one-sector.txt
    text = _text("[  255.128687] ata6.00: exception Emask 0x0 SAct 0x8000 SErr 0x0 action 0x0",
                 "[  255.128702] ata6.00: failed command: READ FPDMA QUEUED",
                 "[  255.128723] ata6.00: error: { UNC }",
                 "[  255.129947] sd 5:0:0:0: [sdd] tag#15 Sense Key : Medium Error [current] ",
                 "[  255.129952] sd 5:0:0:0: [sdd] tag#15 Add. Sense: Unrecovered read error - auto reallocate failed",
                 "[  255.129959] print_req_error: I/O error, dev sdd, sector 2160",
                 "[  255.129993] ata6: EH complete")
    findings = [f for f in judge_text("kernel-log", text) if f.check == "kernel_storage"]
    assert sorted((f.severity, f.subject.split("/", 1)[1]) for f in findings) == [
        ("warning", "ata6.00"), ("warning", "sdd")]


def test_a_cd_or_floppy_io_error_is_no_disk_error() -> None:
    text = _text("[    5.100000] blk_update_request: I/O error, dev fd0, sector 0",
                 "[    5.200000] I/O error, dev sr0, sector 0 op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 0")
    assert parse_text("kernel-log", text)["storage_errors"] == []


# --- a task hung inside the GPU driver ---

# round2/kernel-log/k8sdp77-hung-task-nvc-driver-d-state-uvm-gpu-retain-by-uuid-mutex-mid-paste-cut.txt
# (NVIDIA/k8s-device-plugin#77)
HUNG_UVM = _text("[  721.028170] INFO: task nvc:[driver]:5403 blocked for more than 120 seconds.",
                 "[  721.028229]       Tainted: P           O    4.4.146-1.el7.elrepo.x86_64 #1",
                 "[  721.028346] Call Trace:",
                 "[  721.028368]  [<ffffffff8170de85>] schedule+0x35/0x80",
                 "[  721.028383]  [<ffffffff8170fd3f>] mutex_lock+0x1f/0x2f",
                 "[  721.028422]  [<ffffffffa09c376e>] uvm_gpu_retain_by_uuid+0x1e/0x40 [nvidia_uvm]")


def test_a_task_hung_in_the_gpu_driver_fails_the_node() -> None:
    [hung] = parse_text("kernel-log", HUNG_UVM)["hung_tasks"]
    assert (hung["task"], hung["pid"], hung["gpu_driver"]) == ("nvc:[driver]", 5403, "nvidia_uvm")
    findings = [f for f in judge_text("kernel-log", HUNG_UVM) if f.check == "kernel_task"]
    assert [f.severity for f in findings] == ["critical"] and "inside the GPU driver (nvidia_uvm" in findings[0].message


def test_a_task_hung_on_a_file_system_stays_degraded() -> None:
    text = HUNG_UVM.replace("uvm_gpu_retain_by_uuid+0x1e/0x40 [nvidia_uvm]", "nfs_wait_bit_killable+0x1e/0x40 [nfs]")
    findings = [f for f in judge_text("kernel-log", text) if f.check == "kernel_task"]
    assert [f.severity for f in findings] == ["warning"]
