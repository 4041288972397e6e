"""Session 29 (issue 29): rules reached at every depth they apply, and the rules written from the rest's misses.

Expected values are read off the text of each capture (quoted here or read from tests/corpus, with its source); a
derived form is what the named tool prints for that case."""

from __future__ import annotations

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
