"""clusterctl validate: every bad inventory in tests/bad_inventories is rejected with exit 2, naming
the file, the key and the value its EXPECT file gives; the shipped inventories are accepted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from clusterctl.cli import app
from clusterctl.inventory import expand_host_pattern

REPO = Path(__file__).resolve().parents[2]
BAD = sorted(p for p in (REPO / "tests" / "bad_inventories").iterdir() if p.is_dir())
runner = CliRunner()


def _expect(case: Path) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in (case / "EXPECT.txt").read_text().splitlines())


def test_at_least_twenty_distinct_bad_inventories() -> None:
    assert len(BAD) >= 20
    assert len({_expect(c)["key"] for c in BAD}) >= 18


@pytest.mark.parametrize("case", BAD, ids=[c.name for c in BAD])
def test_bad_inventory_rejected(case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    exp = _expect(case)
    res = runner.invoke(app, ["validate", str(case)])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if exp["key"] in ln]
    assert lines, f"no error names key {exp['key']!r}:\n{res.output}"
    assert any(repr(exp["value"]) in ln or f"value: {exp['value']})" in ln for ln in lines), res.output
    assert any(".yml" in ln for ln in lines), "the error must name the file"
    # provision on the same inventory runs nothing: exit 2 and no run state created
    res = runner.invoke(app, ["provision", str(case)])
    assert res.exit_code == 2
    assert not (tmp_path / "state").exists()


def test_plaintext_secret_is_not_echoed() -> None:
    case = REPO / "tests" / "bad_inventories" / "plaintext-munge-key"
    res = runner.invoke(app, ["validate", str(case)])
    assert res.exit_code == 2
    assert "s3cr3tmungekeymaterial" not in res.output


@pytest.mark.parametrize("name", ["lab", "example-prod"])
def test_shipped_inventories_valid(name: str) -> None:
    res = runner.invoke(app, ["validate", str(REPO / "inventories" / name)])
    assert res.exit_code == 0, res.output


def test_example_prod_has_64_compute_nodes() -> None:
    from clusterctl.inventory import load_checked

    inv = load_checked(REPO / "inventories" / "example-prod")
    assert len(inv.groups["slurm_compute"]) == 64
    assert inv.address("gpu064") == "10.10.1.64"
    assert set(inv.groups["storage_clients"]) == {*inv.groups["slurm_compute"], "login01"}


@pytest.mark.parametrize(("pattern", "first", "last", "count"), [
    ("gpu[001:064]", "gpu001", "gpu064", 64),
    ("n[1:3]", "n1", "n3", 3),
    ("r[a:c]n[1:2]", "ran1", "rcn2", 6),
    ("plain", "plain", "plain", 1),
])
def test_expand_host_pattern(pattern: str, first: str, last: str, count: int) -> None:
    out = expand_host_pattern(pattern)
    assert (out[0], out[-1], len(out)) == (first, last, count)


@pytest.mark.parametrize("key,value,refused", [
    ("ansible_port", 2222, False), ("ansible_port", "2222", False), ("ansible_port", "{{ lab_port }}", False),
    ("ansible_port", 0, True), ("ansible_port", 65536, True), ("ansible_port", True, True),
    ("ansible_port", "22 -o ProxyCommand=x", True), ("ansible_ssh_port", "\uff12\uff12", True),
    ("ansible_user", "root", False), ("ansible_user", "svc.deploy-1", False),
    ("ansible_user", "-oProxyCommand=x", True), ("ansible_user", "a b", True), ("ansible_ssh_user", ["root"], True),
])
def test_connection_variables(tmp_path: Path, key: str, value: object, refused: bool) -> None:
    inv = tmp_path / "inv"
    shutil.copytree(REPO / "inventories" / "lab", inv)
    (inv / "host_vars").mkdir()
    (inv / "host_vars" / "lab-c1.yml").write_text(yaml.safe_dump({key: value}, allow_unicode=True))
    res = runner.invoke(app, ["validate", str(inv)])
    assert res.exit_code == (2 if refused else 0), res.output
    if refused:
        assert f"host_vars/lab-c1.yml: lab-c1.{key}: {key} must be" in res.output
