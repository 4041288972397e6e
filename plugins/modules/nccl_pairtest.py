#!/usr/bin/python
"""Ansible module nccl_pairtest: 2-node nccl-tests runs through Slurm's srun, every pair of a round at once."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: nccl_pairtest
short_description: Run nccl-tests all_reduce_perf across pairs of nodes through srun
description:
  - Runs on a Slurm submit host (the controller). For each pair of nodes starts
    C(srun -N 2 -w <a>,<b> --ntasks-per-node=<gpus> --immediate=<s> <srun_args> <binary> <args>),
    all pairs of the round at once, and returns each run's output (rank 0 prints the nccl-tests
    table), parsed on the controller as KIND C(nccl-tests).
  - Slurm allocates the two nodes, so a pair test never shares a node with a running job; with
    C(--immediate) a pair whose nodes are busy is reported C(skipped) instead of waiting.
  - Tells apart C(tool_missing) (no C(srun) here, or the binary absent on the nodes,
    srun's C(execve) error), C(skipped) (the nodes could not be allocated in time) and C(error).
    Never reports changed; supports check mode (a benchmark job changes no setting).
version_added: "0.2.0"
options:
  pairs:
    description: Disjoint pairs of Slurm node names, C([[a, b], ...]).
    type: list
    elements: list
    required: true
  binary:
    description: Path of nccl-tests' C(all_reduce_perf) on the nodes.
    type: path
    default: /opt/nccl-tests/build/all_reduce_perf
  args:
    description: Arguments of C(all_reduce_perf) (one GPU per task).
    type: list
    elements: str
    default: ["-b", "8M", "-e", "8G", "-f", "2", "-g", "1"]
  tasks_per_node:
    description: Tasks per node (C(--ntasks-per-node)); the GPU count of a node.
    type: int
    default: 1
  srun_args:
    description: More C(srun) options, e.g. C(--mpi=pmix) for nccl-tests built with MPI, C(--gpus-per-node=8).
    type: list
    elements: str
    default: ["--mpi=pmix"]
  environment:
    description: Environment for the ranks (srun exports the caller's environment), e.g. C(NCCL_DEBUG=INFO).
    type: dict
    default: {NCCL_DEBUG: INFO}
  immediate:
    description: Seconds srun may wait for the nodes (C(--immediate)) before the pair is skipped.
    type: int
    default: 60
  timeout:
    description: Seconds one pair's run may take before it is killed (then C(error)).
    type: int
    default: 900
  tool_dirs:
    description: Folders searched for C(srun), C(salloc) and C(mpirun) before C(PATH).
    type: list
    elements: path
    default: []
  launcher:
    description:
      - How the ranks of a pair are started as one MPI job. C(srun) runs the command above (with
        C(--mpi=pmix) Slurm's PMIx plugin wires the ranks up). C(mpirun) allocates the pair with
        C(salloc) (same options, no C(--mpi=)) and starts the ranks with Open MPI's C(mpirun -np
        <2 x tasks_per_node> --map-by ppr:<tasks_per_node>:node) inside the allocation (mpirun starts
        its daemons through Slurm; it must be on this host).
      - C(auto) takes C(srun), unless C(srun_args) ask for C(--mpi=pmix) and C(srun --mpi=list) does
        not offer pmix while C(mpirun) and C(salloc) are here; then C(mpirun). The choice is in each
        pair's C(launcher).
    type: str
    choices: [auto, srun, mpirun]
    default: auto
extends_documentation_fragment:
  - clusterctl.hpc.clusterctl_collector
"""

EXAMPLES = r"""
- name: 2-node all_reduce_perf on two pairs at once
  clusterctl.hpc.nccl_pairtest:
    pairs: [[node001, node002], [node003, node004]]
    tasks_per_node: 8
    srun_args: ["--mpi=pmix", "--gpus-per-node=8"]
  register: nccl_pairs
"""

RETURN = r"""
tests:
  description: C(<a>,<b>) -> the pair's result (C(_) when srun is missing).
  returned: always
  type: dict
  contains:
    status:
      description: C(ok), C(tool_missing), C(skipped) or C(error).
      type: str
    rc:
      description: srun's exit status (null when it did not run or was killed).
      type: int
    stdout:
      description: The ranks' standard output (rank 0's nccl-tests table, NCCL INFO lines).
      type: str
    stderr:
      description: srun's standard error, or why it did not run.
      type: str
    cmd:
      description: The command line run.
      type: list
    launcher:
      description: How the ranks were started, C(srun --mpi=pmix), C(srun) or C(mpirun (salloc)).
      type: str
summary:
  description:
    - The same keys with C(status), C(rc), the first line of C(stderr) and C(launcher) (how the ranks
      were started, C(srun --mpi=pmix) or C(srun)); pairtest.yml writes it as C(<b>/_collect#nccl-tests@<a>.json).
  returned: always
  type: dict
parsed:
  description:
    - The same keys (successful pairs only) -> the output parsed as KIND C(nccl-tests), a
      ccparse.preparsed envelope; pairtest.yml writes it as C(<b>/_parsed#nccl-tests@<a>.json).
  returned: always
  type: dict
"""

import os  # noqa: E402
import threading  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.node import communicate, entry, summarise  # noqa: E402
from ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.preparsed import parse_results  # noqa: E402

#: srun's words when the program is not on the node (slurmstepd's execve failure)
MISSING = ("execve(): ", "No such file or directory")
#: srun's words when --immediate ran out (src/srun/libsrun/allocate.c)
BUSY = ("Unable to allocate resources", "Immediate allocation", "Requested nodes are busy")


