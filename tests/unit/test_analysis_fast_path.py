"""The analysis speed work (issue 29 item 7, session 9) changes no verdict.

* A generated 512-node cluster (bench/bench_analysis.py, its three injected faults) with the cases
  that take the slow branches of the fast paths (a capture ending in a non-ASCII or an
  information-separator "space", a capture with bytes that are not UTF-8, a host folder and a
  capture that are symlinks inside the folder) is judged from the raw text with 1 process (the
  plain path) and pre-parsed with 1 and 2 processes: the reports are identical, and the
  pre-parsed run parses no capture (every envelope's raw-text hash matched).
* The raw-text hash taken from the bytes (``preparsed.raw_hash_bytes``) is the hash of the text
  whenever it answers, and ``looks_like_xml`` reading a head of the text answers as reading all.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from conftest import REPO
from hypothesis import example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(REPO / "bench"))

import bench_analysis as bench
from ccparse import preparsed, registry
from ccparse.common import strip_source_line
from ccparse.nvidia_smi_xml import looks_like_xml

from clusterctl.analysis import engine

#: text that str.rstrip strips and bytes.rstrip does not, and bytes that are no UTF-8
_ODD_TAILS = ["\u00a0", "\x1c", "\x1f", "\u2028", "\u3000", "\x85", " \u00a0 \n"]


def _comparable(report: Any) -> dict[str, Any]:
    d = report.to_dict()
    d["summary"].pop("seconds")
    return d


def _odd_cluster(ev: Path) -> None:
    """The cases that leave the fast paths, written into the generated folder ``ev``."""
    q = ev / "node002" / "nvidia-smi-q.txt"
    q.write_text(q.read_text() + "\u00a0")  # valid UTF-8 ending in a space bytes.rstrip keeps
    ib = ev / "node003" / "ibstat.txt"
    ib.write_text(ib.read_text() + "\x1c")  # ASCII, but str.isspace
    nccl = ev / "node004" / "nccl-tests.txt"
    nccl.write_bytes(nccl.read_bytes() + b"# \xff\xfe not UTF-8\n")
    os.rename(ev / "node007", ev / ".n7")  # a host folder that is a symlink inside the folder
    (ev / "node007").symlink_to(".n7")
    (ev / "node008" / "ibstat#copy.txt").symlink_to("ibstat.txt")  # a capture that is one


def _write_envelopes(ev: Path) -> None:
    """bench.write_preparsed, for texts that are no UTF-8 too (envelope of the decoded text)."""
    import json

    for host in sorted(p for p in ev.iterdir() if p.is_dir() and not p.is_symlink()):
        docs = {}
        for txt in sorted(host.glob("*.txt")):
            text = txt.read_bytes().decode("utf-8", errors="replace")
            env = preparsed.envelope(preparsed.base_kind(txt.stem), text)
            if env is not None:
                docs[txt.stem] = env
        (host / engine.PARSED_FILE).write_text(json.dumps(docs))


def test_512_nodes_fast_paths_give_the_plain_paths_verdicts(tmp_path: Path, monkeypatch: Any) -> None:
    ev = tmp_path / "ev"
    faults = bench.generate(512, ev)
    _odd_cluster(ev)
    plain = engine.analyze_dir(ev, bench.EXPECTATIONS, jobs=1)
    score = bench.score(plain, faults)
    assert score["recall"] == 1.0 and score["precision"] == 1.0, score
    assert plain.hosts["node008"].kinds.count("ibstat#copy") == 1
    raw_2 = engine.analyze_dir(ev, bench.EXPECTATIONS, jobs=2)
    _write_envelopes(ev)
    parsed: list[str] = []
    real_parse = registry.parse

    def counting(kind: str, text: str) -> Any:
        parsed.append(kind)
        return real_parse(kind, text)

    monkeypatch.setattr(registry, "parse", counting)
    pre_1 = engine.analyze_dir(ev, bench.EXPECTATIONS, jobs=1)
    assert parsed == [], f"the pre-parsed run parsed {len(parsed)} captures: an envelope's hash did not match"
    monkeypatch.setattr(registry, "parse", real_parse)
    pre_2 = engine.analyze_dir(ev, bench.EXPECTATIONS, jobs=2)
    want = _comparable(plain)
    for name, rep in (("raw, 2 processes", raw_2), ("pre-parsed, 1 process", pre_1),
                      ("pre-parsed, 2 processes", pre_2)):
        assert _comparable(rep) == want, name
    assert want["summary"]["hosts"] == 512


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "<", " ", "\n", "\r", "\t", "\x0b", *_ODD_TAILS, "é"]), max_size=40).map("".join),
       st.sampled_from(["", *_ODD_TAILS, "\n\n", "x"]))
def test_raw_hash_from_bytes_is_the_texts_or_none(body: str, tail: str) -> None:
    text = body + tail
    got = preparsed.raw_hash_bytes(text.encode("utf-8"))
    assert got is None or got == preparsed.raw_hash(text)
    if not text.rstrip(" \t\n\r\x0b\x0c") or text.rstrip(" \t\n\r\x0b\x0c")[-1] in "a<":
        assert got is not None  # the common case answers


def test_raw_hash_from_bytes_on_every_capture() -> None:
    answered = 0
    for path in sorted((REPO / "tests").rglob("*.txt")):
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        got = preparsed.raw_hash_bytes(data)
        assert got is None or got == preparsed.raw_hash(text), path
        answered += got is not None
    assert answered > 400


def _looks_like_xml_whole(text: str) -> bool:
    """The reference: every line of the text split first."""
    for raw in strip_source_line(text).splitlines():
        s = raw.strip()
        if not s or s.startswith(("WARNING:", "Unable to determine", "Unable to detect")):
            continue
        return s.startswith("<")
    return False


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 5000), st.sampled_from(["\n", "\r", "\r\n", " \n", "\u2028", "\x0b"]),
       st.lists(st.sampled_from(["<", "a", " ", "\n", "\r", "WARNING: x\n", "# source: f\n"]),
                max_size=20).map("".join))
def test_looks_like_xml_reads_a_head_as_the_whole(blank: int, sep: str, rest: str) -> None:
    text = sep * blank + rest
    assert looks_like_xml(text) == _looks_like_xml_whole(text)


def test_looks_like_xml_on_every_capture() -> None:
    for path in sorted((REPO / "tests").rglob("*.txt")):
        text = path.read_bytes().decode("utf-8", errors="replace")
        assert looks_like_xml(text) == _looks_like_xml_whole(text), path


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers(-(2**80), 2**80) | st.floats(allow_nan=False)
                    | st.text(max_size=8) | st.just("12345678901234567890123"),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
                    max_leaves=12))
@example(-(2**63) - 1)  # 19 digits: orjson gives a float
@example(-(2**63))
@example(2**64 - 1)
@example(2**64)
def test_envelope_decoder_is_jsons(value: Any) -> None:
    """orjson (where installed) reads an envelope file exactly as json.loads does, or is not used."""
    import json

    raw = json.dumps(value).encode()
    assert engine._loads_envelope(raw) == json.loads(raw)
    assert repr(engine._loads_envelope(raw)) == repr(json.loads(raw))  # 1 and 1.0 told apart


def test_envelope_decoder_edge_texts() -> None:
    import json

    for raw in (b'{"a":1,"a":2}', b'\xef\xbb\xbf{"a":1}', b'{"a":NaN}', b'{"a":1e400}', b'{"a":-Infinity}',
                b'{"a":12345678901234567890123}', b'[-123456789012345678901]', b'{"a":"\\ud800"}',
                b'[1.0,-0.0,1E5,0.1,18446744073709551615,-9223372036854775808]', b' {"a":1}\n'):
        assert repr(engine._loads_envelope(raw)) == repr(json.loads(raw)), raw


def test_a_regular_file_is_read_in_one_read(tmp_path: Path, monkeypatch: Any) -> None:
    """What fstat said and no byte more is the end: one os.read, not a second one to see EOF."""
    from clusterctl import paths

    f = tmp_path / "ibstat.txt"
    f.write_bytes(b"x" * 70_000)
    calls: list[int] = []
    real_read = os.read

    def counting(fd: int, n: int) -> bytes:
        calls.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(paths.os, "read", counting)
    assert paths.read_regular(f, 1 << 20) == b"x" * 70_000
    assert calls == [70_001]
