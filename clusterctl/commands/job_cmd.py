"""clusterctl job INVENTORY SCRIPT [-- ARGS...]: render (and with --submit, submit) a torchrun training job."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from clusterctl.app import app, examples
from clusterctl.commands.common import InventoryArg, JsonOpt, ansible_command, emit_json
from clusterctl.errors import UsageError

JOB_EXAMPLES = """Examples:

  clusterctl job inventories/prod train.py --nodes 4 --gpus-per-node 8 --dry-run

  clusterctl job inventories/prod train.py --nodes 4 --gpus-per-node 8 --max-restarts 3 --submit -- --epochs 10

  clusterctl job inventories/prod train.py -N 2 -G 8 --container-image nvcr.io#nvidia/pytorch:24.05-py3 --submit
"""


@app.command("job", epilog=examples(JOB_EXAMPLES),
             help="Render an sbatch script that runs SCRIPT with torchrun (TorchElastic, c10d rendezvous on the "
                  "allocation's first node) on N nodes x G GPUs, with the nodes' NCCL environment (the TaskProlog's) "
                  "and a checkpoint folder on the inventory's shared mount ($CLUSTERCTL_CHECKPOINT_DIR); print it "
                  "(--dry-run, the default) or submit it on the Slurm controller as the job's user (--submit: prints "
                  "the job id). Arguments after '--' go to SCRIPT. Exit 2 on bad input (nothing runs).")
@ansible_command
def job_command(
    inventory: InventoryArg,
    script: Annotated[Path, typer.Argument(help="The training script (copied to the job folder on the shared mount)")],
    args: Annotated[list[str] | None, typer.Argument(help="Arguments of SCRIPT (after '--')")] = None,
    nodes: Annotated[int, typer.Option("--nodes", "-N", help="Nodes (one torchrun agent each)")] = 1,
    gpus_per_node: Annotated[int, typer.Option("--gpus-per-node", "-G",
                                               help="GPUs per node = torchrun workers per node")] = 1,
    max_restarts: Annotated[int, typer.Option("--max-restarts", help="TorchElastic restarts of the workers")] = 0,
    partition: Annotated[str | None, typer.Option("--partition", "-p",
                                                  help="Slurm partition (default: the inventory's default)")] = None,
    time: Annotated[str | None, typer.Option("--time", "-t", help="Slurm time limit (e.g. 4:00:00)")] = None,
    container_image: Annotated[str | None, typer.Option(
        "--container-image", help="Run the workers in this image through pyxis (the job folder mounted)")] = None,
    storage: Annotated[str | None, typer.Option(
        "--storage", help="Name or mountpoint of the shared mount for the job folder (default: the first)")] = None,
    name: Annotated[str | None, typer.Option("--name", help="Job name (default: SCRIPT's name)")] = None,
    user: Annotated[str | None, typer.Option(
        "--user", help="Submit as this user (default: clusterctl_job_user of the inventory, else you)")] = None,
    port: Annotated[int, typer.Option("--port", help="The c10d rendezvous port on the first node")] = 29500,
    torchrun: Annotated[str, typer.Option("--torchrun", help="torchrun command on the nodes")] = "torchrun",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the script (the default)")] = False,
    submit: Annotated[bool, typer.Option("--submit",
                                         help="Submit it on the Slurm controller; print the job id")] = False,
    as_json: JsonOpt = False,
) -> None:
    from clusterctl.inventory import load_checked, require_decrypted
    from clusterctl.jobs import JobRequest, plan, render

    if dry_run and submit:
        raise UsageError("--dry-run and --submit: choose one")
    inv = load_checked(inventory)
    req = JobRequest(script=script, args=tuple(args or ()), nodes=nodes, gpus_per_node=gpus_per_node,
                     partition=partition, time=time, max_restarts=max_restarts, container_image=container_image,
                     storage=storage, name=name, user=user, port=port, torchrun=torchrun)
    p = plan(inv, req)
    text = render(p)
    if not submit:
        if as_json:
            emit_json({"script": text, "job_dir": p.job_dir, "checkpoint_dir": p.checkpoint_dir,
                        "logs": f"{p.logs_dir}/{p.name}-%j.out"})
        else:
            sys.stdout.write(text)
        return
    from clusterctl.jobs.submit import submit as submit_job

    require_decrypted(inv)
    job_id = submit_job(p, text)
    log = f"{p.logs_dir}/{p.name}-{job_id}.out"
    if as_json:
        emit_json({"job_id": job_id, "job_dir": p.job_dir, "checkpoint_dir": p.checkpoint_dir, "log": log})
    else:
        sys.stdout.write(f"{job_id}\n")
        sys.stderr.write(f"clusterctl: submitted job {job_id} as {p.user} on {p.controller}; log {log} "
                         f"(on the nodes that mount {p.mountpoint})\n")
