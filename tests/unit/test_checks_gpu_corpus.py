"""GPU, NCCL and Slurm checks on real pasted captures of the corpus (issue 14 item 3).

Only non-held-out corpus files are used; every expected subject and severity below comes from
reading the capture (quoted in the comments), not from what the code printed.
"""

from __future__ import annotations

from typing import Any

from ccparse import registry

from bench.bench_corpus import CORPUS, read_capture
from clusterctl.analysis import checks
from clusterctl.analysis.expectations import build
from clusterctl.analysis.model import CHECKS, CheckResult, Finding

PART = CORPUS / "gpu"
HELD = set((PART / "HOLDOUT.txt").read_text().split())


def run(rel: str, **spec: Any) -> list[Finding]:
    assert rel not in HELD, f"{rel} is held out: never used in tests"
    checks.load_all()
    kind = rel.split("/", 1)[0]
    data = registry.parse(kind, read_capture(PART / rel))
    exp = build(spec)
    out: list[Finding] = []
    for fn in CHECKS[kind]:
        res = fn("n1", data, exp)
        out += res.findings if isinstance(res, CheckResult) else list(res or [])
    return [f for f in out if f.severity != "info"]


def by(findings: list[Finding], severity: str | None = None) -> list[tuple[str, str]]:
    return [(f.check, f.subject) for f in findings if severity is None or f.severity == severity]


# --- dcgmi diag: the failing GPU is named, whatever the layout ---------------------------------


def test_dcgm_331_one_gpu_fails_the_other_passes() -> None:
    # "GPU Memory | Pass - GPU: 1" / "| Fail - GPU: 0" and a cuCtxCreate Warning for GPU 0
    found = run("dcgmi-diag/godcgm52-331-gpu0-fail-gpu1-pass-excerpt.txt")
    assert by(found, "critical") == [("dcgmi_diag", "n1/gpu0")]
    assert "cuCtxCreate" in found[0].message


def test_dcgm_grepped_excerpt_pass_list_and_fail() -> None:
    # "Pass - GPUs: 1, 2, 3, 4, 5, 6, 7" then "Fail - GPU: 0", no header rows at all
    found = run("dcgmi-diag/mleng-r2-gpu0-thermal-fail-excerpt.txt")
    assert by(found) == [("dcgmi_diag", "n1/gpu0")]
    assert "Thermal violations" in found[0].message


def test_dcgm_deployment_error_row_names_the_gpu() -> None:
    # "| Error | GPU 3 has uncorrectable memory errors and row remappings are pending"
    assert by(run("dcgmi-diag/mleng-deployment-error-gpu3-excerpt.txt")) == [("dcgmi_diag", "n1/gpu3")]


def test_dcgm_338_fail_all_names_every_gpu() -> None:
    # "GPU Memory | Fail - All" with 8 device ids in the metadata, one Warning per GPU 0-7
    found = run("dcgmi-diag/nccltests264-dcgm338-r3-all-fail.txt")
    assert by(found, "critical") == [("dcgmi_diag", f"n1/gpu{i}") for i in range(8)]


def test_dcgm4_test_failed_while_gpu_rows_pass_is_a_node_finding() -> None:
    # DCGM 4.4.1: "pcie | Fail" with an internal-error Warning, then "GPU0: Pass" .. "GPU7: Pass"
    found = run("dcgmi-diag/dcgm253-441-b200x8-pcie-internal-error.txt")
    assert by(found) == [("dcgmi_diag", "n1")]
    assert "Integration/pcie: Fail" in found[0].message


def test_dcgm4_all_pass_and_indented_docs_layout() -> None:
    assert run("dcgmi-diag/dcgm124-442-r2-1gpu-pass.txt") == []
    assert run("dcgmi-diag/dcgmdocs-400-r3-4gpu-pass-indented.txt") == []


# --- nvidia-smi states -----------------------------------------------------------------------


def test_persistence_off_on_datacenter_gpu_not_on_geforce() -> None:
    # L40S: table "Off", -q "Persistence Mode : Disabled", --query-gpu persistence_mode Disabled:
    # a note by default, a warning where the spec requires persistence mode
    for rel in ("nvidia-smi/ne-l40s-595.80.txt", "nvidia-smi-q/ne-l40s-595.80.txt",
                "nvidia-smi-query/ne-l40s-595.80.txt"):
        assert run(rel) == [], rel
        assert by(run(rel, gpu_persistence_required=True), "warning") == [("gpu_persistence", "n1/gpu0")], rel
    # the desktop GeForce RTX 2080 SUPER also has persistence off: not judged even when required
    assert run("nvidia-smi/ne-rtx-2080-595.71.05.txt", gpu_persistence_required=True) == []
    assert run("nvidia-smi-q/ne-rtx-2080-595.71.05.txt", gpu_persistence_required=True) == []


