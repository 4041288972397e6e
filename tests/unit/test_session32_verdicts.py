"""Session 32 (issue 29): perftest read against the standard rate it reaches, a quoted log with the paster's elision
note, a console's glued wall clock, DPC's RP PIO containment, the DIMM an EDAC report names, grepped ECC counters.

Expected values are read off the text of each capture (read from tests/corpus or tests/fixtures, with its source); a
derived form is what the named tool prints for that case."""

from __future__ import annotations

from conftest import corpus_capture, judge_text, parse_text

# --- a quoted dmesg whose paster cut lines with a note between ellipses, outside the quote ---

# round2/kernel-log/linuxpci2021-edr-dpc-64-02-0-patched-...: lore.kernel.org/linux-pci (a70a936d-...@gmail.com),
# every line quoted with '> ' except '...(cutting a lot of mpt3sas informational messages)...'
PATCHED = corpus_capture("round2", "kernel-log/linuxpci2021-edr-dpc-64-02-0-patched-nvme-mpt3sas-slot-reset-recovery-"
                                   "successful.txt")


def test_a_quoted_log_with_the_pasters_unquoted_elision_note_is_read() -> None:
    assert "\n...(cutting a lot of mpt3sas informational messages)...\n" in PATCHED
    data = parse_text("kernel-log", PATCHED)
    # the last quoted line is read as a kernel line (its time is the dmesg stamp, not '> [')
    assert data["aer_nonfatal"] and data["aer_nonfatal"][0]["time"] == "171.974084"


def test_dpc_rp_pio_containment_on_a_root_port_degrades_it() -> None:
    # 'pcieport 0000:64:02.0: DPC: containment event, status:0x1f07 source:0x0000' then 'DPC: RP PIO error detected',
    # then 'AER: device recovery successful': contained and recovered, a non-fatal uncorrectable error on the port
    findings = [f for f in judge_text("kernel-log", PATCHED) if f.severity != "info"]
    assert [(f.check, f.severity, f.subject) for f in findings] == [("kernel_pcie", "warning", "n1/0000:64:02.0")]


# --- a console server's wall clock glued to the kernel's stamp ---

# round2/kernel-log/lkml2023-alibaba-console-edac-mc0-ue-then-ce-burst-...: lore.kernel.org/lkml
# (54114b64-...@linux.alibaba.com); '[2023-06-22 21:55:31.352446][5975153.878190] EDAC MC0: 1 UE memory read error on
# CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (xxx xxx)', firmware 'ERROR:' lines glued to the wall clock the same way
CONSOLE = corpus_capture("round2", "kernel-log/lkml2023-alibaba-console-edac-mc0-ue-then-ce-burst-chan1-dimm0-"
                                   "interleaved-bios-error.txt")


def test_a_wall_clock_glued_to_the_kernel_stamp_is_a_log_head() -> None:
    edac = parse_text("kernel-log", CONSOLE)["edac"]
    assert (edac[0]["time"], edac[0]["kind"], edac[0]["count"]) == ("5975153.878190", "UE", 1)
    # 1 UE, then CE reports of 2, 1, 1, 1, 1 (the sixth, '3 CE memor' + 'y read error', is split by a firmware line)
    assert [e["kind"] for e in edac][:6] == ["UE", "CE", "CE", "CE", "CE", "CE"]


def test_an_uncorrected_edac_error_names_the_dimm() -> None:
    ue = [f for f in judge_text("kernel-log", CONSOLE) if f.severity == "critical"]
    assert [(f.check, f.subject) for f in ue] == [("kernel_memory", "n1/MC0")]
    assert "on CPU_SrcID#0_MC#0_Chan#1_DIMM#0" in ue[0].message


# --- nvidia-smi -q | grep -i correctable | grep -v 0 ---

