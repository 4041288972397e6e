#!/usr/bin/env bash
# Issue 8, second call: the project's own collection (playbooks/verify.yml with the fabric_evidence
# module, ansible-core carried as a wheel) and analysis (clusterctl analyze) on the live H200.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD:$PWD/plugins/module_utils PATH=/tmp/site/bin:$PATH
mkdir -p /tmp/coll/ansible_collections/clusterctl && ln -sfn "$PWD" /tmp/coll/ansible_collections/clusterctl/hpc
export ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_COLLECTIONS_PATH=/tmp/coll ANSIBLE_CACHE_PLUGIN_CONNECTION=/tmp/facts \
  ANSIBLE_LOCAL_TEMP=/tmp/ansible-local ANSIBLE_HOME=/tmp/ansible-home
python3 -m ansible playbook --version >/dev/null 2>&1 || true
ev=$OUT/ev
python3 /tmp/site/bin/ansible-playbook -i "h200-live," -c local -e ansible_python_interpreter=$(command -v python3) \
  -e clusterctl_evidence_dir=$ev -e clusterctl_verify_hosts=all playbooks/verify.yml > $OUT/verify-playbook.txt 2>&1
echo "verify.yml exit $?" >> $OUT/verify-playbook.txt
python3 -m clusterctl.cli analyze $ev --json > $OUT/analyze.json 2> $OUT/analyze.err; echo "analyze exit $?" >> $OUT/analyze.err
python3 -m clusterctl.cli analyze $ev > $OUT/analyze.txt 2>&1
ls -la $ev/*; tail -5 $OUT/verify-playbook.txt; cat $OUT/analyze.txt
