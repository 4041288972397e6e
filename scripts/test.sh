#!/usr/bin/env bash
# README command 2: install, lint, then every test (unit, fixtures, Molecule and lab integration).
# Set CLUSTERCTL_TEST_UNIT_ONLY=1 to skip the podman-based tests.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
export PATH="$PWD/.venv/bin:$PATH"
fail=0
step() { echo "== $*"; "$@" || { echo "!! failed: $*"; fail=1; }; }
step ruff check .
step mypy
step yamllint -s .
step ansible-lint --profile production
markers=()
[[ "${CLUSTERCTL_TEST_UNIT_ONLY:-0}" == 1 ]] && markers=(-m "not lab and not molecule")
echo "== pytest"
pytest "${markers[@]}" tests
rc=$?
if [[ $rc -eq 5 ]]; then echo "!! pytest collected no tests"; rc=1; fi
[[ $rc -ne 0 ]] && fail=1
exit $fail
