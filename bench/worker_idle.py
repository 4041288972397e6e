#!/usr/bin/env python3
"""How long the analysis' worker process waits for work, today and in a frozen commit (issue 29 item 7,
session 13): the 2-process split of ``analyze_dir`` over one generated pre-parsed folder.

Each code, in a fresh process of its own, judges the folder with ``--jobs`` processes, its chunk
function (``engine._analyze_chunk``, looked up by name in the forked worker too) wrapped to record when
each chunk starts and ends in which process. Per process: chunks judged, seconds busy, and seconds
idle between its first chunk's start and its last chunk's end (waiting to be handed the next chunk).
Idle time is what a loaded machine hides from the CPU figures and an idle one shows as wall time.
Needs the fork start method (the default on Linux before Python 3.14).

    .venv/bin/python bench/worker_idle.py -n 1024 --ref main=716b159
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


_REAL: Any = None
_PARENT = 0
_LOG: list[tuple[int, float, float]] = []


def _timed(args: Any) -> Any:
    """The chunk function, timed (module level: the frozen code's pool pickles it by name)."""
    t0 = time.perf_counter()
    out = _REAL(args)
    _LOG.append((os.getpid(), t0, time.perf_counter()))
    if os.getpid() != _PARENT and out:  # the worker's records ride back on its first host's kinds
        out[0][0].kinds.append("\0" + json.dumps(_LOG))
        _LOG.clear()
    return out


def _child(code_root: str, folder: str, jobs: int, rounds: int) -> list[dict[str, Any]]:
    global _REAL, _PARENT
    sys.path[:0] = [code_root, f"{code_root}/plugins/module_utils", f"{code_root}/bench"]
    import bench_analysis as bench

    from clusterctl.analysis import checks, engine

    checks.load_all()
    _REAL, _PARENT = engine._analyze_chunk, os.getpid()
    log = _LOG
    parent = _PARENT
    engine._analyze_chunk = _timed
    runs = []
    for _ in range(rounds):
        log.clear()
        t0 = time.perf_counter()
        report = engine.analyze_dir(folder, bench.EXPECTATIONS, jobs=jobs)
        wall = time.perf_counter() - t0
        recs = list(log) + [tuple(r) for h in report.hosts.values() for k in h.kinds if k.startswith("\0")
                            for r in json.loads(k[1:])]
        per: dict[str, dict[str, float]] = {}
        for pid in sorted({r[0] for r in recs}, key=lambda p: p != parent):
            mine = sorted((r for r in recs if r[0] == pid), key=lambda r: r[1])
            busy = sum(e - s for _, s, e in mine)
            per["parent" if pid == parent else f"worker{len(per)}"] = {
                "chunks": len(mine), "busy_s": round(busy, 3), "idle_s": round(mine[-1][2] - mine[0][1] - busy, 3)}
        runs.append({"wall_s": round(wall, 3), "load1": round(os.getloadavg()[0], 1), **per})
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=1024)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ref", metavar="NAME=COMMIT|DIR", required=False)
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(a.child[0], a.child[1], int(a.child[2]), int(a.child[3]))))
        return 0
    sys.path.insert(0, str(REPO / "bench"))
    import bench_analysis as bench
    import bench_analysis_ab as ab

    with bench.frozen_beside_today(ap, a.ref, "clusterctl-idle-") as (t, codes):
        bench.generate(a.n, t / "raw")
        for code, root in codes.items():
            shutil.copytree(t / "raw", t / f"pre-{code}")
            ab._run(root, "prepare", t / f"pre-{code}", 1)
            out = subprocess.run([sys.executable, __file__, "--child", str(root), str(t / f"pre-{code}"),
                                  str(a.jobs), str(a.rounds)], capture_output=True, text=True, check=False)
            if out.returncode != 0:
                sys.stderr.write(out.stderr[-3000:])
                return 1
            for r in json.loads(out.stdout.strip().splitlines()[-1]):
                print(f"{code}: " + json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
