#!/usr/bin/env bash
# Issue 29 item 7: the 4096-node analysis on an idle machine, the way the goal is stated ("4096 nodes
# at most 3 s raw and 1 s pre-parsed with 2 processes on an idle machine"): the shared 2-core machine
# of the session never was idle. Pinned to 2 CPUs (taskset -c 0,1: the CI machine's count), today's
# code beside the frozen start of session 9 (a932302, `--ref`) in the same run, then the parser ratio bench.
# The frozen code comes from git where the history is there, else from the folder
# bench/device/frozen-session9-start/ (git-ignored: name it in the run's carry), made beforehand on a
# machine with the history:
#   mkdir -p bench/device/frozen-session9-start
#   git archive a932302 clusterctl plugins bench | tar -x -C bench/device/frozen-session9-start
# Without either, today's code runs alone and env.txt says so.
# Needs: python3 >= 3.11 with PyYAML (the severity table); orjson optional (env.txt says if present:
# the pre-parsed path decodes the envelopes with it), run from the repository root.
# Run as:  bash bench/device/bench_analysis_idle.sh [N]          (default N 4096)
# Results: $OUT/bench-analysis/{env.txt,analysis.md,analysis.json,analysis.err,ab.md,ab.json,ab.err,parsers.txt,parsers.json}
# What it should show: analysis.md's speed table, row "today": raw 2 procs <= 3 s and pre-parsed
# 2 procs <= 1 s at load < 0.5 (the goal), the ratio table session9-start / today > 1 for every
# mode, precision and recall 1.00 (the bench exits 1 otherwise); ab.md: session9-start / today above 1x
# in every mode, wall and CPU, reports identical (it exits 1 otherwise).
set -uo pipefail
N=${1:-4096}
R=${OUT:-/tmp}/bench-analysis; mkdir -p "$R"
export PYTHONPATH=$PWD:$PWD/plugins/module_utils
{ echo "cpus: $(nproc)"; uptime; python3 --version; git rev-parse HEAD 2>&1
  python3 -c "import orjson; print('orjson', orjson.__version__)" 2>/dev/null || echo "orjson: not installed"; } > "$R/env.txt"
FROZEN=bench/device/frozen-session9-start
if git cat-file -e a932302^{commit} 2>/dev/null; then
  refs=(--ref session9-start=a932302)
elif [ -d "$FROZEN/clusterctl" ]; then
  refs=(--ref "session9-start=$PWD/$FROZEN")
else
  refs=(); echo "no git history and no $FROZEN/: today's code only" >> "$R/env.txt"
fi
taskset -c 0,1 python3 bench/bench_analysis.py -n "$N" --jobs 2 "${refs[@]}" --json "$R/analysis.json" \
  > "$R/analysis.md" 2> "$R/analysis.err"
echo "bench_analysis rc=$?" >> "$R/env.txt"
if [ ${#refs[@]} -gt 0 ]; then  # the same folder judged by both codes taking turns, best of 3 (wall and CPU)
  taskset -c 0,1 python3 bench/bench_analysis_ab.py -n "$N" --jobs 2 --rounds 3 "${refs[@]}" --json "$R/ab.json" \
    > "$R/ab.md" 2> "$R/ab.err"
  echo "bench_analysis_ab rc=$?" >> "$R/env.txt"
fi
if git cat-file -e a932302^{commit} 2>/dev/null; then
  taskset -c 0,1 python3 bench/bench_parsers.py --rounds 5 --json "$R/parsers.json" > "$R/parsers.txt" 2>&1
fi
uptime >> "$R/env.txt"
cat "$R/env.txt" "$R/analysis.md" "$R/ab.md" 2>/dev/null
