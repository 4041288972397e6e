"""CLI conventions through typer's CliRunner: --version, shell completion, --json on every command
that reports, the Ansible pass-through options, examples in --help, typed errors -> exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from clusterctl import __version__
from clusterctl.cli import app

REPO = Path(__file__).resolve().parents[2]
REPORTING = ["validate", "plan", "provision", "verify", "analyze", "parse", "reconfigure", "resume", "lab status"]
RUNS_ANSIBLE = ["plan", "provision", "verify", "reconfigure", "resume"]


def command(path: str) -> Any:
    """The click command of ``path`` (typer may carry its own click: no isinstance checks)."""
    cmd = typer.main.get_command(app)
    for word in path.split():
        cmd = cmd.commands[word]  # type: ignore[attr-defined]
    return cmd


def options(path: str) -> set[str]:
    return {o for p in command(path).params for o in (*p.opts, *p.secondary_opts)}


def test_version() -> None:
    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"clusterctl {__version__}"


def test_shell_completion() -> None:
    res = CliRunner().invoke(app, ["--show-completion", "bash"])
    assert res.exit_code == 0 and "_CLUSTERCTL_COMPLETE=complete_bash" in res.stdout
    assert "--install-completion" in CliRunner().invoke(app, ["--help"]).stdout


@pytest.mark.parametrize("path", REPORTING)
def test_every_reporting_command_has_json_and_examples(path: str) -> None:
    assert "--json" in options(path)
    res = CliRunner().invoke(app, [*path.split(), "--help"])
    assert res.exit_code == 0 and "Examples:" in res.stdout, res.stdout
    assert "  clusterctl " in res.stdout.split("Examples:")[1]


@pytest.mark.parametrize("path", RUNS_ANSIBLE)
def test_ansible_options_on_every_command_that_runs_ansible(path: str) -> None:
    wanted = {"-v", "--verbose", "--log-file", "--timeout", "-e", "--extra-vars", "--vault-password-file"}
    assert wanted <= options(path)


def test_validate_json() -> None:
    res = CliRunner().invoke(app, ["validate", str(REPO / "inventories" / "lab"), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)["result"]
    assert out["valid"] is True and out["hosts"] == 3 and out["groups"]["slurm_compute"] == 2


def test_rejected_inventory_json_is_an_error_document_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "inv"
    bad.mkdir()
    (bad / "hosts.yml").write_text("all:\n  children:\n    slurm_compute:\n      hosts:\n        'bad host':\n")
    res = CliRunner().invoke(app, ["validate", str(bad), "--json"])
    assert res.exit_code == 2
    out = json.loads(res.stdout)
    assert out["exit_code"] == 2 and out["result"] is None
    assert out["problems"] and any("bad host" in p["message"] for p in out["problems"]), out
    assert all(set(p) == {"file", "line", "key", "message"} and p["file"] for p in out["problems"])
    assert "Traceback" not in res.output


def test_usage_errors_exit_2_before_anything_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path))
    lab = str(REPO / "inventories" / "lab")
    r = CliRunner()
    res = r.invoke(app, ["provision", lab, "--retry", "--limit", "x", "--json"])
    assert res.exit_code == 2
    assert json.loads(res.stdout)["problems"][0]["message"] == "--retry and --limit cannot be combined"
    res = r.invoke(app, ["reconfigure", lab, "--component", "gpux"])
    assert res.exit_code == 2 and "'gpux' is not one of 'nccl'" in " ".join(res.stderr.split())
    res = r.invoke(app, ["provision", lab, "-e", "@/nonexistent/vars.yml"])
    assert res.exit_code == 2 and "-e @/nonexistent/vars.yml: no such file" in res.stderr
    res = r.invoke(app, ["plan", lab, "--vault-password-file", str(tmp_path / "none")])
    assert res.exit_code == 2 and "--vault-password-file" in res.stderr


def test_no_typer_exit_outside_the_commands() -> None:
    """Library modules raise typed errors; only clusterctl/commands and the app object exit
    (the inventory layer is being moved off typer on its own branch)."""
    offenders = []
    for f in sorted((REPO / "clusterctl").rglob("*.py")):
        rel = f.relative_to(REPO).as_posix()
        if rel.startswith("clusterctl/commands/") or rel in ("clusterctl/app.py", "clusterctl/inventory.py"):
            continue
        if "typer" in f.read_text():
            offenders.append(rel)
    assert offenders == []
