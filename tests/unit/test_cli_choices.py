"""Typed choices (``--help`` and completion list them), ``-q`` for scripts, and tables that stay one
line per row when stdout is not a terminal (typer's CliRunner: a pipe)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer
from conftest import read_fixture
from typer.testing import CliRunner

from clusterctl.cli import app
from clusterctl.lifecycle.probes import REVERIFY
from clusterctl.parse_capture import kinds
from clusterctl.report_table import summary_line
from clusterctl.rollout import COMPONENTS
from clusterctl.verify.collect import LEVELS

runner = CliRunner()
#: every option or argument that takes one of a fixed set, and the set (from the library)
FIXED = {("verify", "--level"): LEVELS, ("reconfigure", "--component"): tuple(COMPONENTS),
         ("remediate", "--reverify"): REVERIFY, ("parse", "kind"): tuple(kinds())}


def all_commands() -> dict[str, Any]:
    out: dict[str, Any] = {}

    def walk(cmd: Any, words: list[str]) -> None:
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            if getattr(sub, "commands", None):
                walk(sub, [*words, name])
            else:
                out[" ".join([*words, name])] = sub

    walk(typer.main.get_command(app), [])
    return out


def param(command: str, name: str) -> Any:
    return next(p for p in all_commands()[command].params if name in (*getattr(p, "opts", ()), p.name))


def choices_of(p: Any) -> tuple[str, ...]:
    """The values a parameter is typed to (typer's own type descriptor; () for a free value)."""
    found = (getattr(getattr(p, "type_descriptor", None), "choices", None)
             or getattr(getattr(p, "type", None), "choices", None) or ())  # typer's own click, or click's Choice
    return tuple(str(getattr(c, "value", c)) for c in found)


@pytest.mark.parametrize(("command", "name"), sorted(FIXED))
def test_fixed_sets_are_typed_choices_listed_in_help(command: str, name: str) -> None:
    values = FIXED[(command, name)]
    assert choices_of(param(command, name)) == tuple(values)
    res = runner.invoke(app, [*command.split(), "--help"], terminal_width=400)
    assert res.exit_code == 0
    assert "|".join(values) in res.stdout, res.stdout  # click's <a|b|c>
    given = [name, "bogus"] if name.startswith("-") else ["bogus", "file.txt"]
    bad = runner.invoke(app, [*command.split(), *given])
    assert bad.exit_code == 2 and "'bogus' is not one of" in " ".join(bad.stderr.split())


def test_every_choice_parameter_lists_its_choices_in_help() -> None:
    for command, cmd in all_commands().items():
        help_text = " ".join(runner.invoke(app, [*command.split(), "--help"], terminal_width=400).stdout.split())
        for p in cmd.params:
            if choices_of(p):
                assert "|".join(choices_of(p)) in help_text, (command, p.name)


def test_every_command_has_quiet() -> None:
    for command, cmd in all_commands().items():
        assert {"-q", "--quiet"} <= {o for p in cmd.params for o in p.opts}, command


def _evidence(root: Path) -> Path:
    for host, fixture in (("node1", "h100-cx7-roce-all-active.txt"), ("node2", "h100-cx7-roce-down-polling.txt")):
        (root / host).mkdir(parents=True)
        (root / host / "ibstat.txt").write_text(read_fixture(f"ibstat/{fixture}"))
    return root


def test_quiet_prints_only_the_one_line_result(tmp_path: Path) -> None:
    ev = _evidence(tmp_path / "ev")
    loud = runner.invoke(app, ["analyze", str(ev)])
    quiet = runner.invoke(app, ["analyze", str(ev), "-q"])
    assert quiet.exit_code == loud.exit_code == 3
    assert len(loud.stdout.splitlines()) > 1
    lines = quiet.stdout.splitlines()
    assert len(lines) == 1 and re.fullmatch(r"2 hosts: 1 healthy, 0 degraded, 1 failed; .*", lines[0]), lines
    assert lines[0].split("; analysed")[0] == summary_line_prefix(ev)
    ok = runner.invoke(app, ["validate", "-q", str(Path(__file__).parents[2] / "inventories" / "lab")])
    assert ok.exit_code == 0 and len(ok.stdout.splitlines()) == 1 and "is valid" in ok.stdout


def summary_line_prefix(ev: Path) -> str:
    from clusterctl.verify import judge_folder

    return summary_line(judge_folder(ev, None)).split("; analysed")[0]


def test_tables_are_one_line_per_row_off_a_terminal(tmp_path: Path) -> None:
    ev = _evidence(tmp_path / "ev")
    long = tmp_path / "ev" / ("node-with-a-very-long-name-" * 4 + "x")
    long.mkdir()
    (long / "ibstat.txt").write_text(read_fixture("ibstat/h100-cx7-roce-down-polling.txt"))
    res = runner.invoke(app, ["analyze", str(ev)], terminal_width=60)
    rows = {ln.split("\t")[0]: ln.split("\t") for ln in res.stdout.splitlines() if "\t" in ln}
    assert rows["host"] == ["host", "status", "critical", "warning", "top finding"]
    assert set(rows) == {"host", "node1", "node2", long.name}  # each host on its one line, the name uncut
    assert rows["node1"][1] == "healthy" and rows[long.name][1] == "failed" and rows["node2"][1] == "failed"
    assert "mlx5_" in rows["node2"][4] and len(rows[long.name][4]) > 60  # the finding whole, not wrapped
    assert "│" not in res.stdout and "━" not in res.stdout  # no box drawing
