"""The bounded number helpers every parser uses on captured text (issue 14: nothing but
ParseError escapes a parser, whatever number a paste holds)."""

from __future__ import annotations

import json
import math

import pytest
from ccparse.common import MAX_NUMBER_CHARS, ParseError, json_loads, need_float, need_int, to_float, to_int
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.mark.parametrize(("text", "base", "want"), [
    ("42", 10, 42), (" 7 ", 10, 7), ("-3", 10, -3), ("0x1f", 0, 31), ("ff", 16, 255),
    ("18446744073709551616", 10, 2**64), (5, 10, 5), (3.0, 10, 3),
])
def test_to_int_reads_what_tools_print(text: object, base: int, want: int) -> None:
    assert to_int(text, base) == want


@pytest.mark.parametrize("text", ["9" * 5000, "-" + "9" * 5000, "1" * (MAX_NUMBER_CHARS + 1), "", "-", "N/A",
                                  "1.5", "inf", "nan", None, True, math.inf, math.nan, 1e300])
def test_to_int_gives_none_for_what_is_no_bounded_integer(text: object) -> None:
    assert to_int(text) is None


@pytest.mark.parametrize(("text", "want"), [("71.97", 71.97), ("-0.0", 0.0), ("1e3", 1000.0), (16, 16.0)])
def test_to_float_reads_what_tools_print(text: object, want: float) -> None:
    assert to_float(text) == want


@pytest.mark.parametrize("text", ["1e999", "-1e999", "inf", "-Infinity", "NaN", "9" * 5000, "", "x", None, False,
                                  10**400, math.inf])
def test_to_float_gives_none_for_infinite_nan_or_overlong(text: object) -> None:
    assert to_float(text) is None


def test_need_int_and_need_float_raise_parse_error_naming_value_and_line() -> None:
    with pytest.raises(ParseError) as exc:
        need_int("9" * 5000, "tool-x", 12, "port")
    assert exc.value.line == 12 and exc.value.tool == "tool-x"
    assert "port" in str(exc.value) and "at line 12" in str(exc.value)
    with pytest.raises(ParseError, match="speed"):
        need_float("1e999", "tool-x", 3, "speed")
    assert need_int("8", "t", 1, "n") == 8 and need_float("2.5", "t", 1, "n") == 2.5


def test_json_loads_lets_only_json_decode_error_escape() -> None:
    doc = json_loads('{"a": ' + "9" * 5000 + ', "b": 12}')
    assert doc["b"] == 12 and to_int(doc["a"]) is None  # json.loads raises a plain ValueError here
    with pytest.raises(json.JSONDecodeError):
        json_loads("[" * 100_000)  # json.loads raises RecursionError here


def _to_int_general(text: object, base: int = 10) -> int | None:
    """to_int as it was before its str-first fast path (every type asked in turn)."""
    if isinstance(text, bool) or text is None:
        return None
    if isinstance(text, int):
        return text
    if isinstance(text, float):
        return int(text) if math.isfinite(text) and abs(text) < 1e30 else None
    s = str(text).strip()
    if not s or len(s) > MAX_NUMBER_CHARS:
        return None
    try:
        return int(s, base)
    except ValueError:
        return None


def _to_float_general(text: object) -> float | None:
    if isinstance(text, bool) or text is None:
        return None
    if isinstance(text, (int, float)):
        v = float(text) if not isinstance(text, int) or abs(text) < 10**30 else math.inf
    else:
        s = str(text).strip()
        if not s or len(s) > MAX_NUMBER_CHARS:
            return None
        try:
            v = float(s)
        except ValueError:
            return None
    return v if math.isfinite(v) else None


class _Str(str):
    pass


_TEXTS = st.one_of(st.text(alphabet="0123456789 .-+eExXabf_\t\n٣", max_size=12), st.integers(-(10**40), 10**40),
                   st.floats(allow_nan=True), st.booleans(), st.none(),
                   st.text(alphabet="0123456789 .-", max_size=8).map(_Str))


@settings(max_examples=500, deadline=None)
@given(_TEXTS)
def test_str_first_fast_paths_answer_as_before(text: object) -> None:
    assert repr(to_int(text)) == repr(_to_int_general(text))
    assert repr(to_int(text, 16)) == repr(_to_int_general(text, 16))
    assert repr(to_float(text)) == repr(_to_float_general(text))
