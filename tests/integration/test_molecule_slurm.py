"""Run the Slurm Molecule scenarios (real Slurm 22.05 in podman containers) and require exit 0.

Each takes minutes; run them one at a time: `pytest -m molecule tests/integration/test_molecule_slurm.py`.
"""

from __future__ import annotations

import pytest
from labutil import molecule_test

pytestmark = pytest.mark.molecule


@pytest.mark.parametrize("scenario", ["slurm", "slurm_scaleout"])
def test_molecule_scenario(scenario: str) -> None:
    molecule_test(scenario, timeout=1800)
