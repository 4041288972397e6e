"""Storage scenarios of their own: Lustre configuration. (JuiceFS runs on the shared Slurm cluster: the
storage case in test_slurm_cases.py, on the lab.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from labutil import molecule_test

pytestmark = pytest.mark.molecule


def test_molecule_lustre_client(tmp_path: Path) -> None:
    molecule_test("lustre", timeout=1800, env={"CC_STOR_BUCKET": str(tmp_path / "bucket")})
