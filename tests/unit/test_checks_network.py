"""Checks for IB/RoCE port state, QoS, ib_write_bw and link flaps, judged on parsed fixtures."""

from __future__ import annotations

import re

import pytest
from ccparse import registry
from conftest import read_fixture

from clusterctl.analysis import checks
from clusterctl.analysis.checks import linkflap, perftest, ports, qos
from clusterctl.analysis.model import CHECKS, CheckResult, host_status

MB_TO_GBPS = 1048576 * 8 / 1e9
H = "node1"

IBSTAT = ["ibstat/a100-all-active.txt", "ibstat/a100-cx6-ib-hdr-ibpanic.txt", "ibstat/h100-all-active-2.txt",
          "ibstat/h100-cx7-ib-ndr-cx6dx-eth-disabled.txt", "ibstat/h100-cx7-roce-all-active.txt",
          "ibstat/h100-cx7-roce-down-polling.txt"]



def search(pattern: str, text: str, flags: int = 0) -> re.Match[str]:
    """re.search that fails the test when the fixture lacks the pattern."""
    m = re.search(pattern, text, flags)
    assert m is not None, pattern
    return m


def match(pattern: str, text: str) -> re.Match[str]:
    m = re.match(pattern, text)
    assert m is not None, pattern
    return m

def ibstat_ports(text: str) -> list[dict[str, str]]:
    """(name, state, phys, rate, link layer) per CA, read straight off ibstat text."""
    out = []
    for block in re.split(r"(?m)^(?=CA ')", text):
        m = re.match(r"CA '([^']+)'", block)
        if not m:
            continue
        get = {k: search(rf"{k}: (\S+)", block).group(1)
               for k in ("CA type", "State", "Physical state", "Rate", "Link layer")}
        out.append({"name": m.group(1), **get})
    return out


def judge(kind: str, text: str, exp: dict | None = None) -> CheckResult:
    result = CheckResult()
    for fn in CHECKS[kind]:
        r = fn(H, registry.parse(kind, text), exp or {})
        assert isinstance(r, CheckResult)
        result.findings += r.findings
        result.metrics += r.metrics
    return result


def test_checks_are_registered_for_every_port_source() -> None:
    checks.load_all()
    for kind in ("ibstat", "ibstatus", "sysfs-ib", "ibv_devinfo"):
        assert ports.judge_ports in CHECKS[kind]
    assert qos.judge_mlnx_qos in CHECKS["mlnx_qos"]
    assert perftest.judge_ib_write_bw in CHECKS["ib_write_bw"]
    assert linkflap.judge_link_flaps in CHECKS["syslog-linkflap"]


# --- ports ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", IBSTAT)
def test_port_state_findings_are_exactly_the_ports_not_up(name: str) -> None:
    text = read_fixture(name)
    res = judge("ibstat", text)
    bad = {f"{H}/{p['name']}/1" for p in ibstat_ports(text)
           if p["State"] != "Active" or p["Physical state"] != "LinkUp"}
    state = [f for f in res.findings if f.check == "ib_port_state"]
    assert {f.subject for f in state} == bad
    assert all(f.severity == "critical" for f in state)
    # healthy fixtures and the down ones: no rate findings by default (siblings agree)
    assert not [f for f in res.findings if f.check == "ib_port_rate"]


def test_ibpanic_device_is_a_tool_error() -> None:
    text = read_fixture("ibstat/a100-cx6-ib-hdr-ibpanic.txt")
    dev = search(r"ibpanic: .*device '([^']+)'", text).group(1)
    res = judge("ibstat", text)
    (f,) = res.findings
    # severity.yml ib_tool_error.error_line: degraded (the table decides; it was critical before)
    assert (f.check, f.severity, f.subject) == ("ib_tool_error", "warning", f"{H}/{dev}")
    assert host_status(res.findings) == "degraded"
    assert judge("ibstat", text, {"exclude_devices": [dev]}).findings == []


