"""Training jobs on a provisioned cluster: ``clusterctl job``.

* :mod:`~clusterctl.jobs.script` - a job request checked against the inventory (partition, nodes,
  GPUs, the shared mount for checkpoints) and the sbatch script rendered from it (no I/O on hosts)
* :mod:`~clusterctl.jobs.submit` - the script staged on the shared mount and submitted with sbatch on
  the inventory's Slurm controller as the job's user (one ansible-runner run: playbooks/job_submit.yml)
"""

from __future__ import annotations

from clusterctl.jobs.script import JobPlan, JobRequest, plan, render

__all__ = ["JobPlan", "JobRequest", "plan", "render"]
