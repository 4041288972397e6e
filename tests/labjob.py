"""The lab's elastic training job (issue 24, 5(b)): a CPU build of torch on the two JuiceFS clients (in a
venv on each node, or in a squashfs image pyxis starts: :func:`torch_image`), a normal user,
``clusterctl job --submit``, one node's worker killed mid-run, and the job log read back.

torch comes from wheels, never from a container registry: ``$CLUSTERCTL_TORCH_WHEELS`` (a folder of
wheels), else the cache ``~/.cache/clusterctl/wheels/torch-cpu-cp311``, else ``pip download`` of
:data:`TORCH` (a CPU-only build: no nvidia/cuda dependencies) with its dependencies for the lab's
Python (Debian 12: CPython 3.11, manylinux x86_64) through pip's configured indexes; without one
the test skips, saying why. PyPI itself has no CPU-only torch for Linux x86_64: its wheel (2.15.0:
514 MiB) is the CUDA build, whose declared dependencies (cuda-toolkit, nvidia-cudnn/nccl/...) are
several GB more. Installed with ``pip --no-index`` into a local venv (:data:`VENV`) on each node.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from labutil import REPO, sh

from clusterctl.lab import PREFIX

TORCH = "torch==2.13.0+cpu"
VENV = "/opt/cc-torch"
USER, UID = "cctrain", 2424
TRAIN = REPO / "tests" / "lab" / "elastic_train.py"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "clusterctl" / "wheels" / "torch-cpu-cp311"
_PLATFORM = ["--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp",
             "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
             "--platform", "manylinux2014_x86_64", "--platform", "any"]


def torch_wheels() -> Path:
    """A folder holding a CPU torch wheel for CPython 3.11 and its dependencies, else skip."""
    given = os.environ.get("CLUSTERCTL_TORCH_WHEELS")
    folder = Path(given) if given else CACHE
    if list(folder.glob("torch-*+cpu-cp311-*.whl")):
        return folder
    if given:
        pytest.skip(f"$CLUSTERCTL_TORCH_WHEELS={given} holds no torch-*+cpu-cp311-*.whl")
    folder.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", *_PLATFORM, "-d", str(folder), TORCH],
                       capture_output=True, text=True, timeout=900, check=False)
    if r.returncode != 0 or not list(folder.glob("torch-*+cpu-cp311-*.whl")):
        pytest.skip(f"no CPU-only torch wheel for CPython 3.11 x86_64 ({TORCH}) from pip's indexes: PyPI's Linux "
                    "x86_64 torch is the CUDA build (514 MiB, with cuda-toolkit/nvidia-* dependencies of several "
                    "GB); put a CPU wheel and its dependencies in $CLUSTERCTL_TORCH_WHEELS. pip said: "
                    + (r.stderr.strip().splitlines() or ["(nothing)"])[-1])
    return folder


def podman(*args: str, timeout: int = 600) -> str:
    r = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout, check=False)
    assert r.returncode == 0, f"podman {' '.join(args[:3])}: {r.stdout[-2000:]}{r.stderr[-2000:]}"
    return r.stdout


def install_torch(nodes: list[str], wheels: Path) -> None:
    """The wheels copied into each node and installed there into :data:`VENV`, the nodes in parallel."""
    procs = []
    for node in nodes:
        name = PREFIX + node
        podman("exec", name, "mkdir", "-p", "/var/tmp/cc-wheels")
        for whl in sorted(wheels.glob("*.whl")):
            podman("cp", str(whl), f"{name}:/var/tmp/cc-wheels/{whl.name}")
        procs.append(subprocess.Popen(
            ["podman", "exec", name, "sh", "-c",
             f"test -x {VENV}/bin/torchrun || {{ python3 -m venv {VENV} && {VENV}/bin/pip install -q --no-index "
             f"--find-links /var/tmp/cc-wheels '{TORCH}'; }}; rc=$?; rm -rf /var/tmp/cc-wheels; exit $rc"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for node, p in zip(nodes, procs, strict=True):
        out, _ = p.communicate(timeout=900)
        assert p.returncode == 0, f"installing torch on {node}: {out[-3000:]}"


def add_user(hosts: list[str]) -> None:
    """The normal user the job runs as, with one uid on every host (Slurm needs it on the nodes)."""
    for host in hosts:
        podman("exec", PREFIX + host, "sh", "-c",
               f"id {USER} >/dev/null 2>&1 || useradd -m -u {UID} -s /bin/bash {USER}")


def wait_for(what: str, check: Callable[[], object], timeout: float, every: float = 2.0) -> str:
    """Poll ``check()`` until it returns a non-empty string; fail naming ``what`` on timeout."""
    end = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return str(got)
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


def job_state(job_id: str) -> str:
    """sacct's state of the job's allocation (accounting runs in the cases' converge), '' while unknown."""
    out = sh("lab-ctl", f"sacct -n -X -P -j {job_id} -o State 2>/dev/null").strip()
    return out.splitlines()[0].split()[0] if out else ""


STEP = re.compile(r"^step (\d+) rank (\d+) restart (\d+) loss ([0-9.]+)$", re.M)
START = re.compile(r"^start rank (\d+) restart (\d+) pid (\d+) host (\S+) resumed-from (-?\d+)$", re.M)
DONE = re.compile(r"^done rank (\d+) step (\d+) w (\S+) b (\S+)$", re.M)


def check_log(log: str, steps: int) -> dict[str, int]:
    """Assert what an elastic restart from a checkpoint leaves in the job log (both nodes' output):
    each rank started, was restarted once with a new process resuming from step S, where S is rank
    0's last step before the restart (or the one after, had it saved but not printed it), ran S+1 ..
    steps-1 after it (no step twice, none skipped), its first loss after resuming far below the
    untrained loss (the weights came from the checkpoint), and finished at steps-1. Returns S and
    the killed pid."""
    starts = [(int(r), int(c), int(p), h, int(s)) for r, c, p, h, s in START.findall(log)]
    assert sorted(r for r, *_ in starts) == [0, 0, 1, 1], f"two starts per rank expected:\n{starts}\n{log[-4000:]}"
    first = {r: (p, s) for r, _c, p, _h, s in starts[::-1]}  # the earliest start of each rank
    second = {r: (p, s) for r, _c, p, _h, s in starts}  # the latest
    assert all(s == -1 for _p, s in first.values()), starts
    resumed = {s for _p, s in second.values()}
    assert len(resumed) == 1, f"the ranks resumed from different steps: {starts}"
    s = resumed.pop()
    assert all(second[r][0] != first[r][0] for r in (0, 1)), f"a worker was not restarted: {starts}"
    lines = log.splitlines()
    for rank in (0, 1):
        at = [i for i, ln in enumerate(lines) if START.fullmatch(ln) and ln.startswith(f"start rank {rank} ")]
        before = [int(m.group(1)) for ln in lines[at[0]:at[1]] if (m := STEP.fullmatch(ln)) and m.group(2) == str(rank)]
        after = [(int(m.group(1)), float(m.group(4))) for ln in lines[at[1]:]
                 if (m := STEP.fullmatch(ln)) and m.group(2) == str(rank)]
        assert before == list(range(len(before))), f"rank {rank} before the restart: {before}"
        if rank == 0:
            assert before and before[-1] <= s <= before[-1] + 1, f"resumed from {s}, rank 0 had reached {before}"
        assert [st for st, _ in after] == list(range(s + 1, steps)), f"rank {rank} after resuming from {s}: {after}"
        loss0 = next(float(m.group(4)) for ln in lines if (m := STEP.fullmatch(ln)) and m.group(1) == "0"
                     and m.group(2) == str(rank))
        assert after[0][1] < loss0 / 2, f"rank {rank}: loss {after[0][1]} after resuming, {loss0} untrained"
    done = sorted((int(r), int(st)) for r, st, _w, _b in DONE.findall(log))
    assert done == [(0, steps - 1), (1, steps - 1)], f"the job did not finish both ranks: {done}"
    # the worker torchrun's agent saw die of SIGKILL; the other rank's first worker may fail too (its
    # collective lost the peer: exitcode 1), and its agent names its pid as well (seen in CI, session 11)
    killed = [first[r][0] for r in (0, 1)
              if re.search(rf"\(exitcode: -9\) local_rank: \d+ \(pid: {first[r][0]}\)", log)]
    return {"resumed_from": s, "killed_pid": killed[0] if len(killed) == 1 else -1}


# --- the same job in a squashfs image (pyxis --container-image), built once per input hash ---

#: where built images are kept on the test machine, one file per input hash (like the wheel cache)
IMAGE_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "clusterctl" / "images"
#: a file of the image naming it and its input hash: read through a worker's /proc/PID/root
IMAGE_MARK = "/etc/clusterctl-lab-image"
#: the training script's copy in the image (the job runs the copy clusterctl job stages on the shared mount)
IMAGE_TRAIN = "/opt/clusterctl/elastic_train.py"
#: the host programs the job's worker command, Slurm's TaskProlog (sh, sed) and torchrun need in the image
IMAGE_TOOLS = ("bash", "dash", "env", "sed", "grep", "sort", "tr", "cat", "head", "hostname")

# Run as root on a lab compute node (Debian 12, the lab image: its CPython 3.11 is the image's).
# The root file system is laid out in enroot's data folder as container {name}: the python binary
# and its standard library, torch and its dependencies installed from the wheels with pip --target
# into /usr/local/lib/python3.X/dist-packages (on Debian's sys.path), a torchrun launcher, the
# training script, the tools above, the shared libraries all of these load (ldd) with an
# ld.so.cache; then `enroot export` writes the squashfs (zstd instead of enroot's uncompressed -noD).
_BUILD = r"""set -eu
export ENROOT_DATA_PATH=/var/tmp/clusterctl-image-data
export ENROOT_SQUASH_OPTIONS="-comp zstd -Xcompression-level 3 -exit-on-error"
W={wheels}; NAME={name}; OUT={out}; V=/var/tmp/clusterctl-image-venv
R=$ENROOT_DATA_PATH/$NAME
rm -rf "$R" "$V"; mkdir -p "$R"; cd "$R"
mkdir -p usr/bin usr/lib usr/lib64 usr/sbin usr/local/bin etc tmp proc sys dev run root home var/tmp opt/clusterctl
for d in bin lib lib64 sbin; do ln -s usr/$d $d; done
chmod 1777 tmp var/tmp
PY=$(readlink -f /usr/bin/python3); PV=$(basename "$PY")
cp -a --parents /usr/lib/$PV "$R"/
[ -d /etc/$PV ] && cp -a --parents /etc/$PV "$R"/
cp "$PY" "$R$PY"; ln -s "$PV" usr/bin/python3
python3 -m venv "$V"
"$V/bin/pip" install -q --no-index --find-links "$W" --target "$R/usr/local/lib/$PV/dist-packages" '{torch}'
rm -rf "$R/usr/local/lib/$PV/dist-packages/bin"
printf '#!/usr/bin/python3\nimport sys\nfrom torch.distributed.run import main\nsys.exit(main())\n' \
  > usr/local/bin/torchrun
chmod 0755 usr/local/bin/torchrun
cp "$W/{train}" "$R{image_train}"
for t in {tools}; do p=$(command -v $t); cp "$p" "$R$p"; done
ln -sf dash usr/bin/sh
for t in {tools}; do command -v $t; done > "$V/elf"
{{ cat "$V/elf"; echo "$PY"
   find "$R/usr/lib/$PV/lib-dynload" "$R/usr/local/lib/$PV/dist-packages" -name '*.so*' -type f; }} \
  | while read -r f; do ldd "$f" 2>/dev/null | awk '/=> \// {{print $3}} /^\t\// {{print $1}}' || true; done \
  | sort -u | while read -r lib; do
      case "$lib" in "$R"/*) continue ;; esac
      mkdir -p "$R$(dirname "$lib")"; cp -L "$lib" "$R$lib"
    done
cp -a --parents /etc/ld.so.conf /etc/ld.so.conf.d /etc/nsswitch.conf "$R"/
mkdir -p var/cache/ldconfig; ldconfig -r "$R"
grep -E '^(root|nobody):' /etc/passwd > etc/passwd; grep -E '^(root|nogroup):' /etc/group > etc/group
echo "clusterctl-lab-torch-image {key}" > "$R{mark}"
cd /; rm -f "$OUT"; enroot export -o "$OUT" "$NAME" > "$V/export.log" 2>&1 || {{ tail -n 20 "$V/export.log"; exit 1; }}
chmod 0644 "$OUT"; rm -rf "$R" "$V" "$W"
"""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def image_key(wheels: Path, base_image: str) -> str:
    """The image's input hash: the build script, the torch requirement, each wheel (name and sha256),
    the training script and the id of the lab image whose Python the image carries."""
    h = hashlib.sha256()
    for part in (_BUILD, TORCH, " ".join(IMAGE_TOOLS), IMAGE_TRAIN, base_image, TRAIN.read_text()):
        h.update(part.encode() + b"\0")
    for whl in sorted(wheels.glob("*.whl")):
        h.update(f"{whl.name} {_sha256(whl)}\0".encode())
    return h.hexdigest()[:20]


def torch_image(nodes: list[str], wheels: Path) -> tuple[str, str, float]:
    """The squashfs image with Python, torch (CPU, from ``wheels``) and the training script at the
    same path on each of ``nodes``: taken from :data:`IMAGE_CACHE` when an image of the same input
    hash is there, else built on ``nodes[0]`` with enroot and kept there. Returns (the path on the
    nodes, the input hash, seconds spent building: 0.0 when cached)."""
    base = podman("inspect", "--format", "{{.Image}}", PREFIX + nodes[0]).strip()
    key = image_key(wheels, base)
    name = f"clusterctl-torch-{key}.sqsh"
    on_nodes = f"/var/tmp/{name}"
    cached = IMAGE_CACHE / name
    built = 0.0
    if not cached.is_file():
        t0 = time.monotonic()
        node = PREFIX + nodes[0]
        stage = "/var/tmp/clusterctl-image-wheels"
        podman("exec", node, "sh", "-c", f"rm -rf {stage} && mkdir -p {stage}")
        for f in [*sorted(wheels.glob("*.whl")), TRAIN]:
            podman("cp", str(f), f"{node}:{stage}/{f.name}")
        script = _BUILD.format(wheels=stage, name=f"clusterctl-torch-{key}", out=on_nodes, torch=TORCH,
                               train=TRAIN.name, image_train=IMAGE_TRAIN, tools=" ".join(IMAGE_TOOLS), key=key,
                               mark=IMAGE_MARK)
        podman("exec", node, "bash", "-c", script, timeout=900)
        IMAGE_CACHE.mkdir(parents=True, exist_ok=True)
        part = IMAGE_CACHE / f".{name}.part"
        podman("cp", f"{node}:{on_nodes}", str(part))
        for old in IMAGE_CACHE.glob("clusterctl-torch-*.sqsh"):  # one image kept: the newest inputs
            old.unlink()
        os.replace(part, cached)
        built = time.monotonic() - t0
    size = cached.stat().st_size
    for node in nodes:
        have = subprocess.run(["podman", "exec", PREFIX + node, "stat", "-c", "%s", on_nodes],
                              capture_output=True, text=True, check=False).stdout.strip()
        if have != str(size):
            podman("cp", str(cached), f"{PREFIX}{node}:{on_nodes}")
            podman("exec", PREFIX + node, "chmod", "0644", on_nodes)
    return on_nodes, key, built


# --- the job itself, on the host's venv or in the image: submitted, one worker killed, read back ---


def job_inventory(lab_slurm_cases: Path, dest: Path) -> tuple[Path, list[str], dict]:
    """A copy of the cases' lab inventory for ``clusterctl job`` (the JuiceFS mount of the cases and
    :data:`USER`; lab-c3, once the scale-out case made it a Slurm node, in slurm_compute so that the
    job excludes it: it mounts no JuiceFS). Returns (the inventory, the JuiceFS clients, the cases' vars)."""
    import yaml

    inv = dest
    shutil.copytree(lab_slurm_cases.parent / "lab", inv)
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    groups = hosts["all"]["children"]
    known = sh("lab-ctl", "sinfo -h -N -o %N").split()
    pending = groups.get("slurm_pending", {}).get("hosts") or {}
    if pending and all(h in known for h in pending):  # the scale-out case added lab-c3: a node without JuiceFS
        groups["slurm_compute"]["hosts"].update(groups.pop("slurm_pending")["hosts"])
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    case_vars = yaml.safe_load((lab_slurm_cases / "group_vars" / "all" / "slurm_cases.yml").read_text())
    (inv / "group_vars" / "all" / "job.yml").write_text(yaml.safe_dump(
        {"storage_mounts": case_vars["storage_mounts"], "clusterctl_job_user": USER}, sort_keys=False))
    return inv, sorted(groups["storage_clients"]["hosts"]), case_vars


def net_state(hosts: list[str]) -> str:
    """What a failed job's message carries about the nodes' network (a gloo peer refused in the full lab
    tier only): listeners, addresses, name resolution, stray training processes."""
    out = []
    for h in hosts:
        out.append(f"--- {h}\n" + sh(h, "hostname; getent hosts $(hostname) lab-c1 lab-c2 lab-c3; "
                                         "ip -br addr; ss -ltnpH | head -20; "
                                         "ps -eo pid,user,etime,args | grep -E 'torch|elastic_train' | grep -v grep; "
                                         "tail -3 /etc/hosts; true"))
    return "\n".join(out)


def run_killed_job(inv: Path, clients: list[str], options: list[str], steps: int,
                   on_victim: Callable[[str, str], None] | None = None) -> tuple[dict, str, int]:
    """``clusterctl job ... --submit --json`` of :data:`TRAIN` on 2 nodes with 2 restarts; rank 1's
    worker killed (SIGKILL, on its own node) once it printed step 5 (``on_victim(host, pid)`` first);
    waits for the job's end. Returns (the --json result, the job log, the killed pid) after asserting
    sacct's COMPLETED."""
    import json

    from labutil import cc

    res = cc("job", str(inv), str(TRAIN), "--nodes", "2", "--gpus-per-node", "1", "--max-restarts", "2",
             *options, "--submit", "--json", "--", "--steps", str(steps), "--step-seconds", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    job = json.loads(res.stdout)["result"]  # the --json envelope

    def read_log() -> str:
        return sh(clients[0], f"cat {job['log']} 2>/dev/null")

    def victim() -> str:
        log = read_log()
        m = [x for x in START.findall(log) if x[0] == "1" and x[4] == "-1"]
        if m and "\nstep 5 rank 1 restart 0 " in log:
            return f"{m[0][3]} {m[0][2]}"
        if job_state(job["job_id"]) not in ("", "PENDING", "RUNNING", "COMPLETING"):  # ended before step 5
            pytest.fail(f"job {job['job_id']} {job_state(job['job_id'])} before rank 1's step 5:\n{log[-5000:]}\n"
                        + net_state(clients))
        return ""

    host, pid = wait_for("rank 1 at step 5", victim, 300).split()
    if on_victim is not None:
        on_victim(host, pid)
    killed = [h for h in ([host] if host in clients else clients)  # the worker's own node (pids are per node)
              if sh(h, f"grep -q elastic_train /proc/{pid}/cmdline && kill -9 {pid} && echo killed").strip()]
    assert len(killed) == 1, f"rank 1's worker {pid} on {host}: killed on {killed}"
    state = wait_for("the job to end", lambda: (st := job_state(job["job_id"])) not in
                     ("", "PENDING", "RUNNING", "COMPLETING") and st, 400)
    text = read_log()
    assert state == "COMPLETED", f"job {job['job_id']} {state}:\n{text[-5000:]}\n" + net_state(clients)
    return job, text, int(pid)
