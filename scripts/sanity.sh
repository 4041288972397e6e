#!/usr/bin/env bash
# ansible-test sanity on the collection clusterctl.hpc. With no arguments (what scripts/test.sh and CI run):
# every sanity test of ansible-core 2.19 but two (validate-modules, pep8, pylint, compile, import, yamllint,
# shebang, no-assert, ansible-doc, runtime-metadata, ...): about 30 s warm on 2 busy cores (pylint 15-20 s of it),
# 1 min 40 s cold (a fresh ~/.ansible, so each test's venv is built from PyPI first). pylint runs with Ansible's
# collection profile: no `_` as a throwaway name ("disallowed-name"), so plugins/ name theirs (`_colon`, `_lineno`);
# the one deliberate finding, ccparse/preparsed.py importing the parsers for their registration, is disabled inline.
# Left out:
#   shellcheck  no .sh file is in the built collection (scripts/ and lab/ are in galaxy.yml's build_ignore, roles
#               ship templates), so it would have nothing to check; it is not installed here or in CI (Debian 12
#               has it as the package shellcheck)
#   pslint      no PowerShell in the collection
# Other tests as arguments: `scripts/sanity.sh --test pep8 --test validate-modules`, `scripts/sanity.sh --test pylint`.
#
# ansible-test wants the collection at .../ansible_collections/clusterctl/hpc, so the built collection is
# installed into a temporary tree and tested there. For its sanity virtualenv, ansible-test downloads a pip
# bootstrap script from ci-files.testing.ansible.com, which is not reachable here (nor from CI): a stand-in
# (tests/ansible_test_get_pip.py: ensurepip, then pip==<version> like the real one) is put in its cache.
# The tests' pinned requirements (voluptuous, antsibull-docs-parser, pylint, astroid, ...: all wheels) then come
# from PyPI; no other network.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x .venv/bin/ansible-test ]] && export PATH="$PWD/.venv/bin:$PATH"
py=$(command -v python3)
pip_version=$("$py" -c 'from ansible_test._internal.python_requirements import get_venv_packages as g
class P: version = "%d.%d" % __import__("sys").version_info[:2]
print(g(P())["pip"])')
cache=~/.ansible/test/cache/get_pip_${pip_version//./_}.py
if [[ ! -s $cache ]] || ! cmp -s tests/ansible_test_get_pip.py "$cache"; then
  mkdir -p "$(dirname "$cache")" && cp tests/ansible_test_get_pip.py "$cache"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ansible-galaxy collection build --output-path "$tmp" . >/dev/null
ansible-galaxy collection install --offline --no-deps --force -p "$tmp/c" "$tmp"/clusterctl-hpc-*.tar.gz >/dev/null 2>&1
cd "$tmp/c/ansible_collections/clusterctl/hpc"
pyver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[[ $# -eq 0 ]] && set -- --skip-test shellcheck --skip-test pslint
exec ansible-test sanity --local --python "$pyver" --color no "$@"
