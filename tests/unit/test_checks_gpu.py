"""GPU and NCCL checks on parsed fixtures (through the same parser -> check path as ``clusterctl analyze``)."""

from __future__ import annotations

from typing import Any

from ccparse import registry
from conftest import read_fixture

from clusterctl.analysis import checks
from clusterctl.analysis.checks import nccl as nccl_checks
from clusterctl.analysis.expectations import build
from clusterctl.analysis.model import CHECKS, CheckResult, Finding

checks.load_all()


def run(kind: str, rel: str, **spec: Any) -> CheckResult:
    data = registry.parse(kind, read_fixture(rel))
    total = CheckResult()
    for fn in CHECKS[kind]:
        out = fn("n1", data, build(spec))
        assert isinstance(out, CheckResult)
        total.findings += out.findings
        total.metrics += out.metrics
    return total


def by(findings: list[Finding], severity: str | None = None) -> list[tuple[str, str]]:
    return [(f.check, f.subject) for f in findings if severity is None or f.severity == severity]


# --- GPU ---------------------------------------------------------------------------------------------

def test_healthy_full_reports_have_no_findings() -> None:
    for rel in ("nvidia-smi-q/a100x8-460.32.03-full.txt", "nvidia-smi-q/rtx4090x8-535.154.05-full.txt",
                "h200-live/nvidia-smi-q-h200-580.159.04.txt"):
        exp_n = 1 if "h200" in rel else 8
        found = run("nvidia-smi-q", rel, gpus_per_node=exp_n).findings
        # the A100 capture has 'Persistence Mode : Disabled' on all 8 GPUs: a note (info) per GPU
        assert [f for f in found if f.check != "gpu_persistence"] == [], rel
        want = [("gpu_persistence", f"n1/gpu{i}") for i in range(8)] if "a100" in rel else []
        assert by(found) == want, rel


def test_idle_gen1_is_not_degraded_but_busy_gen1_is() -> None:
    assert run("nvidia-smi-query", "nvidia-smi-query/pcie-l40sx8-idle-gen1-not-degraded.txt").findings == []
    # the same link state on a busy GPU is judged
    data = registry.parse("nvidia-smi-query", "index, utilization.gpu [%], pcie.link.gen.current, pcie.link.gen.max, "
                          "pcie.link.width.current, pcie.link.width.max\n0, 95 %, 1, 4, 16, 16\n1, 0 %, 4, 4, 8, 16\n")
    out = CHECKS["nvidia-smi-query"][0]("n1", data, build())
    assert isinstance(out, CheckResult)
    assert [(f.subject, f.severity) for f in out.findings] == [("n1/gpu0", "warning"), ("n1/gpu1", "warning")]
    assert "Gen1 under load" in out.findings[0].message and "x8" in out.findings[1].message


def test_throttle_hw_power_brake_and_sw_thermal_are_degraded() -> None:
    # severity.yml gpu_throttle.hw_slowdown: the node runs, slower (issue 29: severity is the action)
    res = run("nvidia-smi-q", "nvidia-smi-q/h100x8-535.183.01-full-sw-thermal-active.txt", gpus_per_node=8)
    assert by(res.findings, "critical") == []
    assert by(res.findings, "warning") == [("gpu_throttle", "n1/gpu2"), ("gpu_throttle", "n1/gpu2")]
    assert "hw_power_brake_slowdown" in res.findings[0].message and "00000000:75:00.0" in res.findings[0].message


def test_remap_pending_and_sram_uncorrectable_critical() -> None:
    res = run("nvidia-smi-q", "nvidia-smi-q/a100-xid63-dram-correctable-177-remap-pending-excerpt.txt", gpus_per_node=8)
    assert by(res.findings) == [("gpu_row_remap", "n1/gpu0")]  # 'Attached GPUs : 8' = gpus_per_node
    res = run("nvidia-smi-q", "nvidia-smi-q/sram-uncorrectable-1-aggregate-5-excerpt.txt")
    assert [(f.check, f.severity) for f in res.findings] == [("gpu_ecc", "critical")]
    assert "SRAM 1" in res.findings[0].message


def test_retired_pages_pending_and_rma_limit() -> None:
    res = run("nvidia-smi-q", "nvidia-smi-q/aznhc-v100-page-retirement-table-full-test-data.txt")
    # pending on GPUs 1, 3, 5, 7; GPU 0 has 60 + 5 = 65 retired pages >= 64
    assert by(res.findings, "critical") == [("gpu_retired_pages", f"n1/gpu{i}") for i in (0, 1, 3, 5, 7)]


