"""Where the playbooks, roles, plugins and inventories are, installed or in a checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    """The folder holding playbooks/, roles/, plugins/ (wheel: clusterctl/_data; checkout: repo)."""
    installed = _PKG / "_data"
    if (installed / "playbooks").is_dir():
        return installed
    return _PKG.parent


def playbooks() -> Path:
    return data_root() / "playbooks"


def roles() -> Path:
    return data_root() / "roles"


def plugins() -> Path:
    return data_root() / "plugins"


def inventories() -> Path:
    return data_root() / "inventories"
