#!/usr/bin/env python3
"""Inventory validation time per host count (issue 15 item 4, issue 19 item 3).

For each N the script writes an inventory like inventories/example-prod: one controller, N compute
hosts in hosts.yml (each with its ``ansible_host``), group_vars/all with the cluster spec (a
partition naming a hostlist of the first 64 nodes, a leaf switch per 64 nodes under one spine), and
a host_vars file for every 64th host. Each measurement runs in a fresh process (so peak RSS is that
run's) and times ``clusterctl.inventory.load_checked`` (pre-checks, ansible-core's
InventoryManager, precedence, every rule):

* ``new``: this checkout's validator (wall and CPU seconds of the child, and per phase: scan of the
  files with the YAML checks, ansible-core's InventoryManager, Ansible's precedence, the rules per
  definition, the combined rules);
* ``new, gc running``: the same with the garbage collector left running (``--gc-max``), the
  configuration without the pause in ``clusterctl.inventory.loading.gc_paused``;
* ``ansible-inventory``: Ansible's own ``ansible-inventory --list`` on the same folder (what reading
  the inventory costs Ansible itself), for N up to ``--ansible-max``;
* ``baseline``: the validator of another checkout (``--baseline /work/main``: the code before this
  branch), for N up to ``--baseline-max``.

All configurations of one size run one after the other on the same folder; the table gives the
machine's load average before and after, and the ratios baseline/new in wall and CPU seconds (CPU
seconds move less with the load of a shared machine).

    .venv/bin/python bench/bench_validate.py --baseline /work/main --baseline-max 100000 \
        --gc-max 100000 --ansible-max 4096                         # N = 4096 16384 100000
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
import gc, json, sys, time
from pathlib import Path
src, target, gc_on = sys.argv[1], sys.argv[2], sys.argv[3] == "gc"
sys.path[:0] = [src, src + "/plugins/module_utils"]
t, c = time.perf_counter(), time.process_time()
from clusterctl.inventory import load_checked, loading, validation
import ansible.inventory.manager as manager
phases = {}
def timed(name, owner, attr):
    fn = getattr(owner, attr, None)
    if fn is None:
        return
    def wrapper(*a, **k):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return fn(*a, **k)
        finally:
            w, p = phases.get(name, (0.0, 0.0))
            phases[name] = (w + time.perf_counter() - t0, p + time.process_time() - c0)
    setattr(owner, attr, wrapper)
timed("scan (files, YAML, pre-checks)", loading, "scan")
timed("ansible-core InventoryManager", manager.InventoryManager, "parse_sources")
timed("precedence (vars per host)", loading, "_fill")
timed("rules per definition", validation, "_definitions")
timed("combined rules", validation, "_combined")
if gc_on:
    gc.disable = lambda: None  # the configuration without the pause of the garbage collector
phases["import"] = (time.perf_counter() - t, time.process_time() - c)
t1, c1 = time.perf_counter(), time.process_time()
inv = load_checked(Path(target))
took, cpu = time.perf_counter() - t1, time.process_time() - c1
hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")]  # peak RSS of this process only
print(json.dumps({"s": took, "cpu_s": cpu, "import_s": phases.pop("import")[0], "phases": phases,
                  "hosts": len(inv.hosts), "rss_mib": int(hwm[0].split()[1]) / 1024 if hwm else 0}))
"""


