"""The last four round2 known misses (issue 29), each judged by the documented rule:

* a capture read but holding nothing judgeable (an ``ibv_devinfo -vv`` cut before its port sections) is
  "cannot judge" (severity.yml ``coverage.nothing_judgeable``), not healthy;
* perftest's "Couldn't connect to <host>:<port>" is a test that never ran (``ib_write_bw.not_run``), parsed,
  not a parse error;
* ``ERR!`` in any reading of the plain nvidia-smi table (fan, power draw) is ``gpu_field_error.error_token``,
  as in ``-q`` and ``--query-gpu``; an error token in a setting (the power cap) is a note;
* a ``--query-gpu`` row whose readings answer was judged (healthy), as the plain table's row is.

Expected values are read off the captures (tests/corpus/round2, outside the hold-out).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from ccparse import registry

from clusterctl.analysis import checks
from clusterctl.analysis.engine import analyze_dir

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench_corpus  # noqa: E402

CUT_DEVINFO = "ibv_devinfo/ucx5732-vv-mlnx-ofed4-exp-flags-cx6-hpe-cut-before-ports.txt"
NOT_RUN = "ib_write_bw/perftest228-rocep133s0f0-couldnt-connect-socket.txt"
FAN_ERR = "nvidia-smi/gpud-525.125.06-geforce-fan-err-e-process.txt"
QUERY_UNITS = "nvidia-smi-query/smc57-rtx2060-460.91.03-csv-units-header.txt"


def _capture(rel: str) -> str:
    assert not bench_corpus.held_out_by_hash(rel)
    return bench_corpus.read_capture(bench_corpus.CORPUS / "round2" / rel)


def _host(tmp_path: Path, files: dict[str, str]):
    checks.load_all()
    d = tmp_path / "h"
    d.mkdir()
    for kind, text in files.items():
        (d / f"{kind}.txt").write_text(text)
    return analyze_dir(str(tmp_path), {}).hosts["h"]


def test_device_list_cut_before_its_ports_is_cannot_judge(tmp_path: Path) -> None:
    text = _capture(CUT_DEVINFO)
    assert "\tport:" not in text and "hca_id:\tmlx5_1" in text
    rep = _host(tmp_path, {"ibv_devinfo": text})
    assert rep.status == "cannot judge"
    assert rep.cannot_judge_reason.startswith("nothing judgeable read: 1 device(s) (mlx5_1) listed without a port")


def test_nothing_judgeable_does_not_hide_what_another_capture_shows(tmp_path: Path) -> None:
    rep = _host(tmp_path, {"ibv_devinfo": _capture(CUT_DEVINFO), "nvidia-smi": _capture(FAN_ERR)})
    assert rep.status == "failed"


def test_perftest_that_could_not_connect_parses_and_is_cannot_judge(tmp_path: Path) -> None:
    text = _capture(NOT_RUN)
    data = registry.parse("ib_write_bw", text)
    assert data["not_run"] == "Couldn't connect to 192.168.125.211:18515" and data["results"] == []
    rep = _host(tmp_path, {"ib_write_bw": text})
    assert rep.status == "cannot judge" and "the test did not run" in rep.cannot_judge_reason


def test_err_in_a_table_reading_is_a_field_error(tmp_path: Path) -> None:
    text = _capture(FAN_ERR)
    assert "|ERR!   38C" in text
    (gpu,) = registry.parse("nvidia-smi", text)["gpus"]
    assert gpu["error_fields"] == [("fan.speed", "ERR!")]
    rep = _host(tmp_path, {"nvidia-smi": text})
    (f,) = rep.findings
    assert (rep.status, f.check, f.severity) == ("failed", "gpu_field_error", "critical")
    assert "fan.speed 'ERR!'" in f.message and "00000000:01:00.0" in f.message


def test_err_in_the_power_cap_is_a_setting_note(tmp_path: Path) -> None:
    text = _capture(FAN_ERR).replace("|ERR!   38C    P5    49W / 450W |", "|  30%   38C    P5    49W / ERR! |")
    (gpu,) = registry.parse("nvidia-smi", text)["gpus"]
    assert gpu["error_fields"] == [("power.limit", "ERR!")]
    rep = _host(tmp_path, {"nvidia-smi": text})
    assert rep.status == "healthy" and any("cannot read a setting" in n.message for n in rep.notes)


def test_query_row_whose_readings_answer_is_healthy(tmp_path: Path) -> None:
    text = _capture(QUERY_UNITS)
    assert "GeForce RTX 2060, 00000000:09:00.0, 460.91.03, 20 %" in text
    assert _host(tmp_path, {"nvidia-smi-query": text}).status == "healthy"


@pytest.mark.parametrize("fields", ["name,pci.bus_id,driver_version\nGeForce RTX 2060, 00000000:09:00.0, 460.91.03\n"])
def test_query_listing_names_only_still_needs_an_expectation(tmp_path: Path, fields: str) -> None:
    # a listing of names and bus ids only holds no reading: the GPU count cannot be judged without gpus_per_node
    rep = _host(tmp_path, {"nvidia-smi-query": fields})
    assert rep.status == "cannot judge" and rep.cannot_judge_reason == "needs gpus_per_node"
