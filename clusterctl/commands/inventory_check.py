"""The commands' side of inventory validation: print every problem and exit 2 (nothing was run)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from clusterctl.inventory import Inventory, InventoryError, load_checked


def load_and_validate(path: Path) -> Inventory:
    """Load and validate ``path``; on bad input print each problem to stderr and exit with status 2."""
    try:
        return load_checked(path)
    except InventoryError as exc:
        print(f"clusterctl: inventory {path} rejected ({len(exc.problems)} problem(s)); nothing was run:",
              file=sys.stderr)
        for p in exc.problems:
            print(f"  {path}/{p}", file=sys.stderr)
        raise typer.Exit(2) from None