def test_fabric_mismatch_and_excluded_devices() -> None:
    text = read_fixture("ibstat/h100-cx7-ib-ndr-cx6dx-eth-disabled.txt")
    rows = ibstat_ports(text)
    eth = [p["name"] for p in rows if p["Link layer"] == "Ethernet"]
    assert eth
    res = judge("ibstat", text, {"fabric": "infiniband"})
    mism = {f.subject for f in res.findings if f.check == "ib_link_layer"}
    assert mism == {f"{H}/{n}/1" for n in eth}
    # the host has IB rails: its Ethernet (front-end) ports are noted, not judged
    assert {f.severity for f in res.findings if f.check == "ib_link_layer"} == {"info"}
    assert not [f for f in res.findings if f.subject in mism and f.severity != "info"]
    ib_active = [p for p in rows if p["Link layer"] == "InfiniBand" and p["State"] == "Active"]
    exp = {"fabric": "infiniband", "exclude_devices": eth, "rdma_devices_per_node": len(ib_active)}
    assert judge("ibstat", text, exp).findings == []
    res = judge("ibstat", text, {**exp, "rdma_devices_per_node": len(ib_active) + 1})
    (f,) = res.findings
    assert (f.check, f.severity, f.subject) == ("ib_hca_count", "critical", H)
    assert str(len(ib_active)) in f.message


def test_roce_fabric_with_down_ports_counts_active_hcas() -> None:
    text = read_fixture("ibstat/h100-cx7-roce-down-polling.txt")
    rows = ibstat_ports(text)
    active = [p for p in rows if p["State"] == "Active"]
    res = judge("ibstat", text, {"fabric": "roce", "rdma_devices_per_node": len(rows)})
    assert not [f for f in res.findings if f.check == "ib_link_layer"]
    (count,) = [f for f in res.findings if f.check == "ib_hca_count"]
    assert count.message.startswith(f"{len(active)} HCAs")


def test_rate_below_siblings_is_flagged_by_default() -> None:
    text = read_fixture("ibstat/h100-all-active-2.txt")
    rows = ibstat_ports(text)
    victim = next(p for p in rows if p["Link layer"] == "InfiniBand")
    peers = {p["Rate"] for p in rows if p["CA type"] == victim["CA type"] and p["Link layer"] == "InfiniBand"}
    (full,) = peers
    degraded_rate = int(full) * 3 // 4
    block_start = text.index(f"CA '{victim['name']}'")
    i = text.index(f"Rate: {full}", block_start)
    degraded = text[:i] + f"Rate: {degraded_rate}" + text[i + len(f"Rate: {full}"):]
    res = judge("ibstat", degraded)
    (f,) = res.findings
    assert (f.check, f.severity, f.subject) == ("ib_port_rate", "warning", f"{H}/{victim['name']}/1")
    assert f"{degraded_rate:g}" in f.message and full in f.message


def test_explicit_rate_expectation_scalar_and_per_link_layer() -> None:
    text = read_fixture("ibstat/a100-all-active.txt")
    rows = ibstat_ports(text)
    rates = {float(p["Rate"]) for p in rows}
    want = max(rates) * 4  # far above what every port runs at: all critical
    res = judge("ibstat", text, {"ib_rate_gbps": want})
    assert {f.subject for f in res.findings} == {f"{H}/{p['name']}/1" for p in rows}
    assert {f.severity for f in res.findings} == {"critical"}
    res = judge("ibstat", text, {"ib_rate_gbps": {"infiniband": want}})
    assert {f.subject for f in res.findings} == {f"{H}/{p['name']}/1" for p in rows
                                                 if p["Link layer"] == "InfiniBand"}
    assert judge("ibstat", text, {"ib_rate_gbps": min(rates)}).findings == []


