"""Parsers for IB/RoCE/network/Slurm text outputs, checked against values read off the fixtures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ccparse import registry
from ccparse.common import ParseError
from conftest import FIXTURES, LOCAL_FIXTURES, read_fixture

MB_TO_GBPS = 1048576 * 8 / 1e9  # perftest MB/sec is 2^20 bytes/s

MY_KINDS = ["ibstat", "ibstatus", "ibv_devinfo", "ibdev2netdev", "show_gids", "mlnx_qos", "ip-link",
            "ib_write_bw", "syslog-linkflap", "sinfo", "scontrol-node", "sdiag"]
#: KIND -> fixture folder name (shared and local)
FOLDER = {"syslog-linkflap": "syslog", "scontrol-node": "scontrol-node"}



def search(pattern: str, text: str, flags: int = 0) -> re.Match[str]:
    """re.search that fails the test when the fixture lacks the pattern."""
    m = re.search(pattern, text, flags)
    assert m is not None, pattern
    return m


def match(pattern: str, text: str) -> re.Match[str]:
    m = re.match(pattern, text)
    assert m is not None, pattern
    return m

def fixtures_of(kind: str) -> list[str]:
    folder = FOLDER.get(kind, kind)
    out = []
    for base in (FIXTURES, LOCAL_FIXTURES):
        d = base / folder
        if d.is_dir():
            out += [f"{folder}/{p.name}" for p in sorted(d.glob("*.txt"))]
    return out


def drop_lines(obj: object) -> object:
    """The parse without ``line`` keys (line numbers shift by one without the source line)."""
    if isinstance(obj, dict):
        return {k: drop_lines(v) for k, v in obj.items() if k != "line"}
    if isinstance(obj, list):
        return [drop_lines(v) for v in obj]
    return obj


def without_source(text: str) -> str:
    assert text.startswith("# source:")
    return text.split("\n", 1)[1]


def blocks(text: str, start: str) -> list[str]:
    """Split text into blocks each beginning with a line matching ``start``."""
    parts = re.split(rf"(?m)^(?={start})", text)
    return [p for p in parts if re.match(start, p)]


def field(block: str, key: str) -> str:
    m = search(rf"(?m)^\s*{re.escape(key)}:\s*(.*?)\s*$", block)
    assert m, key
    return m.group(1)


# --- every KIND: fixtures parse, with and without the source line; garbage/empty raise -----------


@pytest.mark.parametrize("kind", MY_KINDS)
def test_each_kind_has_fixtures_and_source_line_is_optional(kind: str) -> None:
    names = fixtures_of(kind)
    assert names, f"no fixture for {kind}"
    for name in names:
        text = read_fixture(name)
        with_src = registry.parse(kind, text)
        assert drop_lines(with_src) == drop_lines(registry.parse(kind, without_source(text))), name


@pytest.mark.parametrize("kind", MY_KINDS)
@pytest.mark.parametrize("text", ["", "\n\n", "hello world\nthis is not tool output\n", "\x00\x01garbage{}"])
def test_garbage_and_empty_raise_parse_error_naming_tool(kind: str, text: str) -> None:
    with pytest.raises(ParseError) as exc:
        registry.parse(kind, text)
    assert exc.value.tool == kind
    assert kind in str(exc.value)
    if text.strip():
        assert exc.value.line is not None


def test_other_tools_output_is_rejected() -> None:
    ibstat = read_fixture("ibstat/a100-all-active.txt")
    sinfo = read_fixture("sinfo/default-with-down-star.txt")
    for kind in ("ibstatus", "ibv_devinfo", "ibdev2netdev", "show_gids", "ip-link", "sinfo",
                 "scontrol-node", "ib_write_bw", "mlnx_qos", "syslog-linkflap", "sdiag"):
        with pytest.raises(ParseError):
            registry.parse(kind, ibstat)
    with pytest.raises(ParseError):
        registry.parse("ibstat", sinfo)


def cut(text: str, marker: str, keep_marker_chars: int) -> str:
    """Text up to the last occurrence of ``marker`` plus its first ``keep_marker_chars`` chars."""
    i = text.rindex(marker)
    return text[: i + keep_marker_chars]


TRUNCATIONS = [
    ("ibstat", "ibstat/h100-all-active-2.txt", "Link layer: InfiniBand", 14),  # mid-word
    ("ibstat", "ibstat/h100-all-active-2.txt", "Physical state:", 0),  # port lacks the rest
    ("ibstatus", "ibstatus/a100-cx6-hdr-all-active.txt", "rate:", 0),
    ("ibv_devinfo", "ibv_devinfo/cx6-dual-port-one-down.txt", "\t\tport:\t2", 9),
    ("ibv_devinfo", "ibv_devinfo/cx7-ndr-ib-plus-cx6dx-roce-verbose.txt", "active_width:", 0),
    ("show_gids", "show_gids/roce-two-ports-one-without-ipv4.txt", "mlx5_1\t1\t1", 0),
    ("mlnx_qos", "mlnx_qos/trust-dscp-pfc-prio3-setup-trace.txt", "        enabled", 0),
    ("mlnx_qos", "mlnx_qos/trust-pcp-pfc-prio4-ets.txt", "PFC configuration:", 0),
    ("ip-link", "ip-link/gpu-node-roce-bond-ipoib-vlan.txt", "    link/ether 94:6d:ae:c2:b6:90 brd", 0),
    ("ib_write_bw", "ib_write_bw/superbench-hdr-loopback-all-sizes-MBps.txt", "18620.51", 0),
    ("ib_write_bw", "ib_write_bw/ndr-duration-gbits.txt", "379.27", 0),
    ("sinfo", "sinfo/default-with-down-star.txt", "short*       up    4:00:00      6  down*", 0),
    ("scontrol-node", "scontrol-node/drained-and-idle.txt", "   State=IDLE ", 0),
    ("ibdev2netdev", "ibdev2netdev/plain-ib-eth-bond.txt", "mlx5_bond_0 port 1 ==> bond0 (Up)", 20),
]


#: KINDs whose parsers take a paste cut anywhere (issue 14): what is shown is kept, flagged truncated
TOLERANT = {"ibstat", "ibstatus", "ibv_devinfo", "show_gids", "mlnx_qos", "ip-link", "ib_write_bw", "ibdev2netdev",
            "scontrol-node"}


@pytest.mark.parametrize(("kind", "name", "marker", "keep"), TRUNCATIONS)
def test_truncated_input(kind: str, name: str, marker: str, keep: int) -> None:
    text = cut(read_fixture(name), marker, keep)
    if kind not in TOLERANT:
        with pytest.raises(ParseError) as exc:
            registry.parse(kind, text)
        assert exc.value.tool == kind
        assert exc.value.line is not None and exc.value.line >= 1
        return
    data = registry.parse(kind, text)
    if kind == "mlnx_qos":
        assert data["readings"][-1]["truncated"] is True
    elif kind == "scontrol-node":  # the last node's record cut before State= (issue 29: judge what is there)
        assert data["cut"] and all(n["state"] for n in data["nodes"])
    elif kind != "ibdev2netdev":
        assert data["truncated"] is True


def test_parse_error_line_points_at_bad_line() -> None:
    text = read_fixture("ip-link/gpu-node-roce-bond-ipoib-vlan.txt").splitlines()
    bad = next(i for i, ln in enumerate(text, 1) if " mtu " in ln and ln[:1].isdigit())
    text[bad - 1] = text[bad - 1].replace(" mtu ", " mtu banana ", 1).replace("banana 9000", "banana")
    with pytest.raises(ParseError) as exc:
        registry.parse("ip-link", "\n".join(text))
    assert exc.value.line == bad


def test_lines_that_are_not_key_value_are_skipped_not_fatal() -> None:
    orig = read_fixture("ibstat/a100-all-active.txt")
    text = orig.splitlines()
    text.insert(4, "\tthis line is not key value")
    assert registry.parse("ibstat", "\n".join(text)) == registry.parse("ibstat", orig)


# --- ibstat / ibstatus: shared port shape -------------------------------------------------------


PORT_KEYS = {"port", "state", "phys_state", "rate_gbps", "link_layer", "netdev"}
DEVICE_KEYS = {"name", "ca_type", "fw_version", "ports"}


def assert_port_shape(data: dict) -> None:
    for dev in data["devices"]:
        assert dev.keys() >= DEVICE_KEYS
        for port in dev["ports"]:
            assert port.keys() >= PORT_KEYS
            assert isinstance(port["rate_gbps"], float)
            assert port["state"] == port["state"].upper() and ":" not in port["state"]


@pytest.mark.parametrize("name", fixtures_of("ibstat"))
def test_ibstat_matches_fixture(name: str) -> None:
    text = read_fixture(name)
    data = registry.parse("ibstat", text)
    assert_port_shape(data)
    ca = blocks(text, r"CA '")
    assert [d["name"] for d in data["devices"]] == [match(r"CA '([^']+)'", b).group(1) for b in ca]
    words = {"Active": "ACTIVE", "Down": "DOWN", "Initializing": "INIT", "Armed": "ARMED"}
    for dev, block in zip(data["devices"], ca, strict=True):
        assert dev["ca_type"] == field(block, "CA type")
        assert dev["fw_version"] == field(block, "Firmware version")
        if "Port 1:" not in block:  # a paste cut inside the CA's header: no port read
            assert dev["ports"] == []
            continue
        (port,) = dev["ports"]
        assert port["state"] == words[field(block, "State")]
        assert port["phys_state"] == field(block, "Physical state")
        assert port["rate_gbps"] == float(field(block, "Rate"))
        assert port["link_layer"] == field(block, "Link layer")


def test_ibstat_ibpanic_is_reported_not_dropped() -> None:
    text = read_fixture("ibstat/a100-cx6-ib-hdr-ibpanic.txt")
    data = registry.parse("ibstat", text)
    panic_line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("ibpanic:"))
    dev = search(r"device '([^']+)'", text.splitlines()[panic_line - 1]).group(1)
    assert data["errors"] == [{"line": panic_line, "device": dev, "message": text.splitlines()[panic_line - 1]}]
    assert dev not in [d["name"] for d in data["devices"]]


@pytest.mark.parametrize("name", fixtures_of("ibstatus"))
def test_ibstatus_matches_fixture(name: str) -> None:
    text = read_fixture(name)
    data = registry.parse("ibstatus", text)
    assert_port_shape(data)
    heads = blocks(text, r"Infiniband device '")
    got = [(d["name"], p) for d in data["devices"] for p in d["ports"]]
    assert len(got) == len(heads)
    for (dev, port), block in zip(got, heads, strict=True):
        m = match(r"Infiniband device '([^']+)' port (\d+)", block)
        assert (dev, port["port"]) == (m.group(1), int(m.group(2)))
        assert port["state"] == field(block, "state").split(": ")[1]
        assert port["phys_state"] == field(block, "phys state").split(": ")[1]
        assert port["rate_gbps"] == float(field(block, "rate").split()[0])
        assert port["link_layer"] == field(block, "link_layer")
    assert all(d["ca_type"] is None for d in data["devices"])


# --- ibv_devinfo, ibdev2netdev, show_gids ---------------------------------------------------------


def test_ibv_devinfo_verbose_rate_is_width_times_speed() -> None:
    text = read_fixture("ibv_devinfo/cx7-ndr-ib-plus-cx6dx-roce-verbose.txt")
    data = registry.parse("ibv_devinfo", text)
    assert_port_shape(data)
    hcas = blocks(text, "hca_id:")
    assert [d["name"] for d in data["devices"]] == [b.split()[1] for b in hcas]
    for dev, block in zip(data["devices"], hcas, strict=True):
        width = int(search(r"active_width:\s*(\d+)X", block).group(1))
        speed = float(search(r"active_speed:\s*([\d.]+) Gbps", block).group(1))
        (port,) = dev["ports"]
        assert port["rate_gbps"] == width * speed
        assert port["link_layer"] == field(block, "link_layer")
        assert port["phys_state"] == "LinkUp" and "LINK_UP" in field(block, "phys_state")
        assert len(port["gids"]) == block.count("GID[")
        assert dev["ca_type"] == "MT" + field(block, "vendor_part_id")
        assert dev["fw_version"] == field(block, "fw_ver")
    roce = data["devices"][1]["ports"][0]["gids"]
    v2 = [g for g in roce if g["type"] == "RoCE v2"]
    assert len(v2) == text.count(", RoCE v2")


def test_ibv_devinfo_plain_has_no_rate_and_reports_down_port() -> None:
    text = read_fixture("ibv_devinfo/cx6-dual-port-one-down.txt")
    (dev,) = registry.parse("ibv_devinfo", text)["devices"]
    assert len(dev["ports"]) == int(field(text, "phys_port_cnt"))
    states = re.findall(r"state:\s+PORT_(\w+)", text)
    assert [p["state"] for p in dev["ports"]] == states
    assert all(p["rate_gbps"] is None and p["phys_state"] is None for p in dev["ports"])


def test_ibv_devinfo_no_devices_is_explicit() -> None:
    data = registry.parse("ibv_devinfo", "No IB devices found\n")
    assert data["devices"] == [] and "No IB devices" in data["message"]


@pytest.mark.parametrize("name", fixtures_of("ibdev2netdev"))
def test_ibdev2netdev_matches_fixture(name: str) -> None:
    text = read_fixture(name)
    rows = [ln for ln in text.splitlines()[1:] if "==>" in ln]
    maps = registry.parse("ibdev2netdev", text)["mappings"]
    assert len(maps) == len(rows)
    for m, row in zip(maps, rows, strict=True):
        netdev, link = search(r"==> (\S+) \((\w+)\)$", row).groups()
        assert (m["netdev"], m["link"]) == (netdev, link)
        assert m["device"] in row.split(" port ")[0]
    if "verbose" in name:
        assert all(m["pci"] and m["fw_version"] and m["state"] for m in maps)


def test_show_gids_rows_match_fixture() -> None:
    text = read_fixture("show_gids/roce-two-ports-one-without-ipv4.txt")
    data = registry.parse("show_gids", text)
    assert data["n_gids_found"] == int(search(r"n_gids_found=(\d+)", text).group(1))
    assert len(data["gids"]) == data["n_gids_found"]
    with_ip = re.findall(r"(?m)^(\S+)\t(\d+)\t(\d+)\t\S+\t(\d+\.\d+\.\d+\.\d+)\s+(v\d)", text)
    got = [(g["device"], str(g["port"]), str(g["index"]), g["ipv4"], g["version"]) for g in data["gids"]
           if g["ipv4"]]
    assert got == [tuple(t) for t in with_ip]
    ib = [g for g in data["gids"] if g["netdev"] is None]
    assert len(ib) == len(re.findall(r"\tv1\t$", text, re.M))


# --- mlnx_qos -------------------------------------------------------------------------------------


def test_mlnx_qos_setup_trace_last_reading_per_interface() -> None:
    text = read_fixture("mlnx_qos/trust-dscp-pfc-prio3-setup-trace.txt")
    data = registry.parse("mlnx_qos", text)
    assert len(data["readings"]) == text.count("DCBX mode:")
    ifaces = set(re.findall(r"mlnx_qos -i (\S+)", text))
    assert [r["interface"] for r in data["interfaces"]] == sorted(ifaces)
    (reading,) = data["interfaces"]
    assert reading is data["readings"][-1]
    assert reading["trust"] == re.findall(r"Priority trust state: (\S+)", text)[-1]
    prio = re.findall(r"priority((?:\s+\d)+)\s*\n\s*enabled((?:\s+\d)+)", text)[-1]
    enabled = [int(p) for p, e in zip(prio[0].split(), prio[1].split(), strict=True) if e == "1"]
    assert reading["pfc_enabled_priorities"] == enabled
    tcs = re.findall(r"tc: (\d+) ratelimit: (\w+), tsa: (\w+)\n\s+priority:\s+(\d)", text)
    assert [(str(t["tc"]), t["ratelimit"], t["tsa"], str(t["priorities"][0])) for t in reading["tcs"]] == \
        [tuple(t) for t in tcs[: len(reading["tcs"])]]
    m = search(r"prio:3 dscp:([\d,]+)", text)
    for d in m.group(1).strip(",").split(","):
        assert reading["dscp2prio"][str(int(d))] == 3


def test_mlnx_qos_buffers_and_ets_bw() -> None:
    text = read_fixture("mlnx_qos/trust-pcp-pfc-prio4-ets.txt")
    (r,) = registry.parse("mlnx_qos", text)["interfaces"]
    assert r["interface"] is None
    assert r["trust"] == field(text, "Priority trust state")
    buf_row = [int(x) for x in search(r"buffer((?:\s+\d)+)", text).group(1).split()]
    assert [p["buffer"] for p in r["pfc"]] == buf_row
    rx = search(r"Receive buffer size \(bytes\): ([\d,]+),total", text).group(1)
    assert r["receive_buffer_bytes"] == [int(x) for x in rx.split(",") if x]
    assert [t["bw_percent"] for t in r["tcs"]] == [int(x) for x in re.findall(r"bw: (\d+)%", text)]
    assert sum(len(t["priorities"]) for t in r["tcs"]) == len(re.findall(r"priority:\s+\d", text))


def test_mlnx_qos_interface_header_splits_readings() -> None:
    one = without_source(read_fixture("mlnx_qos/trust-pcp-pfc-prio4-ets.txt"))
    data = registry.parse("mlnx_qos", f"# interface: eth2\n{one}\n# interface: eth3\n{one}")
    assert [r["interface"] for r in data["interfaces"]] == ["eth2", "eth3"]


# --- ip -d link -----------------------------------------------------------------------------------


def test_ip_link_matches_fixture() -> None:
    text = read_fixture("ip-link/gpu-node-roce-bond-ipoib-vlan.txt")
    links = {lk["ifname"]: lk for lk in registry.parse("ip-link", text)["links"]}
    heads = re.findall(r"(?m)^\d+: ([^:@\s]+)(?:@\S+)?: <([^>]*)> mtu (\d+) .*?state (\S+)", text)
    assert list(links) == [h[0] for h in heads]
    for name, flags, mtu, state in heads:
        assert links[name]["mtu"] == int(mtu)
        assert links[name]["state"] == state
        assert links[name]["carrier"] == ("NO-CARRIER" not in flags)
    masters = dict(re.findall(r"(?m)^\d+: (\S+): <[^>]*> .*? master (\S+)", text))
    assert {n: lk["master"] for n, lk in links.items() if lk["master"]} == masters
    slaves = dict(re.findall(r"(?m)^\d+: (\S+): <[^>]*>.*\n.*\n\s+bond_slave state \S+ mii_status (\S+)", text))
    assert {n: lk["kind_info"]["mii_status"] for n, lk in links.items() if lk["kind"] == "bond_slave"} == slaves
    assert links["bond0"]["kind_info"]["mode"] == search(r"bond mode (\S+)", text).group(1)
    assert {n for n, lk in links.items() if lk["link_type"] == "infiniband"} == set(
        re.findall(r"(?m)^\d+: (\S+): <[^>]*>.*\n\s+link/infiniband", text))
    vlan = search(r"(?m)^\d+: ([^@\s:]+)@([^\s:]+):.*\n.*\n\s+vlan protocol \S+ id (\d+)", text)
    assert (links[vlan.group(1)]["parent"], links[vlan.group(1)]["kind_info"]["id"]) == (
        vlan.group(2), int(vlan.group(3)))


# --- ib_write_bw ----------------------------------------------------------------------------------


def result_rows(text: str) -> list[list[str]]:
    return [ln.split() for ln in text.splitlines() if re.match(r"^\s*\d+\s+\d+\s+[\d.]+\s+[\d.]+", ln)]


@pytest.mark.parametrize("name", fixtures_of("ib_write_bw"))
def test_ib_write_bw_normalised_to_gbps(name: str) -> None:
    text = read_fixture(name)
    data = registry.parse("ib_write_bw", text)
    rows = result_rows(text)
    factor = MB_TO_GBPS if "BW average[MB/sec]" in text else 1.0
    sizes = sorted({int(r[0]) for r in rows})
    assert [r["bytes"] for r in data["results"]] == sizes
    top = next(r for r in rows if int(r[0]) == sizes[-1])
    assert data["max_size_bytes"] == sizes[-1]
    assert data["bw_avg_gbps"] == pytest.approx(float(top[3]) * factor, rel=1e-6)
    assert data["device"] == search(r"Device\s+:\s+(\S+)", text).group(1)
    assert data["unit"] == search(r"BW average\[([^\]]+)\]", text).group(1)
    if float(top[2]) == 0.0:
        assert data["mode"] == "duration" and data["bw_peak_gbps"] is None
    else:
        assert data["mode"] == "iterations"
        assert data["bw_peak_gbps"] == pytest.approx(float(top[2]) * factor, rel=1e-6)


def test_ib_write_bw_interleaved_server_and_client_are_counted_once() -> None:
    text = read_fixture("ib_write_bw/superbench-hdr-loopback-8M-MBps.txt")
    (row,) = registry.parse("ib_write_bw", text)["results"]
    assert row["reports"] == len(result_rows(text))


def test_ib_write_bw_failed_test_names_the_error() -> None:
    # a test that never ran (the out-of-band TCP connection failed) parses: the message is kept, no rows
    text = " Couldn't connect to 10.0.0.2:18515\nUnable to open file descriptor for socket connection\n"
    data = registry.parse("ib_write_bw", text)
    assert data["not_run"] == "Couldn't connect to 10.0.0.2:18515" and data["results"] == []
    assert data["errors"] == ["Couldn't connect to 10.0.0.2:18515",
                              "Unable to open file descriptor for socket connection"]


def test_ib_write_bw_other_error_without_a_table_still_raises() -> None:
    with pytest.raises(ParseError, match="ibv_open_device"):
        registry.parse("ib_write_bw", "Couldn't open ibv_open_device: error\n")


# --- syslog link flaps ----------------------------------------------------------------------------


def test_syslog_lost_carrier_flaps() -> None:
    text = read_fixture("syslog/aznhc-ib6-lost-carrier-6-flaps.txt")
    data = registry.parse("syslog-linkflap", text)
    downs = re.findall(r"(?m)^(\w+ +\d+ [\d:]+) \S+ \S+ (\w+): lost carrier", text)
    ups = re.findall(r"(?m)^(\w+ +\d+ [\d:]+) \S+ \S+ (\w+): Gained carrier", text)
    names = {n for _, n in downs}
    assert set(data["interfaces"]) == names
    for n in names:
        rec = data["interfaces"][n]
        assert rec["flaps"] == sum(1 for _, x in downs if x == n)
        assert rec["ups"] == sum(1 for _, x in ups if x == n)
        assert rec["first"] == next(t for t, x in downs if x == n)
        assert rec["last"] == [t for t, x in downs + ups if x == n][-1]


def test_syslog_driver_and_bond_lines_count_one_flap_each() -> None:
    text = read_fixture("syslog/kernel-mlx5-bond-slave-flaps.txt")
    ifs = registry.parse("syslog-linkflap", text)["interfaces"]
    driver = re.findall(r" (\w+): Link down", text)
    bond = re.findall(r"\(slave (\w+)\): link status definitely down", text)
    for name in set(driver):
        assert ifs[name]["flaps"] == max(driver.count(name), bond.count(name))
        assert ifs[name]["downs"] == driver.count(name) + bond.count(name)


def test_syslog_without_flaps_is_not_an_error() -> None:
    text = read_fixture("syslog/aznhc-ib6-lost-carrier-6-flaps.txt").splitlines()[:3]
    data = registry.parse("syslog-linkflap", "\n".join(text))
    assert data["interfaces"] == {} and data["lines"] == 2


# --- Slurm ----------------------------------------------------------------------------------------


def test_sinfo_rows_and_down_star() -> None:
    text = read_fixture("sinfo/default-with-down-star.txt")
    data = registry.parse("sinfo", text)
    rows = re.findall(r"(?m)^(\S+)\s+(up|down)\s+(\S+)\s+(\d+)\s+(\S+)\s+(\S+)$", text)
    assert [(r["partition"] + ("*" if r["default"] else ""), r["state"], str(r["nodes"])) for r in
            data["partitions"]] == [(p, s, n) for p, _, _, n, s, _ in rows]
    for r in data["partitions"]:
        assert len(r["hosts"]) == r["nodes"]
    star = next(r for r in rows if r[4] == "down*")
    first = data["partitions"][[r[4] for r in rows].index("down*")]
    assert first["base_state"] == "down" and first["flags"] == ["not_responding"]
    assert first["nodelist"] == star[5]
    for h in first["hosts"]:
        assert data["nodes"][h]["not_responding"]


def test_sinfo_hostlist_expansion_keeps_padding() -> None:
    from ccparse.slurm import expand_hostlist

    assert expand_hostlist("gpu[001-003,010],login1") == ["gpu001", "gpu002", "gpu003", "gpu010", "login1"]
    assert expand_hostlist("r[1-2]n[1-2]") == ["r1n1", "r1n2", "r2n1", "r2n2"]
    with pytest.raises(ValueError):
        expand_hostlist("node[1-")


def test_sinfo_count_mismatch_is_coverage_and_the_named_nodes_are_read() -> None:
    # a row whose NODES disagrees with its NODELIST (wrapped, or edited in a document) is no longer a refusal of
    # the whole table: its named nodes are read and the gap is said (the engine's coverage note of 'cut')
    text = read_fixture("sinfo/default-with-down-star.txt").replace("      6  down* node[4-7,9,17]",
                                                                     "      7  down* node[4-7,9,17]", 1)
    data = registry.parse("sinfo", text)
    assert len(data["cut"]) == 1 and "NODES says 7 but NODELIST 'node[4-7,9,17]' names 6" in data["cut"][0]
    assert data["nodes"]["node17"]["states"] == ["down*"]


def test_scontrol_node_reason_and_drain() -> None:
    text = read_fixture("scontrol-node/drained-and-idle.txt")
    nodes = registry.parse("scontrol-node", text)["nodes"]
    recs = blocks(text, "NodeName=")
    assert [n["name"] for n in nodes] == [match(r"NodeName=(\S+)", b).group(1) for b in recs]
    for n, b in zip(nodes, recs, strict=True):
        state = search(r"State=(\S+)", b).group(1)
        assert n["state"] == state and n["drain"] == ("DRAIN" in state)
        m = re.search(r"Reason=(.*) \[(\w+)@(\S+)\]", b)
        assert (n["reason"], n["reason_user"], n["reason_time"]) == (m.groups() if m else (None, None, None))
        assert n["partitions"] == search(r"Partitions=(\S+)", b).group(1).split(",")
        assert n["fields"]["OS"].startswith("Linux ")


def test_scontrol_node_not_found() -> None:
    with pytest.raises(ParseError, match="not found"):
        registry.parse("scontrol-node", "Node gpu-99 not found\n")


def test_fixture_dirs_exist() -> None:
    assert Path(FIXTURES).is_dir()