def test_old_layout_double_bit_and_gpu_count() -> None:
    res = run("nvidia-smi-q", "nvidia-smi-q/v100-bit-count-ecc-layout-double-bit-2-hand-written.txt", gpus_per_node=8)
    assert by(res.findings, "critical") == [("gpu_count", "n1"), ("gpu_ecc", "n1/gpu0"),
                                            ("gpu_retired_pages", "n1/gpu0")]


def test_nvswitch_fabric_state() -> None:
    text = read_fixture("nvidia-smi-q/h100x8-535.183.01-full-sw-thermal-active.txt")
    ok = "        State                             : Completed\n        Status                            : Success\n"
    assert text.count(ok) == 8
    for state, status in (("In Progress", "N/A"), ("Completed", "Failure")):
        bad = (f"        State                             : {state}\n"
               f"        Status                            : {status}\n")
        data = registry.parse("nvidia-smi-q", text.replace(ok, bad, 1))
        out = CHECKS["nvidia-smi-q"][0]("n1", data, build())
        assert isinstance(out, CheckResult)
        assert [(f.subject, f.severity) for f in out.findings if f.check == "gpu_fabric"] == [("n1/gpu0", "critical")]


def test_lost_gpu_is_critical() -> None:
    lost = "Unable to determine the device handle for GPU0000:07:00.0: Unknown Error\n"
    for kind in ("nvidia-smi", "nvidia-smi-q", "nvidia-smi-query"):
        out = CHECKS[kind][0]("n1", registry.parse(kind, lost), build({"gpus_per_node": 8}))
        assert isinstance(out, CheckResult)
        assert [(f.check, f.severity, f.subject) for f in out.findings] == [
            ("gpu_count", "critical", "n1"), ("gpu_lost", "critical", "n1/00000000:07:00.0")], kind
        assert "Unknown Error" in out.findings[1].message


def test_table_inforom_corrupted_and_count() -> None:
    res = run("nvidia-smi", "nvidia-smi/v100x8-table-inforom-corrupted.txt", gpus_per_node=8)
    # the fixture's Persistence-M column reads Off on all 8 V100s: a note per GPU, besides the InfoROM
    assert by(res.findings, "critical") == [("gpu_inforom", "n1/gpu7")]
    assert by(res.findings, "warning") == []
    assert by(res.findings, "info") == [("gpu_persistence", f"n1/gpu{i}") for i in range(8)]
    assert run("nvidia-smi", "nvidia-smi/h100x8-550.90.07-table.txt", gpus_per_node=8).findings == []
    missing = run("nvidia-smi", "nvidia-smi/h100x8-550.90.07-table.txt", gpus_per_node=16).findings
    assert [(f.check, f.severity) for f in missing] == [("gpu_count", "critical")]


def test_q_and_query_word_findings_identically() -> None:
    q = registry.parse("nvidia-smi-q", read_fixture("nvidia-smi-q/h100x8-535.183.01-full-sw-thermal-active.txt"))
    csv = registry.parse("nvidia-smi-query", "index, pci.bus_id, temperature.gpu, clocks_event_reasons.sw_power_cap, "
                         "clocks_event_reasons.hw_power_brake_slowdown, clocks_event_reasons.sw_thermal_slowdown\n"
                         "2, 00000000:75:00.0, 39, Active, Active, Active\n")
    fq = [f for f in CHECKS["nvidia-smi-q"][0]("n1", q, build()).findings]  # type: ignore[union-attr]
    fc = [f for f in CHECKS["nvidia-smi-query"][0]("n1", csv, build()).findings]  # type: ignore[union-attr]
    assert fq == fc


def test_nvlink_inactive_and_none() -> None:
    res = run("nvidia-smi-nvlink", "nvidia-smi-nvlink/v100x8-nvlink-status-inactive-links.txt", gpus_per_node=8)
    assert by(res.findings, "critical") == [("gpu_nvlink", f"n1/gpu{i}") for i in (3, 4, 5, 6)]
    assert by(res.findings, "warning") == [("gpu_nvlink", "n1")]  # 7 GPUs listed, 8 expected
    assert "3, 5 inactive (4 of 6 active)" in res.findings[0].message
    live = run("nvidia-smi-nvlink", "h200-live/nvidia-smi-nvlink-live-580.159.04.txt")
    assert [(f.severity, f.check) for f in live.findings] == [("info", "gpu_nvlink")]
    want = run("nvidia-smi-nvlink", "h200-live/nvidia-smi-nvlink-live-580.159.04.txt", nvlink_links_per_gpu=18)
    assert [f.severity for f in want.findings] == ["critical"]