def test_ibstatus_and_ibv_devinfo_use_the_same_check() -> None:
    text = read_fixture("ibstatus/azure-ndv4-eth-an0-plus-ib-hdr.txt")
    eth = re.findall(r"device '([^']+)'.*\n(?:.*\n){6}\s+link_layer:\s+Ethernet", text)
    assert eth
    assert judge("ibstatus", text, {"fabric": "infiniband", "exclude_devices": eth,
                                    "rdma_devices_per_node": 1}).findings == []
    res = judge("ibstatus", text, {"fabric": "infiniband"})
    assert {f.subject for f in res.findings} == {f"{H}/{n}/1" for n in eth}
    dv = read_fixture("ibv_devinfo/cx6-dual-port-one-down.txt")
    down = re.findall(r"port:\s+(\d+)\n\s+state:\s+PORT_DOWN", dv)
    assert down
    dev = search(r"hca_id:\s+(\S+)", dv).group(1)
    res = judge("ibv_devinfo", dv)
    assert [f.subject for f in res.findings] == [f"{H}/{dev}/{p}" for p in down]


def test_bad_fabric_expectation_is_refused() -> None:
    with pytest.raises(ValueError, match="fabric"):
        judge("ibstat", read_fixture("ibstat/a100-all-active.txt"), {"fabric": "omnipath"})


# --- qos ------------------------------------------------------------------------------------------


def test_qos_lossless_profile_passes() -> None:
    text = read_fixture("mlnx_qos/trust-dscp-pfc-prio3-setup-trace.txt")
    assert qos.DEFAULT_TRUST in text and qos.DEFAULT_PFC_PRIORITY == 3
    assert judge("mlnx_qos", text).findings == []


def test_qos_wrong_trust_and_pfc_priority() -> None:
    text = read_fixture("mlnx_qos/trust-pcp-pfc-prio4-ets.txt")
    trust = search(r"Priority trust state: (\S+)", text).group(1)
    prio = search(r"priority((?:\s+\d)+)\n\s*enabled((?:\s+\d)+)", text)
    enabled = [int(p) for p, e in zip(prio.group(1).split(), prio.group(2).split(), strict=True) if e == "1"]
    assert trust != "dscp" and 3 not in enabled
    res = judge("mlnx_qos", text, {"pfc_priority": 3})
    got = sorted((f.check, f.severity) for f in res.findings)
    # severity.yml: qos_pfc.off failed, qos_pfc.extra_priorities and qos_trust.pcp degraded
    assert got == [("qos_pfc", "critical"), ("qos_pfc", "warning"), ("qos_trust", "warning")]
    # without an inventory the one PFC-enabled priority is the site's lossless priority: the trust state is judged
    assert [(f.check, f.severity) for f in judge("mlnx_qos", text).findings] == [("qos_trust", "warning")]
    assert all(f.subject == H for f in res.findings)  # no interface named in this capture
    res = judge("mlnx_qos", text, {"qos_trust": trust, "pfc_priority": enabled[0]})
    assert res.findings == []


def test_qos_subject_names_interface() -> None:
    one = read_fixture("mlnx_qos/trust-pcp-pfc-prio4-ets.txt").split("\n", 1)[1]
    res = judge("mlnx_qos", f"# interface: ens6f0np0\n{one}")
    assert {f.subject for f in res.findings} == {f"{H}/ens6f0np0"}


# --- perftest -------------------------------------------------------------------------------------


def top_row(text: str) -> tuple[int, float]:
    rows = [ln.split() for ln in text.splitlines() if re.match(r"^\s*\d+\s+\d+\s+[\d.]+\s+[\d.]+", ln)]
    size = max(int(r[0]) for r in rows)
    avg = next(float(r[3]) for r in rows if int(r[0]) == size)
    return size, avg * (MB_TO_GBPS if "BW average[MB/sec]" in text else 1.0)


def test_ib_write_bw_metric_and_pass_at_hdr_line_rate() -> None:
    text = read_fixture("ib_write_bw/superbench-hdr-loopback-all-sizes-MBps.txt")
    _, gbps = top_row(text)
    dev = search(r"Device\s+:\s+(\S+)", text).group(1)
    res = judge("ib_write_bw", text, {"ib_rate_gbps": 200})
    assert res.findings == []
    (m,) = res.metrics
    assert (m.name, m.subject, m.unit) == ("ib_write_bw_Gbps", f"{dev}/{perftest.DEFAULT_IB_PORT}", "Gb/s")
    assert m.value == pytest.approx(gbps, rel=1e-6)


