"""The ``sdiag`` parser and the Slurm textfile on the controller (issue 26).

Expected values are read off the captures in tests/fixtures/sdiag (real sdiag outputs, line 1 names
the source) and tests/fixtures/sinfo with regular expressions, never pasted from the parser. The
textfile is checked by ``promtool check metrics``; the program runs from the node check's bundle
(what the monitoring role installs on the controller) with stand-ins for sdiag/sinfo that print the
same real captures (no Slurm controller runs in the fast tier; the lab test runs the real one).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ccparse import registry
from ccparse.common import ParseError
from ccparse.detect import detect_kind
from conftest import LOCAL_FIXTURES, read_fixture

from clusterctl import slurm
from clusterctl.lifecycle import bundle
from clusterctl.report import prom, slurm_textfile

BUSY = "sdiag/vpenso-exporter-test-data-2017-busy-cluster.txt"
RPC = "sdiag/soperator1026-rpc-stats-excerpt.txt"
SDIAG = sorted(f"sdiag/{p.name}" for p in (LOCAL_FIXTURES / "sdiag").glob("*.txt"))
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool missing: apt-get install prometheus "
                                    "(scripts/setup.sh installs it)")


def block(text: str, title: str) -> str:
    """The lines of ``text`` from the section ``title`` to the next blank line."""
    m = re.search(rf"(?ms)^{re.escape(title)}[^\n]*\n(.*?)(?:\n\s*\n|\Z)", text)
    assert m is not None, title
    return m.group(1)


def value(text: str, label: str) -> int:
    m = re.search(rf"(?m)^\s*{re.escape(label)}:\s+(\d+)\s*$", text)
    assert m is not None, label
    return int(m.group(1))


def samples(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, v = line.rpartition(" ")
            out[key] = float(v)
    return out


# --- the parser ---------------------------------------------------------------------------------


def test_every_capture_parses_and_is_detected() -> None:
    assert len(SDIAG) >= 2
    for rel in SDIAG:
        text = read_fixture(rel)
        assert text.startswith("# source: ")
        registry.parse("sdiag", text)
        assert detect_kind(text) == "sdiag", rel


def test_busy_cluster_counters_and_cycles() -> None:
    text = read_fixture(BUSY)
    d = registry.parse("sdiag", text)
    assert d["excerpt"] is False
    assert d["server"]["server_thread_count"] == value(text, "Server thread count")
    assert d["server"]["agent_queue_size"] == value(text, "Agent queue size")
    for event in ("submitted", "started", "completed", "canceled", "failed"):
        assert d["jobs"][event] == value(text, f"Jobs {event}")
    main = block(text, "Main schedule statistics (microseconds):")
    for key, label in (("last_cycle", "Last cycle"), ("max_cycle", "Max cycle"), ("mean_cycle", "Mean cycle"),
                       ("total_cycles", "Total cycles"), ("last_queue_length", "Last queue length")):
        assert d["main"][key] == value(main, label), key
    bf = block(text, "Backfilling stats")
    for key, label in (("last_cycle", "Last cycle"), ("max_cycle", "Max cycle"), ("mean_cycle", "Mean cycle"),
                       ("total_backfilled_jobs_since_last_slurm_start",
                        "Total backfilled jobs (since last slurm start)"),
                       ("depth_mean_try_depth", "Depth Mean (try depth)")):
        assert d["backfill"][key] == value(bf, label), key
    # 2017's sdiag prints no epoch after its times: none is made up
    assert d["time"] is None and d["since"] is None and d["backfill"]["last_cycle_when"] is None
    assert "rpc_pending" not in d["sections"] and d["rpc_types"] == []


def test_rpc_excerpt_behind_a_prompt_and_an_elision() -> None:
    text = read_fixture(RPC)
    d = registry.parse("sdiag", text)
    assert d["excerpt"] is True and d["main"] == {} and d["jobs"] == {}
    want = [(m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
            for m in re.finditer(r"(?m)^\s+([A-Z_]+)\s+\(\s*(\d+)\) count:(\d+)\s+ave_time:(\d+)\s+total_time:(\d+)$",
                                 text)]
    assert len(want) == 8
    assert [(r["name"], r["id"], r["count"], r["ave_time"], r["total_time"]) for r in d["rpc_types"]] == want
    user = re.search(r"(?m)^\s+(\w+)\s+\(\s*(\d+)\) count:(\d+)\s+ave_time:(\d+)\s+total_time:(\d+)$",
                     block(text, "Remote Procedure Call statistics by user"))
    assert user is not None
    assert d["rpc_users"] == [{"user": user.group(1), "uid": int(user.group(2)), "count": int(user.group(3)),
                               "ave_time": int(user.group(4)), "total_time": int(user.group(5))}]


@pytest.mark.parametrize(("bad", "line"), [
    ("        Last cycle:   97209\n", "        Last cycle:   97x09\n"),  # not a number
    ("Server thread count: 3\n", "Server thread count 3\n"),  # not 'Name: value'
    ("Jobs failed:    0\n", "Jobs failed:    0\nCA 'mlx5_0'\n"),  # another tool's line
])
def test_bad_lines_are_parse_errors_naming_the_line(bad: str, line: str) -> None:
    text = read_fixture(BUSY)
    assert bad in text
    broken = text.replace(bad, line, 1)
    with pytest.raises(ParseError) as exc:
        registry.parse("sdiag", broken)
    assert exc.value.tool == "sdiag" and exc.value.line is not None
    assert broken.split("\n")[exc.value.line - 1].strip() in (line.split("\n")[-2].strip(), line.strip())


def test_no_data_available_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="no statistics"):
        registry.parse("sdiag", "No data available. Probably slurmctld is not working\n")


# --- the textfile -------------------------------------------------------------------------------


def test_sdiag_metrics_come_from_the_capture() -> None:
    text = read_fixture(BUSY)
    s = samples(slurm_textfile.render({"sdiag": ("ok", registry.parse("sdiag", text)), "sinfo": ("missing", None)},
                                      now=1700000000))
    main, bf = block(text, "Main schedule statistics (microseconds):"), block(text, "Backfilling stats")
    for sched, sec in (("main", main), ("backfill", bf)):
        for cycle in ("last", "mean", "max"):
            got = s[f'clusterctl_slurm_scheduler_cycle_seconds{{scheduler="{sched}",cycle="{cycle}"}}']
            assert got == pytest.approx(value(sec, f"{cycle.capitalize()} cycle") / 1e6)
        assert s[f'clusterctl_slurm_scheduler_cycles{{scheduler="{sched}"}}'] == value(sec, "Total cycles")
    assert s["clusterctl_slurm_agent_queue_size"] == value(text, "Agent queue size")
    assert s['clusterctl_slurm_job_events{event="canceled"}'] == value(text, "Jobs canceled")
    # what the capture does not print is not written as 0
    assert not any(k.startswith(("clusterctl_slurm_jobs{", "clusterctl_slurm_rpcs_pending",
                                 "clusterctl_slurm_dbd_agent")) for k in s)
    assert s['clusterctl_slurm_tool_status{tool="sinfo",status="missing"}'] == 1
    assert not any(k.startswith("clusterctl_slurm_nodes") for k in s)


def test_rpc_pressure_from_the_capture() -> None:
    text = read_fixture(RPC)
    s = samples(slurm_textfile.render({"sdiag": ("ok", registry.parse("sdiag", text)), "sinfo": ("missing", None)},
                                      now=1700000000))
    m = re.search(r"REQUEST_NODE_INFO\s+\(\s*\d+\) count:(\d+)\s+ave_time:\d+\s+total_time:(\d+)", text)
    assert m is not None
    assert s['clusterctl_slurm_rpcs{type="REQUEST_NODE_INFO"}'] == int(m.group(1))
    assert s['clusterctl_slurm_rpc_seconds{type="REQUEST_NODE_INFO"}'] == pytest.approx(int(m.group(2)) / 1e6)


def test_drained_nodes_by_reason_class_from_sinfo_captures() -> None:
    # gcm: node0201 drain* with the operator's reason 'replace' (twice: two partitions, one node)
    gcm = read_fixture("sinfo/gcm-sinfo-o-all-pipes-node0201-drain-star-replace.txt")
    assert re.search(r"\|node0201\|.*\|drain\*\|.*\|replace \|", gcm)
    s = samples(slurm_textfile.render({"sdiag": ("missing", None), "sinfo": ("ok", registry.parse("sinfo", gcm))},
                                      now=0))
    assert s['clusterctl_slurm_nodes_drained{reason_class="admin"}'] == 1
    assert s['clusterctl_slurm_nodes_drained{reason_class="clusterctl"}'] == 0
    assert s['clusterctl_slurm_nodes{state="drain"}'] == 1 and s["clusterctl_slurm_nodes_not_responding"] == 1
    # citc: the default layout shows no reason: 3 drained nodes, class other
    citc = read_fixture("sinfo/citc11-oci-3-nodes-drain-compute.txt")
    n = int(re.search(r"(?m)^compute\*\s+up\s+\S+\s+(\d+)\s+drain ", citc).group(1))  # type: ignore[union-attr]
    s = samples(slurm_textfile.render({"sdiag": ("missing", None), "sinfo": ("ok", registry.parse("sinfo", citc))},
                                      now=0))
    assert s['clusterctl_slurm_nodes_drained{reason_class="other"}'] == n == 3
    # elasticluster: down* 'Not responding' nodes are down, not drained
    el = read_fixture("sinfo/elasticluster272-sinfo-lNe-down-star-not-responding.txt")
    s = samples(slurm_textfile.render({"sdiag": ("missing", None), "sinfo": ("ok", registry.parse("sinfo", el))},
                                      now=0))
    assert s['clusterctl_slurm_nodes{state="down"}'] == len(re.findall(r"(?m)^compute\d+ .* down\* ", el))
    assert sum(v for k, v in s.items() if k.startswith("clusterctl_slurm_nodes_drained")) == 0


def test_reason_classes() -> None:
    assert slurm_textfile.CLUSTERCTL_PREFIX == slurm.PREFIX
    assert slurm_textfile.reason_class("clusterctl: node-check: gpu gpu3: Xid 79") == "clusterctl"
    assert slurm_textfile.reason_class("Not responding") == "other"
    assert slurm_textfile.reason_class("Kill task failed") == "other"
    assert slurm_textfile.reason_class(None) == "other"
    assert slurm_textfile.reason_class("replace DIMM B3, ticket 4411") == "admin"


def test_families_do_not_clash_with_the_node_check_file() -> None:
    # two textfiles with one family would fail node_exporter's whole textfile collector
    assert not set(slurm_textfile.FAMILIES) & set(prom.FAMILIES)
    assert slurm_textfile.TEXTFILE != prom.TEXTFILE


@needs_promtool
def test_promtool_accepts_the_textfile(tmp_path: Path) -> None:
    assert PROMTOOL is not None
    for rel in SDIAG:
        text = slurm_textfile.render({"sdiag": ("ok", registry.parse("sdiag", read_fixture(rel))),
                                      "sinfo": ("ok", registry.parse("sinfo", read_fixture(
                                          "sinfo/gcm-sinfo-o-all-pipes-node0201-drain-star-replace.txt")))}, now=1)
        r = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, rel + r.stdout + r.stderr


# --- the program, from the bundle the role installs -----------------------------------------------


def _tool(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _run_bundle(tmp_path: Path, bindir: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    zipped = bundle.write(tmp_path / "clusterctl.zip")
    out = tmp_path / "tf" / slurm_textfile.TEXTFILE
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "PYTHONPATH": str(zipped)}
    r = subprocess.run([sys.executable, "-s", "-m", "clusterctl.report.slurm_textfile", "--out",
                        str(out), *extra], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return r, out


def test_program_from_the_bundle_writes_the_file(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (tmp_path / "sdiag.txt").write_text(read_fixture(BUSY).split("\n", 1)[1])
    _tool(bindir / "sdiag", f"cat {tmp_path / 'sdiag.txt'}\n")
    _tool(bindir / "sinfo", '[ "$*" = "--all --Node --format=%N|%T|%E" ] || exit 3\n'
                            "printf 'NODELIST|STATE|REASON\\nlab-c1|drained|clusterctl: node-check: mount /x\\n"
                            "lab-c2|idle|none\\n'\n")
    r, out = _run_bundle(tmp_path, bindir)
    assert r.returncode == 0, r.stderr
    s = samples(out.read_text())
    assert s['clusterctl_slurm_tool_status{tool="sdiag",status="ok"}'] == 1
    assert s['clusterctl_slurm_tool_status{tool="sinfo",status="ok"}'] == 1
    assert s['clusterctl_slurm_nodes_drained{reason_class="clusterctl"}'] == 1
    assert s['clusterctl_slurm_scheduler_cycles{scheduler="main"}'] == value(read_fixture(BUSY), "Total cycles")
    assert oct(out.stat().st_mode & 0o777) == "0o644"
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # nothing half-written left


def test_program_tells_missing_failing_and_hung_tools_apart(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _tool(bindir / "sdiag", "sleep 30\n")
    _tool(bindir / "sinfo", "echo 'slurm_load_node error: Unable to contact slurm controller' >&2; exit 1\n")
    r, out = _run_bundle(tmp_path, bindir, "--timeout", "1")
    assert r.returncode == 0, r.stderr
    assert "no answer within 1s" in r.stderr and "Unable to contact" in r.stderr
    s = samples(out.read_text())
    assert s['clusterctl_slurm_tool_status{tool="sdiag",status="timeout"}'] == 1
    assert s['clusterctl_slurm_tool_status{tool="sinfo",status="failed"}'] == 1
    (bindir / "sdiag").unlink()
    _tool(bindir / "sinfo", "echo 'this is not sinfo'\n")
    r, out = _run_bundle(tmp_path, bindir)
    s = samples(out.read_text())
    assert s['clusterctl_slurm_tool_status{tool="sdiag",status="missing"}'] == 1
    assert s['clusterctl_slurm_tool_status{tool="sinfo",status="unreadable"}'] == 1
    assert not any(k.startswith(("clusterctl_slurm_nodes", "clusterctl_slurm_scheduler")) for k in s)


def test_program_refuses_a_bad_timeout(tmp_path: Path) -> None:
    r, out = _run_bundle(tmp_path, tmp_path, "--timeout", "0")
    assert r.returncode == 2 and "--timeout=0" in r.stderr and not out.exists()


def test_every_family_is_documented_in_the_role_readme() -> None:
    readme = (Path(__file__).resolve().parents[2] / "roles" / "monitoring" / "README.md").read_text()
    missing = [name for name in slurm_textfile.FAMILIES if f"| `{name}` |" not in readme]
    assert missing == []


def test_the_role_units_run_this_module_bounded_in_time() -> None:
    import yaml
    from test_monitoring_role import ROLE, render

    internals = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())
    assert internals["__monitoring_slurm_textfile"] == slurm_textfile.TEXTFILE
    fixed = {"__monitoring_slurm_bundle": internals["__monitoring_slurm_bundle"],
             "__monitoring_slurm_textfile": internals["__monitoring_slurm_textfile"],
             "__monitoring_python": "/usr/bin/python3"}
    service = render("clusterctl-slurm-textfile.service.j2", **fixed, monitoring_slurm_textfile_timeout=7)
    exec_start = next(ln for ln in service.splitlines() if ln.startswith("ExecStart="))
    assert exec_start == ("ExecStart=/usr/bin/python3 -s -m clusterctl.report.slurm_textfile --out "
                          "/var/lib/prometheus/node-exporter/clusterctl-slurm.prom --timeout 7")
    assert f"Environment=PYTHONPATH={internals['__monitoring_slurm_bundle']}" in service
    assert "TimeoutStartSec=44" in service.splitlines()  # two tools at 7 s each, and the start-up
    timer = render("clusterctl-slurm-textfile.timer.j2", **fixed, monitoring_slurm_textfile_interval="5min")
    assert "OnUnitActiveSec=5min" in timer.splitlines()


def test_slurm_22_05_capture_of_the_lab() -> None:
    text = read_fixture("sdiag/lab-slurmctld-22.05.8-idle-after-monitoring-test.txt")
    d = registry.parse("sdiag", text)
    stamp = re.search(r"(?m)^sdiag output at .*\((\d+)\)$", text)
    since = re.search(r"(?m)^Data since .*\((\d+)\)$", text)
    assert stamp and since and d["time"] == int(stamp.group(1)) and d["since"] == int(since.group(1))
    assert d["jobs"]["pending"] == value(text, "Jobs pending") and d["jobs"]["running"] == value(text, "Jobs running")
    assert d["server"]["dbd_agent_queue_size"] == value(text, "DBD Agent queue size")
    assert d["backfill"]["last_cycle_when"] is None  # 'N/A': no backfill cycle yet
    assert d["rpc_pending"] == [] and "rpc_pending" in d["sections"]  # 'No pending RPCs'
    s = samples(slurm_textfile.render({"sdiag": ("ok", d), "sinfo": ("missing", None)}, now=1))
    assert s['clusterctl_slurm_jobs{state="running"}'] == value(text, "Jobs running")
    assert s["clusterctl_slurm_rpcs_pending"] == 0
    assert s["clusterctl_slurm_stats_reset_timestamp_seconds"] == int(since.group(1))
    main = block(text, "Main schedule statistics (microseconds):")
    assert s['clusterctl_slurm_scheduler_cycle_seconds{scheduler="main",cycle="max"}'] == pytest.approx(
        value(main, "Max cycle") / 1e6)
    # no backfill cycle ran: sdiag prints no mean, none is written
    assert 'clusterctl_slurm_scheduler_cycle_seconds{scheduler="backfill",cycle="mean"}' not in s
    assert s['clusterctl_slurm_scheduler_cycle_seconds{scheduler="backfill",cycle="last"}'] == 0
    rpcs = block(text, "Remote Procedure Call statistics by message type")
    n = len(re.findall(r"(?m)^\t[A-Z_]+\s+\(\s*\d+\) count:", rpcs))
    assert len([k for k in s if k.startswith("clusterctl_slurm_rpcs{")]) == n == 7