def test_nvlink_all_links_inactive() -> None:
    dark = ("GPU 0: NVIDIA B200 (UUID: GPU-aaa)\n\t Link 0: 53.125 GB/s\n\t Link 1: 53.125 GB/s\n"
            "GPU 1: NVIDIA B200 (UUID: GPU-bbb)\n"
            "NVML: Unable to retrieve NVLink information as all links are inActive\n")

    def judge(text: str, **spec: Any) -> list[tuple[str, str]]:
        out = CHECKS["nvidia-smi-nvlink"][0]("n1", registry.parse("nvidia-smi-nvlink", text), build(spec))
        assert isinstance(out, CheckResult)
        return [(f.severity, f.subject) for f in out.findings]

    assert judge(dark) == [("critical", "n1/gpu1")]  # its peer has links: this GPU lost all of them
    pcie = ("GPU 0: NVIDIA L40S (UUID: GPU-a)\nNVML: Unable to retrieve NVLink information as all links are inActive\n"
            "GPU 1: NVIDIA L40S (UUID: GPU-b)\nNVML: Unable to retrieve NVLink information as all links are inActive\n")
    assert judge(pcie) == [("info", "n1")]  # no GPU has NVLink: PCIe cards
    assert judge(pcie, nvlink_links_per_gpu=4) == [("critical", "n1/gpu0"), ("critical", "n1/gpu1")]


def test_topo_nvlink_pattern_and_nic_locality() -> None:
    assert run("nvidia-smi-topo", "nvidia-smi-topo/h100x8-nv18-space-aligned-no-nics.txt").findings == []
    assert run("nvidia-smi-topo", "nvidia-smi-topo/h100x8-8nic-tab-free-with-nic-legend.txt").findings == []
    # one GPU, no NIC (the live H200 VM): no pair to judge, said as coverage (session 18)
    assert [(f.check, f.severity) for f in run("nvidia-smi-topo", "h200-live/nvidia-smi-topo-live-580.159.04.txt")
            .findings] == [("coverage", "info")]
    # GPU3's row and column: NV18 to GPU5 lost (SYS)
    text = read_fixture("nvidia-smi-topo/h100x8-nv18-space-aligned-no-nics.txt").splitlines(keepends=True)
    row = next(i for i, ln in enumerate(text) if ln.startswith("GPU3 "))
    row5 = next(i for i, ln in enumerate(text) if ln.startswith("GPU5 "))
    cells3, cells5 = text[row].split(), text[row5].split()
    assert cells3[6] == "NV18" and cells5[4] == "NV18"  # GPU3 -> GPU5, GPU5 -> GPU3
    text[row] = " ".join([*cells3[:6], "SYS", *cells3[7:]]) + "\n"
    text[row5] = " ".join([*cells5[:4], "SYS", *cells5[5:]]) + "\n"
    data = registry.parse("nvidia-smi-topo", "".join(text))
    out = CHECKS["nvidia-smi-topo"][0]("n1", data, build())
    assert isinstance(out, CheckResult)
    assert [(f.subject, f.severity) for f in out.findings] == [("n1/gpu3", "warning"), ("n1/gpu5", "warning")]
    assert "GPU5 SYS" in out.findings[0].message and "NV18" in out.findings[0].message
    # GPU7's own NIC (NIC7, PIX) seen behind the host bridge instead (NODE): no NIC on its switch
    nic = read_fixture("nvidia-smi-topo/h100x8-8nic-tab-free-with-nic-legend.txt")
    row7 = ("GPU7    NV18    NV18    NV18    NV18    NV18    NV18    NV18     X      SYS     SYS     SYS     SYS"
            "     NODE    NODE    NODE    PIX ")
    assert row7 in nic
    data = registry.parse("nvidia-smi-topo", nic.replace(row7, row7.replace("PIX ", "NODE")))
    out = CHECKS["nvidia-smi-topo"][0]("n1", data, build())
    assert isinstance(out, CheckResult)
    assert [(f.subject, f.severity) for f in out.findings] == [("n1/gpu7", "warning")]
    assert "no NIC on its PCIe switch" in out.findings[0].message and "7 of 8" in out.findings[0].message


