"""``clusterctl job --submit``: stage the job folder on the shared mount and run sbatch on the controller.

One ansible-runner run of ``playbooks/job_submit.yml`` (clusterctl.runner's plumbing: the CLI's
options, artifacts and leftovers handling): on a node that mounts the shared file system it creates
``<mount>/jobs/<user>`` for the user and copies the job folder (the training script, ``job.sbatch``,
``logs/``, ``checkpoints/``) there as that user; on the first Slurm controller it copies the sbatch
script to a temporary file of the user's and runs ``sbatch --parsable`` as the user. The job id is
read from that task's result.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clusterctl.errors import ClusterctlError, HostsFailed, Unreachable
from clusterctl.jobs.script import JobPlan
from clusterctl.runner import RunResult, run_playbook

PLAYBOOK = "job_submit.yml"
SUBMIT_TASK = "Submit the job with sbatch"
_JOB_ID = re.compile(r"^(\d+)(?:;\S+)?$")


def stage_folder(p: JobPlan, script: str, dest: Path) -> Path:
    """The job folder as it is copied to ``<mount>/jobs/<user>/<name>/`` (under ``dest``)."""
    folder = dest / p.name
    (folder / "logs").mkdir(parents=True)
    (folder / "checkpoints").mkdir()
    (folder / p.request.script.name).write_text(p.script_text, encoding="utf-8")
    (folder / "job.sbatch").write_text(script, encoding="utf-8")
    return folder


def submit(p: JobPlan, script: str, run: Callable[..., RunResult] = run_playbook) -> str:
    """Submit ``script``; the Slurm job id. Unreachable hosts raise :class:`Unreachable`, a failed
    staging or sbatch :class:`HostsFailed` with the host's message."""
    outputs: dict[str, dict[str, Any]] = {}

    def on_event(event: dict[str, Any]) -> None:
        data = event.get("event_data") or {}
        if event.get("event") in ("runner_on_ok", "runner_on_failed") and data.get("task") == SUBMIT_TASK:
            outputs[str(data.get("host"))] = dict(data.get("res") or {})

    with tempfile.TemporaryDirectory(prefix="clusterctl-job-") as tmp:
        folder = stage_folder(p, script, Path(tmp))
        extravars = {
            "clusterctl_job_stage_host": p.stage_host,
            "clusterctl_job_controller": p.controller,
            "clusterctl_job_user": p.user,
            "clusterctl_job_base": str(Path(p.job_dir).parent),
            "clusterctl_job_dir": p.job_dir,
            "clusterctl_job_folder": str(folder),
        }
        result = run(PLAYBOOK, p.inventory, extravars=extravars, on_event=on_event, label="job",
                     record_failures=False)
        shutil.rmtree(folder, ignore_errors=True)
    if result.unreachable_hosts:
        host, why = next(iter(result.unreachable_hosts.items()))
        raise Unreachable(f"{host} is unreachable: {why}")
    if result.failed_hosts:
        host, why = next(iter(result.failed_hosts.items()))
        raise HostsFailed(f"submitting the job failed on {host}: {why}")
    res = outputs.get(p.controller, {})
    out = str(res.get("stdout") or "").strip()
    m = _JOB_ID.match(out.splitlines()[-1] if out else "")
    if result.rc != 0 or m is None:
        why = str(res.get("stderr") or res.get("msg") or "").strip() \
            or f"ansible-runner {result.status} (rc {result.rc})"
        raise ClusterctlError(f"sbatch on {p.controller} gave no job id: {why[:400]} "
                              f"(artifacts: {result.artifacts_dir})")
    return m.group(1)
