"""Where Ansible finds the ``clusterctl.hpc`` collection (roles, modules, filters, playbooks).

Installed (wheel), the collection tree lies at ``clusterctl/_data/ansible_collections/clusterctl/hpc``;
in a checkout the repository root *is* the collection, and a link
``<repo>/.ansible/collections/ansible_collections/clusterctl/hpc -> <repo>`` gives it the path layout
Ansible looks for (the same link ansible-lint makes, and the path ansible.cfg names). Everything that
runs Ansible gets :func:`ansible_env`: one ``ANSIBLE_COLLECTIONS_PATH`` instead of the per-kind
``ANSIBLE_*_PLUGINS``/``ANSIBLE_ROLES_PATH`` variables.
"""

from __future__ import annotations

import os
import shutil
from functools import cache
from pathlib import Path

NAMESPACE = "clusterctl"
NAME = "hpc"
FQCN = f"{NAMESPACE}.{NAME}"

_PKG = Path(__file__).resolve().parent
_INSTALLED = _PKG / "_data" / "ansible_collections" / NAMESPACE / NAME


def collection_root() -> Path:
    """The folder holding galaxy.yml, roles/, playbooks/ and plugins/ (installed tree or checkout)."""
    if (_INSTALLED / "galaxy.yml").is_file():
        return _INSTALLED
    return _PKG.parent


def _link(link: Path, target: Path) -> None:
    """Make ``link`` a symlink to ``target``, replacing a wrong one atomically (parallel runs race here)."""
    if link.is_symlink() and link.resolve() == target.resolve():
        return
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_dir() and not link.is_symlink():  # a copy installed there (ansible-galaxy): it would go stale
        shutil.rmtree(link)
    tmp = link.with_name(f".{link.name}.{os.getpid()}")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target, target_is_directory=True)
    os.replace(tmp, link)


@cache
def collections_path() -> Path:
    """A folder with ``ansible_collections/clusterctl/hpc`` in it: the value for ANSIBLE_COLLECTIONS_PATH."""
    root = collection_root()
    if root == _INSTALLED:
        return root.parents[2]
    base = root / ".ansible" / "collections"
    _link(base / "ansible_collections" / NAMESPACE / NAME, root)
    return base


# ansible-core's own default collections path: where `ansible-galaxy collection install -r
# requirements.yml` puts ansible.posix and community.general when the user sets no path.
DEFAULT_PATHS = ("~/.ansible/collections", "/usr/share/ansible/collections")


def ansible_env() -> dict[str, str]:
    """The environment that makes Ansible resolve ``clusterctl.hpc.*``: the user's collection paths
    (``$ANSIBLE_COLLECTIONS_PATH``, else ansible-core's defaults) are kept after it, so the collections
    of requirements.yml are found where ansible-galaxy installed them."""
    extra = os.environ.get("ANSIBLE_COLLECTIONS_PATH", "")
    rest = extra.split(os.pathsep) if extra else [os.path.expanduser(p) for p in DEFAULT_PATHS]
    return {"ANSIBLE_COLLECTIONS_PATH": os.pathsep.join([str(collections_path()), *rest])}
