"""The cases of the one Molecule Slurm cluster of a run (molecule/slurm/molecule.yml): real Slurm 22.05
in podman containers, built once by the session fixture ``slurm_cluster`` (create, prepare, converge,
idempotence) and shared, in this order, by the slurm, slurm_scaleout and storage cases (storage last: it
stops the metadata engine). Each case is a side effect and a verify
playbook, run through ``molecule side-effect`` / ``molecule verify`` on the shared cluster
(labutil.SLURM_CASES).

`pytest -m molecule tests/integration/test_molecule_slurm.py`
"""

from __future__ import annotations

import pytest
from labutil import run_slurm_case

pytestmark = pytest.mark.molecule


def test_munge_rotation_and_jobs(slurm_cluster: dict[str, str]) -> None:
    """Day-2 munge key rotation, then sinfo (both nodes idle), srun -N2, a two-node sbatch job with
    the TaskProlog's NCCL environment, the running config and accounting."""
    run_slurm_case("slurm", slurm_cluster)


def test_scaleout_adds_a_bare_node_under_a_running_job(slurm_cluster: dict[str, str]) -> None:
    """cc-slurm-c3 (bare image: munge and slurmd installed for real) joins slurm_compute; a running job
    survives the restarts 22.05 needs; then three idle nodes answer srun -N3."""
    run_slurm_case("slurm_scaleout", slurm_cluster)


def test_storage_juicefs(slurm_cluster: dict[str, str]) -> None:
    """Both computes mount one JuiceFS volume, a job's file written on one is read on the other, the
    password is nowhere but the credentials file; then, Redis stopped, the role fails fast naming the server."""
    run_slurm_case("storage", slurm_cluster)
