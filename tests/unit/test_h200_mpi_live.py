"""nccl-tests built MPI=1 by the gpu_tools role's make line, on the real H200 (issue 24 item 2).

The records in tests/fixtures/h200-live/gpu-tools-mpi come from bench/device/h200_mpi_nccl_tests.sh on
the device machine: the build log (the make line, its exit status, ldd of all_reduce_perf), and
``mpirun -np 1 all_reduce_perf`` on the one GPU. Expected values are read off those files: the make
line is the one the role renders with ``gpu_tools_nccl_tests_mpi: true`` and the machine's paths, the
binary links Open MPI and NCCL, and the report is one MPI rank on host ``vm`` (so, as a "pair"
report, it is refused: it names one host).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from ccparse import registry
from conftest import LOCAL_FIXTURES, read_fixture
from test_gpu_tools_mpi_build import ROLE, _render, _tasks

from clusterctl.analysis import engine

LIVE = "h200-live/gpu-tools-mpi"


def test_build_used_the_roles_mpi_make_line_and_links_mpi() -> None:
    lines = read_fixture(f"{LIVE}/build.txt").splitlines()
    recorded = lines[1].split()
    v = {**yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()), "gpu_tools_nccl_tests_mpi": True,
         "gpu_tools_nccl_tests_src": "/srv/nccl-tests-2.19.6.tar.gz"}
    block = next(t for t in _tasks() if "block" in t)
    build = next(t for t in block["block"] if str(t["name"]).startswith("Build nccl-tests"))
    argv = _render(build["ansible.builtin.command"]["argv"], v)
    # the role's words, except the machine's own CUDA folder and the job count
    same = [a for a in argv if not a.startswith(("CUDA_HOME=", "-j"))]
    assert [a for a in recorded if not a.startswith(("CUDA_HOME=", "-j"))] == same
    assert "MPI=1" in recorded and "MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi" in recorded
    assert "build exit 0 in 145 s" in lines
    assert any("libmpi.so.40 =>" in ln for ln in lines) and any("libnccl.so.2 =>" in ln for ln in lines)


def test_mpirun_report_is_one_rank_on_the_h200() -> None:
    out = registry.parse("nccl-tests", read_fixture(f"{LIVE}/all_reduce_perf-mpirun-np1.txt"))
    assert out["hosts"] == ["vm"]
    assert [(d["rank"], d["host"], d["model"]) for d in out["devices"]] == [(0, "vm", "NVIDIA H200")]


def test_as_a_pair_report_it_is_refused_for_naming_one_host(tmp_path: Path) -> None:
    host = tmp_path / "ev" / "vm"
    host.mkdir(parents=True)
    (host / "nccl-tests@peer.txt").write_text((LOCAL_FIXTURES / LIVE / "all_reduce_perf-mpirun-np1.txt").read_text())
    rep = engine.analyze_dir(tmp_path / "ev", {"gpus_per_node": 1}, jobs=1).hosts["vm"]
    assert any(f.check == "nccl_pair" and "all ran on vm, not on vm and peer" in f.message and "not judged" in f.message
               for f in rep.findings), rep.findings
