"""``nvidia-smi -q -x`` XML (ccparse.nvidia_smi_xml): the text report's shape, from real captures.

Expected values are read from the capture text (tests/corpus/gpu/nvidia-smi-q-xml, from
influxdata/telegraf's test data, and tests/fixtures/h200-xml-pair, the text and the XML report of
one H200 taken one after the other on the device machine). Safety: declarations other than
nvidia-smi's own DTD reference are refused before parsing, the input is bounded, and malformed
XML gives the clean ParseError naming a line.
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ccparse import nvidia_smi_xml, registry
from ccparse.common import ParseError

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench_corpus  # noqa: E402

XML_DIR = bench_corpus.CORPUS / "gpu" / "nvidia-smi-q-xml"
PAIR = REPO / "tests" / "fixtures" / "h200-xml-pair"


def corpus(name: str) -> str:
    return bench_corpus.read_capture(XML_DIR / f"{name}.txt")


def gpu0(data: dict[str, Any]) -> dict[str, Any]:
    return data["gpus"][0]


def test_a100_mig_slice_of_a_four_gpu_report() -> None:
    d = registry.parse("nvidia-smi-q-xml", corpus("telegraf-a100-sxm4-80gb-535.54.03-mig-1of4"))
    assert (d["driver_version"], d["cuda_version"], d["attached_gpus"]) == ("535.54.03", "12.2", 4)
    assert d["timestamp"] == "Fri Aug  4 11:44:30 2023"
    assert d["excerpt"] is True  # one <gpu> of attached 4, the document closes: cut by hand
    g = gpu0(d)
    assert g["bus_id"] == "00000000:01:00.0"
    assert g["name"] == "NVIDIA A100-SXM4-80GB"
    assert g["uuid"] == "GPU-513536b6-7d19-9063-b049-1e69664bb298"
    assert (g["serial"], g["minor_number"], g["persistence_mode"]) == ("1650522003820", 1, "Disabled")
    assert g["inforom_image"] == "G506.0212.00.01"
    assert g["temperature_c"]["gpu"] == 27.0 and g["temperature_c"]["memory"] == 44.0
    assert (g["temperature_c"]["shutdown"], g["temperature_c"]["slowdown"], g["temperature_c"]["max_operating"]) \
        == (92.0, 89.0, 85.0)
    assert g["power_w"]["draw"] == 67.03 and g["power_w"]["limit"] == 500.0
    assert g["pcie"] == {"gen_current": 4, "gen_max": 4, "gen_device_max": 4, "gen_host_max": 4,
                         "width_current": 16, "width_max": 16, "replays": 0}
    assert g["ecc_mode"] == "Enabled" and g["ecc_layout"] == "sram_dram"
    assert g["ecc"]["volatile"]["uncorrectable"] == 0 and g["ecc"]["aggregate"]["correctable"] == 0
    assert g["remapped_rows"] is None  # <remapped_rows>N/A</remapped_rows>
    assert g["reset_required"] is False and g["drain_and_reset_recommended"] is False
    assert g["clocks_event_source"] == "Clocks Event Reasons"
    assert g["clocks_event_reasons"]["idle"] is False


def test_a10g_half_width_link_and_row_remapping() -> None:
    g = gpu0(registry.parse("nvidia-smi-q", corpus("telegraf-a10g-515.105.01")))  # by content
    assert g["name"] == "NVIDIA A10G"
    assert (g["pcie"]["width_current"], g["pcie"]["width_max"]) == (8, 16)
    assert (g["pcie"]["gen_current"], g["pcie"]["gen_max"]) == (1, 4)
    assert g["remapped_rows"] is not None
    assert g["remapped_rows"]["uncorrectable"] == 0
    assert g["remapped_rows"]["pending"] is False and g["remapped_rows"]["failure"] is False
    assert g["clocks_event_source"] == "Clocks Throttle Reasons"  # 515: throttle reasons
    assert g["clocks_event_reasons"]["idle"] is True  # clocks_throttle_reason_gpu_idle Active


def test_schema_v10_418_bit_count_layout_keys() -> None:
    d = registry.parse("nvidia-smi-q", corpus("telegraf-gtx-1660-ti-418.43"))
    assert (d["driver_version"], d["cuda_version"]) == ("418.43", "10.1")
    g = gpu0(d)
    assert g["name"] == "Graphics Device" and g["bus_id"] == "00000000:43:00.0"
    assert g["pcie"]["gen_device_max"] is None  # schema v10 has no max_device_link_gen
    assert g["ecc_mode"] == "N/A"


def test_595_event_counters_and_tlimit_temperatures() -> None:
    g = gpu0(registry.parse("nvidia-smi-q", corpus("telegraf-rtx-4000-sff-ada-595.84")))
    assert g["temperature_c"]["tlimit_headroom"] == 49.0
    assert (g["temperature_c"]["shutdown_tlimit"], g["temperature_c"]["slowdown_tlimit"]) == (-7.0, -2.0)
    assert g["temperature_c"]["shutdown"] is None
    assert g["clocks_event_counters_us"] is not None
    assert g["clocks_event_counters_us"]["sw_power_capping"] == 4251825415
    assert g["remapped_rows"]["histogram"]["max"] == 96
    assert g["recovery_action"] == "None"


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if k == "gpus":
            continue
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


#: readings that are sampled (the two commands ran one after the other) and the line numbers
SAMPLED = {"g.power_w.draw", "g.power_w.average", "g.temperature_c.gpu", "g.temperature_c.memory",
           "g.utilization_pct.gpu", "g.utilization_pct.memory", "timestamp", "g.line"}


def test_text_and_xml_of_the_same_h200_normalise_to_equal_values() -> None:
    text = registry.parse("nvidia-smi-q", (PAIR / "nvidia-smi-q.txt").read_text())
    xml = registry.parse("nvidia-smi-q", (PAIR / "nvidia-smi-q-x.txt").read_text())
    assert len(text["gpus"]) == len(xml["gpus"]) == 1
    ft = _flat(text) | _flat(gpu0(text), "g.")
    fx = _flat(xml) | _flat(gpu0(xml), "g.")
    assert set(ft) == set(fx)
    differ = {k: (ft[k], fx[k]) for k in ft if k not in SAMPLED and ft[k] != fx[k]}
    assert differ == {}
    # and what both say, read from the text report
    g = gpu0(xml)
    assert (xml["driver_version"], xml["cuda_version"], xml["attached_gpus"]) == ("580.159.04", "13.0", 1)
    assert g["bus_id"] == "00000000:00:06.0" and g["name"] == "NVIDIA H200"
    assert g["uuid"] == "GPU-252d3094-119a-1a89-fcb2-6eccc3bc3b89"
    assert g["pcie"]["gen_current"] == 5 and g["pcie"]["width_current"] == 16
    assert g["inforom_image"] == "G520.0282.02.02"
    assert g["temperature_c"]["shutdown_tlimit"] == -8.0 and g["temperature_c"]["slowdown_tlimit"] == -2.0
    assert g["remapped_rows"]["histogram"]["max"] == 3072
    assert g["ecc"]["channel_repair_pending"] is False
    assert g["clocks_event_counters_us"]["hw_power_braking"] == 0


LIVE = REPO / "tests" / "fixtures" / "h200-live"


def test_a_second_live_h200_pair_normalises_to_equal_values_too() -> None:
    """Another machine of the same kind, captured by bench/device/h200_gpu_tools.sh (12:54 UTC)."""
    text = registry.parse("nvidia-smi-q", (LIVE / "nvidia-smi-q-live-580.159.04-b.txt").read_text())
    xml = registry.parse("nvidia-smi-q", (LIVE / "nvidia-smi-q-x-live-580.159.04.xml").read_text())
    ft = _flat(text) | _flat(gpu0(text), "g.")
    fx = _flat(xml) | _flat(gpu0(xml), "g.")
    assert set(ft) == set(fx)
    assert {k: (ft[k], fx[k]) for k in ft if k not in SAMPLED and ft[k] != fx[k]} == {}
    g = gpu0(xml)  # read off both files: GPU UUID line 28 of the text, <uuid> line 32 of the XML
    assert g["uuid"] == "GPU-add5c7eb-7975-0a5d-01da-c6a28c4d5dbf" and g["bus_id"] == "00000000:00:06.0"
    assert g["inforom_image"] == "G520.0282.02.02" and g["pcie"]["width_current"] == 16


HEAD = '<?xml version="1.0" ?>\n'
DOC = "<nvidia_smi_log><driver_version>1</driver_version><attached_gpus>0</attached_gpus></nvidia_smi_log>\n"


@pytest.mark.parametrize("decl", [
    '<!DOCTYPE nvidia_smi_log [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>\n',
    '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd" [<!ENTITY x "y">]>\n',
    '<!DOCTYPE nvidia_smi_log SYSTEM "file:///etc/passwd">\n',
    '<!DOCTYPE other SYSTEM "nvsmi_device_v12.dtd">\n',
    '<!ENTITY x SYSTEM "file:///etc/passwd">\n',
])
def test_declarations_other_than_the_own_dtd_reference_are_refused(decl: str) -> None:
    body = DOC.replace("<driver_version>1", "<driver_version>&b;&x;")
    with pytest.raises(ParseError, match="declaration refused") as exc:
        registry.parse("nvidia-smi-q", HEAD + decl + body)
    assert exc.value.line == 2


def test_the_own_dtd_reference_is_accepted() -> None:
    d = registry.parse("nvidia-smi-q", HEAD + '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">\n' + DOC)
    assert d["driver_version"] == "1" and d["gpus"] == []


def test_a_report_cut_in_transit_is_read_to_its_last_whole_element() -> None:
    # issue 29: judge what is there, record the cut (was a ParseError; tests/unit/test_misses6_verdicts.py)
    text = corpus("telegraf-tesla-t4-515.105.01")
    cut = text[: len(text) // 2]
    data = registry.parse("nvidia-smi-q", cut)
    assert data["cut"] and data["gpus"][0]["name"] == registry.parse("nvidia-smi-q", text)["gpus"][0]["name"]


def test_other_roots_preambles_and_oversize_are_clean_errors() -> None:
    with pytest.raises(ParseError, match="root element"):
        registry.parse("nvidia-smi-q-xml", "<html><body/></html>")
    with pytest.raises(ParseError, match="text before"):
        registry.parse("nvidia-smi-q-xml", "hello\n" + DOC)
    with pytest.raises(ParseError, match="larger than"):
        registry.parse_raw("nvidia-smi-q-xml", "<" + " " * (nvidia_smi_xml.MAX_BYTES + 1))
    with pytest.raises(ParseError):
        registry.parse("nvidia-smi-q-xml", "")


def test_warnings_before_the_document_are_read_as_in_text() -> None:
    text = ("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n" + HEAD
            + DOC.replace("<attached_gpus>0", "<attached_gpus>1"))
    d = registry.parse("nvidia-smi-q", text)
    assert d["lost_gpus"] and d["lost_gpus"][0]["bus_id"].upper().endswith("3B:00.0")
    assert d["excerpt"] is False


def test_deep_nesting_and_a_huge_number_stay_clean_and_fast() -> None:
    deep = "<nvidia_smi_log>" + "<a>" * 50_000 + "</a>" * 50_000 + "</nvidia_smi_log>"
    t0 = time.perf_counter()
    with contextlib.suppress(ParseError):
        registry.parse("nvidia-smi-q", deep)
    huge = corpus("telegraf-tesla-t4-515.105.01").replace("<replay_counter>0", "<replay_counter>" + "9" * 5000)
    assert gpu0(registry.parse("nvidia-smi-q", huge))["pcie"]["replays"] is None
    assert time.perf_counter() - t0 < 5.0
