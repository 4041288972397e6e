#!/usr/bin/env bash
# Issue 25 item 3: the burn-in gate's compute floor on a real GPU node. Runs clusterctl-gemm (the program the
# gpu_tools role installs, roles/gpu_tools/files/clusterctl_gemm.py, straight from the checkout) with the
# machine's python3, both backends: PyTorch (needs it with CUDA) and cuBLAS through ctypes (libcudart and
# libcublas of the CUDA toolkit or of PyTorch's nvidia-* wheels), and judges each capture with the repository's parser and check
# (ccparse KIND gemm, clusterctl/analysis/checks/gemm.py: needs PyYAML for the severity table; without it
# verdicts.txt says so and the captures still come back).
# Runs: bf16 x RUNS (run-to-run spread), fp16 once, bf16 with the cuBLAS backend once, and bf16 once while a second process runs its own bf16
# matmuls on every GPU (a GPU shared with a stray job: each GPU should drop to about half, below the floor).
# Run as:  bash bench/device/gemm_floor.sh [RUNS] [SECONDS]      (defaults 3 and 10; about 2 minutes on 1 GPU)
# Results: $OUT/gemm/{env.txt, h200-bf16-<n>.txt, h200-fp16.txt, h200-bf16-cublas.txt, h200-bf16-contended.txt,
#          verdicts.txt, summary.txt}
#          each capture with its '# source:' line 1, ready to copy to tests/fixtures/gemm/ byte for byte.
# What it should show: every idle run exit 0 with one gemm line per GPU, tflops well above the 477 TFLOP/s floor
# of H100/H200 SXM (expected 600-750 for bf16 8192^3), worst/best within a few % of the median, the runs within
# a few % of each other, the cublas run (header backend=cublas) within ~10 % of the torch runs; verdicts.txt "info" only for the idle runs (at_floor) and a critical below_floor (or,
# with several GPUs, the node median rule) for the contended run.
set -uo pipefail
RUNS=${1:-3} SECS=${2:-10}
R=${OUT:-/tmp}/gemm; mkdir -p "$R"
export PYTHONPATH=$PWD:$PWD/plugins/module_utils NCCL_NVLS_ENABLE=0
PROG=roles/gpu_tools/files/clusterctl_gemm.py
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
{ date -u; nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,power.limit,clocks.max.sm --format=csv
  python3 --version; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  git rev-parse HEAD 2>/dev/null; } > "$R/env.txt" 2>&1
capture() {  # name, then the program's arguments
  local name=$1; shift
  local t0 rc
  t0=$(date +%s)
  { echo "# source: live capture on a borrowed NVIDIA H200 machine (driver ${driver:-?}), $(date -u +%F), command:" \
      "python3 $PROG $*"
    python3 "$PROG" "$@"; } > "$R/$name.txt" 2> "$R/$name.err"
  rc=$?
  echo "$name: exit $rc, $(( $(date +%s) - t0 )) s" >> "$R/summary.txt"
  [[ -s $R/$name.err ]] || rm -f "$R/$name.err"
}
: > "$R/summary.txt"
for i in $(seq 1 "$RUNS"); do capture "h200-bf16-$i" --backend torch --seconds "$SECS"; done
capture h200-fp16 --backend torch --dtype fp16 --seconds "$SECS"
capture h200-bf16-cublas --backend cublas --seconds "$SECS"
# the stray job: bf16 matmuls on every GPU from another process, for the whole contended run
stop=/tmp/cc-gemm-stop; rm -f "$stop"
STOP=$stop python3 -c '
import os, torch
xs = [(torch.randn(8192, 8192, device=i, dtype=torch.bfloat16),) * 2 for i in range(torch.cuda.device_count())]
while not os.path.exists(os.environ["STOP"]):
    for i, (a, b) in enumerate(xs):
        with torch.cuda.device(i):
            for _ in range(20): a @ b
    torch.cuda.synchronize()
' > "$R/stray.txt" 2>&1 &
stray=$!
sleep 5
capture h200-bf16-contended --backend torch --seconds "$SECS"
touch "$stop"; wait "$stray" 2>/dev/null
[[ -s $R/stray.txt ]] || rm -f "$R/stray.txt"
python3 - "$R" > "$R/verdicts.txt" 2>&1 <<'PY'
import sys
from pathlib import Path
try:
    from ccparse import registry
    from clusterctl.analysis import expectations
    from clusterctl.analysis.checks import gemm
except Exception as exc:  # no PyYAML on the machine: the captures still came back
    sys.exit(f"cannot judge here: {type(exc).__name__}: {exc}")
for cap in sorted(Path(sys.argv[1]).glob("h200-*.txt")):
    try:
        data = registry.parse("gemm", cap.read_text())
    except Exception as exc:
        print(f"{cap.name}: does not parse: {exc}")
        continue
    res = gemm.judge_gemm("h200", data, expectations.build({}))
    for f in res.findings:
        print(f"{cap.name}\t{f.severity}\t{f.subject}\t{f.message}")
PY
cat "$R/env.txt" "$R/summary.txt" "$R/verdicts.txt"; grep -h "^gemm" "$R"/h200-*.txt | cut -f2,5,6,12-14
