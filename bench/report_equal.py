#!/usr/bin/env python3
"""Today's analysis gives exactly the report of a frozen commit's on every capture of the repository (a
speed round's check that it changed no verdict or finding; not a timing).

Every capture under tests/fixtures/<KIND>/ and tests/corpus/*/<KIND>/ (KIND a registered one) becomes
the ``<KIND>.txt`` of a host folder of its own, in one evidence folder; each code, in a process of its
own, writes its collectors' envelopes (``_parsed.json``, its own ccparse) into a copy of it and judges
it raw and pre-parsed with 1, 2 and 3 processes. The reports (verdicts, findings, notes, metrics,
stragglers) of the two codes must be identical mode by mode, and within a code the 2- and 3-process
reports equal the 1-process one. Exits 1 naming the modes that differ.

    .venv/bin/python bench/report_equal.py --ref main=716b159

``--ref NAME=COMMIT`` or ``NAME=DIR`` (bench_analysis.frozen_tree). Takes about a minute per code.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODES = (("raw", 1), ("raw", 2), ("raw", 3), ("pre", 1), ("pre", 2), ("pre", 3))


def build_folder(dest: Path) -> int:
    """One host folder per capture of a registered KIND; returns the number of hosts."""
    sys.path[:0] = [str(REPO), str(REPO / "plugins" / "module_utils")]
    from ccparse import registry

    kinds = set(registry.kinds())
    files = sorted(p for base in ("tests/fixtures", "tests/corpus") for p in (REPO / base).rglob("*.txt")
                   if p.is_file() and p.parent.name in kinds)
    for i, p in enumerate(files):
        host = dest / f"h{i:04d}"
        host.mkdir(parents=True)
        (host / f"{p.parent.name}.txt").write_bytes(p.read_bytes())
    return len(files)


def _child(code_root: str, folder: str) -> dict[str, str]:
    sys.path[:0] = [code_root, f"{code_root}/plugins/module_utils", f"{code_root}/bench"]
    import bench_analysis as bench

    from clusterctl.analysis.engine import analyze_dir

    out: dict[str, str] = {}
    for src, jobs in MODES:
        if src == "pre" and not (Path(folder) / "h0000" / "_parsed.json").exists():
            bench.write_preparsed(Path(folder))
        d = analyze_dir(folder, {}, jobs=jobs).to_dict()
        d["summary"].pop("seconds", None)
        out[f"{src}_j{jobs}"] = hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", metavar="NAME=COMMIT|DIR", required=False)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(*a.child)))
        return 0
    sys.path.insert(0, str(REPO / "bench"))
    import bench_analysis as bench

    with bench.frozen_beside_today(ap, a.ref, "clusterctl-report-equal-") as (t, codes):
        name = next(iter(codes))
        hosts = build_folder(t / "ev")
        hashes: dict[str, dict[str, str]] = {}
        for code, root in codes.items():
            shutil.copytree(t / "ev", t / code)
            res = subprocess.run([sys.executable, __file__, "--child", str(root), str(t / code)],
                                 capture_output=True, text=True, check=False)
            if res.returncode != 0:
                sys.stderr.write(res.stderr[-3000:])
                return 1
            hashes[code] = json.loads(res.stdout.strip().splitlines()[-1])
    # the measure: each mode's report equals the frozen code's in the same mode, and (within a code) the
    # 2- and 3-process reports equal the 1-process one
    differ = [f"today {mode}" for mode, v in hashes["today"].items() if v != hashes[name][mode]]
    differ += [f"{code} {src}_j{j}" for code, h in hashes.items() for src, j in MODES
               if h[f"{src}_j{j}"] != h[f"{src}_j1"]]
    print(f"{hosts} host folders (one capture each), {len(MODES)} modes x {len(hashes)} codes: "
          + ("today's report identical to " + name + "'s in every mode" if not differ
             else f"differ: {', '.join(differ)}"))
    if hashes[name]["pre_j1"] != hashes[name]["raw_j1"]:
        same = hashes["today"]["pre_j1"] == hashes[name]["pre_j1"]
        print(f"(pre-parsed and raw reports differ in both codes{', identically' if same else ''}: the envelope is "
              "the KIND's parser on the text as collected (preparsed.envelope), the raw path parses it after the "
              "capture clean-up (registry.parse))")
    return 1 if differ else 0

if __name__ == "__main__":
    sys.exit(main())
