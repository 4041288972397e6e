"""Shape of corpus part round2 (issue 29 item 6, tests/corpus/CORPUS.md): cheap checks only.

Every capture names its public source and has an expectation with a valid three-level verdict;
the held-out list names existing files, follows the per-file hash rule and only ever grows (the
lines of the committed HOLDOUT.txt are compared with those of every earlier commit of it). No
verdict is asserted here: round2 is rated by bench/bench_corpus.py, held-out files only in aggregate.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench_corpus  # noqa: E402

PART = "round2"
BASE = bench_corpus.CORPUS / PART
HOLDOUT = BASE / "HOLDOUT.txt"


def _holdout_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def test_every_capture_has_a_source_and_an_expectation() -> None:
    files = bench_corpus.corpus_files(PART)
    expect = bench_corpus.load_expect(PART)
    assert files, "round2 holds no capture"
    assert sorted(expect) == files, "expect.yml and the capture files differ"
    for rel in files:
        fields, body = bench_corpus.split_header((BASE / rel).read_bytes().decode("utf-8", errors="replace"))
        assert fields.get("source", "").startswith("http"), f"{rel}: no '# corpus-source: <URL>' header"
        assert body.strip(), f"{rel}: no capture after the header"
        entry = expect[rel]
        assert entry["verdict"] in bench_corpus.LEVELS, f"{rel}: verdict {entry['verdict']!r}"
        assert isinstance(entry.get("subjects", []), list), f"{rel}: subjects is not a list"
        # YAML 1.1 reads an unquoted PCI address as a number ('0000:01:00.0' is 60.0, sexagesimal): quote it
        assert all(isinstance(s, str) for s in entry.get("subjects") or []), \
            f"{rel}: a subject is not a string (quote PCI addresses): {entry.get('subjects')}"
        # the bench scores subjects against the findings that make a verdict failed or degraded: a healthy or
        # cannot-judge capture has none, so a subject there could never be met
        assert entry["verdict"] in ("failed", "degraded") or not entry.get("subjects"), \
            f"{rel}: subjects {entry.get('subjects')} on a {entry['verdict']} verdict (only failed/degraded name them)"
        assert isinstance(entry.get("spec", {}), dict), f"{rel}: spec is not a mapping"
        assert entry.get("what") and entry.get("note"), f"{rel}: what/note missing"


def test_kinds_are_registry_kinds() -> None:
    from ccparse import registry

    kinds = {rel.split("/", 1)[0] for rel in bench_corpus.corpus_files(PART)}
    assert kinds <= set(registry.kinds()), kinds - set(registry.kinds())


def test_holdout_names_existing_files_by_the_hash_rule() -> None:
    held = _holdout_lines(HOLDOUT.read_text())
    files = set(bench_corpus.corpus_files(PART))
    assert len(held) == len(set(held)), "a HOLDOUT.txt line repeats"
    assert set(held) <= files, "HOLDOUT.txt names a file that is not there"
    # the rule is per file: every file it selects is listed, every listed file is selected by it
    assert set(held) == {rel for rel in files if bench_corpus.held_out_by_hash(rel)}


def test_holdout_lines_are_never_removed() -> None:
    now = _holdout_lines(HOLDOUT.read_text())
    rel = HOLDOUT.relative_to(REPO).as_posix()
    try:
        revs = subprocess.run(["git", "-C", str(REPO), "log", "--format=%H", "--", rel],
                              capture_output=True, text=True, check=True, timeout=30).stdout.split()
    except (OSError, subprocess.SubprocessError) as exc:
        if os.environ.get("CLUSTERCTL_REQUIRE_GIT_HISTORY") == "1":  # scripts/test.sh's in-place step
            pytest.fail(f"no git history to compare HOLDOUT.txt with: {exc}")
        pytest.skip(f"no git history to compare HOLDOUT.txt with: {exc}")
    mainline = set(subprocess.run(["git", "-C", str(REPO), "log", "--first-parent", "--format=%H", "--", rel],
                                  capture_output=True, text=True, timeout=30).stdout.split())
    for rev in revs:
        old = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{rel}"],
                             capture_output=True, text=True, timeout=30)
        if old.returncode != 0:
            continue
        before = _holdout_lines(old.stdout)
        lost = [ln for ln in before if ln not in now]
        assert not lost, f"HOLDOUT.txt lost lines of commit {rev[:10]}: removed held-out entries"
        # earlier lines keep their order: a batch appends. On main's own line the earlier file is a prefix; a
        # batch merged from a side branch (two gatherers in parallel) keeps its lines' order after main's.
        if rev in mainline:
            assert now[:len(before)] == before, f"reordered since {rev[:10]}"
        else:
            at = [now.index(ln) for ln in before]
            assert at == sorted(at), f"reordered since {rev[:10]} (a merged batch)"


def _lines(path: Path) -> frozenset[str]:
    _fields, body = bench_corpus.split_header(path.read_bytes().decode("utf-8", errors="replace"))
    return frozenset(ln.strip() for ln in body.splitlines() if ln.strip())


#: held-out captures found at their merge to repeat a capture of an older part (a blind gatherer took the same public
#: paste again, and no check of the gatherer's caught the copy under its other layout): their lines stay in
#: HOLDOUT.txt (never removed), their verdict is not a blind one, and bench/RESULTS.md says so where it reports them
KNOWN_REPEATS = {
    # session 32, blind batches 151-160
    "ibv_devinfo/heioybooks-zh-hash-prompt-two-cx3-mlx4-port1-active-own-sm-lid-port2-down-tabs.txt":
        "tests/corpus/network/ibv_devinfo/idx15483671648-mofed-device-ports-mlx4-port2-down.txt",
    "nvidia-smi-nvlink/azhpcdiag73-v100-sxm2-32gb-gpu3-links-3-and-5-inactive-uuid-elided.txt":
        "tests/corpus/gpu/nvidia-smi-nvlink/azhpc73-v100-gpu3-inactive.txt",
}


def test_no_other_capture_repeats_a_held_out_one() -> None:
    """A held-out capture must not also sit in a part the fixers read (seen, gpu, network, round2's rest) or
    in tests/fixtures: the same paste taken twice from one thread leaks it (seen6 took a held-out topo table
    again, found at the merge). Compared by the set of non-blank lines (Jaccard >= 0.9, at least 3 lines)."""
    held = {rel: _lines(BASE / rel) for rel in _holdout_lines(HOLDOUT.read_text())}
    held_paths = {BASE / rel for rel in held}
    others = [p for root in (bench_corpus.CORPUS, REPO / "tests" / "fixtures") for p in root.rglob("*")
              if p.is_file() and p.suffix in (".txt", ".log", ".out", "") and p not in held_paths
              and p.name not in ("HOLDOUT.txt", "KNOWN_MISSES.txt")]
    leaks = []
    for path in others:
        lines = _lines(path)
        if len(lines) < 3:
            continue
        for rel, h in held.items():
            if len(h) >= 3 and len(lines & h) / len(lines | h) >= 0.9 \
                    and KNOWN_REPEATS.get(rel) != str(path.relative_to(REPO)):
                leaks.append(f"{path.relative_to(REPO)} repeats held-out {rel}")
    assert not leaks, "\n".join(leaks)
