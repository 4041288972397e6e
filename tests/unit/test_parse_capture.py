"""clusterctl.parse_capture (the library under ``clusterctl parse``) called directly."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import FIXTURES

from clusterctl.errors import UsageError
from clusterctl.parse_capture import kinds, parse_capture, to_jsonable


def test_a_capture_is_parsed_into_plain_data() -> None:
    out = parse_capture("ibstat", FIXTURES / "ibstat" / "h100-cx7-roce-all-active.txt")
    # the capture: CA 'mlx5_0', Port 1: State: Active, Rate: 400
    dev = out["devices"][0]
    assert dev["name"] == "mlx5_0" and dev["ports"][0]["state"] == "ACTIVE"
    assert "ibstat" in kinds()


def test_unknown_kind_unreadable_file_and_refused_output_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"parse: unknown KIND 'ibstatt'; known kinds: .*ibstat") as exc:
        parse_capture("ibstatt", tmp_path / "x.txt")
    assert exc.value.exit_code == 2
    with pytest.raises(UsageError, match=r"parse: cannot read .*none.txt: No such file"):
        parse_capture("ibstat", tmp_path / "none.txt")
    bad = tmp_path / "bad.txt"
    bad.write_text("hello\nworld\n")  # no CA section: ibstat's parser refuses it, naming the line
    with pytest.raises(UsageError, match=r"parse: .*bad.txt: .*line"):
        parse_capture("ibstat", bad)


def test_to_jsonable_turns_dataclasses_tuples_and_sets_into_json_types() -> None:
    @dataclasses.dataclass
    class P:
        port: int
        peers: tuple[str, ...]

    assert to_jsonable({1: P(1, ("a", "b")), "s": {3}}) == {"1": {"port": 1, "peers": ["a", "b"]}, "s": [3]}
