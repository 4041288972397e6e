#!/usr/bin/env bash
# Issue 14 item 7: `clusterctl verify --level full` on the live H200, with nccl-tests 2.19.6 built
# there (recipe: ../shared/tools/README.md) and installed where verify looks for it
# (/opt/nccl-tests/build/all_reduce_perf). The inventory is bench/device/h200-inventory (local
# connection). Carried in build/dev14/: the nccl-tests source, the wheels of ansible-core and
# ansible-runner (the machine has no registry), and repo.tar, this branch's tree, used when the
# sent checkout is not this branch. Everything comes back in $OUT/h200-full.tar.gz.
# The device tool sends the session's checkout, not a helper's worktree: it was run as
#   mkdir -p /tmp/src/build && tar xf build/dev14/repo.tar -C /tmp/src && cp -r build/dev14 /tmp/src/build/ \
#     && cd /tmp/src && bash bench/device/h200_verify_full.sh
# with build/dev14 carried (repo.tar = `git archive HEAD`). Fixtures: tests/fixtures/h200-live/verify-full.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
B=$PWD/build/dev14
SRC=$PWD
if [ ! -f clusterctl/analysis/checks/kernel_log.py ]; then
  mkdir -p /tmp/src && tar xf "$B/repo.tar" -C /tmp/src && SRC=/tmp/src
fi
R=$OUT/r; mkdir -p "$R"
{ echo "src $SRC"; date -u; nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv; uname -r
  command -v dcgmi journalctl dmesg nvcc; ls /usr/local/ | grep -i cuda; } > "$R/env.txt" 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$B"/whl/*.whl \
  > "$R/pip.txt" 2>&1 || { cat "$R/pip.txt"; exit 1; }
export PYTHONPATH=/tmp/site:$SRC:$SRC/plugins/module_utils PATH=/tmp/site/bin:$PATH
t0=$(date +%s)
tar xzf "$B/nccl-tests-2.19.6.tar.gz" -C /tmp
(cd /tmp/nccl-tests-2.19.6 && make -j16 MPI=0 CUDA_HOME=/usr/local/cuda-13.0 \
  NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90") > "$R/nccl-tests-build.txt" 2>&1
echo "nccl-tests build exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$R/nccl-tests-build.txt"
mkdir -p /opt/nccl-tests && cp -r /tmp/nccl-tests-2.19.6/build /opt/nccl-tests/
# the compute floor (issue 25): clusterctl-gemm where the gpu_tools role installs it, its shebang this python3
{ echo "#!$(command -v python3)"; cat "$SRC/roles/gpu_tools/files/clusterctl_gemm.py"; } > /usr/local/bin/clusterctl-gemm \
  && chmod 755 /usr/local/bin/clusterctl-gemm
cd "$SRC" || exit 1
export CLUSTERCTL_STATE_DIR=/tmp/state/clusterctl
python3 -m clusterctl.cli verify bench/device/h200-inventory --level full > "$R/verify.txt" 2>&1
echo "verify exit $?" >> "$R/verify.txt"
ev=$(ls -d /tmp/state/clusterctl/*/evidence/* 2>/dev/null | tail -1)
run=$(ls -d /tmp/state/clusterctl/*/runs/*-verify-* 2>/dev/null | tail -1)
cp -r "$ev" "$R/evidence"; cp "$run"/verify-report.json "$run"/verify-report.html "$R/" 2>/dev/null
python3 -m clusterctl.cli analyze "$R/evidence" --inventory bench/device/h200-inventory --json > "$R/analyze.json" \
  2> "$R/analyze.err"; echo "analyze exit $?" >> "$R/analyze.err"
tar czf "$OUT/h200-full.tar.gz" -C "$OUT" r
cat "$R/env.txt"; tail -3 "$R/nccl-tests-build.txt"; cat "$R/verify.txt"; ls -la "$R/evidence"/*; cat "$R/analyze.err"
rm -rf "$R"  # only the archive comes back (at most 8 files)
