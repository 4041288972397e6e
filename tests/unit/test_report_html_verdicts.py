"""The HTML report shows what the checks used: the floor each check applied (derived or from the
inventory), dots coloured by the findings' verdict, a per-node summary first, findings grouped by
host. Evidence from real captures judged by the real engine; the HTML read back with html.parser."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from conftest import read_fixture

from clusterctl.analysis.engine import Report, analyze_dir
from clusterctl.report_html import render

NCCL_A100 = "nccl-tests/a100x8-single-node-all-reduce-gcm.txt"  # 231.72 GB/s busbw at 1 GiB, 8 x A100
IB_8M = "ib_write_bw/superbench-hdr-loopback-8M-MBps.txt"  # 201.8 Gb/s on ib0 (HDR)
IB_ALL = "ib_write_bw/superbench-hdr-loopback-all-sizes-MBps.txt"  # 194.96 Gb/s on ib0


class Read(HTMLParser):
    """Dots (plot title, host, verdict), h2 order, the host of each findings group and its rows."""

    def __init__(self) -> None:
        super().__init__()
        self.dots: list[tuple[str, str, str]] = []
        self.h2: list[str] = []
        self.groups: list[str] = []
        self.node_rows: list[tuple[str, str]] = []
        self._tag = ""
        self._h3 = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self._tag = tag
        if tag == "h3":
            self._h3 = ""
            if a.get("class") == "host":
                self.groups.append(str(a["data-host"]))
        if tag == "circle" and "data-verdict" in a:
            self.dots.append((self._h3, str(a["data-host"]), str(a["data-verdict"])))
        if tag == "tr" and a.get("class") == "node":
            self.node_rows.append((str(a["data-host"]), str(a["data-status"])))

    def handle_data(self, data: str) -> None:
        if self._tag == "h2":
            self.h2.append(data.strip())
        elif self._tag == "h3":
            self._h3 += data

    def handle_endtag(self, tag: str) -> None:
        self._tag = ""


def evidence(tmp: Path) -> Path:
    for host, ib in (("n1", IB_8M), ("n2", IB_8M), ("n3", IB_ALL)):
        (tmp / host).mkdir(parents=True)
        (tmp / host / "nccl-tests.txt").write_text(read_fixture(NCCL_A100))
        (tmp / host / "ib_write_bw.txt").write_text(read_fixture(IB_8M if ib == IB_8M else IB_ALL))
    return tmp


def read(report: Report) -> Read:
    p = Read()
    p.feed(render(report))
    return p


def dots(p: Read, metric: str) -> dict[str, str]:
    return {h: v for title, h, v in p.dots if title.startswith(metric) and "per rail" not in title}


def test_a_host_with_a_bandwidth_finding_has_a_non_ok_dot(tmp_path: Path) -> None:
    # floor 0.98 x 200 = 196 Gb/s: n3's 194.96 is under it (warning), n1/n2's 201.8 above
    rep = analyze_dir(evidence(tmp_path), {"ib_rate_gbps": 200, "ib_write_bw_min_fraction": 0.98})
    bad = {f.host: f.severity for r in rep.hosts.values() for f in r.findings if f.check == "ib_write_bw"}
    assert bad == {"n3": "warning"}
    p = read(rep)
    assert dots(p, "ib_write_bw_Gbps") == {"n1": "ok", "n2": "ok", "n3": "warning"}
    html = render(rep)
    assert "floor 196 applied (98% of the 200 Gb/s line rate (ib_rate_gbps))" in html


def test_the_derived_floor_is_drawn_without_an_inventory_floor(tmp_path: Path) -> None:
    # no nccl_busbw_floor_GBps: the check derives 197 GB/s for 8 x A100 within a node (checks/nccl.py)
    rep = analyze_dir(evidence(tmp_path), {})
    html = render(rep)
    assert "floor 197 applied" in html
    assert dots(read(rep), "nccl_busbw_GBps") == {"n1": "ok", "n2": "ok", "n3": "ok"}  # 231.72 >= 197


def test_dots_follow_the_findings_at_74_percent_of_the_floor(tmp_path: Path) -> None:
    # the case: 231.72 GB/s is 74 % of a 313 GB/s floor; the table says warning, so do the dots
    rep = analyze_dir(evidence(tmp_path), {"nccl_busbw_floor_GBps": 313})
    msgs = [f.message for f in rep.hosts["n1"].findings if f.check == "nccl_busbw"]
    assert msgs and "is 74% of the 313 GB/s floor" in msgs[0]
    p = read(rep)
    assert dots(p, "nccl_busbw_GBps") == {"n1": "warning", "n2": "warning", "n3": "warning"}
    assert "floor 313 applied (nccl_busbw_floor_GBps)" in render(rep)


def test_node_summary_first_and_findings_grouped_by_host(tmp_path: Path) -> None:
    ev = evidence(tmp_path)
    (ev / "n4").mkdir()  # nothing in it: "no evidence"
    rep = analyze_dir(ev, {"nccl_busbw_floor_GBps": 313, "ib_rate_gbps": 200, "ib_write_bw_min_fraction": 0.98})
    p = read(rep)
    assert p.h2.index("Nodes") < p.h2.index("Findings by host") < p.h2.index("Bandwidth per node")
    assert p.node_rows == [("n1", "degraded"), ("n2", "degraded"), ("n3", "degraded"), ("n4", "no evidence")]
    assert p.groups == ["n1", "n2", "n3"]  # one group per host with findings, worst first
