#!/usr/bin/env python3
"""Parse and verdict rates over the corpus of real captures (issue 14, ``tests/corpus``).

Layout (``tests/corpus/<part>/``, part = ``network`` or ``gpu``):

``<KIND>/<name>.txt``
    a capture as found in a public source, after header lines that all start ``# corpus-``
    (``# corpus-source:`` required, ``# corpus-tool:`` optional). Exactly those leading lines
    are stripped; the rest goes to the parser unchanged.
``expect.yml``
    ``<KIND>/<name>.txt: {verdict: pass|fail, subjects: [..], spec: {..}, note: ..}``.
``HOLDOUT.txt``
    the held-out fifth, one relative path a line, chosen by the CORPUS.md rule before any
    parser or check of the part changed (:func:`choose_holdout`; the committed file is what
    counts, and it is never rewritten).

For every file:

* *parsed*: ``ccparse.registry.parse(KIND, text, salvage=True)`` returned, as the engine reads a capture (a
  ``ParseError`` or any other exception is a miss);
* *verdict right*: the engine, run on a one-host evidence folder ``<tmp>/<host>/<KIND>.txt``
  with the file's ``spec`` as the cluster spec, reports ``fail`` (any critical or warning
  finding) or ``pass`` as ``expect.yml`` says, and every expected subject is a substring of the
  subject of some critical/warning finding.

Part ``round2`` (issue 29 item 6) uses three-level verdicts instead of pass/fail:

* ``failed``: host status ``failed`` with a finding of a real check (a ``parse``/``evidence``/
  ``collect``/``coverage`` finding is not a verdict);
* ``degraded``: status ``degraded`` or ``failed`` with a finding of a real check;
* ``healthy``: status ``healthy``;
* ``cannot-judge``: status ``cannot judge`` or ``no evidence`` (today's engine often misses these).

Expected subjects must be a substring (case-insensitive) of the subject or message of some real
critical/warning finding. Its hold-out is per file and never depends on the other files (:func:`held_out_by_hash`,
``sha256(relative path) % 5 == 0``), so later batches add lines to ``HOLDOUT.txt`` and never
rewrite earlier ones.

Every part present under ``tests/corpus`` (``network``, ``gpu``, ``round2``) is rated; the table gives, for
each part and for all parts together, the held-out files and the rest, with the recorded baseline
(``bench/corpus_baseline_<part>.json``) beside today's rate. ``--json``/``--markdown`` write them
(default ``bench/out/corpus.json`` and ``bench/out/corpus.md``); ``--baseline`` writes
``bench/corpus_baseline_<part>.json`` (only in the hold-out commit, for the unchanged parsers).
Only the aggregate of the held-out files is ever shown; ``--show-rest-misses`` lists the misses
of the rest (never of the held-out files).

    .venv/bin/python bench/bench_corpus.py                    # every part, and the total
    .venv/bin/python bench/bench_corpus.py --part gpu --show-rest-misses
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"
OUT = REPO / "bench" / "out"
HEADER_PREFIX = "# corpus-"
HOST = "corpus-host"

for _p in (REPO, REPO / "plugins" / "module_utils"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))


def split_header(raw: str) -> tuple[dict[str, str], str]:
    """The ``# corpus-`` header fields and the capture text after them (nothing else stripped)."""
    fields: dict[str, str] = {}
    rest = raw
    while rest.startswith(HEADER_PREFIX):
        line, sep, tail = rest.partition("\n")
        key, _, value = line[len(HEADER_PREFIX):].partition(":")
        fields[key.strip()] = value.strip()
        rest = tail if sep else ""
    return fields, rest


def read_capture(path: Path) -> str:
    """The capture text of a corpus file (bytes decoded as the engine reads evidence)."""
    return split_header(path.read_bytes().decode("utf-8", errors="replace"))[1]


def corpus_files(part: str) -> list[str]:
    base = CORPUS / part
    return sorted(p.relative_to(base).as_posix() for p in base.glob("*/*.txt"))


