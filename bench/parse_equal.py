#!/usr/bin/env python3
"""Today's parsers answer exactly as a frozen commit's on every capture of the repository (a speed round's
check that it changed no parse; not a timing).

Every capture under tests/fixtures and tests/corpus, as it is and as three pastes of it (indented,
CRLF, a parallel shell's ``host: `` prefix), parsed as every KIND through ``registry.parse`` (the
capture clean-up first) by each code in a process of its own: the ``repr`` of the result, or of the
``ParseError`` (tool, reason, line), must be the same. Exits 1 naming the first differences.

    .venv/bin/python bench/parse_equal.py --ref main=249b1ea

``--ref NAME=COMMIT`` or ``NAME=DIR`` (bench_analysis.frozen_tree). Takes about a minute per code.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _variants(text: str) -> list[str]:
    return [text, "  " + text.replace("\n", "\n  "), text.replace("\n", "\r\n"),
            "".join("n1: " + ln for ln in text.splitlines(True))]


def _child(code_root: str) -> dict[str, str]:
    sys.path[:0] = [code_root, f"{code_root}/plugins/module_utils"]
    from ccparse import registry
    from ccparse.common import ParseError

    files = sorted(p for base in ("tests/fixtures", "tests/corpus") for p in (REPO / base).rglob("*")
                   if p.is_file() and p.suffix in (".txt", ".csv", ".log", ".json", ".xml", ""))
    out: dict[str, str] = {}
    kinds = registry.kinds()
    for p in files:
        text = p.read_text(errors="replace")
        for i, variant in enumerate(_variants(text)):
            for kind in kinds:
                try:
                    r = repr(registry.parse(kind, variant))
                except ParseError as exc:
                    r = f"ParseError {(exc.tool, exc.reason, exc.line)!r}"
                except Exception as exc:  # a parser crash is an answer too: it must be the same one
                    r = f"{type(exc).__name__}: {exc}"
                out[f"{p.relative_to(REPO)}|{i}|{kind}"] = hashlib.sha256(r.encode()).hexdigest()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", metavar="NAME=COMMIT|DIR")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(a.child)))
        return 0
    sys.path.insert(0, str(REPO / "bench"))
    import bench_analysis as bench

    with bench.frozen_beside_today(ap, a.ref, "clusterctl-parse-equal-") as (_t, codes):
        name = next(iter(codes))
        frozen = codes[name]
        answers = {}
        for code, root in ((name, frozen), ("today", REPO)):
            run = subprocess.run([sys.executable, __file__, "--child", str(root)], capture_output=True, text=True,
                                 check=False)
            if run.returncode != 0:
                raise SystemExit(f"{code}: {run.stderr[-3000:]}")
            answers[code] = json.loads(run.stdout)
    old, new = answers[name], answers["today"]
    differ = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    print(f"{len(new)} parses (captures x 4 paste variants x KINDs), {name} vs today: {len(differ)} differ")
    for k in differ[:20]:
        print("  differs:", k)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
