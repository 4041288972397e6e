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
# Node-side code (modules, module_utils) runs on the target's Python: EL 9 has 3.9 (issue 27)
step vermin -q -t=3.9- --no-tips --violations --eval-annotations plugins/modules plugins/module_utils
step yamllint -s .
step ansible-lint --profile production
step bash scripts/sanity.sh
# Tests that read the repository's git history (held-out corpus lists only ever grow) cannot run in
# the copy below (it has no .git): they run here, in place, first.
CLUSTERCTL_REQUIRE_GIT_HISTORY=1 step pytest -q -p no:cacheprovider tests/unit/test_corpus_round2_shape.py -k never_removed
# The fast tier runs from a copy of the working tree (tracked and untracked-not-ignored files: what a
# clone of it holds) in a folder with nothing beside it - no ../shared, no CLUSTERCTL_TOOLS_DIR -
# so CI shows that a clone passes its own tests; tests needing a tool tarball skip there, saying why.
repo=$PWD
clone_root=$(mktemp -d /tmp/clusterctl-clone.XXXXXX)
trap 'rm -rf "$clone_root"' EXIT
mkdir "$clone_root/repo"
git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$clone_root/repo"
mkdir -p "$clone_root/repo/.ansible/collections/ansible_collections/clusterctl"
ln -sfn ../../../.. "$clone_root/repo/.ansible/collections/ansible_collections/clusterctl/hpc"
run_pytest() {  # DIR, then pytest arguments
  local dir=$1; shift
  echo "== pytest $* (in $dir)"
  local t0=$SECONDS rc
  (cd "$dir" && PYTHONPATH="$dir:$dir/plugins/module_utils" pytest "$@" --durations=25 tests)
  rc=$?
  echo "   ($((SECONDS - t0)) s)"
  if [[ $rc -eq 5 ]]; then echo "!! pytest collected no tests"; rc=1; fi
  return $rc
}
# tests/unit/test_ansible_matrix.py runs noxfile.py (ansible-core 2.16 .. 2.19); its venvs stay in
# the checkout's .nox, so only the first run installs (~2 min; then ~25 s). CLUSTERCTL_NOX=0 skips it.
export CLUSTERCTL_NOX="${CLUSTERCTL_NOX:-1}" CLUSTERCTL_NOX_ENVDIR="$repo/.nox"
# The fast tier's tests are independent of each other: pytest-xdist spreads them over the machine's cores
# (CLUSTERCTL_TEST_WORKERS: a number, or 0 for one process; about 10 instead of 20 minutes on 2 cores)
workers="${CLUSTERCTL_TEST_WORKERS:-auto}"
(unset CLUSTERCTL_TOOLS_DIR CLUSTERCTL_SHARED; run_pytest "$clone_root/repo" -n "$workers" -m "not lab and not molecule") \
  || fail=1
if [[ $fast -eq 0 ]]; then
  # the lab's containers have fixed names: one lab at a time on a machine (other runs wait on this lock)
  exec 9>/tmp/clusterctl-podman.lock
  flock 9
  run_pytest "$repo" -m "lab or molecule" || fail=1
  flock -u 9
fi
exit $fail
