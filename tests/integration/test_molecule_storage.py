"""Storage: real JuiceFS on the shared Molecule Slurm cluster (the storage case of molecule/slurm, run
after the Slurm cases of test_molecule_slurm.py), Lustre configuration in its own scenario."""

from __future__ import annotations

from pathlib import Path

import pytest
from labutil import molecule_test, run_slurm_case

pytestmark = pytest.mark.molecule


def test_molecule_storage_juicefs(slurm_cluster: dict[str, str]) -> None:
    """Both computes mount one volume, a job's file written on one is read on the other, the password
    is nowhere but the credentials file; then, Redis stopped, the role fails fast naming the server."""
    run_slurm_case("storage", slurm_cluster)


def test_molecule_lustre_client(tmp_path: Path) -> None:
    molecule_test("lustre", timeout=1800, env={"CC_STOR_BUCKET": str(tmp_path / "bucket")})
