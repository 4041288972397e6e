#!/usr/bin/env python3
"""Inventory validation time per host count (issue 15 item 4, issue 19 item 3).

For each N the script writes an inventory like inventories/example-prod: one controller, N compute
hosts in hosts.yml (each with its ``ansible_host``), group_vars/all with the cluster spec (a
partition naming a hostlist of the first 64 nodes, a leaf switch per 64 nodes under one spine), and
a host_vars file for every 64th host. Each measurement runs in a fresh process (so peak RSS is that
run's) and times ``clusterctl.inventory.load_checked`` (pre-checks, ansible-core's
InventoryManager, precedence, every rule):

* ``new``: this checkout's validator;
* ``ansible-inventory``: Ansible's own ``ansible-inventory --list`` on the same folder (what reading
  the inventory costs Ansible itself), for N up to ``--ansible-max``;
* ``baseline``: the validator of another checkout (``--baseline /work/main``), for N up to
  ``--baseline-max`` (it grows with the square of N).

    .venv/bin/python bench/bench_validate.py                       # N = 4096 16384 100000
    .venv/bin/python bench/bench_validate.py -n 64 --ansible-max 0  # smoke
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

SPEC = """---
cluster_name: bench
fabric: roce
rdma_devices_per_node: 8
ib_rate_gbps: 400
pfc_priority: 3
roce_dscp: 26
mtu: 9000
gpus_per_node: 8
slurm_partitions:
  - {{name: train, default: true, max_time: 14-00:00:00}}
  - {{name: debug, nodes: "gpu[{first:06d}-{last:06d}]"}}
slurm_topology:
  switches:
{switches}
nccl_overrides:
  NCCL_IB_QPS_PER_CONNECTION: 2
"""


def generate(n: int, folder: Path) -> Path:
    """Write the N-host inventory into ``folder`` and return it."""
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "group_vars" / "all").mkdir(parents=True)
    (folder / "host_vars").mkdir()
    lines = ["all:", "  children:", "    slurm_controller:", "      hosts:", "        ctl01: {ansible_host: 10.0.0.1}",
             "    slurm_compute:", "      hosts:"]
    for i in range(1, n + 1):
        lines.append(f"        gpu{i:06d}: {{ansible_host: 10.{64 + i // 65536}.{(i // 256) % 256}.{i % 256}}}")
    (folder / "hosts.yml").write_text("\n".join(lines) + "\n")
    leaves = [f"    - {{name: leaf{j + 1}, nodes: \"gpu[{j * 64 + 1:06d}-{min(n, j * 64 + 64):06d}]\"}}"
              for j in range((n + 63) // 64)]
    spine = f"    - {{name: spine1, switches: \"leaf[1-{len(leaves)}]\"}}"
    (folder / "group_vars" / "all" / "cluster.yml").write_text(
        SPEC.format(first=1, last=min(n, 64), switches="\n".join([*leaves, spine])))
    for i in range(64, n + 1, 64):
        (folder / "host_vars" / f"gpu{i:06d}.yml").write_text("---\nslurm_compute_memlock_limit: 64G\n")
    return folder


_CHILD = """
import json, sys, time
from pathlib import Path
src = sys.argv[1]
sys.path[:0] = [src, src + "/plugins/module_utils"]
t = time.perf_counter()
from clusterctl.inventory import load_checked
inv = load_checked(Path(sys.argv[2]))
took = time.perf_counter() - t
hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")]  # peak RSS of this process only
print(json.dumps({"s": took, "hosts": len(inv.hosts), "rss_mib": int(hwm[0].split()[1]) / 1024 if hwm else 0}))
"""


def measure(src: Path, inv: Path, timeout: float) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, str(src), str(inv)], capture_output=True, text=True,
                             timeout=timeout, env=env, cwd=src)
    except subprocess.TimeoutExpired:
        return {"s": None, "error": f"timeout {timeout:.0f} s"}
    if out.returncode != 0:
        return {"s": None, "error": (out.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def measure_ansible(inv: Path, timeout: float) -> dict[str, Any]:
    exe = Path(sys.executable).with_name("ansible-inventory")
    t = time.perf_counter()
    try:
        out = subprocess.run([str(exe), "-i", str(inv), "--list"], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"s": None, "error": f"timeout {timeout:.0f} s"}
    return {"s": time.perf_counter() - t} if out.returncode == 0 else {"s": None, "error": out.stderr[-200:]}


def run(sizes: list[int], baseline: Path | None, baseline_max: int, ansible_max: int,
        timeout: float) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-validate-") as tmp:
        for n in sizes:
            inv = generate(n, Path(tmp) / f"inv{n}")
            row: dict[str, Any] = {"n": n, "load": os.getloadavg()[0], "new": measure(REPO, inv, timeout)}
            if n <= ansible_max:
                row["ansible_inventory"] = measure_ansible(inv, timeout)
            if baseline is not None and n <= baseline_max:
                row["baseline"] = measure(baseline, inv, timeout)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    def s(m: dict[str, Any] | None) -> str:
        if not m:
            return "-"
        return f"{m['s']:.2f}" if m.get("s") is not None else m.get("error", "?")

    out = ["| hosts | load | new (s) | new us/host | peak RSS MiB | ansible-inventory --list (s) | baseline (s) "
           "| baseline / new |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        new, base = r["new"], r.get("baseline")
        ratio = f"{base['s'] / new['s']:.1f}x" if base and base.get("s") and new.get("s") else "-"
        per = f"{new['s'] / r['n'] * 1e6:.0f}" if new.get("s") else "-"
        out.append(f"| {r['n']} | {r['load']:.1f} | {s(new)} | {per} | {new.get('rss_mib', 0):.0f} | "
                   f"{s(r.get('ansible_inventory'))} | {s(base)} | {ratio} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, action="append", help="host count (repeatable)")
    ap.add_argument("--baseline", type=Path, help="another checkout whose validator to time (e.g. /work/main)")
    ap.add_argument("--baseline-max", type=int, default=16384)
    ap.add_argument("--ansible-max", type=int, default=16384)
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    rows = run(args.n or [4096, 16384, 100000], args.baseline, args.baseline_max, args.ansible_max, args.timeout)
    print(table(rows))


if __name__ == "__main__":
    main()
