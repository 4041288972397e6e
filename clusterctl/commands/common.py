"""What every command shares: the options passed through to Ansible, logging, JSON output, and
the one place where clusterctl's typed errors become messages and exit statuses.

Library modules raise :class:`clusterctl.errors.ClusterctlError` subclasses and return results;
a command decorated with :func:`ansible_command` (runs Ansible) or :func:`reports_errors` (does
not) gets them printed and turned into the error's exit status. With ``--json`` the human text of
a command goes to stderr and stdout carries one JSON document, the envelope :func:`emit_json` builds
(the same for every command, for its failures and for usage errors: README "Machine output").
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from clusterctl.display import console, err_console
from clusterctl.errors import EXIT_BAD_INPUT, ClusterctlError
from clusterctl.runner import RunOptions, RunResult, current_options

F = TypeVar("F", bound=Callable[..., Any])


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (typer's CliRunner swaps it)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


_installed: list[logging.Handler] = []


def setup_logging(verbosity: int, log_file: Path | None) -> None:
    """``clusterctl`` logger: warnings on stderr (``-v`` info, ``-vv`` debug, which includes
    Ansible's own output); everything, Ansible's output included, in ``log_file``."""
    root = logging.getLogger("clusterctl")
    for h in _installed:
        root.removeHandler(h)
        h.close()
    _installed.clear()
    root.setLevel(logging.DEBUG)
    root.propagate = False
    err = _StderrHandler()
    err.setLevel(logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG)
    err.setFormatter(logging.Formatter("clusterctl: %(message)s"))
    _installed.append(err)
    if log_file is not None:
        try:
            # a debug log holds what run artifacts hold: owner-only like them (0600), from its creation
            fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.close(fd)
            os.chmod(log_file, 0o600)
            fh = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:
            raise ClusterctlError(f"--log-file {log_file}: {exc.strerror or exc}") from None
        fh.setLevel(logging.DEBUG)
        fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        _installed.append(fh)
    for h in _installed:
        root.addHandler(h)


@contextmanager
def _human_text_to_stderr(on: bool) -> Iterator[None]:
    if not on:
        yield
        return
    saved = console._file  # None: "whatever sys.stdout is" (rich resolves it on each write)
    console.file = sys.stderr
    try:
        yield
    finally:
        console._file = saved


#: the keys of every ``--json`` document, in this order (README "Machine output")
ENVELOPE_KEYS = ("clusterctl", "command", "time", "exit_code", "result", "problems")


def problem(message: str, *, file: str | None = None, line: int | None = None, key: str | None = None
            ) -> dict[str, Any]:
    """One entry of an envelope's ``problems``: what is wrong, and where when known."""
    return {"file": file, "line": line, "key": key, "message": message}


def inventory_problems(problems: Any, where: Callable[[str], str] = str) -> list[dict[str, Any]]:
    """An inventory's problems (``clusterctl.inventory.model.Problem``) as envelope problems; the
    value shown as the human text shows it (secrets redacted)."""
    return [problem(f"{p.message} (value: {p.shown_value()})", file=where(p.file), key=p.key) for p in problems]


def command_name() -> str:
    """The running command's words (``verify``, ``lab status``), from typer's current context."""
    try:  # typer's own click (typer >= 0.20), else the click package
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover - depends on the installed typer
        from click import get_current_context  # type: ignore[no-redef]

    ctx = get_current_context(silent=True)
    words: list[str] = []
    while ctx is not None and ctx.parent is not None:
        words.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(w for w in words if w)


def emit_json(result: Any, *, exit_code: int = 0, problems: list[dict[str, Any]] | None = None,
              command: str | None = None) -> None:
    """Print the one JSON document of ``--json`` on stdout, on one line: clusterctl's version, the
    command, the time (ISO 8601, UTC), the exit status the command ends with, its ``result`` (None
    when it failed before it had one) and ``problems`` (:func:`problem` objects)."""
    from datetime import UTC, datetime

    from clusterctl.app import version

    doc = {"clusterctl": version(), "command": command if command is not None else command_name(),
           "time": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
           "exit_code": int(exit_code), "result": result, "problems": list(problems or ())}
    sys.stdout.write(json.dumps(doc, separators=(",", ":"), default=str) + "\n")
    sys.stdout.flush()


def _report(exc: BaseException, as_json: bool) -> int:
    from clusterctl.inventory import InventoryError

    if isinstance(exc, InventoryError):
        # a problem's file is relative to the inventory's folder (the path itself, or a file's
        # folder); -e values have no file and absolute paths stand as they are
        base = exc.path if exc.path.is_dir() else exc.path.parent
        def where(file: str) -> str:
            return file if file.startswith("-e") or os.path.isabs(file) or str(base) in ("", ".") else f"{base}/{file}"

        err_console.print(f"clusterctl: inventory {exc.path} rejected ({len(exc.problems)} problem(s)); "
                          "nothing was run:", markup=False)
        for p in exc.problems:
            err_console.print(f"  {where(str(p))}", markup=False)
        code = EXIT_BAD_INPUT
        problems = inventory_problems(exc.problems, where)
    elif isinstance(exc, OSError):  # an output destination: full disk, a folder where a file goes, ...
        where_ = exc.filename or "(unknown path)"
        code, msg = 1, f"cannot write {where_}: {exc.strerror or exc}"
        err_console.print(f"clusterctl: {msg}", markup=False)
        problems = [problem(msg, file=str(where_))]
    else:
        assert isinstance(exc, ClusterctlError)
        code, msg = exc.exit_code, str(exc)
        err_console.print(f"clusterctl: {msg}", markup=False)
        problems = [problem(msg, file=exc.file, line=exc.line, key=exc.key)]
    if as_json:
        emit_json(None, exit_code=code, problems=problems)
    return code


def _handled() -> tuple[type[BaseException], ...]:
    from clusterctl.inventory import InventoryError

    return (ClusterctlError, InventoryError, OSError)


QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="For scripts: only errors and the final one-line "
                                         "result")]
