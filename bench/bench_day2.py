#!/usr/bin/env python3
"""Benchmark (issue 7): wall time of a no-change day-2 run and of a plan, per number of hosts,
with the project's ansible.cfg against Ansible's defaults, in the same run.

Each simulated host is an inventory host on the local connection with its own simulated RoCE
sysfs tree (tests/simfabric.py, 8 ConnectX-7 rails) and its own output folder, and runs the real
``nccl`` role (rdma_facts over its tree, nccl_env derivation, two templates) after fact gathering,
which is the per-node part of every day-2 run. A warm-up run brings every host to steady state;
the timed runs must then report changed=0 (checked: a run that changes something fails the bench).

    .venv/bin/python bench/bench_day2.py [--hosts 1,16,64,256] [--out bench/out/day2]
    .venv/bin/python bench/bench_day2.py --connection ssh --hosts 16,64 \
        --configs project,project-nopipe,project-nocp,mitogen,defaults

``--connection ssh`` runs every host as an alias of a private sshd on 127.0.0.1 (bench/sshd_lab.py),
each with its own SSH master connection; ``--configs`` picks the settings timed side by side
(CONFIGS), always with Ansible's defaults for the ratio.

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
sys.path.insert(0, str(REPO / "bench"))
import simfabric  # noqa: E402
import sshd_lab  # noqa: E402

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


def make_inventory(root: Path, n: int, lab: sshd_lab.SshLab | None = None) -> Path:
    """``n`` simulated hosts: on the local connection, or (``lab``) SSH aliases of the private sshd."""
    inv = root / f"inv-{n}-{'ssh' if lab else 'local'}"
    if inv.exists():
        shutil.rmtree(inv)
    (inv / "host_vars").mkdir(parents=True)
    hosts = [f"sim{i:04d}" for i in range(1, n + 1)]
    lines = ["all:", "  vars:", f"    ansible_connection: {'ssh' if lab else 'local'}",
             f"    ansible_python_interpreter: {sys.executable}", "    fabric: roce", "    roce_dscp: 26", "  hosts:"]
    lines += [f"    {h}:" for h in hosts]
    (inv / "hosts.yml").write_text("\n".join(lines) + "\n")
    for i, h in enumerate(hosts):
        node = root / "nodes" / h
        sys_root = node / "sys"
        if not sys_root.exists():
            simfabric.build(node_desc(i), sys_root)
        (node / "etc").mkdir(parents=True, exist_ok=True)
        ssh = "".join(f"{k}: {json.dumps(v)}\n" for k, v in lab.host_vars(h).items()) if lab else ""
        (inv / "host_vars" / f"{h}.yml").write_text(
            f"nccl_sysfs_root: {sys_root}\nnccl_conf_path: {node}/etc/nccl.conf\n"
            f"nccl_profile_path: {node}/etc/nccl.sh\nnccl_frontend_nics: []\n" + ssh)
    (root / "day2.yml").write_text(PLAYBOOK)
    return inv


#: the configurations a run can time (--configs); each is compared with "defaults" in the same run
CONFIGS = {
    "project": "the repository's ansible.cfg (forks 50, smart gathering + JSON fact cache, pipelining, "
               "ControlPersist=300s)",
    "project-nopipe": "project with pipelining off (ANSIBLE_PIPELINING=False)",
    "project-nocp": "project without SSH connection sharing (ssh_args -o ControlMaster=no)",
    "mitogen": "project with Mitogen for Ansible's strategy (ANSIBLE_STRATEGY=mitogen_linear)",
    "defaults": "an empty ansible.cfg: Ansible's defaults (forks 5, implicit gathering, no cache, no pipelining, "
                "ssh_args -C -o ControlMaster=auto -o ControlPersist=60s)",
}


def mitogen_strategy_dir() -> str | None:
    """The strategy plugin folder of an installed Mitogen for Ansible (None when not installed)."""
    try:
        import ansible_mitogen  # type: ignore[import-not-found]
    except ImportError:
        return None
    return str(Path(ansible_mitogen.__file__).parent / "plugins" / "strategy")


def env_for(config: str, root: Path, connection: str = "local") -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    sys.path.insert(0, str(REPO))
    from clusterctl import collection

    env.update(collection.ansible_env())  # the clusterctl.hpc collection (roles, modules, filters, callback)
    if config != "defaults":
        env["ANSIBLE_CONFIG"] = str(REPO / "ansible.cfg")
        env["ANSIBLE_CACHE_PLUGIN_CONNECTION"] = str(root / f"facts-{connection}")
        if config == "project-nopipe":
            env["ANSIBLE_PIPELINING"] = "False"
        elif config == "project-nocp":
            env["ANSIBLE_SSH_ARGS"] = "-o ControlMaster=no"
        elif config == "mitogen":
            strategy = mitogen_strategy_dir()
            if strategy is None:
                raise SystemExit("config mitogen: pip install mitogen (Mitogen for Ansible) first")
            env["ANSIBLE_STRATEGY_PLUGINS"] = strategy
            env["ANSIBLE_STRATEGY"] = "mitogen_linear"  # the repository's own modules (FQCN imports)
    else:
        empty = root / "empty.cfg"
        empty.write_text("[defaults]\n")
        env["ANSIBLE_CONFIG"] = str(empty)
    return env


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(inv: Path, root: Path, config: str, check: bool,
        lab: sshd_lab.SshLab | None = None, profile: list[str] | None = None) -> tuple[float, int, float]:
    """Wall seconds, number of changed tasks, CPU seconds of ansible-playbook and its children.

    On the SSH path every run starts without master connections (those of the run before are
    closed first), so ControlPersist only shares a connection within one run. The CPU seconds
    are the controller's: sshd's and the modules' work on the "nodes" (the same machine) is not in
    them, but is in the wall time and the load.
    """
    cmd = ["ansible-playbook", "-i", str(inv), str(root / "day2.yml")]
    if check:
        cmd += ["--check", "--diff"]
    if lab is not None:
        lab.close_masters()
    c0 = _children_cpu()
    t0 = time.monotonic()
    env = env_for(config, root, "ssh" if lab else "local")
    if profile is not None:
        env["ANSIBLE_CALLBACKS_ENABLED"] = "ansible.posix.profile_tasks,clusterctl_failures"
        env["PROFILE_TASKS_TASK_OUTPUT_LIMIT"] = "all"
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    dt = time.monotonic() - t0
    cpu = _children_cpu() - c0
    if proc.returncode != 0:
        raise SystemExit(f"{config} run failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
    changed = sum(int(m) for m in re.findall(r"changed=(\d+)", proc.stdout))
    if profile is not None:
        # profile_tasks' summary: "<task name> ---- 1.23s", slowest first
        profile += [ln.strip() for ln in proc.stdout.splitlines() if re.search(r" -{3,} +\d+\.\d+s$", ln)]
    return dt, changed, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", default="1,16,64,256")
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "day2"))
    ap.add_argument("--connection", choices=("local", "ssh"), default="local",
                    help="ssh: every host is an alias of a private sshd on 127.0.0.1 (bench/sshd_lab.py)")
    ap.add_argument("--configs", default="project,defaults",
                    help=f"comma-separated, timed in this order per host count: {', '.join(CONFIGS)}")
    ap.add_argument("--no-plan", action="store_true", help="time the no-change run only (no --check --diff run)")
    ap.add_argument("--profile", action="store_true",
                    help="one more project no-change run per host count with ansible.posix.profile_tasks (untimed)")
    args = ap.parse_args()
    configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        ap.error(f"--configs: unknown {unknown}; known: {', '.join(CONFIGS)}")
    if "defaults" not in configs:
        configs.append("defaults")
    root = Path(args.out).resolve()
    root.mkdir(parents=True, exist_ok=True)
    lab = None
    if args.connection == "ssh":
        if not sshd_lab.available():
            raise SystemExit("--connection ssh needs /usr/sbin/sshd "
                             "(scripts/bench-ssh-setup.sh installs openssh-server)")
        lab = sshd_lab.SshLab(root / "sshd")
        lab.start()
    try:
        rows = _bench(args, configs, root, lab)
    finally:
        if lab is not None:
            lab.stop()
    (root / f"results-{args.connection}.json").write_text(json.dumps(rows, indent=2))
    return 0


def _bench(args: argparse.Namespace, configs: list[str], root: Path, lab: sshd_lab.SshLab | None) -> list[dict]:
    rows = []
    print(f"connection {args.connection}; load average before: {os.getloadavg()[0]:.1f}", flush=True)
    print(f"{'hosts':>6} {'config':>15} {'no-change s':>12} {'s/host':>8} {'cpu s':>8} {'plan s':>8} {'s/host':>8} "
          f"{'cpu s':>8} {'load':>5}", flush=True)
    for n in [int(x) for x in args.hosts.split(",")]:
        inv = make_inventory(root, n, lab)
        run(inv, root, "project", check=False, lab=lab)  # warm-up: bring every host to steady state
        if args.profile:
            prof: list[str] = []
            pdt, _, pcpu = run(inv, root, "project", check=False, lab=lab, profile=prof)
            print(f"{n:>6} project no-change with profile_tasks: {pdt:.1f} s, {pcpu:.1f} CPU s; per task "
                  "(wall s summed over the hosts' forks):", flush=True)
            for ln in prof:
                print(f"         {ln}", flush=True)
            (root / f"profile-{args.connection}-{n}.txt").write_text("\n".join(prof) + "\n")
        result: dict[str, dict[str, float]] = {}
        for config in configs:
            load0 = os.getloadavg()[0]
            nochange, changed, ncpu = run(inv, root, config, check=False, lab=lab)
            if changed:
                raise SystemExit(f"{config}: the no-change run changed {changed} task(s): not idempotent")
            plan = pcpu = float("nan")
            if not args.no_plan:
                plan, pchanged, pcpu = run(inv, root, config, check=True, lab=lab)
                if pchanged:
                    raise SystemExit(f"{config}: plan reports {pchanged} change(s) on a provisioned cluster")
            load = os.getloadavg()[0]
            result[config] = {"nochange_s": nochange, "nochange_cpu_s": ncpu, "plan_s": plan, "plan_cpu_s": pcpu,
                              "load1_before": load0, "load1": load}
            line = (f"{n:>6} {config:>15} {nochange:>12.1f} {nochange / n:>8.3f} {ncpu:>8.1f} {plan:>8.1f} "
                    f"{plan / n:>8.3f} {pcpu:>8.1f} {load:>5.1f}")
            print(line, flush=True)
        d = result["defaults"]
        ratios = {c: {"nochange": d["nochange_s"] / r["nochange_s"], "plan": d["plan_s"] / r["plan_s"]}
                  for c, r in result.items() if c != "defaults"}
        for c, r in ratios.items():
            print(f"{n:>6}    defaults/{c}: no-change {r['nochange']:.2f}x, plan {r['plan']:.2f}x", flush=True)
        rows.append({"hosts": n, "connection": args.connection,
                     **{f"{c}_{k}": v for c, dd in result.items() for k, v in dd.items()},
                     **{f"ratio_{c}_{k}": v for c, r in ratios.items() for k, v in r.items()}})
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
