#!/usr/bin/env python3
"""Today's analysis against a frozen commit on the same generated N-node folder, interleaved, in one run.

bench_analysis.py ``--ref`` runs each code's whole bench one after the other (its own folder, the H200
text/XML runs too): on a shared machine whose load changes by the minute, the two codes then meet
different loads. Here one folder is generated (bench_analysis.generate, its injected faults) and each
code judges it in fresh processes taking turns, ``--rounds`` times: raw text with 1 and ``--jobs``
processes, then pre-parsed (each code's own ``_parsed.json``, written by its own ccparse: a parser
change changes the envelopes' parser hash) with 1 and ``--jobs``. Per code and mode the best of the
rounds is kept, as wall seconds and as CPU seconds (the process and its pool workers): CPU time is
what load changes least. The reports of the two codes must be identical (verdicts, findings,
stragglers; the bench exits 1 otherwise).

    .venv/bin/python bench/bench_analysis_ab.py -n 4096 --ref session9-start=a932302 --rounds 2

``--ref NAME=COMMIT`` or ``NAME=DIR`` (a folder holding that code's clusterctl, plugins and bench; see
bench_analysis.frozen_tree).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MODES = (("raw_j1", "raw", 1), ("raw_jN", "raw", 0), ("pre_j1", "pre", 1), ("pre_jN", "pre", 0))


def _child(code_root: str, what: str, folder: str, jobs: int) -> dict[str, Any]:
    """In a fresh process of one code: ``prepare`` writes its envelopes, ``judge`` times one mode."""
    for p in (code_root, f"{code_root}/plugins/module_utils", f"{code_root}/bench"):
        sys.path.insert(0, p)
    import bench_analysis as bench

    if what == "prepare":
        return {"envelopes": bench.write_preparsed(Path(folder))}
    from clusterctl.analysis import checks
    from clusterctl.analysis.engine import analyze_dir

    checks.load_all()
    from clusterctl.analysis.severity import rules

    rules()  # the tables read before the clock starts (one-time, not per host)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0, c0 = time.perf_counter(), time.process_time()
    report = analyze_dir(folder, bench.EXPECTATIONS, jobs=jobs)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    d = report.to_dict()
    d["summary"].pop("seconds", None)
    return {"wall": wall, "cpu": cpu + (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
            "load1": os.getloadavg()[0], "hash": hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()}


def _run(code_root: Path, what: str, folder: Path, jobs: int) -> dict[str, Any]:
    # the child puts its code first on sys.path (a PYTHONPATH given to the bench stays behind it)
    out = subprocess.run([sys.executable, __file__, "--child", str(code_root), what, str(folder), str(jobs)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{code_root} {what} {folder} jobs={jobs} failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=4096)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--ref", metavar="NAME=COMMIT|DIR", help="the frozen code (required)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(a.child[0], a.child[1], a.child[2], int(a.child[3]))))
        return 0
    sys.path.insert(0, str(REPO / "bench"))
    import bench_analysis as bench

    with bench.frozen_beside_today(ap, a.ref, "clusterctl-ab-") as (t, codes):
        name = next(iter(codes))
        faults = bench.generate(a.n, t / "raw")
        for code, root in codes.items():
            shutil.copytree(t / "raw", t / f"pre-{code}")
            _run(root, "prepare", t / f"pre-{code}", 1)
        best: dict[tuple[str, str], dict[str, Any]] = {}
        for rnd in range(a.rounds):
            for label, src, jobs in MODES:
                for code, root in codes.items():
                    folder = t / "raw" if src == "raw" else t / f"pre-{code}"
                    r = _run(root, "judge", folder, jobs or a.jobs)
                    print(f"round {rnd + 1} {label} {code}: wall {r['wall']:.2f} s, cpu {r['cpu']:.2f} s, "
                          f"load {r['load1']:.1f}", file=sys.stderr)
                    b = best.setdefault((code, label), {**r, "loads": []})
                    b["loads"].append(round(r["load1"], 1))
                    b["wall"], b["cpu"] = min(b["wall"], r["wall"]), min(b["cpu"], r["cpu"])
                    want = best.get((name, "raw_j1"), {}).get("hash")
                    if want is not None and r["hash"] != want:
                        raise SystemExit(f"{code} {label}: the report differs from {name}'s raw 1-process report")
    rows = [f"| mode | {name} wall (s) | today wall (s) | {name} / today wall | {name} CPU (s) | today CPU (s) | "
            f"{name} / today CPU | load during the runs |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for label, _src, _jobs in MODES:
        f, t_ = best[(name, label)], best[("today", label)]
        rows.append(f"| {label.replace('jN', f'j{a.jobs}')} | {f['wall']:.2f} | {t_['wall']:.2f} | "
                    f"{f['wall'] / t_['wall']:.2f}x | {f['cpu']:.2f} | {t_['cpu']:.2f} | {f['cpu'] / t_['cpu']:.2f}x | "
                    f"{min(f['loads'] + t_['loads'])}-{max(f['loads'] + t_['loads'])} |")
    print(f"N={a.n}, {len(faults)} faults injected, best of {a.rounds} interleaved rounds, reports identical")
    print("\n".join(rows))
    if a.json:
        a.json.write_text(json.dumps({f"{c}:{m}": v for (c, m), v in best.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
