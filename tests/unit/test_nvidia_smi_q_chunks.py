"""``nvidia-smi -q``: a section taken into the tree whole (ccparse.nvidia_smi_q._chunk, the pieces
cache) gives what the line-by-line path gives.

The general form is the same parser with no piece ever taken whole (``_chunk`` refusing every
piece): every ``nvidia-smi -q`` capture of the repository, and random reports built of repeated
sections holding the lines the parser treats apart (warnings, elisions, banners, error tokens,
tabs, blank lines, a section reopened by a later line of its name), parse to the same result or
the same ``ParseError``, however often they were seen; and a shared section is never changed by
the report that reopened it.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from ccparse import nvidia_smi_q as nsq
from ccparse.common import ParseError
from hypothesis import example, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
CAPTURES = sorted(p for base in ("tests/fixtures", "tests/corpus") for p in (REPO / base).rglob("*")
                  if p.is_file() and p.parent.name in ("nvidia-smi-q", "gpu") and p.suffix in (".txt", ""))


def _outcome(text: str) -> str:
    try:
        return repr(nsq.parse_nvidia_smi_q(text))
    except ParseError as exc:
        return f"ParseError({exc.tool!r}, {exc.reason!r}, {exc.line!r})"


def _line_by_line(text: str) -> str:
    saved = nsq._chunk, nsq._CHUNKS, nsq._SEEN
    nsq._chunk, nsq._CHUNKS, nsq._SEEN = (lambda piece: ()), {}, set()
    try:
        return _outcome(text)
    finally:
        nsq._chunk, nsq._CHUNKS, nsq._SEEN = saved


def _same(text: str) -> None:
    slow = _line_by_line(text)
    for _ in range(3):  # first sight, taken whole, from the cache
        assert _outcome(text) == slow


def test_the_repository_has_reports() -> None:
    assert len(CAPTURES) >= 20


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: str(p.relative_to(REPO)))
def test_capture_equals_line_by_line(path: Path) -> None:
    text = path.read_text(errors="replace")
    _same(text)
    _same(text.replace("\n", "\r\n"))  # not a plain text: line by line throughout


INNER = ["        Current                           : Enabled", "        Used                     : 0 MiB",
         "        Uncorrectable Error               : 0", "        Pending : [GPU requires reset]",
         "        Volatile", "            SRAM Correctable : 0", "            DRAM Uncorrectable : Unknown Error",
         "        HW Slowdown : Not Active", "            HW Thermal Slowdown : Active", "",
         "        [...]", "        ...", "        WARNING: infoROM is corrupted at gpu 0000:07:00.0",
         "        Unable to determine the device handle", "        ==== NVSMI LOG ====", "        not a key (x)!",
         "\tTabbed : 1", "      \tMixed : 2", "   Three : 3", "    Four : 4", "        Clocks:",
         "        Current : Disabled", "          Deeper", "        Temp : 41 C", "        Temp : 42 C",
         "        Retired Pages", "        ERR!", "        Value : ERR!"]
SECTIONS = ["ECC Errors", "Remapped Rows", "Temperature", "Clocks Throttle Reasons", "PCI", "Utilization",
            "Retired Pages", "Power Readings", "GPU Reset Status", "Fabric", "Used", "Clocks:"]


@st.composite
def _reports(draw: Any) -> str:
    pool = draw(st.lists(st.tuples(st.sampled_from(SECTIONS), st.lists(st.sampled_from(INNER), max_size=6)),
                         min_size=1, max_size=4))
    sections = ["    " + name + "\n" + "".join(ln + "\n" for ln in inner) for name, inner in pool]
    gpus = draw(st.integers(1, 4))
    out = ["==============NVSMI LOG==============\n", "Driver Version : 535.54.03\n",
           f"Attached GPUs : {gpus}\n"]
    for i in range(gpus):
        out.append(f"GPU 00000000:{i + 7:02X}:00.0\n")
        out.append(draw(st.sampled_from(["", "    Product Name : NVIDIA H100\n", "    Minor Number : 1\n"])))
        out += draw(st.lists(st.sampled_from(sections), max_size=6))
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(_reports())
@example("GPU 00000000:07:00.0\n    ECC Errors\n        Volatile : 1\n"
         "GPU 00000000:08:00.0\n    ECC Errors\n        Volatile : 1\n    ECC Errors\n        Other : 2\n"
         "GPU 00000000:09:00.0\n    ECC Errors\n        Volatile : 1\n")
@example("GPU 00000000:07:00.0\n    Temperature\n        [...]\n\nGPU 00000000:08:00.0\n    Temperature\n"
         "        [...]\n")
def test_report_equals_line_by_line(text: str) -> None:
    _same(text)


def test_a_reopened_shared_section_is_copied() -> None:
    one = "GPU 00000000:07:00.0\n    Remapped Rows\n        Pending : No\n    Product Name : X\n"
    for _ in range(3):
        first = nsq.parse_nvidia_smi_q(one)
    shared = copy.deepcopy({k: v for k, v in nsq._CHUNKS.items() if v})
    assert "    Remapped Rows\n        Pending : No" in shared, "the section was taken whole"
    reopened = one.replace("    Product", "    Remapped Rows\n        Correctable Error : 5\n    Product")
    for _ in range(3):
        assert _outcome(reopened) == _line_by_line(reopened)
        assert nsq.parse_nvidia_smi_q(reopened)["gpus"][0]["remapped_rows"]["correctable"] == 5
    assert all(nsq._CHUNKS[k] == v for k, v in shared.items())  # the cached sections are as they were
    assert nsq.parse_nvidia_smi_q(one) == first
