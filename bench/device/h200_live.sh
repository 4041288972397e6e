#!/usr/bin/env bash
# Live GPU collection on the borrowed H200 machine (issue 8). Writes every output under $OUT with a
# `# source:` first line, laid out as an evidence folder: $OUT/<host>/<KIND>.txt.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
host=h200-live
ev="$OUT/$host"; mkdir -p "$ev"
drv=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
src() { echo "# source: live capture on a borrowed NVIDIA H200 machine (driver $drv), $(date -u +%F), command: $1"; }
{ src "nvidia-smi -q"; nvidia-smi -q; } > "$ev/nvidia-smi-q.txt"
q=index,name,pci.bus_id,driver_version,temperature.gpu,power.draw,utilization.gpu,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,ecc.errors.uncorrected.volatile.total,clocks_event_reasons.active,clocks_event_reasons.hw_slowdown,clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_thermal_slowdown,clocks_event_reasons.sw_power_cap,remapped_rows.pending,remapped_rows.failure
{ src "nvidia-smi --query-gpu=$q --format=csv"; nvidia-smi --query-gpu=$q --format=csv; } > "$ev/nvidia-smi-query.txt" 2>&1
{ src "nvidia-smi topo -m"; nvidia-smi topo -m; } > "$ev/nvidia-smi-topo.txt" 2>&1
{ src "nvidia-smi nvlink -s"; nvidia-smi nvlink -s; } > "$ev/nvidia-smi-nvlink.txt" 2>&1
{ src "nvidia-smi"; nvidia-smi; } > "$ev/nvidia-smi.txt" 2>&1
nccl_ver=$(python3 -c 'import torch; print(".".join(map(str, torch.cuda.nccl.version())))' 2>/dev/null)
{ src "NCCL_DEBUG=INFO python3 bench/device/nccl_allreduce_torch.py (torch NCCL $nccl_ver)";
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH,ENV python3 bench/device/nccl_allreduce_torch.py 20 2>&1; } > "$ev/nccl-log.txt"
ls /usr/local/cuda*/bin/nvcc /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl 2>&1 | head > "$OUT/env.txt"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' >> "$OUT/env.txt" 2>&1
# The project's analysis on the same machine (pure Python; needs typer/rich/pyyaml, present there).
PYTHONPATH=.:plugins/module_utils python3 -m clusterctl.cli analyze "$OUT" --json > "$OUT/analyze.json" 2> "$OUT/analyze.err"
echo "analyze exit $?" >> "$OUT/analyze.err"
ls -la "$ev"
