"""The GPU/NCCL/Slurm corpus of real captures (issue 14, notes/CORPUS.md).

Every file of ``tests/corpus/gpu`` that is NOT held out parses and gets the verdict and subjects
``expect.yml`` gives (written from reading the captures). Held-out files are only rated by
``bench/bench_corpus_gpu.py``, never asserted here. The same non-held-out captures, mangled the
ways pastes get mangled (cut anywhere, odd numbers, a huge line, bytes of another tool), make a
parser raise ``ParseError`` or succeed, nothing else, and quickly.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from ccparse import registry
from ccparse.common import ParseError

from bench.bench_corpus_gpu import CORPUS, judge_one, strip_header

PART = CORPUS / "gpu"
EXPECT: dict[str, Any] = yaml.safe_load((PART / "expect.yml").read_text())
HELD = set((PART / "HOLDOUT.txt").read_text().split())
REST = sorted(p for p in (str(x.relative_to(PART)) for x in PART.glob("*/*.txt")) if p not in HELD)


def test_every_capture_has_an_expectation_and_holdout_is_a_fifth() -> None:
    files = sorted(str(x.relative_to(PART)) for x in PART.glob("*/*.txt"))
    assert sorted(EXPECT) == files
    # chosen by the CORPUS.md rule from the 92 files of commit f60b101; files added later are never held out
    assert set(files) >= HELD and len(HELD) == round(92 / 5)
    for rel in files:
        assert (PART / rel).read_text().startswith("# corpus-source: "), rel


@pytest.mark.parametrize("rel", REST)
def test_rest_capture_parses_and_gets_its_verdict(rel: str) -> None:
    res = judge_one(PART, rel, EXPECT[rel])
    assert res["parsed"], res.get("parse_error")
    assert res["verdict_ok"], (res.get("got"), res.get("want"), res.get("missing_subjects"), res.get("findings"))


def _mangled(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    out = [text[: len(text) * k // 7] for k in range(1, 7)]  # cut anywhere, mid-line too
    out.append("".join(lines[len(lines) // 2:]))  # the back half only
    out.append(text.replace("0", "99999999999999999999999999"))  # numbers far past any int/float use
    out.append(text.replace("1", "-1").replace("2", "nan"))
    out.append(text.replace(":", "").replace("|", ""))
    out.append(text.replace("\n", "\r\n").replace(" ", "\t", 50))
    out.append(text + "x" * 200_000 + "\n")  # one very long line
    out.append(("| " * 30_000) + "\n" + text)
    out.append("\x1b[31m" + text.replace("\n", "\x1b[0m\n"))
    out.append(json.dumps({"results": [{"size": "x", "out_of_place": [1]}], "tests": 5, "nodes": "a"}))
    out.append(json.dumps({"results": [{"size": 1e308, "out_of_place": {"bus_bw": "inf", "nwrong": 1e300},
                                        "in_place": None}], "config": {"devices": 3}}))
    out.append(json.dumps({"DCGM GPU Diagnostic": {"test_categories": [{"category": 1, "tests": [
        {"name": 2, "results": [{"gpu_ids": ["x", 10 ** 30], "status": 5, "warnings": 7},
                                {"entity_group": "GPU", "entity_id": "a", "status": None}],
         "test_summary": []}]}]}, "metadata": []}))
    return out


@pytest.mark.parametrize("rel", REST)
def test_mangled_captures_raise_parse_error_or_parse(rel: str) -> None:
    kind = rel.split("/", 1)[0]
    text = strip_header((PART / rel).read_text())
    for i, variant in enumerate(_mangled(text)):
        t0 = time.perf_counter()
        try:
            registry.parse(kind, variant)
        except ParseError as exc:
            assert exc.tool, (rel, i)
        took = time.perf_counter() - t0
        assert took < 2.0, (rel, i, took)


def test_kind_names_of_the_corpus_are_registry_kinds() -> None:
    kinds = set(registry.kinds())
    assert {Path(rel).parts[0] for rel in EXPECT} <= kinds
