"""General reading/judging rules found by corpus batch seen6 (tests/corpus/CORPUS.md): each text below is
written from the form of a real capture, the expected values read off that text."""

from __future__ import annotations

from typing import Any

import pytest
from ccparse import registry
from ccparse.common import ParseError
from conftest import judge_text

from clusterctl.analysis import checks
from clusterctl.analysis.model import NOTHING, Finding

checks.load_all()


def judge(kind: str, text: str, **spec: Any) -> list[Finding]:
    return judge_text(kind, text, spec)


# --- nvidia-smi --query-gpu: a noheader run read with the fields its shown command names ---------------

def test_noheader_query_takes_the_fields_of_its_command_line() -> None:
    text = ("root@hostname:~# nvidia-smi --query-gpu=fan.speed --format=csv,noheader,nounits -i 0\n"
            "[Not Supported]\n")
    data = registry.parse("nvidia-smi-query", text)
    assert data["fields"] == ["fan.speed"]
    assert len(data["gpus"]) == 1 and data["gpus"][0]["fields"] == {"fan.speed": None}
    # a fan speed that is not supported is no reading of the GPU's health: a listing, cannot judge
    # (docs/severity.md gpu_count.cannot_judge), not a parse error
    found = judge("nvidia-smi-query", text)
    assert [(f.check, f.message.startswith("cannot judge")) for f in found] == [("gpu_count", True)]


def test_noheader_query_with_command_reads_every_column() -> None:
    text = ("$ nvidia-smi --query-gpu=index,temperature.gpu,utilization.gpu --format=csv,noheader\n"
            "0, 41, 3 %\n1, 39, 0 %\n")
    data = registry.parse("nvidia-smi-query", text)
    assert [g["temperature_c"]["gpu"] for g in data["gpus"]] == [41.0, 39.0]
    assert [g["utilization_pct"]["gpu"] for g in data["gpus"]] == [3.0, 0.0]


def test_query_with_header_after_its_command_is_unchanged() -> None:
    text = ("$ nvidia-smi --query-gpu=name,temperature.gpu --format=csv\n"
            "name, temperature.gpu\nNVIDIA A100-SXM4-40GB, 33\n")
    data = registry.parse("nvidia-smi-query", text)
    assert data["fields"] == ["name", "temperature.gpu"] and "inferred_header" not in data
    assert data["gpus"][0]["temperature_c"]["gpu"] == 33.0


# --- nvidia-smi table: a paste that ends after a GPU's first row still lists that GPU -----------------

_TABLE = """\
+------------------------------------------------------+
| NVIDIA-SMI 5.325.15   Driver Version: 325.15         |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  GeForce GTX 680     Off  | 0000:03:00.0     N/A |                  N/A |
| 30%   29C  N/A     N/A /  N/A |        9MB /  4095MB |     N/A      Default |
+-------------------------------+----------------------+----------------------+
|   1  GeForce GTX 680     Off  | 0000:84:00.0     N/A |                  N/A |
"""


def test_table_cut_after_a_first_row_lists_the_gpu() -> None:
    data = registry.parse("nvidia-smi", _TABLE)
    assert [g["bus_id"] for g in data["gpus"]] == ["00000000:03:00.0", "00000000:84:00.0"]
    assert data["gpus"][1]["cut_after_first_row"] is True and data["gpus"][1]["temperature_c"]["gpu"] is None
    # two GPUs listed where the node has four: the count is judged as for a paste cut between rows
    assert [f.check for f in judge("nvidia-smi", _TABLE, gpus_per_node=4) if f.severity == "critical"] == ["gpu_count"]
    assert not [f for f in judge("nvidia-smi", _TABLE, gpus_per_node=2) if f.severity in ("critical", "warning")]


def test_table_first_row_followed_by_something_else_is_still_an_error() -> None:
    broken = _TABLE + "|  what is this row                                                            |\n" \
        "+-------------------------------+----------------------+----------------------+\n"
    with pytest.raises(ParseError):
        registry.parse("nvidia-smi", broken)


# --- nvidia-smi -q: fewer GPU blocks than 'Attached GPUs', identity fields only -----------------------

_Q_CUT = """\
Attached GPUs                             : 2
GPU 00000000:17:00.0
    Product Name                          : NVIDIA GeForce GTX 1080 Ti
    Product Brand                         : GeForce
    Persistence Mode                      : Disabled
    Serial Number                         : N/A
    GPU UUID                              : GPU-386bfbbc-c3df-8e62-793d-84dc629de7f6
    Minor Number                          : 0
    VBIOS Version                         : 86.02.39.00.22
"""


def test_q_cut_before_announced_blocks_and_readings_is_nothing_judgeable() -> None:
    found = judge("nvidia-smi-q", _Q_CUT)
    assert [f.check for f in found if f.message.startswith(NOTHING)] == ["coverage"]
    assert not [f for f in found if f.severity in ("critical", "warning")]
    # with the node's count the stated count is judged as before: 2 attached of 2 expected, still no reading
    assert not [f for f in judge("nvidia-smi-q", _Q_CUT, gpus_per_node=2) if f.severity in ("critical", "warning")]
