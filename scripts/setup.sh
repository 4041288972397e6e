#!/usr/bin/env bash
# Install everything clusterctl, its lab and its tests need on a fresh Debian 12 machine (as root).
# Idempotent: a second run installs nothing. Creates .venv in the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
# CLUSTERCTL_SETUP_NO_LAB=1 (scripts/test.sh --fast): the Python side only, no podman/lab image.
lab=1; [[ "${CLUSTERCTL_SETUP_NO_LAB:-0}" == 1 ]] && lab=0
[[ $lab -eq 1 ]] && bash lab/host-setup.sh
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  apt-get update -q && apt-get install -y -q python3-venv
fi
command -v ssh >/dev/null || { apt-get update -q && apt-get install -y -q openssh-client; }
# promtool (Debian package prometheus): the fast tier checks every textfile, rule and rule test with it
# (issue 26); without it those tests skip with the reason. --no-install-recommends: no exporters started.
command -v promtool >/dev/null || { apt-get update -q && apt-get install -y -q --no-install-recommends prometheus; }
if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
stamp=.venv/.clusterctl-installed
if [[ ! -f $stamp || pyproject.toml -nt $stamp ]]; then
  .venv/bin/pip install -q --disable-pip-version-check -U pip
  .venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
  touch "$stamp"
fi
# The checkout is the collection clusterctl.hpc: link it where ansible.cfg and Molecule look for it.
mkdir -p .ansible/collections/ansible_collections/clusterctl
ln -sfn ../../../.. .ansible/collections/ansible_collections/clusterctl/hpc
# The collections the roles use (requirements.yml; the wheel needs ansible-core only): installed into
# that same path (ansible.cfg's and the CLI's) unless Ansible finds them already, e.g. from the test
# extras' `ansible` package (CI reaches no Galaxy). A user of the wheel runs the README's Install step.
for coll in $(.venv/bin/python -c 'import yaml; print(*(c["name"] for c in yaml.safe_load(open("requirements.yml"))["collections"]))'); do
  if ! .venv/bin/ansible-galaxy collection list "$coll" 2>/dev/null | grep -q "^$coll "; then
    .venv/bin/ansible-galaxy collection install -r requirements.yml -p .ansible/collections
    break
  fi
done
# The lab image (packages baked in) and the bare image (the scale-out node of molecule/slurm, where
# the roles install munge and slurmd for real): each built once, skipped when it exists.
if [[ $lab -eq 1 ]]; then
  bash lab/build-image.sh
  bash lab/build-image.sh --bare
fi
exit 0
