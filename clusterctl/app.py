"""The typer application object. Command modules in ``clusterctl.commands`` register on it."""

from __future__ import annotations

from typing import Annotated

import typer

from clusterctl.errors import (
    EXIT_BAD_INPUT,
    EXIT_CANNOT_JUDGE,
    EXIT_FAILED,
    EXIT_HOSTS_FAILED,
    EXIT_OK,
    EXIT_UNREACHABLE,
)

EPILOG = """Exit statuses: 0 ok, 1 clusterctl/Ansible/Slurm failed, 2 bad input (nothing ran), 3 hosts
failed, 4 hosts unreachable or never reached.

Examples:

  clusterctl validate inventories/prod

  clusterctl plan inventories/prod

  clusterctl provision inventories/prod -v --log-file provision.log

  clusterctl verify inventories/prod --level full --drain

  clusterctl --install-completion            # shell completion for bash, zsh, fish
"""

def examples(text: str) -> str:
    """An epilog whose command lines click prints as they are (a ``\\b`` paragraph, no rewrapping)."""
    head, _, cmds = text.partition("Examples:")
    lines = [ln for ln in cmds.splitlines() if ln.strip()]
    return f"{head}Examples:\n\n\b\n" + "\n".join(lines) + "\n"


app = typer.Typer(
    name="clusterctl",
    help="Provision and verify multi-node GPU training clusters (Ansible underneath).",
    epilog=examples(EPILOG),
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

__all__ = ["EXIT_BAD_INPUT", "EXIT_CANNOT_JUDGE", "EXIT_FAILED", "EXIT_HOSTS_FAILED", "EXIT_OK", "EXIT_UNREACHABLE",
           "app", "examples"]


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    from clusterctl import __version__

    try:
        return dist_version("clusterctl")
    except PackageNotFoundError:  # pragma: no cover - a checkout without an installed package
        return __version__


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"clusterctl {version()}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def main(
    show_version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                               help="Print clusterctl's version and exit")] = False,
) -> None:
    """Provision and verify multi-node GPU training clusters (Ansible underneath)."""