def measure(src: Path, inv: Path, timeout: float, gc_on: bool = False) -> dict[str, Any]:
    """One fresh process timing ``load_checked`` (wall and CPU seconds, per phase) of checkout ``src``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, str(src), str(inv), "gc" if gc_on else "-"],
                             capture_output=True, text=True, timeout=timeout, env=env, cwd=src)
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
        timeout: float, gc_max: int = 0) -> list[dict[str, Any]]:
    """Every configuration of one size right after the other (same folder, same machine load)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-validate-") as tmp:
        for n in sizes:
            inv = generate(n, Path(tmp) / f"inv{n}")
            row: dict[str, Any] = {"n": n, "load": os.getloadavg()[0], "new": measure(REPO, inv, timeout)}
            if n <= gc_max:
                row["new_gc_on"] = measure(REPO, inv, timeout, gc_on=True)
            if n <= ansible_max:
                row["ansible_inventory"] = measure_ansible(inv, timeout)
            if baseline is not None and n <= baseline_max:
                row["baseline"] = measure(baseline, inv, timeout)
            row["load_after"] = os.getloadavg()[0]
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def _s(m: dict[str, Any] | None, key: str = "s") -> str:
    if not m:
        return "-"
    return f"{m[key]:.2f}" if m.get(key) is not None else str(m.get("error", "?"))


def _ratio(base: dict[str, Any] | None, new: dict[str, Any], key: str) -> str:
    return f"{base[key] / new[key]:.1f}x" if base and base.get(key) and new.get(key) else "-"


def table(rows: list[dict[str, Any]]) -> str:
    """Wall and CPU seconds of each configuration, ratios baseline/new and gc-on/new."""
    out = ["| hosts | load before/after | new wall s | new CPU s | new us/host (CPU) | peak RSS MiB new (baseline) "
           "| new, gc running: wall s | baseline wall s | baseline CPU s | baseline/new wall, CPU "
           "| ansible-inventory --list s |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        new, base, gcr = r["new"], r.get("baseline"), r.get("new_gc_on")
        per = f"{new['cpu_s'] / r['n'] * 1e6:.0f}" if new.get("cpu_s") else "-"
        gc_cell = f"{_s(gcr)} ({_ratio(gcr, new, 's')})" if gcr else "-"
        ratios = f"{_ratio(base, new, 's')}, {_ratio(base, new, 'cpu_s')}" if base else "-"
        rss_base = f" ({base['rss_mib']:.0f})" if base and base.get("rss_mib") else ""
        out.append(f"| {r['n']} | {r['load']:.1f}/{r.get('load_after', r['load']):.1f} | {_s(new)} "
                   f"| {_s(new, 'cpu_s')} | {per} | {new.get('rss_mib', 0):.0f}{rss_base} | {gc_cell} | {_s(base)} "
                   f"| {_s(base, 'cpu_s')} | {ratios} | {_s(r.get('ansible_inventory'))} |")
    return "\n".join(out)


def phase_table(rows: list[dict[str, Any]]) -> str:
    """Where the time of the new validator (and of the baseline) goes, per phase: wall / CPU s."""
    names: list[str] = []
    for r in rows:
        for conf in ("new", "baseline"):
            names += [k for k in (r.get(conf) or {}).get("phases", {}) if k not in names]
    out = ["| hosts | config | import | " + " | ".join(names) + " | total |",
           "|---|---|---|" + "---|" * (len(names) + 1)]
    for r in rows:
        for conf in ("new", "baseline"):
            m = r.get(conf)
            if not m or m.get("s") is None:
                continue
            cells = [f"{m['phases'][k][0]:.2f} / {m['phases'][k][1]:.2f}" if k in m["phases"] else "-" for k in names]
            out.append(f"| {r['n']} | {conf} | {m.get('import_s', 0):.2f} | " + " | ".join(cells)
                       + f" | {m['s']:.2f} / {m['cpu_s']:.2f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, action="append", help="host count (repeatable)")
    ap.add_argument("--baseline", type=Path, help="another checkout whose validator to time (e.g. /work/main)")
    ap.add_argument("--baseline-max", type=int, default=16384)
    ap.add_argument("--ansible-max", type=int, default=16384)
    ap.add_argument("--gc-max", type=int, default=0,
                    help="also time the new validator with the garbage collector running, up to this N")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    rows = run(args.n or [4096, 16384, 100000], args.baseline, args.baseline_max, args.ansible_max, args.timeout,
               gc_max=args.gc_max)
    print(table(rows))
    print()
    print(phase_table(rows))


if __name__ == "__main__":
    main()