_QUIET_PARAM = inspect.Parameter("quiet", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=QuietOpt)


@contextmanager
def quiet_mode(on: bool) -> Iterator[None]:
    """``-q``: the human text (progress, tables, hints) is not printed; errors still are (stderr),
    and so is the command's final line (:func:`result_line`)."""
    saved = console.quiet
    console.quiet = on or saved
    try:
        yield
    finally:
        console.quiet = saved


def result_line(text: str) -> None:
    """The command's final one-line result: printed with ``-q`` too (on stderr with ``--json``)."""
    saved = console.quiet
    console.quiet = False
    try:
        console.print(text, markup=False)
    finally:
        console.quiet = saved


def choices(name: str, values: Any) -> Any:
    """An Enum of ``values`` for a typed option or argument: ``--help`` and shell completion list
    them, and click refuses any other value (exit 2) before the command runs."""
    return enum.Enum(name, {str(v): str(v) for v in values}, type=str)


def _with_quiet(func: Callable[..., Any], sig: inspect.Signature) -> inspect.Signature:
    return sig.replace(parameters=[*sig.parameters.values(), _QUIET_PARAM])


def reports_errors(func: F) -> F:
    """Typed errors -> message on stderr (and the JSON envelope with ``--json``) + exit status;
    adds ``-q/--quiet``."""
    sig = inspect.signature(func, eval_str=True)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        as_json = bool(kwargs.get("as_json"))
        with _human_text_to_stderr(as_json), quiet_mode(bool(kwargs.pop("quiet", False))):
            try:
                return func(*args, **kwargs)
            except _handled() as exc:
                raise typer.Exit(_report(exc, as_json)) from None

    wrapper.__signature__ = _with_quiet(func, sig)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


_ANSIBLE_PARAMS = [
    inspect.Parameter("verbose", inspect.Parameter.KEYWORD_ONLY, default=0, annotation=Annotated[int, typer.Option(
        "--verbose", "-v", count=True, help="More output; passed to Ansible as its verbosity (-vv, -vvv ...)")]),
    inspect.Parameter("log_file", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        Path | None, typer.Option("--log-file", help="Write a debug log (Ansible's output included) here")]),
    inspect.Parameter("timeout", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        int | None, typer.Option("--timeout", min=1, help="Stop each Ansible run after SECONDS (ansible-runner)")]),
    inspect.Parameter("extra_vars", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        list[str] | None, typer.Option("--extra-vars", "-e", help="Extra variables for Ansible: key=value, "
                                       "JSON/YAML or @file (repeatable; never shown in process lists)")]),
    inspect.Parameter("vault_password_file", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        Path | None, typer.Option("--vault-password-file", help="Ansible Vault password file")]),
]


def ansible_command(func: F) -> F:
    """Add ``-v``, ``--log-file``, ``--timeout``, ``-e`` and ``--vault-password-file`` to a command
    that runs Ansible; they reach every run it makes (``clusterctl.runner.current_options``)."""
    sig = inspect.signature(func, eval_str=True)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opts = RunOptions(verbosity=kwargs.pop("verbose", 0), timeout=kwargs.pop("timeout", None),
                          extra_vars=tuple(kwargs.pop("extra_vars", None) or ()),
                          vault_password_file=kwargs.pop("vault_password_file", None))
        log_file = kwargs.pop("log_file", None)
        as_json = bool(kwargs.get("as_json"))
        quiet = bool(kwargs.pop("quiet", False))
        token = current_options.set(opts)
        vault_token = None
        try:
            with _human_text_to_stderr(as_json), quiet_mode(quiet):
                try:
                    setup_logging(opts.verbosity, log_file)
                    vault_token = use_vault_password(opts.vault_password_file)
                    if opts.extra_vars and isinstance(kwargs.get("inventory"), Path):
                        # -e is read and checked with the inventory before anything runs
                        from clusterctl import extra_vars
                        from clusterctl.inventory import load_checked

                        load_checked(kwargs["inventory"], extra_vars.read_all(opts.extra_vars))
                    return func(*args, **kwargs)
                except _handled() as exc:
                    raise typer.Exit(_report(exc, as_json)) from None
        finally:
            current_options.reset(token)
            if vault_token is not None:
                from clusterctl.inventory.safeyaml import VAULT_PASSWORD

                VAULT_PASSWORD.reset(vault_token)

    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[*sig.parameters.values(), *_ANSIBLE_PARAMS, _QUIET_PARAM])
    return wrapper  # type: ignore[return-value]


