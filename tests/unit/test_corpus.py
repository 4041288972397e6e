"""The corpus of real captures (tests/corpus, notes/CORPUS.md), every part (network, gpu).

Every NON-held-out file parses and gets the verdict its expect.yml gives, naming the expected
subjects (expectations written from reading the captures). Held-out files are only counted by
bench/bench_corpus.py (rates reported in bench/RESULTS.md), never asserted here. The same
non-held-out captures, mangled the ways pastes get mangled (cut anywhere, odd numbers, a huge
line, bytes of another tool), make a parser raise ``ParseError`` or succeed, nothing else, and
quickly.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from ccparse import registry
from ccparse.common import ParseError

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench_corpus  # noqa: E402

#: the pass/fail parts of issue 14; the three-level part round2 (issue 29) has its own shape test
#: (test_corpus_round2_shape.py) and is rated by bench/bench_corpus.py only
PARTS = [p for p in bench_corpus.parts_present() if p in ("network", "gpu")]
CASES = [(part, rel) for part in PARTS for rel in bench_corpus.corpus_files(part)
         if rel not in bench_corpus.load_holdout(part)]
IDS = [f"{p}/{r}" for p, r in CASES]
#: the verdict test also covers round2's files outside its hold-out (three-level, bench_corpus.judge_file)
VERDICT_CASES = CASES + [("round2", rel) for rel in bench_corpus.corpus_files("round2")
                         if rel not in bench_corpus.load_holdout("round2")]
#: part seen (CORPUS.md): gathered by an engineer who also changes parsers, so never held out: every file asserted
SEEN = [("seen", rel) for rel in bench_corpus.corpus_files("seen")]
VERDICT_CASES += SEEN
#: round2 rest files judged wrong today: each must still fail (a ratchet; a fix removes its line)
KNOWN_MISSES = {ln.strip() for ln in (bench_corpus.CORPUS / "round2" / "KNOWN_MISSES.txt").read_text().splitlines()
                if ln.strip() and not ln.startswith("#")}
#: seen files judged wrong today (the same ratchet, tests/corpus/seen/KNOWN_MISSES.txt)
SEEN_MISSES = {ln.strip() for ln in (bench_corpus.CORPUS / "seen" / "KNOWN_MISSES.txt").read_text().splitlines()
               if ln.strip() and not ln.startswith("#")}
VERDICT_PARAMS = [pytest.param(p, r, id=f"{p}/{r}", marks=[pytest.mark.xfail(
    strict=True, reason=f"a known miss (tests/corpus/{p}/KNOWN_MISSES.txt); fixed: remove its line")]
    if (p == "round2" and r in KNOWN_MISSES) or (p == "seen" and r in SEEN_MISSES) else []) for p, r in VERDICT_CASES]
#: files of each part when its hold-out was chosen (CORPUS.md: files added later are never held out)
FILES_AT_HOLDOUT = {"network": 80, "gpu": 92}


def test_both_parts_are_present() -> None:
    assert set(PARTS) >= {"network", "gpu"}


def test_every_file_has_an_expectation_and_a_source() -> None:
    for part in PARTS:
        expect = bench_corpus.load_expect(part)
        files = bench_corpus.corpus_files(part)
        assert sorted(expect) == files, f"{part}: expect.yml and the files differ"
        for rel in files:
            raw = (bench_corpus.CORPUS / part / rel).read_text(errors="replace")
            assert raw.startswith("# corpus-source: "), f"{part}/{rel}: does not start with # corpus-source:"
            assert bench_corpus.split_header(raw)[0].get("source"), f"{part}/{rel}: no # corpus-source:"
            assert expect[rel]["verdict"] in ("pass", "fail")


def test_holdout_is_the_fixed_fifth() -> None:
    # the rule of CORPUS.md over the files present at the hold-out commit; files added later are
    # never held out, so the held-out set stays a subset of the files and a fifth of those of then
    for part in PARTS:
        held = bench_corpus.load_holdout(part)
        assert held and held <= set(bench_corpus.corpus_files(part))
        if part in FILES_AT_HOLDOUT:
            assert len(held) == round(FILES_AT_HOLDOUT[part] / 5), part


def test_kind_names_of_the_corpus_are_registry_kinds() -> None:
    kinds = set(registry.kinds())
    for part in PARTS:
        assert {Path(rel).parts[0] for rel in bench_corpus.load_expect(part)} <= kinds, part


def test_seen_part_is_three_level_with_sources_and_never_held_out() -> None:
    files = bench_corpus.corpus_files("seen")
    expect = bench_corpus.load_expect("seen")
    assert files and sorted(expect) == files, "seen: expect.yml and the capture files differ"
    assert not (bench_corpus.CORPUS / "seen" / "HOLDOUT.txt").exists()
    kinds = set(registry.kinds())
    for rel in files:
        fields, body = bench_corpus.split_header((bench_corpus.CORPUS / "seen" / rel).read_text(errors="replace"))
        assert fields.get("source", "").startswith("https://"), f"seen/{rel}: no '# corpus-source: <URL>'"
        assert body.strip() and rel.split("/", 1)[0] in kinds, rel
        entry = expect[rel]
        assert entry["verdict"] in bench_corpus.LEVELS and entry.get("what") and entry.get("note"), rel


def test_known_misses_are_round2_rest_files() -> None:
    rest = {r for p, r in VERDICT_CASES if p == "round2"}
    assert rest >= KNOWN_MISSES, KNOWN_MISSES - rest
    assert set(bench_corpus.corpus_files("seen")) >= SEEN_MISSES, SEEN_MISSES - set(bench_corpus.corpus_files("seen"))


@pytest.mark.parametrize(("part", "rel"), VERDICT_PARAMS)
def test_capture_parses_and_gets_its_verdict(part: str, rel: str) -> None:
    from clusterctl.analysis import checks

    checks.load_all()
    out = bench_corpus.judge_file(part, rel, bench_corpus.load_expect(part)[rel])
    assert out.parsed, out.error
    assert out.verdict_ok, (f"got {out.got}, want {out.want}, subjects not named: {out.missing_subjects}",
                            out.findings)


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


@pytest.mark.parametrize(("part", "rel"), CASES, ids=IDS)
def test_mangled_captures_raise_parse_error_or_parse(part: str, rel: str) -> None:
    kind = rel.split("/", 1)[0]
    text = bench_corpus.read_capture(bench_corpus.CORPUS / part / rel)
    for i, variant in enumerate(_mangled(text)):
        t0 = time.perf_counter()
        try:
            registry.parse(kind, variant)
        except ParseError as exc:
            assert exc.tool, (rel, i)
        took = time.perf_counter() - t0
        assert took < 2.0, (rel, i, took)
