"""An envelope checked on a capture's bytes alone (``preparsed.load(doc, kind, None, raw=...)``, the
engine's pre-parsed fast path, issue 29 item 7 session 13) answers as the check of the decoded text does,
or MISSING (the engine then decodes and asks again): never data where the text's check would refuse it,
never for a blank capture, never where the bytes' check is not certain to be the text's."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from ccparse import preparsed
from hypothesis import example, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
TEXT = sorted((REPO / "tests" / "fixtures" / "ibstat").glob("*.txt"))[0].read_text()


def _envelope(text: str, old: bool) -> dict[str, Any]:
    env = preparsed.envelope("ibstat", text)
    assert env is not None
    if old:  # an envelope written before raw_crc32: checked by the sha256 of the same bytes
        env = {k: v for k, v in env.items() if k != "raw_crc32"}
        env["raw_sha256"] = hashlib.sha256(text.rstrip().encode("utf-8", "replace")).hexdigest()
    return env


def _decoded(raw: bytes) -> tuple[str, bytes | None]:
    """What the engine hands ``load`` after decoding: the text, and the bytes where they decoded strictly."""
    try:
        return raw.decode("utf-8"), raw
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), None


_TAILS = st.sampled_from(["", "\n", " \n\n", "\t", "\u00a0", "\x1c", "\x1f", "\u2028", "\u3000", "\x85", "x",
                          "\u00e9", " \u00a0 \n"])


@settings(max_examples=150, deadline=None)
@given(head=_TAILS, tail=_TAILS, junk=st.sampled_from([b"", b"\xff", b"\xc3", b" \xfe\n"]),
       edit=st.sampled_from(["none", "rate", "cut", "char"]), old=st.booleans())
@example(head="", tail="", junk=b"", edit="none", old=False)
def test_bytes_alone_answer_as_the_text_or_missing(head: str, tail: str, junk: bytes, edit: str, old: bool) -> None:
    made = head + TEXT + tail  # what the collector parsed
    env = _envelope(made, old)
    # the file on the controller: the same text, or changed after collection, or with bytes no UTF-8 added
    text = {"none": made, "rate": made.replace("400", "200", 1), "cut": made.rsplit("\n", 3)[0],
            "char": made.rstrip() + "x"}[edit]
    raw = text.encode("utf-8") + junk
    fast = preparsed.load(env, "ibstat", None, raw=raw)
    slow_text, strict = _decoded(raw)
    slow = preparsed.load(env, "ibstat", slow_text, raw=strict)
    if fast is not preparsed.MISSING:
        assert slow is not preparsed.MISSING and fast == slow
        assert strict is not None and not slow_text.isspace()  # valid UTF-8 and not blank: what the engine asks


@pytest.mark.parametrize("blank", [b"", b"\n", b"  \n\t", b"\x1c\n"])
@pytest.mark.parametrize("old", [False, True])
def test_a_blank_capture_is_never_answered_from_the_bytes(blank: bytes, old: bool) -> None:
    """Even an envelope made of a blank text (a collector never writes one) is left to the text's path,
    which reports the capture as empty."""
    env: dict[str, Any] = {"schema": preparsed.SCHEMA, "kind": "ibstat",
                           "parser_version": preparsed.parser_version("ibstat"), "data": {"devices": []}}
    env.update({"raw_sha256": preparsed.raw_hash(blank.decode())} if old
               else {"raw_crc32": preparsed.raw_check(blank.decode())})
    assert preparsed.load(env, "ibstat", None, raw=blank) is preparsed.MISSING
