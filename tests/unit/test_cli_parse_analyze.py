"""clusterctl parse / analyze through the typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, read_fixture
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
    assert json.loads(r2.stdout) == data


def test_parse_unknown_kind_and_garbage(tmp_path: Path) -> None:
    g = tmp_path / "garbage.txt"
    g.write_text("hello\nworld\n")
    r = runner.invoke(app, ["parse", "no-such-kind", str(g)])
    assert r.exit_code == 2
    assert "unknown KIND 'no-such-kind'" in r.stderr and "ibstat" in r.stderr
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
    d = json.loads(j.stdout)
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
