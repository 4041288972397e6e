#!/usr/bin/env bash
# ansible-test sanity on the collection clusterctl.hpc. With no arguments (what scripts/test.sh and CI run):
# every sanity test of ansible-core 2.19 but three, about 20 s here (validate-modules, pep8, compile, import,
# yamllint, shebang, no-assert, ansible-doc, runtime-metadata, ...). Left out:
#   pylint      34 findings in code written for ruff (`_` as a throwaway name is "disallowed-name" in Ansible's
#               pylint profile; ccparse/preparsed.py imports parsers for their registration); ruff and mypy
#               lint the same files in scripts/test.sh
#   shellcheck  no shell script is in the built collection (roles ship templates, not .sh files); it is not
#               installed here or in CI
#   pslint      no PowerShell in the collection
# Other tests as arguments: `scripts/sanity.sh --test pep8 --test validate-modules`, `scripts/sanity.sh --test pylint`.
#
# ansible-test wants the collection at .../ansible_collections/clusterctl/hpc, so the built collection is
# installed into a temporary tree and tested there. For its sanity virtualenv, ansible-test downloads a pip
# bootstrap script from ci-files.testing.ansible.com, which is not reachable here (nor from CI): a stand-in
# (tests/ansible_test_get_pip.py: ensurepip, then pip==<version> like the real one) is put in its cache.
# The test's pinned requirements (voluptuous, antsibull-docs-parser, ...) then come from PyPI; no other network.
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
[[ $# -eq 0 ]] && set -- --skip-test pylint --skip-test shellcheck --skip-test pslint
exec ansible-test sanity --local --python "$pyver" --color no "$@"