VaultOpt = Annotated[Path | None, typer.Option("--vault-password-file", help="Ansible Vault password file "
                                              "(vault-encrypted inventory files are decrypted and checked)")]


def use_vault_password(given: Path | None) -> Any:
    """Make the vault password (``--vault-password-file``, else $ANSIBLE_VAULT_PASSWORD_FILE) the one
    inventory reading decrypts with; the ContextVar token to reset, None when there is no password.
    The file is read as ansible-playbook reads it (ansible-core's get_file_vault_secret: an
    executable file is run). An unreadable file is :class:`~clusterctl.errors.UsageError`."""
    from clusterctl.errors import UsageError
    from clusterctl.inventory.safeyaml import VAULT_PASSWORD

    env = os.environ.get("ANSIBLE_VAULT_PASSWORD_FILE")
    path = given.expanduser() if given is not None else Path(env) if env else None
    if path is None:
        return None
    option = "--vault-password-file" if given is not None else "$ANSIBLE_VAULT_PASSWORD_FILE"
    if not path.is_file():
        raise UsageError(f"{option} {path}: no such file")
    try:
        from ansible.errors import AnsibleError
        from ansible.parsing.dataloader import DataLoader
        from ansible.parsing.vault import get_file_vault_secret

        secret = get_file_vault_secret(filename=str(path.resolve()), loader=DataLoader())
        secret.load()
        password = secret.bytes
    except (AnsibleError, OSError) as exc:
        raise UsageError(f"{option} {path}: cannot read the vault password: {getattr(exc, 'message', exc)}") from None
    if not password:
        raise UsageError(f"{option} {path}: the vault password is empty")
    return VAULT_PASSWORD.set(password)


JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as one JSON document on stdout")]


def result_dict(result: RunResult) -> dict[str, Any]:
    """A run's result for ``--json``."""
    return {
        "status": result.status,
        "rc": result.rc,
        "exit_code": result.exit_code,
        "seconds": round(result.seconds, 1),
        "artifacts": [str(p) for p in result.passes] or [str(result.artifacts_dir)],
        "hosts": {h: {"state": s.state, "ok": s.ok, "changed": s.changed, "failed": s.failed,
                      "unreachable": s.unreachable, "skipped": s.skipped} for h, s in sorted(result.hosts.items())},
        "failed": dict(sorted(result.failed_hosts.items())),
        "unreachable": dict(sorted(result.unreachable_hosts.items())),
        "not_reached": dict(sorted(result.not_reached.items())),
        "changes": {h: [{"task": c.task, "path": c.path} for c in cs] for h, cs in sorted(result.changed_at.items())},
    }


def non_empty_path(value: str) -> Path:
    """A path argument; an empty one (an unset shell variable: ``clusterctl validate "$INV"``) is a
    usage error, not the current folder (``Path("")`` is ``.``, whose scripts Ansible would run)."""
    if not str(value).strip():
        raise typer.BadParameter("an empty path: name the inventory folder (or file)")
    return Path(value)


InventoryArg = Annotated[Path, typer.Argument(help="Inventory folder (hosts.yml, group_vars/, host_vars/)",
                                              parser=non_empty_path)]



def write_exports(report: Any, prom: Path | None, junit: Path | None, drained: list[str] | None = None) -> None:
    """``--prom FILE`` / ``--junit FILE`` of analyze and verify: the report for Prometheus and CI."""
    if prom is not None:
        from clusterctl.report import prom as prom_out

        prom_out.write(report, prom, drained=drained or ())
    if junit is not None:
        from clusterctl.report import junit as junit_out

        junit_out.write(report, junit)
#: the machine-readable verdict exports of analyze and verify (clusterctl/report/)
PromOpt = Annotated[Path | None, typer.Option(
    "--prom", help="Also write the verdicts as a Prometheus textfile here (atomically)", parser=non_empty_path)]
JunitOpt = Annotated[Path | None, typer.Option(
    "--junit", help="Also write the verdicts as JUnit XML here (one test case per host)", parser=non_empty_path)]
