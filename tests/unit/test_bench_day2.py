"""Smoke test of bench/bench_day2.py (issue 19): one tiny run per connection, no timing asserted.

The bench itself fails when a timed run reports a change (not idempotent) or a run fails; these
tests only check that it runs and writes its JSON. The SSH path needs /usr/sbin/sshd
(scripts/bench-ssh-setup.sh installs it for the bench; the regular CI run skips it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import sshd_lab  # noqa: E402


def bench(tmp: Path, *args: str) -> list[dict]:
    p = subprocess.run([sys.executable, str(REPO / "bench" / "bench_day2.py"), "--out", str(tmp), "--no-plan", *args],
                       capture_output=True, text=True, check=False, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    conn = args[args.index("--connection") + 1] if "--connection" in args else "local"
    return json.loads((tmp / f"results-{conn}.json").read_text())


def test_local_one_host(tmp_path: Path) -> None:
    rows = bench(tmp_path, "--hosts", "1", "--configs", "project")
    assert rows[0]["hosts"] == 1 and rows[0]["project_nochange_s"] > 0 and rows[0]["defaults_nochange_s"] > 0


@pytest.mark.skipif(not sshd_lab.available(), reason="no /usr/sbin/sshd (scripts/bench-ssh-setup.sh)")
def test_ssh_two_aliases(tmp_path: Path) -> None:
    rows = bench(tmp_path, "--connection", "ssh", "--hosts", "2", "--configs", "project")
    assert rows[0]["connection"] == "ssh" and rows[0]["ratio_project_nochange"] > 0
