"""The typer application object. Command modules in ``clusterctl.commands`` register on it."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="clusterctl",
    help="Provision and verify multi-node GPU training clusters (Ansible underneath).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

#: exit statuses a script can rely on
EXIT_OK = 0
EXIT_FAILED = 1  # unexpected error inside clusterctl
EXIT_BAD_INPUT = 2  # inventory/arguments rejected; nothing ran
EXIT_HOSTS_FAILED = 3  # some hosts failed (or verify found failed nodes)
EXIT_UNREACHABLE = 4  # some hosts were unreachable (and none failed)
