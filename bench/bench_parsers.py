#!/usr/bin/env python3
"""Today's parsers against frozen copies of earlier ones, on the same captures, in one run (issue 29).

A regression in parsing speed shows as a number: for every capture of the repository
(``tests/fixtures/**``, ``tests/corpus/<part>/<KIND>/*`` of the parts whose KIND folder names a
parser; held-out files are timed like the others, only the aggregate is printed) the registry's
``parse(KIND, text)`` (the capture clean-up plus the parser: what ``analyze`` runs per evidence
file) is timed with today's ``ccparse`` and with the ``ccparse`` of each reference commit, taken
out of git (``git archive``) into a temporary package ``ccparse_<name>`` (the parsers import
each other relatively, so the copy is self-contained). The captures are parsed round-robin, the
implementations interleaved in every round, so that load on the machine hits each alike; the
ratio ``reference / today`` is the speed-up (above 1: today is faster).

    .venv/bin/python bench/bench_parsers.py                       # the default references
    .venv/bin/python bench/bench_parsers.py --ref prev=8d27631 --rounds 5 --json bench/out/parsers.json

Default references: ``before-cleanup`` (4cbfd28^1: the parsers before the one capture clean-up
ran in front of every parser), ``session7`` (8d27631: the parsers when issue 29 measured
analysis 8x slower) and ``session8-start`` (4040015: main before the second speed round).
Exceptions (a ``ParseError`` or any other) count as a parse, timed the same. ``--kind KIND``
(repeatable) times one KIND's captures alone (a change to one parser shows undiluted).

    .venv/bin/python bench/bench_parsers.py --ref main=cf28eb6 --kind nvidia-smi-q --kind nccl-tests
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "plugins" / "module_utils") not in sys.path:
    sys.path.insert(0, str(REPO / "plugins" / "module_utils"))

DEFAULT_REFS = {"before-cleanup": "4cbfd28^1", "session7": "8d27631", "session8-start": "4040015"}
SRC = "plugins/module_utils/ccparse"


def frozen_registry(name: str, ref: str, dest: Path) -> ModuleType:
    """``ccparse.registry`` of commit ``ref``, imported as package ``ccparse_<name>``."""
    data = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", ref, SRC],
                          check=True, capture_output=True).stdout
    pkg = f"ccparse_{name.replace('-', '_')}"
    root = dest / name
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(root, filter="data")
    (root / SRC).rename(root / pkg)
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module(f"{pkg}.registry")
    finally:
        sys.path.remove(str(root))


def captures(kinds: set[str]) -> list[tuple[str, str]]:
    """(KIND, text) of every capture in the repository whose folder names a KIND."""
    out = []
    for base in (REPO / "tests" / "fixtures", *sorted((REPO / "tests" / "corpus").glob("*"))):
        if not base.is_dir():
            continue
        for path in sorted(base.glob("*/*")):
            kind = path.parent.name
            if kind in kinds and path.is_file() and path.suffix in (".txt", ".csv", ".log", ".xml", ""):
                text = path.read_text(errors="replace")
                lines = text.split("\n")
                while lines and lines[0].startswith("# corpus-"):
                    lines.pop(0)
                out.append((kind, "\n".join(lines)))
    return out


def _time(parse: Any, items: list[tuple[str, str]]) -> float:
    t0 = time.perf_counter()
    for kind, text in items:
        with contextlib.suppress(Exception):  # a refused capture is timed like a parsed one
            parse(kind, text)
    return time.perf_counter() - t0


def run(refs: dict[str, str], rounds: int, only: set[str] | None = None) -> dict[str, Any]:
    import ccparse.registry as today

    with tempfile.TemporaryDirectory() as tmp:
        impls = {"today": today}
        for name, ref in refs.items():
            impls[name] = frozen_registry(name, ref, Path(tmp))
        common = set(today.kinds())
        for reg in impls.values():
            common &= set(reg.kinds())
        items = captures(common & only if only else common)
        for reg in impls.values():  # warm-up: imports, regex compilation, caches of both
            _time(reg.parse, items)  # (two passes: nvidia-smi -q takes a section whole the second
            _time(reg.parse, items)  # time it sees it, as the next GPU of a report or node does)
        totals = dict.fromkeys(impls, 0.0)
        for _ in range(rounds):
            for name, reg in impls.items():
                totals[name] += _time(reg.parse, items)
    per = {name: totals[name] / rounds for name in impls}
    return {
        "captures": len(items), "kinds": len(common & only if only else common), "rounds": rounds,
        "refs": refs,
        "seconds_per_pass": per,
        "ratio_ref_over_today": {name: per[name] / per["today"] for name in refs},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", action="append", default=[], metavar="NAME=COMMIT")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--kind", action="append", default=[],
                    help="time only the captures of this KIND (repeatable; default: every KIND)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    refs = dict(r.split("=", 1) for r in args.ref) if args.ref else DEFAULT_REFS
    res = run(refs, args.rounds, set(args.kind) or None)
    print(f"{res['captures']} captures of {res['kinds']} KINDs, {res['rounds']} rounds, seconds per pass:")
    for name, sec in res["seconds_per_pass"].items():
        ratio = res["ratio_ref_over_today"].get(name)
        extra = f"  ({ratio:.2f}x today's time)" if ratio is not None else ""
        print(f"  {name:16s} {sec:8.3f}{extra}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
