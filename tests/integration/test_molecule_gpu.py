"""Molecule scenario of the GPU node stack (roles nvidia_gpu, gpu_tools) on two containers without GPUs.

cc-gpu-hgx carries a simulated HGX H200 PCI tree (NVSwitches), cc-gpu-pcie one without; the driver,
fabric manager and DCGM come from a local STAND-IN repository of tiny packages named like NVIDIA's
(molecule/nvidia_gpu/files/gpu-standin-repo.sh), not NVIDIA's. nccl-tests is the real source tarball,
checksum pinned and unpacked; its build is skipped (no CUDA here). The tarball comes from
tests/tools.py (CLUSTERCTL_TOOLS_DIR, the cache or its URL, sha256-checked): without it the test skips.
"""

from __future__ import annotations

import pytest
from labutil import molecule_test
from tools import tool_tarball

pytestmark = pytest.mark.molecule


def test_molecule_nvidia_gpu() -> None:
    tarball = tool_tarball("nccl-tests")
    molecule_test("nvidia_gpu", timeout=1200, env={"CLUSTERCTL_NCCL_TESTS_TARBALL": str(tarball)})
