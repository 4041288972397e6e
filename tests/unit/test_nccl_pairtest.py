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
