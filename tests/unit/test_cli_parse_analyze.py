"""clusterctl parse / analyze through the typer app."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ccparse import registry
from conftest import FIXTURES, read_fixture
from test_parsers_property import SEEDS  # real captures per KIND (fixtures and non-held-out corpus)
from typer.testing import CliRunner

from clusterctl.analysis import checks
from clusterctl.analysis.model import CHECKS, Finding
from clusterctl.cli import app

# register the real checks before any test swaps a KIND's list, so they never land in a patched one
checks.load_all()

runner = CliRunner()


def test_parse_pretty_and_compact() -> None:
    f = str(FIXTURES / "ibstat/h100-all-active-2.txt")
    r = runner.invoke(app, ["parse", "ibstat", f])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert "\n  " in r.stdout  # pretty by default
    names = [d["name"] for d in data["devices"]]
    assert names[:3] == ["mlx5_0", "mlx5_1", "mlx5_4"]  # first three CA lines of the fixture
    assert data["devices"][0]["ports"][0]["rate_gbps"] == 400.0  # "Rate: 400"
    r2 = runner.invoke(app, ["parse", "ibstat", f, "--json"])
    assert r2.exit_code == 0 and r2.stdout.count("\n") == 1
    assert json.loads(r2.stdout)["result"] == data


def test_parse_unknown_kind_and_garbage(tmp_path: Path) -> None:
    g = tmp_path / "garbage.txt"
    g.write_text("hello\nworld\n")
    r = runner.invoke(app, ["parse", "no-such-kind", str(g)])
    assert r.exit_code == 2
    assert "'no-such-kind' is not one of" in r.stderr and "ibstat" in r.stderr  # a typed choice
    r = runner.invoke(app, ["parse", "ibstat", str(g)])
    assert r.exit_code == 2
    assert "ibstat" in r.stderr and "line" in r.stderr and "Traceback" not in r.output
    r = runner.invoke(app, ["parse", "ibstat", str(tmp_path / "missing.txt")])
    assert r.exit_code == 2 and "cannot read" in r.stderr


def test_parse_lists_kinds_in_help() -> None:
    r = runner.invoke(app, ["parse", "--help"])
    assert r.exit_code == 0 and "ibstat" in r.stdout


def _evidence(tmp: Path, bad: bool) -> Path:
    ev = tmp / "ev"
    for h in ("node1", "node2"):
        (ev / h).mkdir(parents=True)
        (ev / h / "ibstat.txt").write_text(read_fixture("ibstat/h100-cx7-roce-all-active.txt"))
    if bad:
        (ev / "node2" / "ibstat.txt").write_text(read_fixture("ibstat/h100-cx7-roce-down-polling.txt"))
    return ev


@pytest.fixture
def down_check(monkeypatch: pytest.MonkeyPatch) -> None:
    def port_down(host: str, data: dict, exp: object) -> list[Finding]:
        return [Finding(host, "stub_port", "critical", f"{host}/{d['name']}/{p['port']}", f"state {p['state']}")
                for d in data["devices"] for p in d["ports"] if p["state"] != "ACTIVE"]

    monkeypatch.setitem(CHECKS, "ibstat", [port_down])


def test_analyze_exit_codes_table_json_html(tmp_path: Path, down_check: None) -> None:
    ok = runner.invoke(app, ["analyze", str(_evidence(tmp_path / "a", bad=False))])
    assert ok.exit_code == 0, ok.output
    assert "node1" in ok.stdout and "healthy" in ok.stdout
    ev = _evidence(tmp_path / "b", bad=True)
    html = tmp_path / "r.html"
    r = runner.invoke(app, ["analyze", str(ev), "--html", str(html)])
    assert r.exit_code == 3
    assert "failed" in r.stdout and "mlx5_11" in r.stdout
    assert html.read_text().startswith("<!DOCTYPE html>")
    j = runner.invoke(app, ["analyze", str(ev), "--json"])
    assert j.exit_code == 3
    d = json.loads(j.stdout)["result"]
    assert d["hosts"]["node2"]["status"] == "failed" and d["hosts"]["node1"]["status"] == "healthy"


def test_analyze_bad_input(tmp_path: Path) -> None:
    assert runner.invoke(app, ["analyze", str(tmp_path / "none")]).exit_code == 2
    (tmp_path / "empty").mkdir()
    assert runner.invoke(app, ["analyze", str(tmp_path / "empty")]).exit_code == 2


def test_analyze_inventory_expectations(tmp_path: Path) -> None:
    from clusterctl.analysis.expectations import from_inventory

    inv = tmp_path / "inv"
    (inv / "group_vars" / "all").mkdir(parents=True)
    from ansible.parsing.vault import VaultLib, VaultSecret

    from clusterctl.inventory import VaultValue

    payload = VaultLib([("default", VaultSecret(b"pw"))]).encrypt("s3cret").decode()
    vault = "".join(f"  {line}\n" for line in payload.splitlines())
    (inv / "group_vars" / "all" / "cluster.yml").write_text(
        f"fabric: roce\nrdma_devices_per_node: 8\nib_rate_gbps: 400\nsecret: !vault |\n{vault}")
    (inv / "group_vars" / "all" / "z.yml").write_text("ib_rate_gbps: 200\n")
    exp = from_inventory(inv)
    assert exp["fabric"] == "roce" and exp["ib_rate_gbps"] == 200  # later file wins
    assert exp["straggler_threshold"] == 0.25  # analysis default
    assert isinstance(exp["secret"], VaultValue)  # opaque, never decrypted


def _mutations(text: str) -> list[str]:
    """Fixed, reproducible mutations of a real capture, of the kinds that made parsers crash."""
    num = re.compile(r"\d+(?:\.\d+)?")
    lines = text.split("\n")
    mid = len(lines) // 2
    return [
        num.sub("9" * 5000, text, count=3),  # int(): Python's int max str digits
        num.sub("9" * 5000, text),
        num.sub("1e999", text, count=3),  # float() -> inf -> int(): OverflowError
        num.sub("1e999", text),
        num.sub("NaN", text, count=3),
        num.sub("-1", text),
        "\n".join([*lines[:mid], lines[mid][:20] + "9" * 200000, *lines[mid:]]),  # a very long line
        "\n".join([*lines[:mid], "[" * 50000, *lines[mid:]]),  # nested past the JSON decoder's depth
        text[: len(text) // 2] + "\x00" + text[len(text) // 2:],
        "\n".join(lines[:mid]),  # truncated
    ]


@pytest.mark.parametrize("kind", registry.kinds())
def test_parse_of_a_mutated_capture_exits_0_or_2_never_a_traceback(kind: str, tmp_path: Path) -> None:
    # issue 14: a file the parser cannot read is a ParseError naming the line (exit 2), nothing else
    for i, text in enumerate(m for seed in SEEDS[kind][:3] for m in _mutations(seed)):
        f = tmp_path / f"m{i}.txt"
        f.write_text(text, encoding="utf-8", errors="replace")
        r = runner.invoke(app, ["parse", kind, str(f), "--json"])
        assert r.exit_code in (0, 2), (kind, i, r.exit_code, repr(r.exception))
        assert r.exception is None or isinstance(r.exception, SystemExit), (kind, i, repr(r.exception))
        assert "Traceback" not in r.output, (kind, i)
        if r.exit_code == 2:
            # the parser's ParseError, or a mutation grown past the capture limit (every number of a
            # large lspci -vvv made 5000 digits long)
            assert "cannot parse input" in r.stderr or "larger than 64 MiB: refused" in r.stderr, \
                (kind, i, r.stderr[:200])
        else:
            json.loads(r.stdout)
