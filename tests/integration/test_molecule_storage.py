"""Molecule scenarios of the storage roles: real JuiceFS across containers, Lustre configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
from labutil import molecule_test

pytestmark = pytest.mark.molecule


def test_molecule_storage_juicefs(tmp_path: Path) -> None:
    # the host folder shared as the juicefs bucket
    molecule_test("storage", timeout=3600, env={"CC_STOR_BUCKET": str(tmp_path / "bucket")})


def test_molecule_lustre_client(tmp_path: Path) -> None:
    molecule_test("lustre", timeout=1800, env={"CC_STOR_BUCKET": str(tmp_path / "bucket")})
