"""Import every parser module so each registers its KIND; then look parsers up by KIND."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from . import __name__ as _pkg
from . import __path__ as _path
from .common import PARSERS, ParseError

__all__ = ["ParseError", "kinds", "parse"]

_loaded = False


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(list(_path)):
        if info.name not in ("common", "registry"):
            importlib.import_module(f"{_pkg}.{info.name}")
    _loaded = True


def kinds() -> list[str]:
    _load_all()
    return sorted(PARSERS)


def parse(kind: str, text: str) -> Any:
    """Parse ``text`` as the output of ``kind``. Raises KeyError for an unknown kind."""
    _load_all()
    if kind not in PARSERS:
        raise KeyError(kind)
    return PARSERS[kind](text)
