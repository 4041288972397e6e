"""Issue 28: one changing run per inventory (provision, reconfigure, remediate, verify).

The holder is a real second process (``clusterctl.paths.exclusive`` through ``runner.inventory_lock``,
the helper every command uses); the refused run is the real CLI, in a subprocess and in-process.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clusterctl.cli import app
from clusterctl.errors import EXIT_BUSY, Busy
from clusterctl.lifecycle.store import Store
from clusterctl.runner import inventory_lock, state_dir

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab"

HOLDER = """
import sys
from pathlib import Path
from clusterctl.runner import inventory_lock
with inventory_lock(Path(sys.argv[1]), "provision"):
    print("held", flush=True)
    sys.stdin.readline()
"""


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "CLUSTERCTL_STATE_DIR": str(tmp_path / "state"),
            "PYTHONPATH": f"{REPO}:{REPO / 'plugins' / 'module_utils'}"}


@pytest.fixture
def holder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen[str]]:
    """A real process holding LAB's lock (as a running ``clusterctl provision`` does) until stdin closes."""
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(LAB)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=_env(tmp_path))
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)


def test_second_provision_process_exits_busy_naming_the_holder(holder: subprocess.Popen[str],
                                                               tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "clusterctl.cli", "provision", str(LAB), "--json"],
                         capture_output=True, text=True, env=_env(tmp_path), timeout=120)
    assert res.returncode == EXIT_BUSY == 6, res.stderr
    msg = " ".join(res.stderr.split())
    assert f"pid {holder.pid}" in msg
    assert f"`clusterctl provision {LAB}`" in msg
    assert f"host {socket.gethostname()}" in msg
    assert "started 20" in msg and "nothing was run" in msg
    assert json.loads(res.stdout)["exit_code"] == 6
    assert not (state_dir(LAB) / "runs").exists()  # no Ansible run was started


@pytest.mark.parametrize("argv", [
    ["verify"], ["reconfigure", "--component", "nccl"], ["remediate", "--once"], ["provision", "--check"],
])
def test_every_changing_command_takes_the_lock(holder: subprocess.Popen[str], argv: list[str]) -> None:
    res = CliRunner().invoke(app, [argv[0], str(LAB), *argv[1:]])
    assert res.exit_code == EXIT_BUSY, res.output
    assert f"pid {holder.pid}" in res.output


def test_lock_is_free_once_the_holder_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(LAB)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=_env(tmp_path))
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    proc.kill()  # killed, not a clean exit: the kernel drops the flock, the file stays
    proc.wait(timeout=30)
    # not re-entrant: a second take in this process names the first
    with (inventory_lock(LAB, "verify"), pytest.raises(Busy, match=f"pid {os.getpid()}, `clusterctl verify"),
          inventory_lock(LAB, "provision")):
        pass


def test_remediation_loop_lock_uses_the_same_helper(tmp_path: Path) -> None:
    store = Store(tmp_path / "lifecycle")
    with store.locked():
        proc = subprocess.run([sys.executable, "-c", (
            "import sys; from pathlib import Path; from clusterctl.lifecycle.store import Store\n"
            "try:\n with Store(Path(sys.argv[1])).locked(): sys.exit(0)\n"
            "except Exception as e: print(type(e).__name__, e.exit_code, e); sys.exit(1)"),
            str(tmp_path / "lifecycle")], capture_output=True, text=True, timeout=60, env=_env(tmp_path))
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{Busy.__name__} 6 ") and f"pid {os.getpid()}" in proc.stdout
