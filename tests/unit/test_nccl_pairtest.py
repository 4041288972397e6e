"""nccl_pairtest: how srun's outcome is told apart (the lab test runs it through real srun).

The messages are srun's and slurmstepd's own: ``execve(): <prog>: No such file or directory`` when
the program is not on the node, and ``Unable to allocate resources: Requested nodes are busy``
when ``--immediate`` runs out.
"""

from __future__ import annotations

from fabric_modrun import load_module, run_module


def test_classify() -> None:
    m = load_module("nccl_pairtest")
    assert m.classify(0, "# Avg bus bandwidth : 1.0\n", "") == "ok"
    missing = "slurmstepd: error: execve(): /opt/nccl-tests/build/all_reduce_perf: No such file or directory\n"
    assert m.classify(2, "", "srun: error: node1: task 0: Exited with exit code 2\n" + missing) == "tool_missing"
    busy = "srun: error: Unable to allocate resources: Requested nodes are busy\n"
    assert m.classify(1, "", busy) == "skipped"
    assert m.classify(1, "", "srun: error: Invalid node name specified\n") == "error"
    assert m.classify(None, "", "killed after 900 s\n") == "error"


def test_srun_missing_is_tool_missing(monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    r = run_module("nccl_pairtest", {"pairs": [["a", "b"]]})
    assert r["changed"] is False and r["tests"]["_"]["status"] == "tool_missing"


def test_bad_pair_fails_naming_it() -> None:
    r = run_module("nccl_pairtest", {"pairs": [["a", "a"]]})
    assert r.get("failed") and "['a', 'a']" in r["msg"]


def test_launcher_is_named_for_the_evidence() -> None:
    """The pair's _collect#nccl-tests@<a>.json says how the ranks were started."""
    m = load_module("nccl_pairtest")
    srun = ["/usr/bin/srun", "-N", "2", "-w", "a,b", "--ntasks-per-node=8"]
    assert m.launcher([*srun, "--mpi=pmix", "/opt/nccl-tests/build/all_reduce_perf"]) == "srun --mpi=pmix"
    assert m.launcher([*srun, "/opt/nccl-tests/build/all_reduce_perf"]) == "srun"
    assert m.launcher([]) == ""


def _fake(folder, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def test_mpirun_in_salloc_when_slurm_offers_no_pmix(tmp_path) -> None:
    """auto: --mpi=pmix asked for, srun --mpi=list without pmix, mpirun and salloc here: the pair runs as
    salloc ... mpirun -np <2 x tasks> --map-by ppr:<tasks>:node (no --mpi=), and its status says so."""
    _fake(tmp_path, "srun", 'echo "MPI plugin types are..."; printf "\\tnone\\n\\tpmi2\\n"\n')
    _fake(tmp_path, "salloc", 'echo "salloc $*"\n')
    _fake(tmp_path, "mpirun", "exit 0\n")
    r = run_module("nccl_pairtest", {"pairs": [["a", "b"]], "tasks_per_node": 8, "tool_dirs": [str(tmp_path)],
                                     "srun_args": ["--mpi=pmix", "--gpus-per-node=8"]})
    res = r["tests"]["a,b"]
    assert res["status"] == "ok" and r["summary"]["a,b"]["launcher"] == "mpirun (salloc)", r
    cmd = res["cmd"]
    assert cmd[0] == str(tmp_path / "salloc") and "--gpus-per-node=8" in cmd and "--mpi=pmix" not in cmd, cmd
    at = cmd.index(str(tmp_path / "mpirun"))
    assert cmd[cmd.index("-np", at) + 1] == "16" and cmd[cmd.index("--map-by", at) + 1] == "ppr:8:node", cmd
    assert cmd[cmd.index("-x", at) + 1] == "NCCL_DEBUG", cmd  # the ranks' environment is passed on by name


def test_srun_pmix_when_offered(tmp_path) -> None:
    _fake(tmp_path, "srun", 'case "$1" in --mpi=list) printf "MPI plugin types are...\\n\\tpmix\\n";; '
                            '*) echo "srun $*";; esac\n')
    _fake(tmp_path, "salloc", "exit 1\n")
    _fake(tmp_path, "mpirun", "exit 1\n")
    r = run_module("nccl_pairtest", {"pairs": [["a", "b"]], "tool_dirs": [str(tmp_path)]})
    assert r["summary"]["a,b"]["launcher"] == "srun --mpi=pmix" and r["tests"]["a,b"]["status"] == "ok", r
    assert r["tests"]["a,b"]["cmd"][0] == str(tmp_path / "srun")
