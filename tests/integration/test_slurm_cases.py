"""The cases of molecule/slurm (real Slurm 22.05) on the lab's one provisioned cluster: no second Slurm
cluster is built (#18: Slurm built once per run). The fixture ``lab_slurm_cases`` (tests/conftest.py)
brings the provisioned lab to what molecule/slurm's create, prepare, converge and idempotence give:
the bare scale-out node lab-c3 (localhost/clusterctl-bare), the test NCCL environment, Redis on
lab-ctl, the site playbook with accounting (slurmdbd/MariaDB) and the JuiceFS volume, run twice (the
second changes nothing). The cases then run on it in this order, each a side effect and a verify
playbook of molecule/ run by ansible-playbook against the lab (labutil.SLURM_CASES); storage is last
(it stops the metadata engine), and this module runs after every other test (it changes the lab).
`molecule test -s slurm` runs the same playbooks on its own podman cluster, for role developers.

`flock /tmp/clusterctl-podman.lock pytest -m lab tests/integration/test_slurm_cases.py`
"""

from __future__ import annotations

from pathlib import Path

import pytest
from labutil import run_slurm_case

pytestmark = [pytest.mark.lab, pytest.mark.molecule]


def test_munge_rotation_and_jobs(lab_slurm_cases: Path) -> None:
    """Day-2 munge key rotation, then sinfo (both nodes idle), srun -N2, a two-node sbatch job with
    the TaskProlog's NCCL environment, the running config and accounting."""
    run_slurm_case("slurm", lab_slurm_cases)


def test_scaleout_adds_a_bare_node_under_a_running_job(lab_slurm_cases: Path) -> None:
    """lab-c3 (bare image: munge and slurmd installed for real) joins slurm_compute; a running job
    survives the restarts 22.05 needs; then three idle nodes answer srun -N3."""
    run_slurm_case("slurm_scaleout", lab_slurm_cases)


def test_storage_juicefs(lab_slurm_cases: Path) -> None:
    """Both computes mount one JuiceFS volume, a job's file written on one is read on the other, the
    password is nowhere but the credentials file; then, Redis stopped, the role fails fast naming the server."""
    run_slurm_case("storage", lab_slurm_cases)
