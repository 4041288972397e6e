#!/usr/bin/env bash
# README command 2: install, lint, then the tests in tiers.
#   scripts/test.sh          everything: lint, ansible-test sanity, the fast tier, Molecule and lab (what CI runs)
#   scripts/test.sh --fast   lint, ansible-test sanity and the fast tier only (unit + parsers + templates +
#                            the collection build); no podman. CLUSTERCTL_TEST_UNIT_ONLY=1 means the same.
# Tiers are pytest markers (docs/DEVELOPING.md): `lab` and `molecule` tests run only when selected
# (`-m lab`, `-m molecule`) or with --all-tiers; a plain `pytest` is the fast tier.
set -uo pipefail
cd "$(dirname "$0")/.."
fast=0
[[ "${1:-}" == "--fast" || "${CLUSTERCTL_TEST_UNIT_ONLY:-0}" == 1 ]] && fast=1
if [[ $fast -eq 1 ]]; then
  CLUSTERCTL_SETUP_NO_LAB=1 bash scripts/setup.sh || exit 1
else
  bash scripts/setup.sh || exit 1
fi
export PATH="$PWD/.venv/bin:$PATH"
fail=0
step() { echo "== $*"; local t0=$SECONDS; "$@" || { echo "!! failed: $*"; fail=1; }; echo "   ($((SECONDS - t0)) s)"; }
step ruff check .
step mypy
step yamllint -s .
step ansible-lint --profile production
step bash scripts/sanity.sh
tier=(--all-tiers)
[[ $fast -eq 1 ]] && tier=(-m "not lab and not molecule")
echo "== pytest ${tier[*]}"
t0=$SECONDS
pytest "${tier[@]}" --durations=25 tests
rc=$?
echo "   ($((SECONDS - t0)) s)"
if [[ $rc -eq 5 ]]; then echo "!! pytest collected no tests"; rc=1; fi
[[ $rc -ne 0 ]] && fail=1
exit $fail
