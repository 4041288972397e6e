"""Every network KIND that carries a state is judged, whichever tool reported it (issue 14 item 3).

Inputs are corpus captures (tests/corpus/network, source on each file's header; held-out files
are not used here). Expected subjects and verdicts come from reading those texts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from conftest import judge_text

from clusterctl.analysis.model import Finding

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench_corpus  # noqa: E402

H = "n1"


def corpus(rel: str) -> str:
    assert rel not in bench_corpus.load_holdout("network"), "held-out files are not used by unit tests"
    return bench_corpus.read_capture(bench_corpus.CORPUS / "network" / rel)


def judge(kind: str, text: str, spec: dict[str, Any] | None = None) -> list[Finding]:
    return judge_text(kind, text, spec, H)


def bad(findings: list[Finding]) -> set[tuple[str, str, str]]:
    return {(f.check, f.severity, f.subject) for f in findings if f.severity != "info"}


def test_ibstat_down_polling_and_disabled_rails_are_critical_and_named() -> None:
    # mlx5_11: State Down / Physical state Polling; mlx5_5: Down / Disabled (both ConnectX-7 400G)
    got = bad(judge("ibstat", corpus("ibstat/gpud-h100-roce-two-rails-down.txt"), {"fabric": "roce"}))
    assert got == {("ib_port_state", "critical", f"{H}/mlx5_11/1"), ("ib_port_state", "critical", f"{H}/mlx5_5/1")}


def test_ibstat_port_without_rate_lines_still_judged() -> None:
    # the paste ends after 'Physical state: Disabled'
    got = bad(judge("ibstat", corpus("ibstat/gpud-pr99-cx6dx-down-disabled.txt")))
    assert got == {("ib_port_state", "critical", f"{H}/mlx5_8/1")}


def test_front_end_ethernet_ports_of_an_ib_host_are_noted_not_failed() -> None:
    findings = judge("ibstat", corpus("ibstat/gpud-h100-ndr-frontend-eth-down.txt"), {"fabric": "infiniband"})
    assert bad(findings) == set()
    assert {f.subject for f in findings if f.check == "ib_link_layer"} == {f"{H}/mlx5_{i}/1" for i in (1, 2, 7, 8)}


def test_rate_against_spec() -> None:
    text = corpus("ibstat/gpud-h100-roce-8x400-4x100-active.txt")
    assert bad(judge("ibstat", text, {"fabric": "roce"})) == set()  # each model at its siblings' rate
    got = bad(judge("ibstat", text, {"fabric": "roce", "ib_rate_gbps": 400}))
    # the four ConnectX-6 Dx ports run at 100 of 400: under half, critical
    assert {s for _, sev, s in got if sev == "critical"} == {f"{H}/mlx5_{i}/1" for i in (1, 2, 7, 8)}


def test_ibv_devinfo_grepd_state_lines_judged() -> None:
    got = bad(judge("ibv_devinfo", corpus("ibv_devinfo/idx65979240348-grep-excerpt-bf3-down-linkup.txt")))
    assert {s for _, _, s in got} == {f"{H}/mlx5_0/1", f"{H}/mlx5_1/1"}


def test_ibdev2netdev_down_netdev_is_a_down_rail_except_ipoib_on_ib() -> None:
    got = bad(judge("ibdev2netdev", corpus("ibdev2netdev/sriov-op-382-pod-prompt-vf-down.txt")))
    assert got == {("rdma_netdev_link", "critical", f"{H}/mlx5_3/1")}
    text = corpus("ibdev2netdev/imbue-health-4-column-comments.txt")
    assert bad(judge("ibdev2netdev", text, {"fabric": "infiniband"})) == set()
    assert len(bad(judge("ibdev2netdev", text, {"fabric": "roce"}))) == 10  # 10 of the 12 are (Down)


def test_mtu_against_spec() -> None:
    text = corpus("ip-link/kubeovn-4254-grep-mtu-bond-slave-1500-truncated.txt")
    got = bad(judge("ip-link", text, {"mtu": 9000, "rdma_netdevs": ["ens5f0", "ens5f1"]}))
    assert got == {("mtu", "critical", f"{H}/ens5f0")}  # ens5f0 1500, ens5f1 9000 (severity.yml mtu.below_expected)


def test_roce_v2_gid_presence() -> None:
    got = bad(judge("show_gids", corpus("show_gids/idx3219920117-roce-link-local-only-plus-ib.txt"),
                    {"fabric": "roce"}))
    assert ("roce_v2_gid", "critical", f"{H}/mlx5_0/1") in got  # only fe80:: link-local GIDs
    assert bad(judge("show_gids", corpus("show_gids/k8s-rdma-sriov-30-pod-no-gids.txt"), {"fabric": "roce"})) == {
        ("roce_v2_gid", "critical", H)}  # n_gids_found=0
    # IPv6-only fabric: routable fd93:: v2 GIDs count; the cut last device is not judged
    text = corpus("show_gids/mooncake-1617-amd-ionic-ipv6-truncated.txt")
    assert bad(judge("show_gids", text, {"fabric": "roce"})) == set()
    assert bad(judge("show_gids", text, {"fabric": "infiniband"})) == set()


def test_qos_trust_and_pfc_from_mlnx_qos_and_dcb() -> None:
    got = bad(judge("mlnx_qos", corpus("mlnx_qos/idx41001320304-set-trust-pcp-buffer-row.txt")))
    assert got == {("qos_trust", "warning", f"{H}/ens14f0")}  # trust pcp, PFC on 3 (severity.yml qos_trust.pcp)
    # an excerpt that shows only the PFC table: trust not judged, PFC 3 only is right
    assert bad(judge("mlnx_qos", corpus("mlnx_qos/mellanox-doc2792-pfc-only-elided.txt"))) == set()
    talos = corpus("dcb/idx70693688536-talos-log-oneline-dscp-app.txt")
    assert bad(judge("dcb", talos)) == set()
    off = talos.replace("3:on", "3:off").replace("6:off", "6:on")
    assert bad(judge("dcb", off, {"pfc_priority": 3})) == {("qos_pfc", "critical", f"{H}/enp1s0f0np0"),
                                                           ("qos_pfc", "warning", f"{H}/enp1s0f0np0")}
    # without the inventory's pfc_priority, PFC on one priority (6) is the site's lossless priority
    assert bad(judge("dcb", off)) == set()


def test_pcie_width_of_a_nic_from_lspci() -> None:
    text = corpus("lspci/gpud-h100-dell-vvv-all-ok.txt")
    assert bad(judge("lspci", text)) == set()
    block = text.index("1a:00.0 Ethernet controller: Mellanox")
    sta = text.index("LnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)", block)
    narrowed = text[:sta] + "LnkSta:\tSpeed 32GT/s (ok), Width x8 (downgraded)" + text[sta + 42:]
    assert bad(judge("lspci", narrowed)) == {("pcie_link", "warning", f"{H}/0000:1a:00.0")}


def test_perftest_duration_mode_against_line_rate() -> None:
    text = corpus("ib_write_bw/scc24-bnxt-prompt-D10-q3-rdmacm.txt")  # 363.47 Gb/s, -D 10
    assert bad(judge("ib_write_bw", text, {"ib_rate_gbps": 400})) == set()  # 91 % of 400
    got = bad(judge("ib_write_bw", text, {"ib_rate_gbps": 800}))
    assert got == {("ib_write_bw", "critical", f"{H}/bnxt_re0/1")}  # 45 % of 800
