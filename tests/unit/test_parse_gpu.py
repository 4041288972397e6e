"""GPU parsers (nvidia-smi -q / --query-gpu / table / topo / nvlink, lspci, dcgmi diag) on fixture text.

Expected values are read off the fixture files (line numbers are those of the files, source line included).
"""

from __future__ import annotations

import pytest
from ccparse import registry
from ccparse.common import ParseError
from conftest import read_fixture

Q = "nvidia-smi-q/"


def parse(kind: str, rel: str) -> dict:
    return registry.parse(kind, read_fixture(rel))


def without_source(text: str) -> str:
    assert text.startswith("# source:")
    return text.split("\n", 1)[1]


# --- nvidia-smi -q ------------------------------------------------------------------------------

def test_q_h100_535_sram_dram_layout_and_clock_event_reasons() -> None:
    out = parse("nvidia-smi-q", Q + "h100x8-535.183.01-full-sw-thermal-active.txt")
    assert out["driver_version"] == "535.183.01" and out["cuda_version"] == "12.2"
    assert out["attached_gpus"] == 8 and len(out["gpus"]) == 8
    g0 = out["gpus"][0]
    assert g0["bus_id"] == "00000000:53:00.0" and g0["name"] == "NVIDIA H100 80GB HBM3"
    assert g0["pcie"] == {"gen_current": 5, "gen_max": 5, "gen_device_max": 5, "gen_host_max": None,
                          "width_current": 16, "width_max": 16, "replays": 120}
    assert g0["temperature_c"] == {"gpu": 36.0, "memory": 44.0, "shutdown": None, "slowdown": None,
                                   "max_operating": None, "tlimit_headroom": 50.0, "shutdown_tlimit": -8.0,
                                   "slowdown_tlimit": -2.0, "max_operating_tlimit": 0.0}  # T.Limit: relative
    assert g0["power_w"]["draw"] == 71.97 and g0["power_w"]["limit"] == 700.0
    assert g0["ecc_layout"] == "sram_dram" and g0["ecc"]["volatile"]["uncorrectable"] == 0
    assert g0["remapped_rows"]["histogram"]["max"] == 2560
    assert g0["clocks_event_source"] == "Clocks Event Reasons"
    g2 = out["gpus"][2]  # GPU 00000000:75:00.0: HW Power Brake, SW Power Cap and SW Thermal Active
    assert g2["bus_id"] == "00000000:75:00.0"
    active = sorted(k for k, v in g2["clocks_event_reasons"].items() if v)
    assert active == ["hw_power_brake_slowdown", "sw_power_cap", "sw_thermal_slowdown"]


def test_q_460_throttle_reasons_name_and_domains() -> None:
    out = parse("nvidia-smi-q", Q + "a100x8-460.32.03-full.txt")
    assert [g["bus_id"] for g in out["gpus"]][:5] == ["00000001:00:00.0", "00000002:00:00.0", "00000003:00:00.0",
                                                       "00000004:00:00.0", "0000000B:00:00.0"]
    g = out["gpus"][0]
    assert g["clocks_event_source"] == "Clocks Throttle Reasons" and g["clocks_event_reasons"]["idle"] is True
    assert g["temperature_c"] == {"gpu": 41.0, "memory": 40.0, "shutdown": 92.0, "slowdown": 89.0,
                                  "max_operating": 85.0, "tlimit_headroom": None, "shutdown_tlimit": None,
                                  "slowdown_tlimit": None, "max_operating_tlimit": None}
    assert g["power_w"]["draw"] == 55.63 and g["power_w"]["limit"] == 400.0
    assert g["pcie"]["gen_max"] == 4 and g["ecc_mode"] == "Enabled"


def test_q_580_h200_live_and_new_keys() -> None:
    for rel in ("h200-live/nvidia-smi-q-h200-580.159.04.txt", "h200-live/nvidia-smi-q-live-580.159.04.txt"):
        out = parse("nvidia-smi-q", rel)
        assert out["driver_version"] == "580.159.04" and out["attached_gpus"] == 1
        g = out["gpus"][0]
        assert g["name"] == "NVIDIA H200" and g["bus_id"] == "00000000:00:06.0"
        assert g["ecc"]["channel_repair_pending"] is False and g["ecc"]["unrepairable_memory"] is False
        assert g["recovery_action"] == "None" and g["remapped_rows"]["histogram"]["max"] == 3072
    live = parse("nvidia-smi-q", "h200-live/nvidia-smi-q-h200-580.159.04.txt")["gpus"][0]
    assert live["power_w"]["draw"] == 79.15 and live["power_w"]["average"] == 119.97  # instantaneous vs average


