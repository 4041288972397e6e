"""The bounded number helpers every parser uses on captured text (issue 14: nothing but
ParseError escapes a parser, whatever number a paste holds)."""

from __future__ import annotations

import json
import math

import pytest
from ccparse.common import MAX_NUMBER_CHARS, ParseError, json_loads, need_float, need_int, to_float, to_int


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
