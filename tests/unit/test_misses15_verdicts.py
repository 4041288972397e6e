"""Session 15 (issue 29): an ``nvidia-smi -q`` report whose indentation a web page's copy dropped, read
by the report's own section names; the table layout of nvidia-smi before driver 319 (no persistence mode in
the name cell, the memory cell opening with the share used, ``Compute processes:``, a banner without a CUDA
version), written here with the tool's column widths of that layout (the pastebin copy in tests/corpus/round2
collapses them); expected values are read off the text."""

from __future__ import annotations

from pathlib import Path

import pytest
from ccparse import registry
from ccparse.common import ParseError
from conftest import judge_text

from clusterctl.analysis.model import Finding

REPO = Path(__file__).resolve().parents[2]

OLD_TABLE = """Thu Apr  4 23:41:38 2013
+------------------------------------------------------+
| NVIDIA-SMI 4.310.40   Driver Version: 310.40         |
|-------------------------------+----------------------+----------------------+
| GPU  Name                     | Bus-Id        Disp.  | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap| Memory-Usage         | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla C2075              | 0000:02:00.0     Off |                    0 |
| 30%   59C   P12    31W / 225W |   0%   10MB / 5375MB |      0%      Default |
+-------------------------------+----------------------+----------------------+
|   1  Tesla C2075              | 0000:03:00.0     Off |                    2 |
| 30%   48C   P12    31W / 225W |   0%    9MB / 5375MB |      0%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Compute processes:                                               GPU Memory |
|  GPU       PID  Process name                                     Usage      |
|=============================================================================|
|  No running compute processes found                                         |
+-----------------------------------------------------------------------------+
"""


def test_table_of_drivers_before_319_is_read() -> None:
    got = registry.parse("nvidia-smi", OLD_TABLE)
    assert (got["smi_version"], got["driver_version"], got["cuda_version"]) == ("4.310.40", "310.40", None)
    assert [(g["index"], g["name"], g["bus_id"][-7:], g["persistence_mode"]) for g in got["gpus"]] == [
        (0, "Tesla C2075", "02:00.0", None), (1, "Tesla C2075", "03:00.0", None)]
    first, second = got["gpus"]
    assert (first["memory_used_mib"], first["memory_total_mib"]) == (10, 5375)
    assert first["power_w"] == {"draw": 31, "limit": 225}
    assert (first["ecc_uncorrected_volatile"], second["ecc_uncorrected_volatile"]) == (0, 2)


# --- a report whose indentation a web page's copy dropped -------------------------------------------------

REPORTS = sorted((REPO / "tests" / "fixtures").glob("nvidia-smi-q/*.txt")) + sorted(
    (REPO / "tests" / "fixtures").glob("h200-*/nvidia-smi-q*.txt"))


def _flat(text: str) -> str:
    return "\n".join(" ".join(ln.split()) for ln in text.split("\n"))


@pytest.mark.parametrize("path", REPORTS, ids=[p.name for p in REPORTS])
def test_a_flattened_q_report_reads_as_the_indented_one(path: Path) -> None:
    """nvidia-smi -q nests its sections by indentation; a copy without it is nested again by the report's
    own section names (a GPU block's first-level names, the sections nested in PCI, ECC Errors, ...)."""
    text = path.read_text(errors="replace")
    try:
        want = registry.parse("nvidia-smi-q", text)
    except ParseError:
        pytest.skip("the report itself is not read")
    got = registry.parse("nvidia-smi-q", _flat(text))
    strip = [{k: v for k, v in g.items() if k != "line"} for g in want["gpus"]]
    assert [{k: v for k, v in g.items() if k != "line"} for g in got["gpus"]] == strip
    assert (got["attached_gpus"], got["driver_version"]) == (want["attached_gpus"], want["driver_version"])


def test_flattened_remapped_rows_pending_stays_pending() -> None:
    flat = ("GPU 00000000:07:00.0\nProduct Name : NVIDIA A100-SXM4-80GB\nRemapped Rows\nCorrectable Error : 0\n"
            "Uncorrectable Error : 1\nPending : Yes\nRemapping Failure Occurred : No\n"
            "Bank Remap Availability Histogram\nMax : 639 bank(s)\nHigh : 0 bank(s)\nTemperature\n"
            "GPU Current Temp : 33 C\n")
    gpu = registry.parse("nvidia-smi-q", flat)["gpus"][0]
    assert gpu["remapped_rows"]["pending"] is True and gpu["remapped_rows"]["uncorrectable"] == 1
    assert gpu["temperature_c"]["gpu"] == 33