def classify(rc, out, err):
    text = out + err
    if rc == 0:
        return "ok"
    if rc is not None and all(w in text for w in MISSING):
        return "tool_missing"
    if rc is not None and any(w in text for w in BUSY):
        return "skipped"
    return "error"


def launcher(cmd):
    """How the ranks were started, for the evidence: C(srun --mpi=pmix) (one MPI job wired up by
    Slurm's PMIx plugin), C(srun --mpi=<other>), C(srun) (no MPI plugin: every task alone), or
    C(mpirun (salloc)) (Open MPI's launcher in a Slurm allocation)."""
    if not cmd:
        return ""
    if any(str(a).rsplit("/", 1)[-1] == "mpirun" for a in cmd):
        return "mpirun (salloc)"
    mpi = [a for a in cmd if str(a).startswith("--mpi=")]
    return f"srun {mpi[-1]}" if mpi else "srun"


def pmix_offered(srun):
    """Whether C(srun --mpi=list) names the pmix plugin."""
    try:
        rc, out, err = communicate([srun, "--mpi=list"], 30)
    except OSError:
        return False
    return rc == 0 and any(w.strip() == "pmix" or w.strip().startswith("pmix_") for w in (out + err).split())


def choose(p, srun, salloc, mpirun):
    """The launcher to use: C(srun) or C(mpirun) (see the option C(launcher))."""
    if p["launcher"] != "auto":
        return p["launcher"]
    if "--mpi=pmix" in p["srun_args"] and salloc and mpirun and not pmix_offered(srun):
        return "mpirun"
    return "srun"


def command(pair, p, srun, salloc, mpirun, how):
    a, b = pair
    alloc = ["-N", "2", "-w", f"{a},{b}", f"--ntasks-per-node={p['tasks_per_node']}",
             f"--immediate={p['immediate']}", f"--job-name=clusterctl-nccl-{a}-{b}"]
    if how == "mpirun":
        ranks = 2 * p["tasks_per_node"]
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []  # Open MPI refuses root otherwise
        exports = [x for k in sorted(p["environment"]) for x in ("-x", k)]  # mpirun passes on only these
        return [salloc, *alloc, *[x for x in p["srun_args"] if not x.startswith("--mpi")], mpirun, *root,
                "-np", str(ranks), "--map-by", f"ppr:{p['tasks_per_node']}:node", *exports, p["binary"], *p["args"]]
    return [srun, *alloc, *p["srun_args"], p["binary"], *p["args"]]


def run_pair(cmd, p):
    rc, out, err = communicate(cmd, p["timeout"], env={k: str(v) for k, v in p["environment"].items()})
    if rc is None:
        err = f"killed after {p['timeout']} s\n{err}"
    return entry(classify(rc, out, err), rc, out, err, cmd)


def main():
    module = AnsibleModule(
        argument_spec={
            "pairs": {"type": "list", "elements": "list", "required": True},
            "binary": {"type": "path", "default": "/opt/nccl-tests/build/all_reduce_perf"},
            "args": {"type": "list", "elements": "str", "default": ["-b", "8M", "-e", "8G", "-f", "2", "-g", "1"]},
            "tasks_per_node": {"type": "int", "default": 1},
            "srun_args": {"type": "list", "elements": "str", "default": ["--mpi=pmix"]},
            "environment": {"type": "dict", "default": {"NCCL_DEBUG": "INFO"}},
            "immediate": {"type": "int", "default": 60},
            "timeout": {"type": "int", "default": 900},
            "tool_dirs": {"type": "list", "elements": "path", "default": []},
            "launcher": {"type": "str", "choices": ["auto", "srun", "mpirun"], "default": "auto"},
        },
        supports_check_mode=True,
    )
    p = module.params
    pairs = []
    for pair in p["pairs"]:
        if len(pair) != 2 or not all(isinstance(x, str) and x for x in pair) or pair[0] == pair[1]:
            module.fail_json(msg=f"pairs: each entry must be two different node names, got {pair!r}",
                             pairs=p["pairs"], changed=False)
        pairs.append((pair[0], pair[1]))
    srun = module.get_bin_path("srun", opt_dirs=p["tool_dirs"])
    salloc = module.get_bin_path("salloc", opt_dirs=p["tool_dirs"])
    mpirun = module.get_bin_path("mpirun", opt_dirs=p["tool_dirs"])
    results = {}
    how = choose(p, srun, salloc, mpirun) if srun else p["launcher"]
    if how == "mpirun" and not (salloc and mpirun):
        results["_"] = entry("tool_missing", stderr="launcher mpirun: " + " and ".join(
            n for n, path in (("salloc", salloc), ("mpirun", mpirun)) if not path) + " not found in PATH")
    elif how != "mpirun" and srun is None:
        results["_"] = entry("tool_missing", stderr="srun not found in PATH")
    else:
        def work(pair):
            cmd = command(pair, p, srun, salloc, mpirun, how)
            try:
                results[",".join(pair)] = run_pair(cmd, p)
            except OSError as exc:
                results[",".join(pair)] = entry("error", stderr=str(exc), cmd=cmd)

        threads = [threading.Thread(target=work, args=(pair,), daemon=True) for pair in pairs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    summary = summarise(results)
    for key, res in results.items():
        res["launcher"] = summary[key]["launcher"] = launcher(res.get("cmd") or [])
    module.exit_json(changed=False, tests=dict(sorted(results.items())), summary=summary,
                     parsed=parse_results(results, "nccl-tests"))


if __name__ == "__main__":
    main()
