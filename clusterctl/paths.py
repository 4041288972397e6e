"""Where the playbooks, roles, plugins and inventories are, installed or in a checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from clusterctl import collection

_PKG = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    """The folder holding inventories/, lab/ and ansible.cfg (wheel: clusterctl/_data; checkout: repo).

    playbooks/, roles/ and plugins/ belong to the collection: :func:`collection.collection_root`.
    """
    installed = _PKG / "_data"
    if (installed / "ansible.cfg").is_file():
        return installed
    return _PKG.parent


def playbooks() -> Path:
    return collection.collection_root() / "playbooks"


def roles() -> Path:
    return collection.collection_root() / "roles"


def plugins() -> Path:
    return collection.collection_root() / "plugins"


def inventories() -> Path:
    return data_root() / "inventories"