def test_q_excerpts_remap_pending_and_sram_uncorrectable() -> None:
    a100 = parse("nvidia-smi-q", Q + "a100-xid63-dram-correctable-177-remap-pending-excerpt.txt")
    # 'Attached GPUs : 8' stated before the '[...]' elisions: a cut report, not a header-less excerpt (issue 29
    # class 1): its count stands, 1 of its 8 blocks is read, the elision is said
    assert a100["excerpt"] is False and a100["attached_gpus"] == 8 and len(a100["gpus"]) == 1
    assert a100["blocks_missing"] == 7 and a100["cut"]
    g = a100["gpus"][0]
    assert g["ecc"]["volatile"]["dram_correctable"] == 177 and g["ecc"]["volatile"]["uncorrectable"] == 0
    assert g["remapped_rows"]["pending"] is True and g["remapped_rows"]["failure"] is False
    assert g["remapped_rows"]["correctable"] == 1
    sram = parse("nvidia-smi-q", Q + "sram-uncorrectable-1-aggregate-5-excerpt.txt")["gpus"][0]
    assert sram["bus_id"] is None
    assert sram["ecc"]["volatile"]["sram_uncorrectable"] == 1 and sram["ecc"]["aggregate"]["sram_uncorrectable"] == 5


def test_q_retired_pages_table() -> None:
    out = parse("nvidia-smi-q", Q + "aznhc-v100-page-retirement-table-full-test-data.txt")
    got = [(g["retired_pages"]["single_bit"], g["retired_pages"]["double_bit"], g["retired_pages"]["pending"])
           for g in out["gpus"]]
    assert got == [(60, 5, False), (2, 61, True), (0, 0, False), (6, 0, True), (0, 0, False), (20, 45, True),
                   (0, 0, False), (8, 56, True)]


def test_q_old_bit_count_ecc_layout() -> None:
    g = parse("nvidia-smi-q", Q + "v100-bit-count-ecc-layout-double-bit-2-hand-written.txt")["gpus"][0]
    assert g["ecc_layout"] == "bit_count"
    assert g["ecc"]["volatile"]["correctable"] == 3 and g["ecc"]["volatile"]["uncorrectable"] == 2
    assert g["ecc"]["aggregate"]["correctable"] == 10 and g["remapped_rows"] is None


def test_q_rtx4090_idle_gpus_at_gen1() -> None:
    out = parse("nvidia-smi-q", Q + "rtx4090x8-535.154.05-full.txt")
    gens = [(g["pcie"]["gen_current"], g["pcie"]["gen_max"], g["utilization_pct"]["gpu"]) for g in out["gpus"]]
    assert gens[4] == (1, 4, 0.0) and gens[1] == (4, 4, 100.0)
    assert out["gpus"][0]["ecc"]["volatile"]["uncorrectable"] is None  # ECC off: N/A


def test_q_truncated_invalid_fixture_and_garbage() -> None:
    # a cut report (Attached GPUs 8, one GPU block) is judged as it is, the cut recorded (issue 29)
    cut = parse("nvidia-smi-q", Q + "invalid-535.183.01.txt")
    assert cut["attached_gpus"] == 8 and len(cut["gpus"]) == 1 and cut["blocks_missing"] == 7
    for bad in ("", "hello world\nfoo", "    random indented words\n"):
        with pytest.raises(ParseError):
            registry.parse("nvidia-smi-q", bad)


def test_q_without_source_line_same_data() -> None:
    text = read_fixture(Q + "h100x8-535.183.01-full-sw-thermal-active.txt")
    a, b = registry.parse("nvidia-smi-q", text), registry.parse("nvidia-smi-q", without_source(text))
    for ga, gb in zip(a["gpus"], b["gpus"], strict=True):
        assert gb["line"] == ga["line"] - 1
        ga.pop("line"), gb.pop("line")
        assert ga == gb


# --- --query-gpu --------------------------------------------------------------------------------

