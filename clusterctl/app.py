"""The typer application object. Command modules in ``clusterctl.commands`` register on it."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperGroup

try:  # typer >= 0.20 carries its own click; older ones use the click package
    from typer._click.exceptions import UsageError as ClickUsageError
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.exceptions import UsageError as ClickUsageError  # type: ignore[assignment]

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


def _wants_json(args: list[str]) -> bool:
    return "--json" in (args[:args.index("--")] if "--" in args else args)


def _command_words(group: Any, args: list[str]) -> str:
    """The command (``verify``, ``lab status``) that ``args`` name, as far as they name one."""
    words: list[str] = []
    cmd = group
    for a in args:
        sub = getattr(cmd, "commands", {}).get(a)
        if sub is None:
            if a.startswith("-") or not words:
                continue
            break
        words.append(a)
        cmd = sub
    return " ".join(words)


class EnvelopeGroup(TyperGroup):
    """The root command: a usage error (unknown option, missing or bad argument: exit 2) of a
    command line that asked for ``--json`` also prints the JSON envelope on stdout."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        argv = list(args)
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except ClickUsageError as exc:
            self._usage_envelope(exc, argv)
            raise
        ctx.meta["clusterctl.argv"] = argv
        return ctx

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except ClickUsageError as exc:
            self._usage_envelope(exc, ctx.meta.get("clusterctl.argv", []))
            raise

    def _usage_envelope(self, exc: Any, argv: list[str]) -> None:
        if not _wants_json(argv) or getattr(exc, "_clusterctl_enveloped", False):
            return
        from clusterctl.commands.common import emit_json, problem

        param = getattr(exc, "param", None)
        key = (param.opts[0] if getattr(param, "opts", None) else getattr(param, "name", None)) if param else None
        emit_json(None, exit_code=exc.exit_code, command=_command_words(self, argv),
                  problems=[problem(exc.format_message(), key=key)])
        exc._clusterctl_enveloped = True


app = typer.Typer(
    cls=EnvelopeGroup,
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
