"""The lab's elastic training job (issue 24, 5(b)): a CPU build of torch on the two JuiceFS clients, a
normal user, ``clusterctl job --submit``, one node's worker killed mid-run, and the job log read back.

torch comes from wheels, never from a container registry: ``$CLUSTERCTL_TORCH_WHEELS`` (a folder of
wheels), else the cache ``~/.cache/clusterctl/wheels/torch-cpu-cp311``, else ``pip download`` of
:data:`TORCH` (a CPU-only build: no nvidia/cuda dependencies) with its dependencies for the lab's
Python (Debian 12: CPython 3.11, manylinux x86_64) through pip's configured indexes; without one
the test skips, saying why. PyPI itself has no CPU-only torch for Linux x86_64: its wheel (2.15.0:
514 MiB) is the CUDA build, whose declared dependencies (cuda-toolkit, nvidia-cudnn/nccl/...) are
several GB more. Installed with ``pip --no-index`` into a local venv (:data:`VENV`) on each node.
"""

from __future__ import annotations

import os
import re
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
    killed = [first[r][0] for r in (0, 1) if f"(pid: {first[r][0]})" in log]
    return {"resumed_from": s, "killed_pid": killed[0] if killed else -1}
