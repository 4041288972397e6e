"""clusterctl.leftovers: finding a run's processes by the marker in their environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from clusterctl import leftovers


def _fake_proc(root: Path, envs: dict[str, bytes]) -> Path:
    for pid, env in envs.items():
        (root / pid).mkdir()
        (root / pid / "environ").write_bytes(env)
    (root / "self").mkdir()  # not a pid: skipped
    return root


def test_carrying_matches_the_whole_value_only(tmp_path: Path) -> None:
    proc = _fake_proc(tmp_path, {
        "101": b"PATH=/bin\0CLUSTERCTL_RUN_MARK=run-1\0",
        "102": b"CLUSTERCTL_RUN_MARK=run-10\0",  # a longer value is another run
        "103": b"X=CLUSTERCTL_RUN_MARK=run-1\0",  # inside another variable's value
        str(os.getpid()): b"CLUSTERCTL_RUN_MARK=run-1\0",  # this process is never ended
    })
    assert leftovers.carrying("run-1", proc) == [101]


def test_end_stops_a_real_process_that_carries_the_mark() -> None:
    env = dict(os.environ, **{leftovers.MARKER: "test-end-real"})
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env,
                             start_new_session=True)  # its own session, as ansible-core's workers
    try:
        assert leftovers.end("test-end-real") == [child.pid]
        assert child.wait(timeout=10) != 0
        assert leftovers.carrying("test-end-real") == []
    finally:
        child.kill()