def test_h100x8_table_persistence_off_names_all_eight() -> None:
    # every GPU row of the 560.35.03 table reads "NVIDIA H100 80GB HBM3  Off"
    found = run("nvidia-smi/nccltests264-h100x8-560.txt", gpus_per_node=8, gpu_persistence_required=True)
    assert by(found) == [("gpu_persistence", f"n1/gpu{i}") for i in range(8)]


def test_remapped_rows_pending_excerpt() -> None:
    # "Uncorrectable Error : 4", "Pending : Yes" under Remapped Rows, no GPU header
    assert [f.check for f in run("nvidia-smi-q/gpud80-remapped-rows-pending.txt")] == ["gpu_row_remap"]


def test_nvlink_links_inactive_on_one_gpu() -> None:
    # GPU 3: links 3 and 5 "<inactive>", the others 25.781 GB/s
    found = run("nvidia-smi-nvlink/azhpc73-v100-gpu3-inactive.txt")
    assert by(found) == [("gpu_nvlink", "n1/gpu3")]
    assert "3, 5" in found[0].message


def test_nvlink_all_links_inactive_b200() -> None:
    # "NVML: Unable to retrieve NVLink information as all links are inActive" for GPU 2, 18 expected
    found = run("nvidia-smi-nvlink/gpud1085-b200-all-inactive.txt", nvlink_links_per_gpu=18)
    assert by(found, "critical") == [("gpu_nvlink", "n1/gpu2")]


def test_ansi_underlined_topo_and_tab_separated_topo_parse() -> None:
    assert run("nvidia-smi-topo/ne-h100-80gb-hbm3-590.48.01.txt") == []
    data = registry.parse("nvidia-smi-topo", read_capture(PART / "nvidia-smi-topo/nccl933-h800-nv8-cut.txt"))
    assert data["truncated"] and [g["name"] for g in data["gpus"]] == [f"GPU{i}" for i in range(7)]


# --- nccl-tests and NCCL logs ----------------------------------------------------------------


def test_failed_nccl_tests_run_is_critical_naming_the_line() -> None:
    # line 11 of the capture body: "GENOA-06: Test NCCL failure common.cu:392 'unhandled cuda error ..."
    found = run("nccl-tests/nccltests287-2x5090-nccl-failure.txt")
    assert by(found, "critical") == [("nccl_failed", "n1")]
    assert "line 11" in found[0].message and "Test NCCL failure" in found[0].message


def test_nccl_log_ranks_without_ib_on_an_ib_cluster() -> None:
    # one host's ranks: "NET/IB : No device found." and "Using network Socket"; the others use mlx5 IB
    found = run("nccl-log/nccltests188-mixed-socket-ib-excerpt.txt", fabric="infiniband")
    assert by(found, "critical") == [("nccl_transport", "n1")]


def test_nccl_log_warn_after_file_line() -> None:
    # "GENOA-06:4766:4766 [1] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'"
    found = run("nccl-log/nccltests287-2x5090-debug-info-failure.txt")
    assert any("Cuda failure 1 'invalid argument'" in f.message for f in found)


def test_grepped_nccl_line_without_prefix() -> None:
    data = registry.parse("nccl-log", read_capture(PART / "nccl-log/mleng-net-ib-8rails-line.txt"))
    assert data["ib_devices"] == [f"mlx5_{i}" for i in range(8)]


def test_nccl_tests_kind_reads_json_too() -> None:
    doc = ('{"config": {"devices": []}, "results": [{"size": 1024, "out_of_place": {"time": 10.0, "alg_bw": 1.5, '
           '"bus_bw": 2.5, "nwrong": 0}, "in_place": {"time": 10.0, "alg_bw": 1.5, "bus_bw": 2.5, "nwrong": 0}}]}')
    assert registry.parse("nccl-tests", doc) == registry.parse("nccl-tests-json", doc)


# --- Slurm node states -----------------------------------------------------------------------


def test_sinfo_down_star_nodes_named() -> None:
    # "debug* up 30:00 2 down* adev[1-2]" and "batch up 30:00 3 down* adev[6,13,15]"
    found = run("sinfo/slurmdoc-quickstart-down-star.txt")
    assert by(found, "critical") == [("slurm_node_state", n) for n in ("adev1", "adev13", "adev15", "adev2", "adev6")]