def test_lspci_width_for_gpus_speed_for_nics() -> None:
    res = run("lspci", "lspci/h100-sxm5-cx7-hand-assembled-one-gpu-x8.txt")
    assert by(res.findings) == [("pcie_link", "n1/0000:2a:00.0"), ("pcie_link", "n1/0000:18:00.0")]
    # the idle GPU 3a:00.0 at 2.5 GT/s is not flagged


def test_dcgmi_every_gpu() -> None:
    res = run("dcgmi-diag", "dcgmi-diag/json-dcgm-legacy-per-gpu-nvidia-sample.txt")
    assert by(res.findings, "critical") == [("dcgmi_diag", f"n1/gpu{i}") for i in (0, 2, 3)]
    res = run("dcgmi-diag", "dcgmi-diag/text-dcgm3-3.3.8-h100x8-gpu-memory-fail-cuinit.txt")
    assert by(res.findings, "critical") == [("dcgmi_diag", f"n1/gpu{i}") for i in range(8)]
    res = run("dcgmi-diag", "dcgmi-diag/json-dcgm4-entity-results-gpu2-memory-fail.txt")
    assert [(f.subject, f.severity) for f in res.findings] == [("n1/gpu2", "critical"), ("n1/gpu1", "warning")]
    res = run("dcgmi-diag", "dcgmi-diag/json-dcgm3-format-persistence-fail-env-warn-gcm.txt")
    assert [(f.subject, f.severity) for f in res.findings] == [("n1", "critical"), ("n1", "warning")]
    assert run("dcgmi-diag", "dcgmi-diag/text-dcgm4-4.0.0-user-guide-r3-4gpu-pass.txt").findings == []


# --- NCCL --------------------------------------------------------------------------------------------

def test_healthy_runs_pass_default_floors_and_emit_metric() -> None:
    cases = {"nccl-tests/a100x8-single-node-all-reduce-gcm.txt": 231.72,
             "nccl-tests/a100x8-2node-pairwise-all-reduce-gcm.txt": 182.8,
             "nccl-tests/h100x16-2node-a3mega-all-reduce-8B-8G.txt": 338.82,
             "nccl-tests/superbench-a100x8-old-format-with-nccl-info-interleaved.txt": 235.26}
    for rel, busbw in cases.items():
        res = run("nccl-tests", rel, fabric="infiniband")
        assert [(f.check, f.severity) for f in res.findings] == [("nccl_busbw", "info")], rel
        assert f"{busbw:.1f} GB/s busbw" in res.findings[0].message and "of the" in res.findings[0].message
        assert [(m.name, m.subject, m.value) for m in res.metrics] == [("nccl_busbw_GBps", "all_reduce", busbw)]


def test_floor_judged_at_largest_size_not_average() -> None:
    # a3-mega: Avg bus bandwidth 70.742 but 338.82 at 8 GiB; a 100 GB/s floor passes
    ok = run("nccl-tests", "nccl-tests/h100x16-2node-a3mega-all-reduce-8B-8G.txt", nccl_busbw_floor_GBps=100)
    assert [f.severity for f in ok.findings] == ["info"] and "339% of the 100 GB/s floor" in ok.findings[0].message
    res = run("nccl-tests", "nccl-tests/a100x8-single-node-all-reduce-gcm.txt", nccl_busbw_floor_GBps=300)
    assert [(f.check, f.severity) for f in res.findings] == [("nccl_busbw", "warning")]
    assert "231.7 GB/s busbw at 1073741824 B" in res.findings[0].message and "77%" in res.findings[0].message
    assert "model algbw x 2(n-1)/n = 231.7" in res.findings[0].message  # 132.41 x 14/8
    res = run("nccl-tests", "nccl-tests/a100x8-single-node-all-reduce-gcm.txt", nccl_busbw_floor_GBps=500)
    assert res.findings[0].severity == "critical"


def test_floor_table_documents_fixture_values() -> None:
    assert nccl_checks.BUSBW_FLOORS[("A100", "intra")] <= 231.72 * 0.86
    assert nccl_checks.BUSBW_FLOORS[("A100", "inter")] <= 182.8 * 0.86
    assert nccl_checks.BUSBW_FLOORS[("H100", "inter")] <= 338.82 * 0.86
    assert nccl_checks.model_family("NVIDIA H100 80GB HBM3") == "H100"
    assert nccl_checks.model_family("A100-SXM4-40GB") == "A100"


