#!/usr/bin/env bash
# Issue 16 item 2 on the live H200: the gpu_tools role (nccl-tests unpacked from a checksum-pinned
# tarball and built MPI=0 against the node's CUDA and NCCL) run for real through ansible-playbook, then
# a second run (must report changed=0), a check-mode run, the built all_reduce_perf, and
# `clusterctl verify --level full`, which must find the tools the role installed. Also captures
# `nvidia-smi -q -x` and `nvidia-smi -q` at the same moment (fixtures for the XML parser).
# Carried in build/dev16/: the nccl-tests source and the wheels of ansible-core/ansible-runner.
# Run as:  bash bench/device/h200_gpu_tools.sh   (build/dev16 carried). Results: $OUT/h200-gpu-tools.tar.gz
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
SRC=$PWD B=$PWD/build/dev16 R=$OUT/r
mkdir -p "$R"
{ date -u; nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv; uname -r; cat /etc/os-release | head -2
  command -v make g++ nvcc dcgmi; /usr/bin/python3 -c 'import apt; print("python3-apt present")'; ls /usr/include/nccl.h; } > "$R/env.txt" 2>&1
nvidia-smi -q -x > "$R/nvidia-smi-q-x.xml" 2>&1; nvidia-smi -q > "$R/nvidia-smi-q.txt" 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$B"/whl/*.whl \
  > "$R/pip.txt" 2>&1 || { cat "$R/pip.txt"; exit 1; }
export PYTHONPATH=/tmp/site:$SRC:$SRC/plugins/module_utils PATH=/tmp/site/bin:$PATH
mkdir -p /tmp/coll/ansible_collections/clusterctl && ln -sfn "$SRC" /tmp/coll/ansible_collections/clusterctl/hpc
export ANSIBLE_COLLECTIONS_PATH=/tmp/coll CLUSTERCTL_DEV_TARBALL=$B/nccl-tests-2.19.6.tar.gz ANSIBLE_FORCE_COLOR=0
extra=()
/usr/bin/python3 -c 'import apt' 2>/dev/null && extra=(-e ansible_python_interpreter=/usr/bin/python3) \
  || extra=(-e '{"gpu_tools_build_packages": []}')
echo "extra: ${extra[*]}" >> "$R/env.txt"
pb=(ansible-playbook -i bench/device/h200-inventory bench/device/h200_gpu_tools.yml "${extra[@]}")
for n in 1 2; do
  t0=$(date +%s); "${pb[@]}" -v > "$R/run$n.txt" 2>&1; echo "run$n exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$R/run$n.txt"
done
"${pb[@]}" --check --diff > "$R/check.txt" 2>&1; echo "check exit $?" >> "$R/check.txt"
ls -la /opt/nccl-tests /opt/nccl-tests/build > "$R/installed.txt" 2>&1
/opt/nccl-tests/build/all_reduce_perf -b 8 -e 256M -f 4 -g 1 > "$R/all_reduce_perf.txt" 2>&1; echo "exit $?" >> "$R/all_reduce_perf.txt"
export CLUSTERCTL_STATE_DIR=/tmp/state/clusterctl
python3 -m clusterctl.cli verify bench/device/h200-inventory --level full > "$R/verify.txt" 2>&1
echo "verify exit $?" >> "$R/verify.txt"
tar czf "$OUT/h200-gpu-tools.tar.gz" -C "$OUT" r
cat "$R/env.txt"; for n in 1 2; do grep -E "PLAY RECAP|ok=|exit" "$R/run$n.txt"; done; tail -4 "$R/check.txt"
tail -12 "$R/all_reduce_perf.txt"; tail -25 "$R/verify.txt"
rm -rf "$R"
