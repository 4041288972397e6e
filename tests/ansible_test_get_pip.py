"""Stand-in for the get-pip bootstrap script ansible-test downloads for its sanity virtualenvs
(scripts/sanity.sh puts it in ansible-test's cache because ci-files.testing.ansible.com is unreachable).

ansible-test runs ``python get_pip.py --disable-pip-version-check pip==X [--no-setuptools] [--no-wheel]``
in a fresh virtualenv that has no pip: the pip of the environment that runs ansible-test (first on PATH,
configured for this machine's index and certificates) installs the requested packages (pip==X) into it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys


def main() -> int:
    pip = shutil.which("pip3") or shutil.which("pip")
    if pip is None:
        print("no pip on PATH to bootstrap the virtualenv with", file=sys.stderr)
        return 1
    args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
    return subprocess.call([pip, "--python", sys.executable, "install", *args])


if __name__ == "__main__":
    sys.exit(main())
