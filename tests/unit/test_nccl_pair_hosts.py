"""A 2-node nccl-tests pair report must come from one MPI job across the pair: its
`#  Rank N Group G Pid P on HOST device D` lines name both hosts. A report whose ranks all ran on one
host (nccl-tests built MPI=0, two independent processes under srun -N2) is refused with a finding,
not judged as 0.0 GB/s inter-node bandwidth."""

from __future__ import annotations

from pathlib import Path

from conftest import read_fixture

from clusterctl.analysis.engine import analyze_dir

EXP = {"gpu_model": "NVIDIA H100 80GB HBM3"}
TWO_HOSTS = read_fixture("nccl-tests/h100x16-2node-a3mega-all-reduce-8B-8G.txt")


def _pair(tmp: Path, text: str) -> None:
    for h in ("n1", "n2"):
        (tmp / h).mkdir(parents=True, exist_ok=True)
    (tmp / "n2" / "nccl-tests@n1.txt").write_text(text)


def test_report_across_two_hosts_is_judged(tmp_path: Path) -> None:
    _pair(tmp_path, TWO_HOSTS)
    rep = analyze_dir(tmp_path, EXP)
    assert not [f for f in rep.hosts["n2"].findings if f.check == "nccl_pair"]


def test_pair_report_naming_one_host_is_refused(tmp_path: Path) -> None:
    # the same real report with every rank on its first host, as srun -N2 of an MPI=0 build gives per node
    lines = TWO_HOSTS.splitlines(keepends=True)
    one = "".join(ln.replace("ztan-mig-gq73", "ztan-mig-235z") if ln.startswith("#  Rank") else ln for ln in lines)
    _pair(tmp_path, one)
    rep = analyze_dir(tmp_path, EXP)
    found = [f for f in rep.hosts["n2"].findings if f.check == "nccl_pair"]
    assert len(found) == 1 and found[0].severity == "warning", rep.hosts["n2"].findings
    assert "ztan-mig-235z" in found[0].message and "n1" in found[0].message
    # nothing else was judged from it: no busbw finding, no pair metric to blame anyone with
    assert [f.check for f in rep.hosts["n2"].findings] == ["nccl_pair"]
