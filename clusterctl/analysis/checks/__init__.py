"""Check modules, one per area (ib, gpu, nccl, ...). Each registers with ``model.check(KIND)``.

Every module here is imported by :func:`load_all`; defaults for expectations live in the module
that uses them, each with a comment saying where the number comes from.
"""

from __future__ import annotations

import importlib
import pkgutil


def load_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
