#!/usr/bin/env bash
# Issue 24 item 2 on the H200: nccl-tests built MPI=1 with the gpu_tools role's exact make line
# (gpu_tools_nccl_tests_mpi: true: make -j<jobs> MPI=1 MPI_HOME=<gpu_tools_mpi_home> CUDA_HOME=<cuda>
# NCCL_HOME=<nccl>) against the machine's Open MPI, then `mpirun -np 1 all_reduce_perf` (one MPI rank
# on the one GPU). Without mpi.h / mpirun on the machine it says so in $OUT/r/env.txt and stops: a
# result, not a crash. Needs the nccl-tests source carried: build/dev16/nccl-tests-2.19.6.tar.gz
# (or CLUSTERCTL_DEV_TARBALL). Run as:  bash bench/device/h200_mpi_nccl_tests.sh
# Results: $OUT/h200-mpi-nccl-tests.tar.gz (env.txt, build.txt, all_reduce_perf.txt).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
TARBALL=${CLUSTERCTL_DEV_TARBALL:-$PWD/build/dev16/nccl-tests-2.19.6.tar.gz}
MPI_HOME=${MPI_HOME:-/usr/lib/x86_64-linux-gnu/openmpi} CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} NCCL_HOME=${NCCL_HOME:-/usr}
R=$OUT/r; mkdir -p "$R"
finish() { tar czf "$OUT/h200-mpi-nccl-tests.tar.gz" -C "$OUT" r; cat "$R"/*.txt | tail -60; rm -rf "$R"; exit "$1"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "MPI_HOME=$MPI_HOME"; command -v mpirun mpicc nvcc make g++ || true
  ls "$MPI_HOME/include/mpi.h" "$MPI_HOME/lib/libmpi.so" "$NCCL_HOME/include/nccl.h" 2>&1
  mpirun --version 2>&1 | head -1; dpkg -l libopenmpi-dev openmpi-bin 2>&1 | tail -2; } > "$R/env.txt" 2>&1
if [[ ! -e $MPI_HOME/include/mpi.h || ! -e $MPI_HOME/lib/libmpi.so ]] || ! command -v mpirun >/dev/null; then
  echo "NO MPI HERE: libopenmpi-dev (mpi.h, libmpi.so under $MPI_HOME) and/or mpirun (openmpi-bin) are missing;" \
       "nccl-tests MPI=1 cannot be built or run on this machine" | tee -a "$R/env.txt"
  finish 3
fi
[[ -f $TARBALL ]] || { echo "nccl-tests source not carried: $TARBALL" | tee -a "$R/env.txt"; finish 4; }
T=/tmp/nccl-tests-mpi; rm -rf "$T"; mkdir -p "$T"; tar xzf "$TARBALL" -C "$T" --strip-components=1
make_line=(make -j16 MPI=1 "MPI_HOME=$MPI_HOME" "CUDA_HOME=$CUDA_HOME" "NCCL_HOME=$NCCL_HOME")
echo "${make_line[*]}" > "$R/build.txt"
t0=$(date +%s); (cd "$T" && "${make_line[@]}") >> "$R/build.txt" 2>&1; rc=$?
echo "build exit $rc in $(( $(date +%s) - t0 )) s" >> "$R/build.txt"; [[ $rc == 0 ]] || finish 5
ldd "$T/build/all_reduce_perf" | grep -E "mpi|nccl" >> "$R/build.txt"
mpirun --allow-run-as-root -np 1 "$T/build/all_reduce_perf" -b 8 -e 256M -f 4 -g 1 > "$R/all_reduce_perf.txt" 2>&1
echo "mpirun exit $?" >> "$R/all_reduce_perf.txt"
finish 0