# --- batch 21-24 rest misses: kernel log link events, sinfo -R excerpts, quoted prompt lines ------------------

def _kernel(text: str) -> list[Finding]:
    return judge_text("kernel-log", text)


BOND_GONE = """[ 1203.422721] bond1: link status definitely down for interface ens3f1, disabling it
[ 1203.445599] bond1: link status definitely down for interface ens3f0, disabling it
[ 1203.467563] bond1: now running without any active interface!
"""


def test_a_bond_without_any_active_interface_is_failed() -> None:
    found = [f for f in _kernel(BOND_GONE) if f.check == "kernel_net"]
    assert [(f.severity, f.subject) for f in found] == [("critical", "n1/bond1")]
    back = BOND_GONE + "[ 1210.000001] bond1: making interface ens3f0 the new active one\n"
    assert [f.severity for f in _kernel(back) if f.check == "kernel_net"] == ["warning"]


def test_bond_member_link_status_lines_count_as_flaps() -> None:
    data = registry.parse("kernel-log", BOND_GONE)
    assert {k: v["downs"] for k, v in data["link_flaps"].items()} == {"ens3f0": 1, "ens3f1": 1}


SLOT_DOWN = """[Ter Set 19 06:01:41 2017] pciehp 0000:02:05.0:pcie24: slot(6): Link Down event
[Ter Set 19 06:01:41 2017] pciehp 0000:02:05.0:pcie24: pciehp_unconfigure_device: domain:bus:dev = 0000:08:00
"""


def test_a_pcie_slot_link_down_removes_its_device() -> None:
    found = [f for f in _kernel(SLOT_DOWN) if f.check == "kernel_pcie"]
    assert [(f.severity, f.subject) for f in found] == [("critical", "n1/0000:08:00.0")]
    up = "[  30.000000] pcieport 0000:00:03.0: pciehp: Slot(2): Link Down\n" \
         "[  31.000000] pcieport 0000:00:03.0: pciehp: Slot(2): Link Up\n"
    assert [(f.severity, f.subject) for f in _kernel(up) if f.check == "kernel_pcie"] == [
        ("warning", "n1/0000:00:03.0")]


def test_openwrt_logread_link_lines_count_as_flaps() -> None:
    log = ("Sun Jun 11 23:02:41 2023 kern.info kernel: [39210.778735] igc 0000:05:00.0 eth5: NIC Link is Down\n"
           "Sun Jun 11 23:03:01 2023 kern.info kernel: [39231.230004] igc 0000:05:00.0 eth5: NIC Link is Up 100 Mbps "
           "Full Duplex, Flow Control: RX\n")
    flaps = registry.parse("kernel-log", log)["link_flaps"]
    assert (flaps["eth5"]["downs"], flaps["eth5"]["ups"]) == (1, 1)


def test_sinfo_reason_rows_without_their_header_inside_a_frame() -> None:
    text = ("-" * 40 + "\nKill task failed     root      2025-06-02T22:09:38 kla-ac-cpu-[04,16]\n"
            "Not responding       slurm     Unknown             gpu07\n" + "-" * 40 + "\n")
    rows = registry.parse("sinfo", text)["partitions"]
    assert [(r["reason"], r["hosts"]) for r in rows] == [
        ("Kill task failed", ["kla-ac-cpu-04", "kla-ac-cpu-16"]), ("Not responding", ["gpu07"])]


def test_a_quoted_prompt_line_is_a_prompt() -> None:
    text = ">[root@login ~]# cat /proc/12287/limits\nLimit                     Soft Limit           Hard Limit" \
           "           Units\nMax locked memory         65536                65536                bytes\n"
    got = registry.parse("proc-limits", text)
    assert got["limits"]["max_locked_memory"] == {"soft": 65536, "hard": 65536, "unit": "bytes"}