def test_ib_write_bw_below_fraction() -> None:
    text = read_fixture("ib_write_bw/superbench-hdr-loopback-all-sizes-MBps.txt")
    _, gbps = top_row(text)
    # line rate such that the result is just under the default fraction -> warning
    rate = gbps / (perftest.DEFAULT_MIN_FRACTION - 0.01)
    (f,) = judge("ib_write_bw", text, {"ib_rate_gbps": rate}).findings
    assert (f.check, f.severity) == ("ib_write_bw", "warning")
    # under half of the line rate -> critical
    (f,) = judge("ib_write_bw", text, {"ib_rate_gbps": gbps * 2.5}).findings
    assert f.severity == "critical"
    # the fraction is an expectation too
    assert judge("ib_write_bw", text, {"ib_rate_gbps": rate, "ib_write_bw_min_fraction": 0.5}).findings == []


def test_ib_write_bw_rate_mapping_by_link_type_and_no_rate() -> None:
    text = read_fixture("ib_write_bw/ndr-duration-gbits.txt")
    _, gbps = top_row(text)
    other = judge("ib_write_bw", text, {"ib_rate_gbps": {"ethernet": gbps * 10}}).findings
    assert [f.severity for f in other] == ["info"]  # no rate for its link type: read against the standard rate (a note)
    (f,) = judge("ib_write_bw", text, {"ib_rate_gbps": {"infiniband": gbps * 1.5}}).findings
    assert f.severity == "warning"
    res = judge("ib_write_bw", text)
    # no line rate: 379.27 Gb/s at 1 MiB is 95% of 400 Gb/s, the standard rate just above it: read as an NDR port at
    # line rate (a note naming the rate it assumed, not "cannot judge"; session 32)
    assert [f for f in res.findings if f.severity != "info"] == [] and res.metrics[0].value == pytest.approx(gbps)
    assert [("of 400 Gb/s" in f.message, "set ib_rate_gbps" in f.message) for f in res.findings] == [(True, True)]
    # far below even the next standard rate: judged (a lower bound of the shortfall)
    low = text.replace("379.27", "150.00")
    assert [f.severity for f in judge("ib_write_bw", low).findings] == ["warning"]


# --- link flaps -----------------------------------------------------------------------------------


def test_link_flaps_critical_and_warning() -> None:
    text = read_fixture("syslog/aznhc-ib6-lost-carrier-6-flaps.txt")
    iface = search(r" (\w+): lost carrier", text).group(1)
    n = text.count(f"{iface}: lost carrier")
    (f,) = judge("syslog-linkflap", text).findings
    assert (f.severity, f.subject) == ("critical" if n >= linkflap.DEFAULT_FLAP_CRITICAL else "warning",
                                       f"{H}/{iface}")
    assert str(n) in f.message
    assert judge("syslog-linkflap", text, {"link_flap_critical": n + 1}).findings[0].severity == "warning"
    assert judge("syslog-linkflap", text, {"link_flap_warning": n + 1, "link_flap_critical": n + 2}).findings == []
    assert judge("syslog-linkflap", text, {"exclude_interfaces": [iface]}).findings == []


def test_link_flaps_kernel_driver_and_bond() -> None:
    text = read_fixture("syslog/kernel-mlx5-bond-slave-flaps.txt")
    downs = re.findall(r" (\w+): Link down", text)
    res = judge("syslog-linkflap", text)
    want = {}
    for name in set(downs):
        c = downs.count(name)
        want[f"{H}/{name}"] = "critical" if c >= linkflap.DEFAULT_FLAP_CRITICAL else "warning"
    assert {f.subject: f.severity for f in res.findings} == want
    assert host_status(res.findings) == ("failed" if "critical" in want.values() else "degraded")
