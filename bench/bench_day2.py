#!/usr/bin/env python3
"""Benchmark (issue 7): wall time of a no-change day-2 run and of a plan, per number of hosts,
with the project's ansible.cfg against Ansible's defaults, in the same run.

Each simulated host is an inventory host on the local connection with its own simulated RoCE
sysfs tree (tests/simfabric.py, 8 ConnectX-7 rails) and its own output folder, and runs the real
``nccl`` role (rdma_facts over its tree, nccl_env derivation, two templates) after fact gathering,
which is the per-node part of every day-2 run. A warm-up run brings every host to steady state;
the timed runs must then report changed=0 (checked: a run that changes something fails the bench).

    .venv/bin/python bench/bench_day2.py [--hosts 1,16,64,256] [--out bench/out/day2]

Prints a table (seconds, seconds per host, CPU seconds of the run, the 1-minute load average after
it, ratio defaults/project) and writes it as JSON. The machine is shared: CPU seconds do not move
with other users' load the way wall seconds do.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import simfabric  # noqa: E402

PLAYBOOK = """---
- name: Day-2 per-node configuration (bench)
  hosts: all
  gather_facts: true
  roles:
    - role: clusterctl.hpc.nccl
"""


def node_desc(i: int) -> dict[str, object]:
    devices = []
    for d in range(8):
        devices.append({
            "name": f"mlx5_{d}", "ports": [{
                "port": 1, "link_layer": "Ethernet", "state": "ACTIVE", "phys_state": "LinkUp", "rate": 400,
                "netdev": f"ens{d + 1}np0", "mtu": 9000, "ipv4": f"10.{d}.{i // 250}.{i % 250 + 1}",
            }],
        })
    return {"devices": devices, "configfs": "populated"}


def make_inventory(root: Path, n: int) -> Path:
    inv = root / f"inv-{n}"
    if inv.exists():
        shutil.rmtree(inv)
    (inv / "host_vars").mkdir(parents=True)
    hosts = [f"sim{i:04d}" for i in range(1, n + 1)]
    lines = ["all:", "  vars:", "    ansible_connection: local", f"    ansible_python_interpreter: {sys.executable}",
             "    fabric: roce", "    roce_dscp: 26", "  hosts:"]
    lines += [f"    {h}:" for h in hosts]
    (inv / "hosts.yml").write_text("\n".join(lines) + "\n")
    for i, h in enumerate(hosts):
        node = root / "nodes" / h
        sys_root = node / "sys"
        if not sys_root.exists():
            simfabric.build(node_desc(i), sys_root)
        (node / "etc").mkdir(parents=True, exist_ok=True)
        (inv / "host_vars" / f"{h}.yml").write_text(
            f"nccl_sysfs_root: {sys_root}\nnccl_conf_path: {node}/etc/nccl.conf\n"
            f"nccl_profile_path: {node}/etc/nccl.sh\nnccl_frontend_nics: []\n")
    (root / "day2.yml").write_text(PLAYBOOK)
    return inv


def env_for(config: str, root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    sys.path.insert(0, str(REPO))
    from clusterctl import collection

    env.update(collection.ansible_env())  # the clusterctl.hpc collection (roles, modules, filters, callback)
    if config == "project":
        env["ANSIBLE_CONFIG"] = str(REPO / "ansible.cfg")
        env["ANSIBLE_CACHE_PLUGIN_CONNECTION"] = str(root / "facts")
    else:
        empty = root / "empty.cfg"
        empty.write_text("[defaults]\n")
        env["ANSIBLE_CONFIG"] = str(empty)
    return env


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(inv: Path, root: Path, config: str, check: bool) -> tuple[float, int, float]:
    """Wall seconds, number of changed tasks, CPU seconds of ansible-playbook and its children."""
    cmd = ["ansible-playbook", "-i", str(inv), str(root / "day2.yml")]
    if check:
        cmd += ["--check", "--diff"]
    c0 = _children_cpu()
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env_for(config, root), capture_output=True, text=True, check=False)
    dt = time.monotonic() - t0
    cpu = _children_cpu() - c0
    if proc.returncode != 0:
        raise SystemExit(f"{config} run failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
    changed = sum(int(m) for m in re.findall(r"changed=(\d+)", proc.stdout))
    return dt, changed, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", default="1,16,64,256")
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "day2"))
    args = ap.parse_args()
    root = Path(args.out).resolve()
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"{'hosts':>6} {'config':>8} {'no-change s':>12} {'s/host':>8} {'cpu s':>8} {'plan s':>8} {'s/host':>8} "
          f"{'cpu s':>8} {'load':>5}", flush=True)
    for n in [int(x) for x in args.hosts.split(",")]:
        inv = make_inventory(root, n)
        run(inv, root, "project", check=False)  # warm-up: bring every host to steady state
        result: dict[str, dict[str, float]] = {}
        for config in ("project", "defaults"):
            nochange, changed, ncpu = run(inv, root, config, check=False)
            if changed:
                raise SystemExit(f"{config}: the no-change run changed {changed} task(s): not idempotent")
            plan, pchanged, pcpu = run(inv, root, config, check=True)
            if pchanged:
                raise SystemExit(f"{config}: plan reports {pchanged} change(s) on a provisioned cluster")
            load = os.getloadavg()[0]
            result[config] = {"nochange_s": nochange, "nochange_cpu_s": ncpu, "plan_s": plan, "plan_cpu_s": pcpu,
                              "load1": load}
            line = (f"{n:>6} {config:>8} {nochange:>12.1f} {nochange / n:>8.3f} {ncpu:>8.1f} {plan:>8.1f} "
                    f"{plan / n:>8.3f} {pcpu:>8.1f} {load:>5.1f}")
            print(line, flush=True)
        ratio = result["defaults"]["nochange_s"] / result["project"]["nochange_s"]
        pratio = result["defaults"]["plan_s"] / result["project"]["plan_s"]
        print(f"{n:>6}    ratio defaults/project: no-change {ratio:.2f}x, plan {pratio:.2f}x", flush=True)
        rows.append({"hosts": n, **{f"{c}_{k}": v for c, d in result.items() for k, v in d.items()},
                     "ratio_nochange": ratio, "ratio_plan": pratio})
    (root / "results.json").write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