def load_expect(part: str) -> dict[str, dict[str, Any]]:
    """``<part>/expect.yml`` (a new top-level dict each call; its entries are shared, read them only).

    Read once per content: the round2 file is about 1 MB, and the per-capture tests ask for it once
    per capture (libyaml's loader where PyYAML has it)."""
    path = CORPUS / part / "expect.yml"
    if not path.exists():
        return {}
    st = path.stat()
    return dict(_parsed_expect(str(path), st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=8)
def _parsed_expect(path: str, _mtime_ns: int, _size: int) -> dict[str, dict[str, Any]]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(Path(path).read_text(), Loader=loader) or {}  # a safe loader: C or Python


def _hash(path: str) -> int:
    return int(hashlib.sha256(path.encode()).hexdigest(), 16)


def choose_holdout(paths: list[str]) -> list[str]:
    """CORPUS.md's rule: paths with ``sha256(path) % 5 == 0``, topped up / trimmed to round(n/5)
    by taking the next paths in hash order (ascending ``sha256 % 5``, then the hash itself)."""
    paths = sorted(paths)
    want = round(len(paths) / 5)
    chosen = [p for p in paths if _hash(p) % 5 == 0]
    order = sorted(paths, key=lambda p: (_hash(p) % 5, _hash(p)))
    if len(chosen) > want:
        chosen = [p for p in order if p in set(chosen)][:want]
    else:
        for p in order:
            if len(chosen) >= want:
                break
            if p not in chosen:
                chosen.append(p)
    return sorted(chosen)


def held_out_by_hash(path: str) -> bool:
    """Part round2's rule (tests/corpus/CORPUS.md): a file is held out iff ``sha256(path) % 5 == 0``,
    ``path`` being its path relative to the part (``KIND/name.txt``). Per file, so a new batch never
    changes which earlier files are held out."""
    return _hash(path) % 5 == 0


#: verdict words of the three-level parts (round2); the older parts use pass/fail
LEVELS = ("failed", "degraded", "healthy", "cannot-judge")
#: checks whose findings are never a verdict (a parse warning is not a finding about the hardware)
NOT_A_VERDICT = frozenset({"parse", "evidence", "collect", "coverage"})


def level_ok(want: str, status: str, real: list[Any]) -> bool:
    """Whether host ``status`` (with ``real`` = findings of real checks) meets a three-level ``want``."""
    if want == "failed":
        return status == "failed" and bool(real)
    if want == "degraded":
        return status in ("degraded", "failed") and bool(real)
    if want == "healthy":
        return status == "healthy"
    if want == "cannot-judge":
        return status in ("cannot judge", "no evidence")
    return False


def load_holdout(part: str) -> set[str]:
    path = CORPUS / part / "HOLDOUT.txt"
    if not path.exists():
        return set()
    return {ln.strip() for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")}


@dataclass
class Outcome:
    path: str
    parsed: bool
    verdict_ok: bool
    got: str
    want: str
    missing_subjects: list[str] = field(default_factory=list)
    error: str = ""
    findings: list[str] = field(default_factory=list)


def judge_file(part: str, rel: str, expect: dict[str, Any]) -> Outcome:
    """Parse one corpus file and run the engine on it as a one-host evidence folder."""
    from ccparse import registry
    from ccparse.common import ParseError

    from clusterctl.analysis.engine import analyze_dir

    kind = rel.split("/", 1)[0]
    text = read_capture(CORPUS / part / rel)
    parsed, error = True, ""
    try:
        registry.parse(kind, text, salvage=True)
    except ParseError as exc:
        parsed, error = False, str(exc)[:200]
    except Exception as exc:  # counted as a miss: nothing but ParseError may escape
        parsed, error = False, f"{type(exc).__name__}: {exc}"[:200]
    want = str(expect.get("verdict", "pass"))
    with tempfile.TemporaryDirectory() as tmp:
        host_dir = Path(tmp) / HOST
        host_dir.mkdir()
        (host_dir / f"{kind}.txt").write_text(text, encoding="utf-8", errors="replace")
        try:
            report = analyze_dir(tmp, dict(expect.get("spec") or {}))
        except Exception as exc:  # an engine error is a wrong verdict, not a crash of the bench
            return Outcome(rel, parsed, False, "error", want, [], error or f"engine: {type(exc).__name__}: {exc}"[:200])
    host = report.hosts[HOST]
    findings = host.findings
    shown = [f"{f.severity} {f.subject}: {f.message}"[:160] for f in findings][:6]
    if want in LEVELS:
        real = [f for f in findings if f.check not in NOT_A_VERDICT]
        # case-insensitive: bus ids are printed upper- or lower-case by different tools
        missing = [s for s in expect.get("subjects") or []
                   if not any(str(s).lower() in f"{f.subject} {f.message}".lower() for f in real)]
        return Outcome(rel, parsed, level_ok(want, host.status, real) and not missing, host.status, want,
                       missing, error, shown)
    got = "fail" if findings else "pass"
    missing = [s for s in expect.get("subjects") or [] if not any(str(s) in f.subject for f in findings)]
    return Outcome(rel, parsed, got == want and not missing, got, want, missing, error, shown)


def _counts(n: int, p: int, v: int) -> dict[str, Any]:
    return {"files": n, "parsed": p, "verdict_ok": v,
            "parse_rate": round(p / n, 4) if n else None, "verdict_rate": round(v / n, 4) if n else None}


def rates(outcomes: list[Outcome]) -> dict[str, Any]:
    return _counts(len(outcomes), sum(o.parsed for o in outcomes), sum(o.verdict_ok for o in outcomes))


def sum_rates(many: list[dict[str, Any]]) -> dict[str, Any]:
    """Several :func:`rates` results added up."""
    return _counts(*(sum(r[k] for r in many) for k in ("files", "parsed", "verdict_ok")))


def run_part(part: str) -> dict[str, Any]:
    expect = load_expect(part)
    holdout = load_holdout(part)
    outcomes = [judge_file(part, rel, expect.get(rel, {})) for rel in corpus_files(part)]
    held = [o for o in outcomes if o.path in holdout]
    rest = [o for o in outcomes if o.path not in holdout]
    return {"part": part, "held_out": rates(held), "rest": rates(rest), "all": rates(outcomes),
            "missing_expectations": [o.path for o in outcomes if o.path not in expect],
            # only the rest's misses are listed: held-out failures are reported as a rate only
            "rest_misses": [asdict(o) for o in rest if not (o.parsed and o.verdict_ok)]}


def total(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Every part together (held-out with held-out, rest with rest)."""
    return {"part": "total", **{key: sum_rates([r[key] for r in results]) for key in ("held_out", "rest", "all")}}


def _cell(r: dict[str, Any] | None, key: str) -> str:
    if not r or not r.get("files"):
        return "n/a"
    count = r["parsed" if key == "parse" else "verdict_ok"]
    return f"{count}/{r['files']} ({count / r['files']:.0%})"


def markdown(results: list[dict[str, Any]], baselines: dict[str, dict[str, Any]]) -> str:
    """The table for bench/RESULTS.md: every part, then the total, held-out and rest."""
    lines = ["| part | set | files | parse (baseline) | parse (now) | verdict (baseline) | verdict (now) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    base_total = total(list(baselines.values())) if baselines.keys() >= {r["part"] for r in results} else {}
    for res in [*results, total(results)] if len(results) > 1 else results:
        base = base_total if res["part"] == "total" else baselines.get(res["part"], {})
        for key, label in (("held_out", "held-out"), ("rest", "rest")):
            now, was = res[key], base.get(key)
            lines.append(f"| {res['part']} | {label} | {now['files']} | {_cell(was, 'parse')} | {_cell(now, 'parse')} "
                         f"| {_cell(was, 'verdict')} | {_cell(now, 'verdict')} |")
    return "\n".join(lines) + "\n"


def parts_present() -> list[str]:
    return sorted(p.name for p in CORPUS.iterdir() if (p / "expect.yml").exists())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", action="append", help="network, gpu and/or round2 (default: every part present)")
    ap.add_argument("--baseline", action="store_true", help="write bench/corpus_baseline_<part>.json")
    ap.add_argument("--json", type=Path, default=OUT / "corpus.json")
    ap.add_argument("--markdown", type=Path, default=OUT / "corpus.md")
    ap.add_argument("--show-rest-misses", action="store_true", help="list the non-held-out misses")
    args = ap.parse_args(argv)
    from clusterctl.analysis import checks

    checks.load_all()
    parts = args.part or parts_present()
    results = [run_part(p) for p in parts]
    baselines: dict[str, dict[str, Any]] = {}
    for res in results:
        path = REPO / "bench" / f"corpus_baseline_{res['part']}.json"
        if args.baseline:
            path.write_text(json.dumps({k: res[k] for k in ("part", "held_out", "rest", "all")}, indent=2) + "\n")
        if path.exists():
            baselines[res["part"]] = json.loads(path.read_text())
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"parts": results, "total": total(results)}, indent=2) + "\n")
    table = markdown(results, baselines)
    args.markdown.parent.mkdir(parents=True, exist_ok=True)
    args.markdown.write_text(table)
    print(table, end="")
    if args.show_rest_misses:
        for res in results:
            for m in res["rest_misses"]:
                print(f"{res['part']}/{m['path']}: parsed={m['parsed']} got={m['got']} want={m['want']} "
                      f"missing={m['missing_subjects']} {m['error']}")
                for f in m["findings"]:
                    print(f"      {f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
