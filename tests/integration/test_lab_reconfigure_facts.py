"""Issue 28: a day-2 run of a component renders what `provision` renders. On the lab,
`reconfigure --component nccl` used to drop NCCL_SOCKET_IFNAME from /etc/nccl.conf (its tagged run
gathered no facts, and no fact cache was kept); the next provision put it back.

Here, after the session's provision: the fact cache is removed (the worst case: a first day-2 run, or
one after the cache expired), `reconfigure --component nccl` runs, plans nothing and leaves the
managed NCCL files of every compute node byte for byte as provision wrote them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from labutil import cc, sh

from clusterctl.runner import state_dir

pytestmark = [pytest.mark.lab]

NODES = ("lab-c1", "lab-c2")
FILES = ("/etc/nccl.conf", "/etc/profile.d/nccl.sh")


def test_reconfigure_nccl_keeps_what_provision_wrote(provisioned: Path) -> None:
    # what provision writes from this inventory (an earlier test may have left other nccl_overrides)
    res = cc("provision", str(provisioned), "--tags", "nccl")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    before = {(n, f): sh(n, f"cat {f}") for n in NODES for f in FILES}
    for n in NODES:
        assert "NCCL_SOCKET_IFNAME=" in before[(n, "/etc/nccl.conf")], before[(n, "/etc/nccl.conf")]
    shutil.rmtree(state_dir(provisioned) / "facts", ignore_errors=True)
    res = cc("reconfigure", str(provisioned), "--component", "nccl")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "reconfigure nccl: nothing to change" in res.stdout, res.stdout[-4000:]
    after = {(n, f): sh(n, f"cat {f}") for n in NODES for f in FILES}
    assert after == before
    assert any((state_dir(provisioned) / "facts").iterdir())  # the tagged run gathered and cached facts
