"""Bad input round 3, class 10 (issue 28): a run cut short by --timeout, Ctrl-C or SIGTERM leaves
last-failed.json naming every host not known to be done, so --retry covers the hosts the run never
finished (before: only hosts that had failed were named; a host with some ok tasks was "done")."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
from pathlib import Path

import pytest

from clusterctl.runner import RunOptions, read_last_failed, run_playbook

pytestmark = pytest.mark.skipif(shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) is None,
                                reason="ansible-playbook is not installed next to this python")

_PLAYBOOK = ("---\n- name: Two steps\n  hosts: all\n  gather_facts: false\n  tasks:\n"
             "    - name: First step (ok on every host)\n      ansible.builtin.debug:\n        msg: step one\n"
             "    - name: Second step (never ends)\n      ansible.builtin.pause:\n        seconds: 120\n")


@pytest.fixture
def two_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    inv = tmp_path / "inv"
    inv.mkdir()
    hosts = "".join(f"    {h}:\n      ansible_connection: local\n      ansible_python_interpreter: {sys.executable}\n"
                    for h in ("n1", "n2"))
    (inv / "hosts.yml").write_text(f"all:\n  hosts:\n{hosts}")
    (tmp_path / "slow.yml").write_text(_PLAYBOOK)
    return inv


def test_timeout_leaves_every_unfinished_host_for_retry(two_hosts: Path, tmp_path: Path) -> None:
    res = run_playbook(str(tmp_path / "slow.yml"), two_hosts, label="slow", options=RunOptions(timeout=4))
    assert res.status == "timeout" and res.exit_code == 1
    assert set(read_last_failed(two_hosts)) == {"n1", "n2"}


def test_sigterm_leaves_every_unfinished_host_for_retry(two_hosts: Path, tmp_path: Path) -> None:
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    timer = threading.Timer(4.0, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    try:
        res = run_playbook(str(tmp_path / "slow.yml"), two_hosts, label="slow")
    finally:
        timer.cancel()
        for s, h in saved.items():  # ansible-runner installs its own handlers and leaves them
            signal.signal(s, h)
    assert res.status == "canceled" and res.exit_code == 1
    assert set(read_last_failed(two_hosts)) == {"n1", "n2"}
