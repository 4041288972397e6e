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
