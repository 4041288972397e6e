#!/usr/bin/env bash
# Issue 25: the node check (Slurm's HealthCheckProgram, clusterctl/lifecycle/nodecheck.py) on a
# healthy H200, repeatedly, idle and under a real all-reduce load: it must raise nothing (no failed
# finding in any run) and stay well inside its budget. The check runs from the same zipapp the
# node_health role installs (python3 -m clusterctl.lifecycle.bundle), with --no-drain (no Slurm here).
#
# Load: nccl-tests all_reduce_perf when a build is carried (NCCL_TESTS=path/to/all_reduce_perf, e.g.
# built by h200_mpi_nccl_tests.sh), else bench/device/nccl_allreduce_torch.py (torch's NCCL, one process
# per GPU) in a loop.
# Run as:  bash bench/device/h200_node_check.sh [IDLE_RUNS] [LOAD_RUNS]     (defaults 20 and 20)
# Results: $OUT/node-check/{env.txt,summary.txt,runs.tsv,load.txt,burn.txt,build.txt,verdicts.tar.gz (idle/<n>.json, load/<n>.json)} and the
#          evidence folders of the last runs ($OUT/node-check/evidence.tar.gz).
# What it should show: summary.txt "failed runs: 0" for idle and load; every runs.tsv line status
# healthy (or degraded with the findings named, e.g. a clock event under load), seconds per run far
# below the 45 s budget; the kernel log (journal or dmesg) read since the previous run each time.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
IDLE_RUNS=${1:-20} LOAD_RUNS=${2:-20}
R=$OUT/node-check; mkdir -p "$R/idle" "$R/load"
ST=/tmp/cc-node-check; rm -rf "$ST"; mkdir -p "$ST"
export PYTHONPATH=$PWD:$PWD/plugins/module_utils
python3 -m clusterctl.lifecycle.bundle "$ST/node-check.pyz" > "$ST/bundle.sha1" 2> "$ST/bundle.err" || {
  echo "bundle build failed"; cat "$ST/bundle.err"; exit 2; }
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if command -v journalctl >/dev/null && journalctl -k -n 1 -q >/dev/null 2>&1; then klog=journal; else klog=dmesg; fi
cat > "$ST/conf.json" <<EOF
{"spec": {"gpus_per_node": $gpus}, "gpus": $gpus, "kernel_log": "$klog", "state_dir": "$ST/state",
 "drain": false, "nodename": "h200", "keep": 5}
EOF
{ date -u; nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader
  echo "gpus=$gpus kernel_log=$klog bundle sha1=$(cat "$ST/bundle.sha1")"; python3 --version
  ls /dev/nvidia-nvswitch* 2>/dev/null || echo "no /dev/nvidia-nvswitch*"; } > "$R/env.txt" 2>&1
printf 'phase\trun\trc\tseconds\tstatus\tfindings\n' > "$R/runs.tsv"
one() {  # phase run
  local t0 t1 rc
  t0=$(date +%s.%N)
  python3 "$ST/node-check.pyz" --config "$ST/conf.json" --no-drain --json > "$R/$1/$2.json" 2> "$R/$1/$2.err"
  rc=$?; t1=$(date +%s.%N)
  python3 - "$R/$1/$2.json" "$1" "$2" "$rc" "$t0" "$t1" >> "$R/runs.tsv" <<'PY'
import json, sys
path, phase, run, rc, t0, t1 = sys.argv[1:]
secs = float(t1) - float(t0)
try:
    v = json.load(open(path))
except ValueError:
    v = {"status": "unreadable", "findings": []}
fs = [f"{f['severity']}:{f['check']}:{f['subject']}" for f in v.get("findings", []) if f["severity"] != "info"]
print("\t".join([phase, run, rc, f"{secs:.2f}", v.get("status", "?"), ";".join(fs) or "-"]))
PY
}
python3 "$ST/node-check.pyz" --config "$ST/conf.json" --no-drain > /dev/null 2>&1  # sets the kernel log cursor
for i in $(seq 1 "$IDLE_RUNS"); do one idle "$i"; sleep 2; done