def test_query_l40s_idle_gen1() -> None:
    out = parse("nvidia-smi-query", "nvidia-smi-query/pcie-l40sx8-idle-gen1-not-degraded.txt")
    assert len(out["gpus"]) == 8
    assert all(g["pcie"]["gen_current"] == 1 and g["pcie"]["gen_max"] == 4 and g["pcie"]["width_current"] == 16
               for g in out["gpus"])
    assert out["gpus"][7]["index"] == 7


def test_query_580_units_and_event_reasons() -> None:
    g = parse("nvidia-smi-query", "h200-live/nvidia-smi-query-live-580.159.04.txt")["gpus"][0]
    assert g["power_w"]["draw"] == 108.43 and g["utilization_pct"]["gpu"] == 0.0 and g["temperature_c"]["gpu"] == 39
    assert g["driver_version"] == "580.159.04" and g["bus_id"] == "00000000:00:06.0"
    assert g["fields"]["clocks_event_reasons.active"] == 1
    assert g["clocks_event_reasons"]["idle"] is True and g["clocks_event_reasons"]["hw_slowdown"] is False
    assert g["remapped_rows"]["pending"] is False and g["ecc"]["volatile"]["uncorrectable"] == 0


def test_query_old_names_nounits_and_na() -> None:
    text = ("index, pci.bus_id, clocks_throttle_reasons.hw_slowdown, clocks_throttle_reasons.active, power.draw, "
            "ecc.errors.uncorrected.volatile.total\n"
            "0, 00000000:19:00.0, Active, 0x0000000000000008, 250.5, 3\n"
            "1, 00000000:3B:00.0, Not Active, 0x0000000000000000, [N/A], [N/A]\n")
    g0, g1 = registry.parse("nvidia-smi-query", text)["gpus"]
    assert g0["clocks_event_reasons"]["hw_slowdown"] is True and g0["power_w"]["draw"] == 250.5
    assert g0["ecc"]["volatile"]["uncorrectable"] == 3
    assert g1["power_w"]["draw"] is None and g1["ecc"]["volatile"]["uncorrectable"] is None


@pytest.mark.parametrize("bad", ["", "0, 1, 4, 16, 16\n", "index, pcie.link.gen.current\n",
                                 "index, pcie.link.gen.current\n0, 1, 2\n"])
def test_query_errors(bad: str) -> None:
    with pytest.raises(ParseError) as e:
        registry.parse("nvidia-smi-query", bad)
    assert e.value.tool == "nvidia-smi --query-gpu"


# --- table ----------------------------------------------------------------------------------------

# the line nvidia-smi prints for a GPU NVML cannot reach (both spellings seen: "GPU0000:..", "GPU 0000:..")
LOST = "Unable to determine the device handle for GPU0000:07:00.0: Unknown Error\n"


def test_lost_gpu_line_in_every_mode() -> None:
    want = [{"bus_id": "00000000:07:00.0", "error": "Unknown Error"}]
    for kind in ("nvidia-smi", "nvidia-smi-q", "nvidia-smi-query"):
        out = registry.parse(kind, LOST)  # nvidia-smi's only output: a finding, not a parse error
        assert out["lost_gpus"] == want and out["gpus"] == [], kind
    # -q: one GPU reported, one lost: Attached GPUs 2 is then not a truncated report
    live = read_fixture("h200-live/nvidia-smi-q-live-580.159.04.txt")
    two = live.replace("Attached GPUs                                          : 1",
                       "Attached GPUs                                          : 2")
    assert two != live
    out = registry.parse("nvidia-smi-q", two + LOST.replace("GPU0000", "GPU 0000"))
    assert len(out["gpus"]) == 1 and out["lost_gpus"] == want
    assert registry.parse("nvidia-smi-q", two)["blocks_missing"] == 1  # a cut or -i report: judged as it is
    src, csv_text = read_fixture("h200-live/nvidia-smi-query-live-580.159.04.txt").split("\n", 1)
    q = registry.parse("nvidia-smi-query", src + "\n" + LOST + csv_text)
    assert len(q["gpus"]) == 1 and q["lost_gpus"] == want