def test_sinfo_other_column_order_drained() -> None:
    # "PARTITION AVAIL NODES TIMELIMIT STATE NODELIST" / "debug* up 2 30:00 drain adev[6-7]"
    assert by(run("sinfo/slurmdoc-man-states-drained.txt"), "warning") == [("slurm_node_state", "adev6"),
                                                                             ("slurm_node_state", "adev7")]


def test_sinfo_healthy_and_summary_table() -> None:
    assert run("sinfo/slurmdoc-man-basic.txt") == []
    assert run("sinfo/slurmdoc-gang-idle.txt") == []


def test_scontrol_old_format_down_not_responding_and_grep_excerpt() -> None:
    # "NodeName=adev1 State=DOWN* CPUs=8 AllocCPUs=0" ... "Reason=Not responding [slurm@06/02-14:01:24]"
    found = run("scontrol-node/slurmdoc-quickstart-down-notresponding.txt")
    assert by(found) == [("slurm_node_state", "adev1")] and "Not responding" in found[0].message
    assert run("scontrol-node/slurmdoc-mcs-1508-idle.txt") == []
    assert run("scontrol-node/slurmdoc-powersave-grep.txt") == []  # no State= in a grep'd excerpt


def test_query_fabric_state_and_recovery_action_are_judged() -> None:
    # the fields as the 590 driver names them (nvidia_gpu_exporter captures query fabric.state/status)
    checks.load_all()
    text = ("index, name, fabric.state, fabric.status, gpu_recovery_action\n"
            "0, NVIDIA H100 80GB HBM3, In Progress, N/A, None\n1, NVIDIA H100 80GB HBM3, Completed, Success, Reset\n")
    data = registry.parse("nvidia-smi-query", text)
    found = [f for fn in CHECKS["nvidia-smi-query"] for f in fn("n1", data, build({})).findings]
    # 'Reset': the GPU needs a reset before a new process may use it (NVIDIA's recovery action flag): failed
    assert by(found, "critical") == [("gpu_fabric", "n1/gpu0"), ("gpu_reset", "n1/gpu1")]
    drain = registry.parse("nvidia-smi-query", text.replace("Success, Reset", "Success, Drain P2P"))
    found = [f for fn in CHECKS["nvidia-smi-query"] for f in fn("n1", drain, build({})).findings]
    assert by(found, "warning") == [("gpu_reset", "n1/gpu1")]


def test_cli_parse_nccl_tests_reads_its_own_json() -> None:
    """`clusterctl parse nccl-tests FILE` on nccl-tests' -J output: no 'no result header' error."""
    import json

    from conftest import LOCAL_FIXTURES
    from typer.testing import CliRunner

    from clusterctl.cli import app

    f = str(LOCAL_FIXTURES / "nccl-tests-json" / "a100x8-all-reduce-J-shape-of-util-cu.txt")
    r = CliRunner().invoke(app, ["parse", "nccl-tests", f, "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)["result"]
    # the fixture's largest row: out-of-place bus_bw 231.72 GB/s over 8 ranks
    assert out["format"] == "json" and out["busbw_largest_GBps"] == 231.72 and out["n_ranks"] == 8
    r2 = CliRunner().invoke(app, ["parse", "nccl-tests-json", f, "--json"])
    assert r2.exit_code == 0 and json.loads(r2.stdout)["result"] == out


def test_dcgm_gpu_list_wrapped_onto_the_next_row() -> None:
    """A 16-GPU list does not fit the 48-character Result cell; DCGM wraps it (layout as in the
    3.3.9 capture 'Targeted Power | Pass - GPUs: 0, 2, 3' / '| Fail - GPU: 1', list made longer)."""
    checks.load_all()
    text = ("| Diagnostic                | Result                                         |\n"
            "+-----  Stress  ------------+------------------------------------------------+\n"
            "| Targeted Power            | Pass - GPUs: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,  |\n"
            "|                           | 11, 12, 13                                     |\n"
            "|                           | Fail - GPUs: 14, 15                            |\n")
    data = registry.parse("dcgmi-diag", text)
    assert sorted(r["gpu"] for r in data["results"] if r["status"] == "Pass") == list(range(14))
    found = [f for fn in CHECKS["dcgmi-diag"] for f in fn("n1", data, build({})).findings]
    assert by(found) == [("dcgmi_diag", "n1/gpu14"), ("dcgmi_diag", "n1/gpu15")]
