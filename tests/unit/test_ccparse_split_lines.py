"""ccparse.common.split_lines (the parsers' fast line split) answers exactly ``str.splitlines``.

On every capture of the repository (tests/fixtures, tests/corpus) as it is and with CRLF, and on random
texts of every line boundary ``splitlines`` knows (ASCII and not) beside ordinary characters.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ccparse.common import split_lines
from hypothesis import example, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
CAPTURES = sorted(p for base in ("tests/fixtures", "tests/corpus") for p in (REPO / base).rglob("*")
                  if p.is_file() and p.suffix in (".txt", ".csv", ".log", ".json", ".xml", ""))
BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def test_every_capture_splits_as_splitlines() -> None:
    assert len(CAPTURES) > 200
    for path in CAPTURES:
        text = path.read_text(errors="replace")
        for variant in (text, text.replace("\n", "\r\n"), text.rstrip("\n"), text + "\n\n"):
            assert split_lines(variant) == variant.splitlines(), path


@pytest.mark.parametrize("text", ["", "\n", "\n\n", "a", "a\n", "a\n\n", "\na", "a\nb", " \n \n"])
def test_edges(text: str) -> None:
    assert split_lines(text) == text.splitlines()


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([*BREAKS, "a", " ", "GPU 0", ":", "é", "\t"]), max_size=40).map("".join))
@example("x\x1c")
@example("x\x85y\n")
def test_random_text_splits_as_splitlines(text: str) -> None:
    assert split_lines(text) == text.splitlines()