def test_query_unknown_field_names_it() -> None:
    with pytest.raises(ParseError, match=r"clocks_event_reasons\.active.*before 535"):
        registry.parse("nvidia-smi-query", 'Field "clocks_event_reasons.active" is not a valid field to query.\n\n')


def test_table_h100_and_inforom_warning() -> None:
    h = parse("nvidia-smi", "nvidia-smi/h100x8-550.90.07-table.txt")
    assert h["driver_version"] == "550.90.07" and len(h["gpus"]) == 8
    assert h["gpus"][0]["bus_id"] == "00000000:19:00.0" and h["gpus"][0]["power_w"] == {"draw": 72.0, "limit": 700.0}
    v = parse("nvidia-smi", "nvidia-smi/v100x8-table-inforom-corrupted.txt")
    assert v["inforom_corrupted"] == ["00000008:00:00.0"]
    assert [g["index"] for g in v["gpus"] if g["inforom_corrupted"]] == [7]
    gone = registry.parse("nvidia-smi", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")
    assert gone["driver_unreachable"].startswith("NVIDIA-SMI has failed") and gone["gpus"] == [] and gone["excerpt"]
    assert registry.parse("nvidia-smi", "No devices were found\n")["no_devices"] is True


# --- topo / nvlink / lspci ------------------------------------------------------------------------

def test_topo_space_aligned_with_prompt() -> None:
    out = parse("nvidia-smi-topo", "nvidia-smi-topo/h100x8-nv18-space-aligned-no-nics.txt")
    assert len(out["gpus"]) == 8 and out["nics"] == []
    assert out["gpus"][0]["links"]["GPU7"] == "NV18" and out["gpus"][4]["cpu_affinity"] == "52-103"
    assert out["gpus"][4]["numa_affinity"] == "1"


def test_topo_live_tabs_ansi_and_nic_legend() -> None:
    live = parse("nvidia-smi-topo", "h200-live/nvidia-smi-topo-live-580.159.04.txt")
    assert live["gpus"][0]["cpu_affinity"] == "0-15" and live["gpus"][0]["gpu_numa_id"] is None
    assert live["legend"]["PIX"].startswith("Connection traversing at most a single PCIe bridge")
    nic = parse("nvidia-smi-topo", "nvidia-smi-topo/h100x8-8nic-tab-free-with-nic-legend.txt")
    assert [n["device"] for n in nic["nics"]] == [f"mlx5_{i}" for i in range(8)]
    assert nic["gpus"][3]["links"]["NIC3"] == "PIX" and nic["gpus"][7]["cpu_affinity"] == "48-95,144-191"
    # a header and a row cut after its first cell: no whole row, read as a cut capture (nothing to judge,
    # the check says so), as nccl-tests reads a header without rows (issue 29: a parse failure never decides)
    cut = registry.parse("nvidia-smi-topo", "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \n")
    assert cut["gpus"] == [] and cut["truncated"]


def test_nvlink_inactive_links_and_empty_live() -> None:
    out = parse("nvidia-smi-nvlink", "nvidia-smi-nvlink/v100x8-nvlink-status-inactive-links.txt")
    got = {g["index"]: g["inactive_links"] for g in out["gpus"]}
    assert got == {0: [], 1: [], 2: [], 3: [3, 5], 4: [1], 5: [0, 4], 6: [1]}
    assert out["gpus"][0]["links"][0]["speed_GBps"] == 25.781
    live = parse("nvidia-smi-nvlink", "h200-live/nvidia-smi-nvlink-live-580.159.04.txt")
    assert live["gpus"] == [] and live["no_nvlink"] is True and "no NVLink" in live["note"]
    assert out["note"] is None
    with pytest.raises(ParseError):
        registry.parse("nvidia-smi-nvlink", "GPU 0: X (UUID: GPU-1)\n  Link 0: 25 Mb/s\n")


# drivers 550+ print this under a GPU whose links are all down (text as quoted in leptonai/gpud#1085, B200)
DARK = ("GPU 0: NVIDIA B200 (UUID: GPU-aaa)\n\t Link 0: 53.125 GB/s\n\t Link 1: 53.125 GB/s\n"
        "GPU 1: NVIDIA B200 (UUID: GPU-bbb)\nNVML: Unable to retrieve NVLink information as all links are inActive\n")


def test_nvlink_all_links_inactive_message() -> None:
    out = registry.parse("nvidia-smi-nvlink", DARK)
    assert [(g["index"], g["active_links"], g["all_links_inactive"]) for g in out["gpus"]] == [(0, 2, False),
                                                                                                (1, 0, True)]
    assert out["gpus"][1]["links"] == [] and out["no_nvlink"] is False


def test_lspci_lnkcap_lnksta() -> None:
    devs = {d["slot"]: d for d in parse("lspci", "lspci/h100-sxm5-cx7-hand-assembled-one-gpu-x8.txt")["devices"]}
    assert devs["0000:1b:00.0"]["lnkcap"]["gen"] == 5 and devs["0000:1b:00.0"]["lnksta"]["width"] == 16
    assert devs["0000:2a:00.0"]["lnksta"]["width"] == 8 and devs["0000:2a:00.0"]["lnksta"]["width_downgraded"]
    assert devs["0000:3a:00.0"]["lnksta"]["gen"] == 1 and devs["0000:18:00.0"]["is_nic"]
    assert devs["0000:00:00.0"]["lnkcap"] is None
    with pytest.raises(ParseError):
        registry.parse("lspci", "not lspci\n")


# --- dcgmi diag -------------------------------------------------------------------------------------

def _fails(out: dict) -> list[tuple]:
    return [(r["test"], r["gpu"], r["status"]) for r in out["results"] if r["status"] in ("Fail", "Warn")]


def test_dcgmi_legacy_reports_every_gpu() -> None:
    out = parse("dcgmi-diag", "dcgmi-diag/json-dcgm-legacy-per-gpu-nvidia-sample.txt")
    assert out["gpus"] == [0, 1, 2, 3]
    assert _fails(out) == [("sm_stress", 0, "Fail"), ("sm_stress", 2, "Fail"), ("sm_stress", 3, "Fail")]
    deny = [r for r in out["results"] if r["test"] == "Denylist"]
    assert [r["gpu"] for r in deny] == [0, 1, 2, 3]  # "gpu_ids": "0,1,2,3" expanded


def test_dcgmi_dcgm3_and_dcgm4_json() -> None:
    d3 = parse("dcgmi-diag", "dcgmi-diag/json-dcgm3-format-persistence-fail-env-warn-gcm.txt")
    assert _fails(d3) == [("Persistence Mode", None, "Fail"), ("Environment Variables", None, "Warn")]
    d4 = parse("dcgmi-diag", "dcgmi-diag/json-dcgm4-entity-results-gpu2-memory-fail.txt")
    assert d4["dcgm_version"] == "4.2.3" and d4["gpus"] == [0, 1, 2, 3]
    assert _fails(d4) == [("memory", 2, "Fail"), ("pcie", 1, "Warn")]


def test_dcgmi_text_dcgm3_all_and_dcgm4_per_gpu() -> None:
    t3 = parse("dcgmi-diag", "dcgmi-diag/text-dcgm3-3.3.8-h100x8-gpu-memory-fail-cuinit.txt")
    assert t3["dcgm_version"] == "3.3.8" and t3["gpus"] == list(range(8))
    mem = [r for r in t3["results"] if r["test"] == "GPU Memory"]
    assert [r["status"] for r in mem] == ["Fail"] * 8
    assert mem[1]["messages"][0].startswith("GPU 1 Error using CUDA API cuInit")
    t4 = parse("dcgmi-diag", "dcgmi-diag/text-dcgm4-4.0.0-user-guide-r3-4gpu-pass.txt")
    assert t4["dcgm_version"] == "4.0.0" and t4["gpus"] == [0, 1, 2, 3]
    assert {r["status"] for r in t4["results"]} == {"Pass"} and len(t4["results"]) == 7 * 4


# a table cut after its header is read (no test row, "cut": cannot judge): tests/unit/test_misses6_verdicts.py; dcgmi's
# own 'Error: ...' lines are a run that did not happen: tests/unit/test_session24_verdicts.py
@pytest.mark.parametrize("bad", ["", "{\"DCGM GPU Diagnostic\": {\"test_categories\": [", "Diagnostic | Result"])
def test_dcgmi_errors(bad: str) -> None:
    with pytest.raises(ParseError) as e:
        registry.parse("dcgmi-diag", bad)
    assert e.value.tool == "dcgmi diag"
