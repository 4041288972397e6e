"""Issue 28 class 9 for the state folder's run artifacts and evidence: an entry of the inventory's
state folder that is a file where a folder goes (or a folder where the lock file goes) is a one-line
error naming the path, exit 1, before Ansible runs, with nothing left behind in the state folder.

The inventory's hosts are on loopback ports nothing listens on: a command that got past the check
would run Ansible, fail to connect and exit 4, never 1 with the path.
"""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clusterctl.cli import app
from clusterctl.runner import state_dir

REPO = Path(__file__).resolve().parents[2]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def inv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    inv = tmp_path / "lab"
    shutil.copytree(REPO / "inventories" / "lab", inv)
    hosts = (inv / "hosts.yml").read_text()
    port = closed_port()
    for last in (10, 11, 12):
        hosts = hosts.replace(f"ansible_host: 10.213.77.{last}", f"ansible_host: 127.0.0.{last}\n"
                              f"          ansible_port: {port}")
    (inv / "hosts.yml").write_text(hosts)
    return inv


@pytest.mark.parametrize(("entry", "kind", "argv"), [
    ("facts", "file", ["provision"]),
    ("runs", "file", ["provision"]),
    ("tmp", "file", ["provision", "--check"]),
    ("lock", "folder", ["provision"]),
    ("evidence", "file", ["verify"]),
    ("lock", "folder", ["verify"]),
])
def test_state_folder_entry_of_the_wrong_kind_is_one_line_exit_1(inv: Path, entry: str, kind: str,
                                                                 argv: list[str]) -> None:
    st = state_dir(inv)
    target = st / entry
    if kind == "file":
        target.write_text("not a folder\n")
    else:
        target.mkdir()
    before = sorted(p.relative_to(st) for p in st.rglob("*"))
    res = CliRunner().invoke(app, [argv[0], str(inv), *argv[1:]])
    assert res.exit_code == 1, res.output
    errors = [ln for ln in res.output.splitlines() if ln.startswith("clusterctl: ")]
    assert len(errors) == 1 and errors[0].startswith(f"clusterctl: cannot write {target}"), res.output
    assert "Traceback" not in res.output
    # no run begun, nothing half-written: at most the state folder's own (empty) folders and lock file
    after = sorted(p.relative_to(st) for p in st.rglob("*"))
    assert [p for p in after if p not in before and len(p.parts) > 1] == [], after
