"""Issue 18's inventory circle: clusterctl/inventory is one package whose modules import each other
without a cycle, never inside a function, and never import typer (the commands exit, not this layer)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "clusterctl" / "inventory"


def _imports(path: Path) -> tuple[set[str], set[str], set[str]]:
    """(inventory modules imported at top level, ... inside functions, every top-level package)."""
    tree = ast.parse(path.read_text())
    top: set[str] = set()
    nested: set[str] = set()
    packages: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        packages.update(n.split(".")[0] for n in names)
        inner = {n.split(".")[2] for n in names if n.startswith("clusterctl.inventory.") and n.count(".") >= 2}
        inner &= {p.stem for p in PKG.glob("*.py")}
        (top if node.col_offset == 0 else nested).update(inner)
    return top, nested, packages


def test_no_cycle_no_hidden_import_no_typer() -> None:
    graph = {}
    for f in PKG.glob("*.py"):
        top, nested, packages = _imports(f)
        assert not nested, f"{f.name} imports {nested} inside a function"
        assert "typer" not in packages, f"{f.name} imports typer"
        graph[f.stem] = top - {f.stem}
    done: set[str] = set()

    def visit(mod: str, path: tuple[str, ...]) -> None:
        assert mod not in path, f"import cycle: {' -> '.join((*path, mod))}"
        if mod in done:
            return
        for dep in graph.get(mod, set()):
            visit(dep, (*path, mod))
        done.add(mod)

    for mod in graph:
        visit(mod, ())
    assert not (Path(__file__).resolve().parents[2] / "clusterctl" / "schema.py").exists()
    assert not (Path(__file__).resolve().parents[2] / "clusterctl" / "role_vars.py").exists()


def test_expectations_reads_through_the_inventory_package() -> None:
    src = (PKG.parent / "analysis" / "expectations.py").read_text()
    assert "import yaml" not in src and "clusterctl.inventory" in src
