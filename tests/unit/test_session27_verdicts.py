"""Session 27 (issue 29): NVML's all-links-inactive answer for one selected GPU, lspci link fields condensed onto
the address line, and the soft-lockup watchdog judged.

Expected values are read off the text of each capture (quoted here or read from tests/corpus, with its source); a
derived form is what the named tool prints for that case."""

from __future__ import annotations

from conftest import corpus_capture, judge_text, parse_text
from conftest import finding_keys as _checks
from conftest import text_of as _text

# --- nvidia-smi nvlink -s -i 0: NVML's answer without a 'GPU n:' line above it ---

# round2/nvidia-smi-nvlink/ocrserver-devlog034-...-status-i0-nvml-all-links-inactive-dollar-prompt.txt
# (jikhanjung/ocrserver devlog 034: two Quadro RTX 8000 whose NVLink bridge was seated badly), its first two lines
DARK = _text("$ nvidia-smi nvlink --status -i 0",
             "NVML: Unable to retrieve Nvlink information as all links are inActive")


def test_nvml_all_inactive_alone_is_one_gpu_with_no_active_link() -> None:
    (g,) = parse_text("nvidia-smi-nvlink", DARK)["gpus"]
    assert (g["index"], g["all_links_inactive"], g["active_links"]) == (None, True, 0)


def test_all_links_inactive_where_links_are_expected_fails_the_node() -> None:
    findings = judge_text("nvidia-smi-nvlink", DARK, {"nvlink_links_per_gpu": 2})
    assert _checks(findings) == [("gpu_nvlink", "critical", "n1")]
    assert "the GPU shown: all NVLink links inactive" in findings[0].message


def test_all_links_inactive_with_no_expectation_is_information() -> None:
    # a PCIe card without a bridge prints the same line: no NVLink here, said, not a fault
    assert [sev for _c, sev, _s in _checks(judge_text("nvidia-smi-nvlink", DARK))] == ["info"]


# --- lspci: LnkCap and LnkSta condensed onto the device's address line ---

CONDENSED = "lspci/nvforum367853-asus-gx10-cx7-four-functions-lnkcap-lnksta-two-x2-downgraded-condensed.txt"


def test_condensed_link_fields_are_read_per_address() -> None:
    # NVIDIA developer forum 367853 (ASUS Ascent GX10): four ConnectX-7 functions, one line each
    devices = parse_text("lspci", corpus_capture("round2", CONDENSED))["devices"]
    assert [(d["slot"], d["lnkcap"]["width"], d["lnksta"]["width"], d["lnksta"]["gen"]) for d in devices] == [
        ("0000:01:00.0", 4, 4, 5), ("0000:01:00.1", 4, 4, 5), ("0002:01:00.0", 4, 2, 5), ("0002:01:00.1", 4, 2, 5)]


def test_condensed_links_at_half_width_are_degraded_per_function() -> None:
    assert _checks(judge_text("lspci", corpus_capture("round2", CONDENSED))) == [
        ("pcie_link", "warning", "n1/0002:01:00.0"), ("pcie_link", "warning", "n1/0002:01:00.1")]


def test_a_condensed_line_in_the_other_order_reads_the_same() -> None:
    text = _text("0002:01:00.0 LnkSta: Speed 32GT/s, Width x2 (downgraded) LnkCap: Speed 32GT/s, Width x4")
    (d,) = parse_text("lspci", text)["devices"]
    assert (d["lnkcap"]["width"], d["lnksta"]["width"], d["lnksta"]["width_downgraded"]) == (4, 2, True)


# --- kernel log: the soft-lockup watchdog ---

# round2/kernel-log/nvtrust19-guest-console-...-soft-lockup-cpu40-cut.txt (NVIDIA/nvtrust#19, an H100 guest's console)
LOCKUP = _text("[  210.094574] watchdog: BUG: soft lockup - CPU#40 stuck for 26s! [python3:510]",
               "[  210.095526] Modules linked in: nvidia_uvm(OE) nvidia_modeset(OE) video wmi nvidia(OE) ecdsa_generic")


def test_a_soft_lockup_is_read_with_its_cpu_time_and_task() -> None:
    (ev,) = parse_text("kernel-log", LOCKUP)["soft_lockups"]
    assert (ev["cpu"], ev["seconds"], ev["task"], ev["pid"]) == (40, 26, "python3", 510)


def test_a_soft_lockup_degrades_the_node() -> None:
    findings = judge_text("kernel-log", LOCKUP)
    assert _checks(findings) == [("kernel_task", "warning", "n1")]
    assert "CPU#40" in findings[0].message and "python3:510" in findings[0].message


def test_an_older_kernels_soft_lockup_line_without_the_watchdog_prefix() -> None:
    # kernels before 4.x print 'BUG: soft lockup - CPU#0 stuck for 67s! [swapper:0]' without 'watchdog: '
    text = _text("[ 1234.567890] BUG: soft lockup - CPU#0 stuck for 67s! [swapper:0]")
    (ev,) = parse_text("kernel-log", text)["soft_lockups"]
    assert (ev["cpu"], ev["seconds"], ev["task"]) == (0, 67, "swapper")
