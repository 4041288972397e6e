"""Issue 26 item 4: every metric a Grafana dashboard of roles/monitoring/files/dashboards queries is
one clusterctl's textfile writes (clusterctl/report/prom.py FAMILIES), Prometheus' own ``up``, or one
node_exporter's infiniband collector exports. The last set is a list recorded from Debian's
prometheus-node-exporter 1.5 (tests/promtool/node-exporter-infiniband-metrics.txt); where the binary
is installed the test runs it on 127.0.0.1 over a simulated sysfs tree (tests/simfabric.py) and
checks the recorded list against what it really exports."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import simfabric

from clusterctl.report.prom import FAMILIES

REPO = Path(__file__).resolve().parents[2]
DASHBOARDS = sorted((REPO / "roles" / "monitoring" / "files" / "dashboards").glob("*.json"))
RECORDED = REPO / "tests" / "promtool" / "node-exporter-infiniband-metrics.txt"
NODE_EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool",
             "offset", "time"}


def _queries(doc: dict[str, Any]) -> list[str]:
    out = [t["expr"] for p in doc["panels"] for t in p.get("targets", ())]
    for v in doc["templating"]["list"]:
        q = v.get("query")
        if isinstance(q, dict):
            out.append(q["query"])
    return out


def metric_names(expr: str) -> set[str]:
    """Metric names in a PromQL expression (or a Grafana label_values(METRIC, label) query)."""
    m = re.fullmatch(r"\s*label_values\(\s*([a-zA-Z_:][\w:]*)\s*,\s*\w+\s*\)\s*", expr)
    if m:
        return {m.group(1)}
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", "", e)
    e = re.sub(r"\[[^\]]*\]", "", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    return {n for n in re.findall(r"(?<![\w:.])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()", e) if n not in _KEYWORDS}


def _recorded() -> set[str]:
    return {ln.strip() for ln in RECORDED.read_text().splitlines() if ln.strip() and not ln.startswith("#")}


def test_metric_names_parser() -> None:
    assert metric_names('sum by (device) (rate(a_total{x="y{"}[2m]) * 8) / on(i) group_left(h) b') == {"a_total", "b"}
    assert metric_names("label_values(node_infiniband_info, instance)") == {"node_infiniband_info"}
    stale = "clusterctl_last_verify_timestamp_seconds"
    assert metric_names(f"time() - {stale}") == {stale}


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_metrics_exist(path: Path) -> None:
    doc = json.loads(path.read_text())
    known = set(FAMILIES) | {"up"} | _recorded()
    used = {n for q in _queries(doc) for n in metric_names(q)}
    assert used, path
    assert sorted(used - known) == [], f"{path.name}: metrics no exporter writes"
    assert len({p["id"] for p in doc["panels"]}) == len(doc["panels"])


def test_dashboards_shipped() -> None:
    assert {p.name for p in DASHBOARDS} == {"cluster-overview.json", "node-fabric.json", "rails.json"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(NODE_EXPORTER is None, reason="prometheus-node-exporter missing (apt-get install "
                                                  "prometheus-node-exporter)")
def test_recorded_list_is_what_node_exporter_exports(tmp_path: Path) -> None:
    assert NODE_EXPORTER is not None
    desc = simfabric.load(REPO / "tests" / "fixtures" / "simfabric" / "lab-roce-healthy.yml")
    for dev in desc["devices"]:
        # node_exporter's collector skips a device without board_id (the description leaves it out);
        # simfabric lays the port counters (ports/<n>/counters/, as ib_core does)
        dev["board_id"] = "MT_0000000838"
    root = simfabric.build(desc, tmp_path / "sys")
    port = _free_port()
    proc = subprocess.Popen([NODE_EXPORTER, f"--path.sysfs={root}", "--collector.disable-defaults",
                             "--collector.infiniband", f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        text = ""
        for _ in range(50):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text = r.read().decode()
                break
            except OSError:
                time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    live = {ln.split("{")[0].split(" ")[0] for ln in text.splitlines()
            if ln.startswith("node_infiniband_")}
    assert live == _recorded()