# the load: nccl-tests when carried (NCCL_TESTS=binary, or built here from the carried source tarball
# build/dev16/nccl-tests-*.tar.gz, MPI=0, sm_90 only), else torch's NCCL all-reduce; with a bf16 GEMM burn
# beside it (BURN=0 turns it off) so the GPU runs at full power while the checks read it
TARBALL=${CLUSTERCTL_DEV_TARBALL:-$(ls "$PWD"/build/dev16/nccl-tests-*.tar.gz 2>/dev/null | head -1)}
if [[ -z ${NCCL_TESTS:-} && -n $TARBALL && -f $TARBALL ]]; then
  T=/tmp/nccl-tests-load; rm -rf "$T"; mkdir -p "$T"; tar xzf "$TARBALL" -C "$T" --strip-components=1
  (cd "$T" && make -j16 CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" NCCL_HOME="${NCCL_HOME:-/usr}" \
     NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90") > "$R/build.txt" 2>&1 && NCCL_TESTS=$T/build/all_reduce_perf
  echo "nccl-tests build: ${NCCL_TESTS:-failed (build.txt)}" >> "$R/env.txt"
fi
stop=$ST/stop-load; rm -f "$stop"
if [[ -n ${NCCL_TESTS:-} && -x ${NCCL_TESTS} ]]; then
  ( while [[ ! -e $stop ]]; do "$NCCL_TESTS" -b 64M -e 2G -f 2 -g "$gpus" -n 50 || sleep 5; done ) > "$R/load.txt" 2>&1 &
else
  ( while [[ ! -e $stop ]]; do python3 bench/device/nccl_allreduce_torch.py 50 || sleep 5; done ) > "$R/load.txt" 2>&1 &
fi
loadpid=$!
burnpid=
if [[ ${BURN:-1} == 1 ]]; then
  STOP=$stop python3 -c '
import os, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
while not os.path.exists(os.environ["STOP"]):
    for _ in range(50): c = a @ b
    torch.cuda.synchronize()
' > "$R/burn.txt" 2>&1 &
  burnpid=$!
fi
sleep 15  # the load is up (NCCL init, first sizes)
nvidia-smi --query-gpu=index,utilization.gpu,power.draw,clocks.sm --format=csv >> "$R/env.txt" 2>&1
for i in $(seq 1 "$LOAD_RUNS"); do one load "$i"; sleep 2; done
nvidia-smi --query-gpu=index,utilization.gpu,power.draw,clocks.sm --format=csv >> "$R/env.txt" 2>&1
touch "$stop"; wait "$loadpid" $burnpid 2>/dev/null
{ for p in idle load; do
    n=$(awk -F'\t' -v p=$p '$1==p' "$R/runs.tsv" | wc -l)
    bad=$(awk -F'\t' -v p=$p '$1==p && ($3!=0 || $5=="failed")' "$R/runs.tsv" | wc -l)
    worst=$(awk -F'\t' -v p=$p '$1==p {if ($4>m) m=$4} END {print m+0}' "$R/runs.tsv")
    echo "$p: runs $n, failed runs: $bad, slowest run ${worst}s (budget 45 s)"
  done
  echo "load lines: $(grep -c 'allreduce\|^ ' "$R/load.txt" 2>/dev/null || echo 0) (tail below)"; tail -3 "$R/load.txt"
} > "$R/summary.txt"
tar czf "$R/evidence.tar.gz" -C "$ST/state" runs 2>/dev/null
tar czf "$R/verdicts.tar.gz" -C "$R" idle load && rm -rf "$R/idle" "$R/load"  # what comes back is 8 files at most
cat "$R/env.txt" "$R/summary.txt"; tail -45 "$R/runs.tsv"
