"""Molecule scenarios of the fabric roles, one each (rdma, roce_qos, nccl), over simulated fabric trees.

There is no RDMA hardware here: each scenario lays a tests/simfabric.py tree in one lab container
(molecule/_shared/simfabric.yml); rdma installs a local stand-in DOCA repository, not NVIDIA's.
"""

from __future__ import annotations

import pytest
from labutil import molecule_test

pytestmark = pytest.mark.molecule


@pytest.mark.parametrize("scenario", ["rdma", "roce_qos", "nccl"])
def test_molecule_fabric(scenario: str) -> None:
    molecule_test(scenario, timeout=1200)