def test_wrong_elements_critical() -> None:
    text = read_fixture("nccl-tests/a100x8-single-node-all-reduce-gcm.txt").replace(
        "8109.1  132.41  231.72      0", "8109.1  132.41  231.72      3")
    data = registry.parse("nccl-tests", text)
    out = CHECKS["nccl-tests"][0]("n1", data, build())
    assert isinstance(out, CheckResult)
    assert [(f.check, f.severity) for f in out.findings if f.severity != "info"] == [("nccl_wrong", "critical")]


def test_single_rank_h200_is_information() -> None:
    # busbw 0.00 on one rank: nothing judgeable by this capture alone (session 30: a coverage note, as two corpus
    # labels read such a run; the host stays healthy beside its other evidence, test_h200_live)
    res = run("nccl-tests", "h200-live/all_reduce_perf-1xh200-nccl-2.28.9.txt")
    assert [(f.check, f.severity) for f in res.findings] == [("coverage", "info")]
    assert "single rank" in res.findings[0].message and "2121.6" in res.findings[0].message and res.metrics == []


def test_nccl_log_transport() -> None:
    live = run("nccl-log", "h200-live/nccl-log-live-580.159.04.txt")
    assert [(f.check, f.severity) for f in live.findings] == [("nccl_transport", "info"), ("nccl_busbw", "info")]
    assert "nRanks 1" in live.findings[1].message
    eth = run("nccl-log", "h200-live/nccl-log-live-580.159.04.txt", fabric="ethernet")
    assert [f.severity for f in eth.findings] == ["info", "info"] and "fabric ethernet" in eth.findings[0].message
    ib = run("nccl-log", "h200-live/nccl-log-live-580.159.04.txt", fabric="infiniband")
    assert [(f.check, f.severity) for f in ib.findings] == [("nccl_transport", "critical"), ("nccl_busbw", "info")]
    assert "No device found" in ib.findings[0].message
    roce = run("nccl-log", "nccl-log/roce-2node-16rank-nccl-2.27.5-gdrdma-excerpt.txt", fabric="roce")
    assert roce.findings == []
    wrong = run("nccl-log", "nccl-log/roce-2node-16rank-nccl-2.27.5-gdrdma-excerpt.txt", fabric="infiniband")
    assert [(f.check, f.severity) for f in wrong.findings] == [("nccl_transport", "warning")]


def test_socket_fallback_and_gdr_off_multi_node() -> None:
    sock = ("a:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
            "a:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
            "a:1:1 [0] NCCL INFO Using network Socket\n"
            "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
            "a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0\n")
    out = CHECKS["nccl-log"][0]("n1", registry.parse("nccl-log", sock), build({"fabric": "infiniband"}))
    assert isinstance(out, CheckResult)
    assert [(f.check, f.severity) for f in out.findings] == [("nccl_transport", "critical")]
    assert "fell back to sockets" in out.findings[0].message
    # one node, IB plugin not used (e.g. NCCL_IB_DISABLE=1) on an InfiniBand node: still critical
    one = sock.replace("nRanks 16 nNodes 2 localRanks 8", "nRanks 8 nNodes 1 localRanks 8") \
        .replace("via NET/Socket/0", "via P2P/IPC")
    out = CHECKS["nccl-log"][0]("n1", registry.parse("nccl-log", one), build({"fabric": "infiniband"}))
    assert isinstance(out, CheckResult)
    assert [(f.check, f.severity) for f in out.findings] == [("nccl_transport", "critical")]
    assert "single-node run" in out.findings[0].message
    nogdr = sock.replace("NET/Socket : Using [0]eth0:10.0.0.1<0>", "NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB eth0") \
        .replace("Using network Socket", "Using network IB").replace("via NET/Socket/0", "via NET/IB/0") \
        + "a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
    out = CHECKS["nccl-log"][0]("n1", registry.parse("nccl-log", nogdr), build({"fabric": "infiniband"}))
    assert isinstance(out, CheckResult)
    assert [(f.check, f.severity) for f in out.findings] == [("nccl_gdr", "warning")]


def test_json_result_judged_like_text() -> None:
    res = run("nccl-tests-json", "nccl-tests-json/a100x8-all-reduce-J-shape-of-util-cu.txt")
    assert [f.severity for f in res.findings] == ["info"] and res.metrics[0].value == 231.72
