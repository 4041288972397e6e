"""Entry point: importing the command modules registers every command on the app."""

from __future__ import annotations

import importlib
import pkgutil

from clusterctl import commands
from clusterctl.app import app

for _info in pkgutil.iter_modules(commands.__path__):
    importlib.import_module(f"{commands.__name__}.{_info.name}")

__all__ = ["app"]

if __name__ == "__main__":  # pragma: no cover
    app()
