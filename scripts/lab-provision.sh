#!/usr/bin/env bash
# README command 1: install, bring up the embedded lab (3 podman containers) and provision it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/clusterctl lab up
.venv/bin/clusterctl provision inventories/lab
