"""``clusterctl job``: a training job request checked against the inventory, and its sbatch script.

:func:`plan` resolves a :class:`JobRequest` against a loaded inventory (partition, nodes that mount
the shared file system, GPUs, the checkpoint folder, where the NCCL environment comes from) and
raises :class:`~clusterctl.errors.UsageError` naming the option or inventory key and the value;
:func:`render` turns the :class:`JobPlan` into the sbatch script. Nothing here touches a host.

The NCCL settings are not derived here: the ``nccl`` role writes each node's values (derived from
its own RDMA facts, ``nccl_overrides`` applied) to ``slurm_common_nccl_conf`` and the TaskProlog of
``slurm_common`` (``slurm_common_task_prolog``) exports them into every task. The script names both
paths (the inventory's values, else the role's defaults) and runs that same TaskProlog again in
each task outside a container, so a job sees exactly what the TaskProlog gives.
"""

from __future__ import annotations

import getpass
import re
import shlex
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from clusterctl.errors import UsageError

if TYPE_CHECKING:
    from clusterctl.inventory import Inventory

#: the storage types whose mounts are shared by the nodes (cluster spec ``storage_mounts``)
SHARED_TYPES = ("juicefs", "lustre")
#: where each type's mounts can also be listed explicitly (role variables)
_ROLE_MOUNT_LISTS = {"juicefs": "juicefs_volumes", "lustre": "lustre_client_mounts"}
_TIME = re.compile(r"UNLIMITED|(\d+-)?\d+(:\d{2}){0,2}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
#: a pyxis image: a registry reference (``nvcr.io#nvidia/pytorch:24.01-py3``) or a squashfs path
_IMAGE = re.compile(r"[A-Za-z0-9_./:#@+=,-]+")
_COMMAND = re.compile(r"[A-Za-z0-9_./+-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
DEFAULT_PORT = 29500
#: the Slurm partition when the inventory names none (slurm_common_partitions' default)
_DEFAULT_PARTITION = "batch"


@dataclass(frozen=True)
class JobRequest:
    """What the user asked for (the command's arguments)."""

    script: Path
    args: tuple[str, ...] = ()
    nodes: int = 1
    gpus_per_node: int = 1
    partition: str | None = None
    time: str | None = None
    max_restarts: int = 0
    container_image: str | None = None
    storage: str | None = None  # the name of the shared mount; default the first one
    name: str | None = None  # default: the script's file name without suffix
    user: str | None = None  # default: clusterctl_job_user of the inventory, else the invoking user
    port: int = DEFAULT_PORT
    torchrun: str = "torchrun"


@dataclass(frozen=True)
class JobPlan:
    """A request resolved against an inventory: everything the script and the submission need."""

    request: JobRequest
    inventory: Path
    cluster: str
    name: str
    user: str
    partition: str
    gres: bool  # the nodes have GPUs as Slurm GRES (--gpus-per-node); else G processes per node on CPU
    exclude: tuple[str, ...]  # partition nodes that do not mount the shared file system
    mount_type: str
    mount_name: str
    mountpoint: str
    controller: str  # the first slurm_controller host: sbatch runs there
    stage_host: str  # a node that mounts the shared file system: the job folder is written there
    task_prolog: str
    nccl_conf: str
    script_text: str = field(repr=False, default="")

    @property
    def job_dir(self) -> str:
        return str(PurePosixPath(self.mountpoint) / "jobs" / self.user / self.name)

    @property
    def checkpoint_dir(self) -> str:
        return f"{self.job_dir}/checkpoints"

    @property
    def logs_dir(self) -> str:
        return f"{self.job_dir}/logs"

    @property
    def script_on_nodes(self) -> str:
        return f"{self.job_dir}/{self.request.script.name}"


def _where(inv: Inventory, key: str) -> str:
    return inv.spec_files.get(key) or str(inv.path)


@cache
def _role_default(role: str, key: str) -> Any:
    """A value of ``roles/<role>/defaults/main.yml`` (the role's own default, not a copy of it)."""
    import yaml

    from clusterctl import paths

    return (yaml.safe_load((paths.roles() / role / "defaults" / "main.yml").read_text()) or {}).get(key)


def _role_value(inv: Inventory, host: str, role: str, key: str) -> str:
    """The role variable as ``host`` sees it: the inventory's value, else the role's default."""
    value = inv.host_vars.get(host, {}).get(key, inv.group_spec.get(key))
    if not isinstance(value, str) or "{{" in value:
        value = _role_default(role, key)
    return str(value)


def _partition(inv: Inventory, name: str | None) -> tuple[str, list[str]]:
    """(partition name, its nodes) from ``slurm_partitions``; a partition without ``nodes`` has every
    compute node (``Nodes=ALL``)."""
    computes = list(inv.groups.get("slurm_compute", []))
    parts = inv.group_spec.get("slurm_partitions")
    if not isinstance(parts, list) or not parts:
        parts = [{"name": _DEFAULT_PARTITION, "default": True}]
    known = [p for p in parts if isinstance(p, dict) and isinstance(p.get("name"), str)]
    if name is None:
        chosen = next((p for p in known if p.get("default") is True), known[0] if known else None)
    else:
        chosen = next((p for p in known if p["name"] == name), None)
    if chosen is None:
        raise UsageError(f"--partition: no such partition in slurm_partitions of {_where(inv, 'slurm_partitions')} "
                         f"(value: {name}); the partitions: {', '.join(p['name'] for p in known) or '(none)'}")
    nodes = chosen.get("nodes")
    if not nodes:
        return chosen["name"], computes
    names = nodes.split(",") if isinstance(nodes, str) else [str(n) for n in nodes]
    matched: list[str] = []
    for n in names:
        matched += inv.match(n.strip()) if inv.match is not None else [n.strip()]
    return chosen["name"], list(dict.fromkeys(matched))


def shared_mounts(inv: Inventory) -> list[dict[str, Any]]:
    """The shared file systems the inventory defines: ``storage_mounts`` of type juicefs or lustre,
    then explicit ``juicefs_volumes`` / ``lustre_client_mounts`` entries (each with a mountpoint)."""
    out: list[dict[str, Any]] = []
    spec_mounts = inv.group_spec.get("storage_mounts")
    for m in spec_mounts if isinstance(spec_mounts, list) else []:
        if isinstance(m, dict) and m.get("type") in SHARED_TYPES and isinstance(m.get("mountpoint"), str):
            out.append({"type": m["type"], "name": str(m.get("name", "")), "mountpoint": m["mountpoint"],
                        "key": "storage_mounts"})
    for kind, key in _ROLE_MOUNT_LISTS.items():
        listed = inv.group_spec.get(key)
        for m in listed if isinstance(listed, list) else []:
            if isinstance(m, dict) and isinstance(m.get("mountpoint"), str) \
                    and m["mountpoint"].rstrip("/") not in {x["mountpoint"].rstrip("/") for x in out}:
                out.append({"type": kind, "name": str(m.get("name", "")), "mountpoint": m["mountpoint"], "key": key})
    return out


def _check_request(req: JobRequest) -> None:
    if req.nodes < 1:
        raise UsageError(f"--nodes: at least 1 node (value: {req.nodes})")
    if req.gpus_per_node < 1:
        raise UsageError(f"--gpus-per-node: at least 1 (one torchrun worker per GPU) (value: {req.gpus_per_node})")
    if req.max_restarts < 0:
        raise UsageError(f"--max-restarts: 0 or more (value: {req.max_restarts})")
    if not 1024 <= req.port <= 65535:
        raise UsageError(f"--port: a port number from 1024 to 65535 (value: {req.port})")
    if req.time is not None and not _TIME.fullmatch(req.time):
        raise UsageError(f"--time: a Slurm time such as 30, 4:00:00 or 2-00:00:00, or UNLIMITED (value: {req.time})")
    if req.container_image is not None and not _IMAGE.fullmatch(req.container_image):
        raise UsageError(f"--container-image: one image reference or squashfs path without spaces or quotes "
                         f"(value: {req.container_image!r})")
    if not _COMMAND.fullmatch(req.torchrun):
        raise UsageError(f"--torchrun: one command name or path (value: {req.torchrun!r})")
    for a in req.args:
        if _CONTROL.search(a):
            raise UsageError(f"ARGS: a line break or control character in an argument (value: {a!r})")
    if not req.script.is_file():
        raise UsageError(f"SCRIPT: no such file (value: {req.script})")


def plan(inv: Inventory, req: JobRequest) -> JobPlan:
    """Check ``req`` against ``inv``; :class:`UsageError` (exit 2) naming the option or key and value."""
    _check_request(req)
    try:
        script_text = req.script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"SCRIPT: cannot read it as UTF-8 text: {exc} (value: {req.script})") from None
    name = req.name if req.name is not None else re.sub(r"[^A-Za-z0-9_.-]", "_", req.script.stem).lstrip("._-") or "job"
    if not _NAME.fullmatch(name):
        raise UsageError(f"--name: letters, digits, '_', '.', '-', at most 64 (value: {name!r})")
    user = req.user or inv.group_spec.get("clusterctl_job_user") or getpass.getuser()
    if not isinstance(user, str) or not _USER.fullmatch(user):
        key = "--user" if req.user else "clusterctl_job_user" if inv.group_spec.get("clusterctl_job_user") else "$USER"
        raise UsageError(f"{key}: not one user name (value: {user!r})")
    controllers = inv.groups.get("slurm_controller", [])
    if not controllers:
        raise UsageError(f"slurm_controller: the inventory {inv.path} has no Slurm controller (value: [])")

    partition, pnodes = _partition(inv, req.partition)
    mounts = shared_mounts(inv)
    if not mounts:
        raise UsageError(f"storage_mounts: the inventory {inv.path} defines no shared mount (type juicefs or lustre, "
                         f"or juicefs_volumes / lustre_client_mounts) for the checkpoints "
                         f"(value: {inv.group_spec.get('storage_mounts', [])})")
    if req.storage is None:
        mount = mounts[0]
    else:
        found = [m for m in mounts if req.storage in (m["name"], m["mountpoint"])]
        if not found:
            raise UsageError(f"--storage: no shared mount of that name in the inventory (value: {req.storage}); "
                             f"the mounts: {', '.join(m['name'] or m['mountpoint'] for m in mounts)}")
        mount = found[0]
    clients = set(inv.groups.get("storage_clients", []))
    with_mount = [n for n in pnodes if n in clients]
    if req.nodes > len(with_mount):
        raise UsageError(f"--nodes: partition {partition} has {len(with_mount)} node(s) that mount "
                         f"{mount['mountpoint']} (group storage_clients) (value: {req.nodes})")

    gpus = inv.group_spec.get("gpus_per_node", 0)
    gpus = gpus if isinstance(gpus, int) and not isinstance(gpus, bool) else 0
    if gpus and req.gpus_per_node > gpus:
        raise UsageError(f"--gpus-per-node: the cluster spec's gpus_per_node is {gpus} "
                         f"({_where(inv, 'gpus_per_node')}) (value: {req.gpus_per_node})")
    stage = with_mount[0]
    return JobPlan(
        request=req, inventory=inv.path, cluster=str(inv.group_spec.get("cluster_name", "")), name=name, user=user,
        partition=partition, gres=gpus > 0, exclude=tuple(n for n in pnodes if n not in clients),
        mount_type=mount["type"], mount_name=mount["name"], mountpoint=mount["mountpoint"].rstrip("/") or "/",
        controller=controllers[0], stage_host=stage,
        task_prolog=_role_value(inv, stage, "slurm_common", "slurm_common_task_prolog"),
        nccl_conf=_role_value(inv, stage, "slurm_common", "slurm_common_nccl_conf"),
        script_text=script_text,
    )


_WORKER = """\
set -euo pipefail
# The node's NCCL settings: slurmd ran the TaskProlog {tp} for this task; it exports each NCCL_*
# line of {conf} (written by the nccl role from this node's RDMA facts, nccl_overrides applied).
# Outside a container the same TaskProlog is read again here (same values); inside one it is absent
# and the environment Slurm gave the task stands.
if [ -x {tp_q} ]; then eval "$({tp_q})"; fi
nccl=$(env | grep '^NCCL_' | sort | tr '\\n' ' ' || true)
echo "clusterctl job: node ${{SLURM_NODEID}} ($(hostname)) NCCL: ${{nccl}}"
exec {torchrun} --nnodes={nodes} --nproc-per-node={procs} --rdzv-backend=c10d \\
  --rdzv-endpoint="${{CLUSTERCTL_RDZV_ENDPOINT}}" --rdzv-id="${{SLURM_JOB_ID}}" --max-restarts={restarts} "$@"
"""


def worker_text(p: JobPlan) -> str:
    """The command each node's task runs (``bash -c``): the NCCL environment, then torchrun."""
    r = p.request
    return _WORKER.format(tp=p.task_prolog, tp_q=shlex.quote(p.task_prolog), conf=p.nccl_conf,
                          torchrun=shlex.quote(r.torchrun), nodes=r.nodes, procs=r.gpus_per_node,
                          restarts=r.max_restarts)


def render(p: JobPlan) -> str:
    """The sbatch script of ``p``: one srun task per node, each running torchrun (TorchElastic)."""
    r, q = p.request, shlex.quote
    unit = "GPU(s)" if p.gres else "CPU worker process(es) (the nodes have no GPUs: gloo)"
    lines = [
        "#!/bin/bash",
        f"# Rendered by clusterctl job from inventory {p.inventory} (cluster {p.cluster or '?'}):",
        f"# {r.script.name} on {r.nodes} node(s) x {r.gpus_per_node} {unit}. One Slurm task per node runs torchrun",
        f"# (TorchElastic): c10d rendezvous on the allocation's first node, port {r.port}, up to {r.max_restarts}",
        f"# restart(s) of the workers; checkpoints under the {p.mount_type} mount {p.mount_name or p.mountpoint}.",
        f"#SBATCH --job-name={p.name}",
        f"#SBATCH --partition={p.partition}",
        f"#SBATCH --nodes={r.nodes}",
        "#SBATCH --ntasks-per-node=1",
    ]
    if p.gres:
        lines.append(f"#SBATCH --gpus-per-node={r.gpus_per_node}")
    if p.exclude:
        lines.append(f"#SBATCH --exclude={','.join(p.exclude)}")
    if r.time is not None:
        lines.append(f"#SBATCH --time={r.time}")
    lines += [
        f"#SBATCH --chdir={p.job_dir}",
        f"#SBATCH --output={p.logs_dir}/%x-%j.out",
        "#SBATCH --open-mode=append",
        "set -euo pipefail",
        "",
        f"export CLUSTERCTL_JOB_DIR={q(p.job_dir)}",
        f"export CLUSTERCTL_CHECKPOINT_DIR={q(p.checkpoint_dir)}",
        'mkdir -p "$CLUSTERCTL_CHECKPOINT_DIR"',
        'head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
        f'export CLUSTERCTL_RDZV_ENDPOINT="${{head_node}}:{r.port}"',
        "# Each rendezvous round its own TCPStore (rank 0's): torchrun's shared agent store scopes the workers'",
        "# keys by each agent's own restart count, so after one node's workers restart the ranks can read a peer",
        "# address of the round before and fail 'Connection refused' (pytorch/pytorch#135712, #167288). Set it",
        "# to 0 in the environment sbatch passes on to share the agent's store again.",
        'export TORCH_DISABLE_SHARE_RDZV_TCP_STORE="${TORCH_DISABLE_SHARE_RDZV_TCP_STORE:-1}"',
        'echo "clusterctl job: ${SLURM_JOB_ID} on ${SLURM_JOB_NODELIST}, rendezvous ${CLUSTERCTL_RDZV_ENDPOINT},'
        ' checkpoints ${CLUSTERCTL_CHECKPOINT_DIR}"',
        "",
        "worker=$(cat <<'CLUSTERCTL_WORKER'",
        worker_text(p).rstrip("\n"),
        "CLUSTERCTL_WORKER",
        ")",
        "",
    ]
    srun = ["srun", f"--nodes={r.nodes}", f"--ntasks={r.nodes}", "--ntasks-per-node=1", "--kill-on-bad-exit=1"]
    if r.container_image is not None:
        srun += [f"--container-image={r.container_image}", f"--container-mounts={p.job_dir}:{p.job_dir}",
                 f"--container-workdir={p.job_dir}"]
    cmd = [*srun, "bash", "-c"]
    tail = ["clusterctl-worker", p.script_on_nodes, *r.args]
    lines.append(" ".join(q(a) for a in cmd) + ' "$worker" ' + " ".join(q(a) for a in tail))
    return "\n".join(lines) + "\n"