# round2/nvidia-smi-q/mleng-nvidia-debug-grep-correctable-grep-v-0-...: stas00/ml-engineering
# compute/accelerator/nvidia/debug.md: two lines, 'SRAM Uncorrectable : 1' then 'SRAM Uncorrectable : 5' (the volatile
# counter first, the aggregate one after, as the report prints its ECC Errors section)
GREPPED = corpus_capture("round2", "nvidia-smi-q/mleng-nvidia-debug-grep-correctable-grep-v-0-two-sram-uncorrectable-"
                                   "lines-1-and-5.txt")


def test_grepped_ecc_counters_are_read_as_their_section() -> None:
    [gpu] = parse_text("nvidia-smi-q", GREPPED)["gpus"]
    assert gpu["ecc"]["volatile"]["sram_uncorrectable"] == 1
    assert gpu["ecc"]["aggregate"]["sram_uncorrectable"] == 5


def test_grepped_uncorrectable_ecc_fails_the_gpu() -> None:
    findings = [f for f in judge_text("nvidia-smi-q", GREPPED) if f.severity != "info"]
    assert [(f.check, f.severity) for f in findings] == [("gpu_ecc", "critical")]


def test_grepped_counters_of_zero_are_healthy() -> None:
    # the same grep without '| grep -v 0' on a good GPU: each counter twice, all 0 (NVIDIA's -q layout, drivers 525+)
    text = "".join(f"            {k} : 0\n" for k in ("SRAM Correctable", "SRAM Uncorrectable", "DRAM Correctable",
                                                       "DRAM Uncorrectable") * 2)
    assert not [f for f in judge_text("nvidia-smi-q", text) if f.severity != "info"]


# --- nvidia-smi's table wrapped by a mail client or a narrow terminal ---

# round2/nvidia-smi/cs4373-zoro-nautilus-595.71.05-rtx2080ti-x6-...: a student lab's committed nvidia-smi (driver
# 595.71.05), six RTX 2080 Ti at 00000000:05:00.0 ... busy at 69-85 C; its rows are 91 characters wide
ZORO = corpus_capture("round2", "nvidia-smi/cs4373-zoro-nautilus-595.71.05-rtx2080ti-x6-five-busy-85c.txt")


def _mail_wrap(text: str, width: int) -> str:
    """``text`` as a mail client wraps it: each line longer than ``width`` broken at its last space before the
    width (a line without one at the width itself), the rest on the next line without its leading blanks."""
    out = []
    for line in text.split("\n"):
        while len(line) > width:
            cut = line.rfind(" ", 0, width)
            cut = cut if cut > 0 else width
            out.append(line[:cut])
            line = line[cut:].lstrip(" ")
        out.append(line)
    return "\n".join(out)


def test_a_wrapped_table_is_read_as_its_rows() -> None:
    plain = parse_text("nvidia-smi", ZORO)["gpus"]
    assert [g["bus_id"][-7:] for g in plain][:3] == ["05:00.0", "06:00.0", "29:00.0"] and len(plain) == 6
    for width in (72, 76, 80):
        wrapped = _mail_wrap(ZORO, width)
        assert any(ln.strip() == "N/A |" for ln in wrapped.split("\n"))  # a row's last cell on a line of its own
        gpus = parse_text("nvidia-smi", wrapped)["gpus"]
        assert [(g["bus_id"], g["temperature_c"], g["power_w"], g["compute_mode"]) for g in gpus] == \
            [(g["bus_id"], g["temperature_c"], g["power_w"], g["compute_mode"]) for g in plain], width
        assert not [f for f in judge_text("nvidia-smi", wrapped) if f.severity != "info"]


def test_a_wrapped_table_keeps_its_error_token() -> None:
    # the second GPU's fan read as 'ERR!' (the token nvidia-smi prints where NVML cannot read a sensor)
    broken = ZORO.replace("|  0%   85C    P2", "|ERR!   85C    P2", 1)
    want = [(f.check, f.severity, f.subject) for f in judge_text("nvidia-smi", broken) if f.severity != "info"]
    assert want and all(sev == "critical" for _c, sev, _s in want)
    wrapped = _mail_wrap(broken, 76)
    assert [(f.check, f.severity, f.subject) for f in judge_text("nvidia-smi", wrapped) if f.severity != "info"] == want
