"""The envelope's raw-text check (ccparse.preparsed): ``raw_crc32`` (crc32 and length of the stripped
UTF-8 text) in new envelopes, ``raw_sha256`` in envelopes written before it; each tells a changed
capture from the one the envelope was made of, from the text and from the bytes."""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path
from typing import Any

import pytest
from ccparse import preparsed
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
TEXT = (REPO / "tests" / "fixtures" / "ibstat").glob("*.txt").__next__().read_text()
#: a capture changed after collection: another rate, a line cut, a character added at the end
CHANGED = [TEXT.replace("400", "200", 1), TEXT.rsplit("\n", 3)[0], TEXT.rstrip() + "x"]


def _new_envelope(text: str) -> dict[str, Any]:
    env = preparsed.envelope("ibstat", text)
    assert env is not None
    return env


def _old_envelope(text: str) -> dict[str, Any]:
    env = _new_envelope(text)
    env = {k: v for k, v in env.items() if k != "raw_crc32"}
    env["raw_sha256"] = hashlib.sha256(text.rstrip().encode()).hexdigest()
    return env


def test_new_envelopes_carry_the_crc_and_length() -> None:
    env = preparsed.envelope("ibstat", TEXT)
    assert env is not None and "raw_sha256" not in env
    data = TEXT.rstrip().encode()
    assert env["raw_crc32"] == f"{zlib.crc32(data):08x}:{len(data)}"


@pytest.mark.parametrize("make", ["new", "old"])
def test_the_same_capture_is_used_from_text_and_bytes(make: str) -> None:
    env = _new_envelope(TEXT) if make == "new" else _old_envelope(TEXT)
    want = env["data"]
    assert preparsed.load(env, "ibstat", TEXT) == want
    assert preparsed.load(env, "ibstat", TEXT, raw=TEXT.encode()) == want
    assert preparsed.load(env, "ibstat", TEXT + "\n\n", raw=(TEXT + "\n\n").encode()) == want  # trailing blanks


@pytest.mark.parametrize("make", ["new", "old"])
@pytest.mark.parametrize("changed", range(len(CHANGED)))
def test_a_changed_capture_is_detected(make: str, changed: int) -> None:
    env = _new_envelope(TEXT) if make == "new" else _old_envelope(TEXT)
    text = CHANGED[changed]
    assert text != TEXT
    assert preparsed.load(env, "ibstat", text) is preparsed.MISSING
    assert preparsed.load(env, "ibstat", text, raw=text.encode()) is preparsed.MISSING


def test_an_envelope_without_a_check_is_not_used() -> None:
    env = preparsed.envelope("ibstat", TEXT)
    assert env is not None
    del env["raw_crc32"]
    assert preparsed.load(env, "ibstat", TEXT, raw=TEXT.encode()) is preparsed.MISSING


_ODD = ["\x1c", "\x1f", "\x85", "\xa0", "\u2028", " ", "\t", "\n", "\r", "é", "a", "<"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ODD), max_size=30).map("".join))
def test_check_from_bytes_is_the_texts_or_none(text: str) -> None:
    got = preparsed.raw_check_bytes(text.encode("utf-8"))
    assert got is None or got == preparsed.raw_check(text)
