"""The corpus of real captures (tests/corpus, CORPUS.md): every NON-held-out file parses and gets
the verdict its expect.yml gives, naming the expected subjects. Held-out files are only counted
by bench/bench_corpus.py (rates reported in bench/RESULTS.md), never asserted here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench_corpus  # noqa: E402

PARTS = [p for p in ("network", "gpu") if (bench_corpus.CORPUS / p / "expect.yml").exists()]
CASES = [(part, rel) for part in PARTS for rel in bench_corpus.corpus_files(part)
         if rel not in bench_corpus.load_holdout(part)]


def test_every_file_has_an_expectation_and_a_source() -> None:
    for part in PARTS:
        expect = bench_corpus.load_expect(part)
        files = bench_corpus.corpus_files(part)
        assert sorted(expect) == files, f"{part}: expect.yml and the files differ"
        for rel in files:
            raw = (bench_corpus.CORPUS / part / rel).read_text(errors="replace")
            assert bench_corpus.split_header(raw)[0].get("source"), f"{part}/{rel}: no # corpus-source:"
            assert expect[rel]["verdict"] in ("pass", "fail")


def test_holdout_is_the_fixed_fifth() -> None:
    # the rule of CORPUS.md over the files present at the hold-out commit; files added later are
    # never held out, so the held-out set stays a subset of what the rule picks today
    for part in PARTS:
        held = bench_corpus.load_holdout(part)
        assert held and held <= set(bench_corpus.corpus_files(part))


@pytest.mark.parametrize(("part", "rel"), CASES, ids=[f"{p}/{r}" for p, r in CASES])
def test_capture_parses_and_gets_its_verdict(part: str, rel: str) -> None:
    from clusterctl.analysis import checks

    checks.load_all()
    out = bench_corpus.judge_file(part, rel, bench_corpus.load_expect(part)[rel])
    assert out.parsed, out.error
    assert out.verdict_ok, f"got {out.got}, want {out.want}, subjects not named: {out.missing_subjects}"
