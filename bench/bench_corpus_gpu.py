#!/usr/bin/env python3
"""Parse and verdict rates over the corpus of real captures (issue 14), per part and hold-out.

Follows ``notes/CORPUS.md``: every ``tests/corpus/<part>/<KIND>/<name>.txt`` has its leading
``# corpus-`` header lines stripped and is

* parsed with the registry parser of KIND: *parsed* = no ``ParseError`` and nothing else escapes;
* judged by the engine on a one-host evidence folder ``<tmp>/<host>/<KIND>.txt`` with the file's
  ``spec`` from ``expect.yml``: *verdict right* = (``fail`` when the host has any critical or
  warning finding, else ``pass``) equals the expected verdict AND every expected subject is a
  substring of the subject of some critical/warning finding.

Rates are printed for (held-out, rest) of each part; held-out files are listed in
``tests/corpus/<part>/HOLDOUT.txt``. Writes JSON to ``bench/out/corpus_<part>.json`` (or
``--json``) and prints a markdown table. Only aggregate numbers of the held-out files are shown
(``--show-failures`` lists failures of the rest only).

    .venv/bin/python bench/bench_corpus_gpu.py                  # every part present
    .venv/bin/python bench/bench_corpus_gpu.py --part gpu --json bench/corpus_baseline_gpu.json

This is i14-gpu's compatible stand-in for ``bench/bench_corpus.py`` of branch i14-net.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"
for p in (REPO, REPO / "plugins" / "module_utils"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

HEADER = "# corpus-"
HOST = "corpus-host"


def strip_header(text: str) -> str:
    """Drop exactly the leading ``# corpus-`` lines."""
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].startswith(HEADER):
        i += 1
    return "".join(lines[i:])


def holdout_pick(paths: list[str]) -> list[str]:
    """CORPUS.md rule: sorted paths, sha256 % 5 == 0, topped up/trimmed to round(n/5) in hash order."""
    paths = sorted(paths)
    want = round(len(paths) / 5)

    def h(p: str) -> int:
        return int(hashlib.sha256(p.encode()).hexdigest(), 16)

    chosen = [p for p in paths if h(p) % 5 == 0]
    if len(chosen) > want:
        chosen = sorted(chosen, key=h)[:want]
    elif len(chosen) < want:
        rest = sorted((p for p in paths if p not in chosen), key=h)
        chosen += rest[: want - len(chosen)]
    return sorted(chosen)


def load_expect(part_dir: Path) -> dict[str, dict[str, Any]]:
    import yaml

    data = yaml.safe_load((part_dir / "expect.yml").read_text()) or {}
    return {str(k): v for k, v in data.items()}


def corpus_files(part_dir: Path) -> list[str]:
    return sorted(str(p.relative_to(part_dir)) for p in part_dir.glob("*/*.txt"))


def judge_one(part_dir: Path, rel: str, exp: dict[str, Any]) -> dict[str, Any]:
    from ccparse import registry
    from ccparse.common import ParseError

    from clusterctl.analysis import engine

    kind = rel.split("/", 1)[0]
    text = strip_header((part_dir / rel).read_text(errors="replace"))
    res: dict[str, Any] = {"file": rel, "kind": kind}
    try:
        registry.parse(kind, text)
        res["parsed"] = True
    except ParseError as exc:
        res["parsed"] = False
        res["parse_error"] = f"ParseError line {exc.line}: {exc.reason}"[:200]
    except Exception as exc:  # the rate counts escapes as failures
        res["parsed"] = False
        res["parse_error"] = f"{type(exc).__name__}: {exc}"[:200]
    with tempfile.TemporaryDirectory() as tmp:
        host_dir = Path(tmp) / HOST
        host_dir.mkdir()
        (host_dir / f"{kind}.txt").write_text(text)
        try:
            report = engine.analyze_dir(tmp, dict(exp.get("spec") or {}))
            findings = report.hosts[HOST].findings
        except Exception as exc:
            res.update(verdict_ok=False, got="error", why=f"{type(exc).__name__}: {exc}"[:200])
            return res
    got = "fail" if findings else "pass"
    subjects = [f.subject for f in findings]
    missing = [s for s in exp.get("subjects") or [] if not any(s in subj for subj in subjects)]
    res.update(got=got, want=exp.get("verdict"), missing_subjects=missing,
               verdict_ok=(got == exp.get("verdict") and not missing),
               findings=[f"{f.severity} {f.subject}: {f.message}"[:160] for f in findings][:6])
    return res


def rates(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    p = sum(1 for r in rows if r["parsed"])
    v = sum(1 for r in rows if r["verdict_ok"])
    return {"files": n, "parsed": p, "verdict_ok": v,
            "parse_rate": round(p / n, 3) if n else None, "verdict_rate": round(v / n, 3) if n else None}


def run_part(part: str) -> dict[str, Any]:
    part_dir = CORPUS / part
    expect = load_expect(part_dir)
    files = corpus_files(part_dir)
    hold_file = part_dir / "HOLDOUT.txt"
    held = set(hold_file.read_text().split()) if hold_file.exists() else set()
    rows = [judge_one(part_dir, rel, expect.get(rel, {})) for rel in files]
    for r in rows:
        r["held_out"] = r["file"] in held
        r["has_expectation"] = r["file"] in expect
    out = {"part": part, "held_out": rates([r for r in rows if r["held_out"]]),
           "rest": rates([r for r in rows if not r["held_out"]]), "all": rates(rows),
           "missing_expectations": [r["file"] for r in rows if not r["has_expectation"]],
           # per-file detail of the rest only; held-out files stay aggregate (CORPUS.md)
           "rest_files": [r for r in rows if not r["held_out"]]}
    return out


def markdown(results: list[dict[str, Any]]) -> str:
    lines = ["| part | set | files | parse rate | verdict rate |", "|---|---|---:|---:|---:|"]
    for res in results:
        for key in ("held_out", "rest"):
            r = res[key]
            pr = f"{r['parsed']}/{r['files']} ({r['parse_rate']:.0%})" if r["files"] else "-"
            vr = f"{r['verdict_ok']}/{r['files']} ({r['verdict_rate']:.0%})" if r["files"] else "-"
            lines.append(f"| {res['part']} | {key.replace('_', '-')} | {r['files']} | {pr} | {vr} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", action="append", help="corpus part (default: every folder under tests/corpus)")
    ap.add_argument("--json", type=Path, help="write the JSON here (default bench/out/corpus_<part>.json)")
    ap.add_argument("--show-failures", action="store_true", help="list failing files of the rest (never held-out)")
    ap.add_argument("--write-holdout", action="store_true", help="(re)write HOLDOUT.txt by the rule; only "
                    "before any parser change (CORPUS.md)")
    args = ap.parse_args()
    from clusterctl.analysis import checks

    checks.load_all()
    parts = args.part or sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
    results = []
    for part in parts:
        if args.write_holdout:
            chosen = holdout_pick(corpus_files(CORPUS / part))
            (CORPUS / part / "HOLDOUT.txt").write_text("\n".join(chosen) + "\n")
        res = run_part(part)
        results.append(res)
        dest = args.json if args.json and len(parts) == 1 else REPO / "bench" / "out" / f"corpus_{part}.json"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
        if args.show_failures:
            for r in res["rest_files"]:
                if not (r["parsed"] and r["verdict_ok"]):
                    print(f"  {r['file']}: parsed={r['parsed']} {r.get('parse_error', '')} "
                          f"got={r.get('got')} want={r.get('want')} missing={r.get('missing_subjects')}")
                    for f in r.get("findings") or []:
                        print(f"      {f}")
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
