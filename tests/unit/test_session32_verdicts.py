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


# --- a register BAR the PCI core could not place ---

# round2/kernel-log/markwdalton-lambdalabs-supermicro-bar-memory-...: markwdalton/lambdalabs
# documentation/servers/supermicro/BAR-Memory-usage.md: bridge windows (BAR 15) of 51:00.0 and 52:10.0, then 'pci
# 0000:53:00.0: BAR 0: no space for [mem size 0x02000000 64bit pref]' / 'BAR 0: failed to assign', the same for 53:00.1
BARS = corpus_capture("round2", "kernel-log/markwdalton-lambdalabs-supermicro-bar-memory-dmesg-bar15-no-space-53-00-"
                                "0-and-00-1-bar0-failed-to-assign.txt")


def test_an_unassigned_register_bar_fails_its_device() -> None:
    findings = [f for f in judge_text("kernel-log", BARS) if f.severity != "info"]
    # the endpoint's two functions, not the bridges (BAR 15 is a bridge window)
    assert [(f.check, f.severity, f.subject) for f in findings] == [
        ("kernel_device", "critical", "n1/0000:53:00.0"), ("kernel_device", "critical", "n1/0000:53:00.1")]
    assert "BAR 0 left unassigned" in findings[0].message


def test_a_bar_a_later_pass_assigned_is_not_judged() -> None:
    # the PCI core's second pass found room ('BAR 0: assigned [mem ...]', as it prints after a resize)
    later = BARS + ("[   23.870001] pci 0000:53:00.0: BAR 0: assigned [mem 0x90000000000-0x90001ffffff 64bit pref]\n"
                    "[   23.870003] pci 0000:53:00.1: BAR 0 [mem 0x90002000000-0x90003ffffff 64bit pref]: assigned\n")
    assert not [f for f in judge_text("kernel-log", later) if f.severity != "info"]


# --- an mlx5 health buffer of a firmware assert, the device not in error ---

# round2/kernel-log/netdev2021-mlx5-health-buffer-...: lore.kernel.org/netdev
# (20211025205431.365080-6-saeed@kernel.org):
# 'mlx5_core 0000:08:00.0: print_health_info:425:(pid 912): Health issue observed, firmware internal error, severity(3)
# ERROR:' and 'synd 0x1: firmware internal error', no timestamps, no 'health compromised'
HEALTH = corpus_capture("round2", "kernel-log/netdev2021-mlx5-health-buffer-fw-16-32-492-firmware-internal-error-"
                                  "severity-3-rfr-0-ext-synd-802b.txt")


def test_an_mlx5_health_event_degrades_the_adapter() -> None:
    findings = [f for f in judge_text("kernel-log", HEALTH) if f.severity != "info"]
    assert [(f.check, f.severity, f.subject) for f in findings] == [("kernel_net", "warning", "n1/0000:08:00.0")]
    assert "firmware internal error" in findings[0].message


def test_a_health_event_beside_a_lost_firmware_is_that_finding() -> None:
    lost = HEALTH + ("mlx5_core 0000:08:00.0: poll_health:720:(pid 0): device's health compromised - reached miss "
                     "count\n")
    findings = [f for f in judge_text("kernel-log", lost) if f.severity != "info"]
    assert [(f.check, f.severity, f.subject) for f in findings] == [("kernel_net", "critical", "n1/0000:08:00.0")]


# --- a NIC's line pasted without its timestamp: '<driver> <pci> <netdev>: ...' ---

# round2/kernel-log/netdev2025-leitao-bnxt-...: lore.kernel.org/netdev (20250117-frisky-macho-bustard-e92632@leitao):
# '\t bnxt_en 0000:04:00.0 eth0: NETDEV WATCHDOG: CPU: 2: transmit queue 1 timed out 5123 ms' and 'TX timeout detected,
# starting reset task!', every line indented with a tab and a space, prose between the excerpts
BNXT = corpus_capture("round2", "kernel-log/netdev2025-leitao-bnxt-bcm57452-eth0-netdev-watchdog-tx-timeout-reset-"
                                "task-then-hung-task-rtnl.txt")


def test_a_nic_line_without_its_timestamp_is_a_kernel_line() -> None:
    findings = [f for f in judge_text("kernel-log", BNXT) if f.check == "kernel_net"]
    assert [(f.severity, f.subject) for f in findings] == [("critical", "n1/0000:04:00.0")]


# --- a link flap names the PCI function the driver's lines name ---

# round2/kernel-log/netdev2024-forshee-xl710-...: lore.kernel.org/netdev (ZbkE7Ep1N1Ou17sA@do-x1extreme): 'i40e
# 0000:d8:00.1 eth1: NIC Link is Up, 40 Gbps Full Duplex' at boot, then eth1 down and up at 345 s
FORSHEE = corpus_capture("round2", "kernel-log/netdev2024-forshee-xl710-i40e-d8-00-1-xdp-tx-ring-disable-timeout-bond-"
                                   "link-down-up-fw-7-0.txt")


def test_a_link_flap_names_its_pci_function() -> None:
    [flap] = [f for f in judge_text("kernel-log", FORSHEE) if f.check == "link_flap" and f.severity != "info"]
    assert flap.subject == "n1/eth1" and "of 0000:d8:00.1" in flap.message


# --- a power limit beside the board's default is a reading ---

# round2/nvidia-smi-q/markwdalton-lambdalabs-a100-sxm4-80gb-q-...: markwdalton/lambdalabs
# documentation/GPUs/A100-example-information.md: Temperature limits, 'Memory Current Temp : 47 C', 'Power Limit :
# 400.00 W', 'Default Power Limit : 400.00 W', 'Enforced Power Limit : 400.00 W'; no GPU temperature, no draw
LIMITS = corpus_capture("round2", "nvidia-smi-q/markwdalton-lambdalabs-a100-sxm4-80gb-q-temperature-and-power-limits-"
                                  "excerpt-memory-47c.txt")


def test_a_power_limit_at_its_default_is_judged_healthy() -> None:
    assert not judge_text("nvidia-smi-q", LIMITS)  # judged (no 'nothing judgeable' note), nothing found
    limit = "Power Limit                       : "
    capped = LIMITS.replace(f"{limit}400.00 W", f"{limit}250.00 W", 1)
    assert [(f.check, f.severity) for f in judge_text("nvidia-smi-q", capped)] == [("gpu_power", "warning")]
