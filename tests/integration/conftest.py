"""Session-wide lab fixtures: the lab is brought up and provisioned once for every integration test
(``CLUSTERCTL_KEEP_LAB=1`` leaves it running afterwards)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from labutil import LAB, cc


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    os.environ["CLUSTERCTL_STATE_DIR"] = str(tmp_path_factory.mktemp("state"))
    res = cc("lab", "up")
    assert res.returncode == 0, res.stdout + res.stderr
    yield LAB
    if not os.environ.get("CLUSTERCTL_KEEP_LAB"):
        cc("lab", "down")


@pytest.fixture(scope="session")
def provisioned(lab: Path) -> Path:
    res = cc("provision", str(lab))
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
    return lab


