"""/proc/<pid>/limits: the parser (on real captures in tests/fixtures/proc-limits), the collector's
slurmd capture over a simulated procfs, and the memlock judgement of slurmd."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ccparse import registry
from ccparse.common import ParseError
from conftest import read_fixture
from fabric_modrun import run_module

from clusterctl.analysis.checks.limits import judge_slurmd_memlock, systemd_size
from clusterctl.analysis.engine import analyze_dir


def parse(rel: str) -> dict:
    result: dict = registry.parse("proc-limits", read_fixture(rel))
    return result


def as_slurmd(rel: str, pid: int = 812) -> dict:
    """The fixture as fabric_evidence returns a slurmd capture: its header line first."""
    body = read_fixture(rel).split("\n", 1)[1]  # without the fixture's source line
    result: dict = registry.parse("proc-limits", f"# process: slurmd pid {pid}\n{body}")
    return result


def test_parse_real_captures() -> None:
    low = parse("proc-limits/debian12-memlock-64k.txt")
    # "Max locked memory         65536                65536                bytes"
    assert low["limits"]["max_locked_memory"] == {"soft": 65536, "hard": 65536, "unit": "bytes"}
    root = parse("proc-limits/debian12-root-shell.txt")
    # "Max stack size            8388608              unlimited            bytes"
    assert root["limits"]["max_stack_size"] == {"soft": 8388608, "hard": None, "unit": "bytes"}
    # "Max locked memory         8388608              8388608              bytes"
    assert root["limits"]["max_locked_memory"]["soft"] == 8388608
    # "Max nice priority         0                    0" (no unit column)
    assert root["limits"]["max_nice_priority"] == {"soft": 0, "hard": 0, "unit": ""}
    assert len(root["limits"]) == 16 and root["process"] is None


def test_collector_header_names_the_process() -> None:
    d = as_slurmd("proc-limits/debian12-memlock-64k.txt", pid=4242)
    assert (d["process"], d["pid"]) == ("slurmd", 4242)


@pytest.mark.parametrize("text, line", [
    ("hello world\n", 1),
    ("Limit                     Soft Limit           Hard Limit           Units\nMax cpu time  lots\n", 2),
    ("", None),
])
def test_garbage_is_a_parse_error_with_its_line(text: str, line: int | None) -> None:
    with pytest.raises(ParseError) as err:
        registry.parse("proc-limits", text)
    assert err.value.tool == "/proc/<pid>/limits" and err.value.line == line


def test_systemd_sizes() -> None:
    assert systemd_size("infinity") is None
    assert systemd_size("4M") == 4 * 1024 * 1024
    assert systemd_size("64G") == 64 * 1024 ** 3
    assert systemd_size("65536") == 65536
    with pytest.raises(ValueError):
        systemd_size("lots")


def test_memlock_below_the_inventory_value_is_a_warning() -> None:
    res = judge_slurmd_memlock("gpu001", as_slurmd("proc-limits/debian12-memlock-64k.txt"), {})
    (f,) = res.findings
    assert (f.check, f.severity, f.subject) == ("memlock", "warning", "gpu001/slurmd")
    assert "memlock 64 KiB, expected unlimited" in f.message and "pid 812" in f.message
    eight = as_slurmd("proc-limits/debian12-root-shell.txt")  # 8388608 bytes = 8 MiB
    assert not judge_slurmd_memlock("n", eight, {"slurm_compute_memlock_limit": "4M"}).findings
    assert not judge_slurmd_memlock("n", eight, {"slurm_compute_memlock_limit": "8M"}).findings
    (f,) = judge_slurmd_memlock("n", eight, {"slurm_compute_memlock_limit": "16M"}).findings
    assert "memlock 8 MiB, expected 16 MiB" in f.message


def test_not_judged_without_an_expectation_or_for_other_named_processes() -> None:
    low = as_slurmd("proc-limits/debian12-memlock-64k.txt")
    assert not judge_slurmd_memlock("n", low, {"slurm_compute_memlock_limit": ""}).findings
    (f,) = judge_slurmd_memlock("n", low, {"slurm_compute_memlock_limit": "lots"}).findings
    assert "not judged" in f.message
    other = registry.parse("proc-limits",
                           "# process: sshd pid 7\n" + read_fixture("proc-limits/debian12-memlock-64k.txt"))
    assert not judge_slurmd_memlock("n", other, {}).findings
    # a paste naming no process: judged as the process the operator looked at
    (f,) = judge_slurmd_memlock("n", parse("proc-limits/debian12-memlock-64k.txt"), {}).findings
    assert (f.subject, f.severity) == ("n/process", "warning") and "memlock 64 KiB, expected unlimited" in f.message


def _proc(root: Path, pid: int, comm: str, limits: str | None = None) -> None:
    d = root / str(pid)
    d.mkdir(parents=True)
    (d / "comm").write_text(comm + "\n")
    if limits is not None:
        (d / "limits").write_text(limits)


def test_collector_reads_slurmds_limits(tmp_path: Path) -> None:
    body = read_fixture("proc-limits/debian12-memlock-64k.txt").split("\n", 1)[1]
    _proc(tmp_path / "proc", 77, "bash", body)
    _proc(tmp_path / "proc", 812, "slurmd", body)
    r = run_module("fabric_evidence", {"kinds": ["proc-limits"], "sysfs_root": str(tmp_path / "sys"),
                                       "proc_root": str(tmp_path / "proc")}, check_mode=True)
    ev = r["evidence"]["proc-limits#slurmd"]
    assert ev["status"] == "ok" and r["changed"] is False
    assert ev["stdout"] == f"# process: slurmd pid 812\n{body}"
    assert ev["cmd"] == ["read", str(tmp_path / "proc" / "812" / "limits")]


def test_collector_without_slurmd_skips(tmp_path: Path) -> None:
    _proc(tmp_path / "proc", 77, "bash")
    r = run_module("fabric_evidence", {"kinds": ["proc-limits"], "sysfs_root": str(tmp_path / "sys"),
                                       "proc_root": str(tmp_path / "proc")})
    ev = r["evidence"]["proc-limits#slurmd"]
    assert ev["status"] == "skipped" and "slurmd is not running" in ev["stderr"]


def test_analyze_dir_judges_the_slurmd_capture(tmp_path: Path) -> None:
    host = tmp_path / "gpu001"
    host.mkdir()
    body = read_fixture("proc-limits/debian12-memlock-64k.txt").split("\n", 1)[1]
    (host / "proc-limits#slurmd.txt").write_text(f"# process: slurmd pid 812\n{body}")
    (host / "_collect.json").write_text(json.dumps({"proc-limits#slurmd": {"status": "ok", "rc": 0, "stderr": ""}}))
    report = analyze_dir(tmp_path, {"slurm_compute_memlock_limit": "infinity"})
    rep = report.hosts["gpu001"]
    assert rep.status == "degraded"
    assert [(f.check, f.subject) for f in rep.findings] == [("memlock", "gpu001/slurmd")]


def test_unlimited_meets_any_expectation() -> None:
    # the H200 machine: "Max locked memory         unlimited            unlimited            bytes"
    unlimited = as_slurmd("proc-limits/h200-host-memlock-unlimited.txt")
    assert unlimited["limits"]["max_locked_memory"] == {"soft": None, "hard": None, "unit": "bytes"}
    for want in ("infinity", "4M", "64G"):
        assert not judge_slurmd_memlock("n", unlimited, {"slurm_compute_memlock_limit": want}).findings


def test_real_slurmd_at_the_configured_limit() -> None:
    # "Max locked memory         4194304              4194304              bytes" (LimitMEMLOCK=4M)
    d = as_slurmd("proc-limits/slurmd-lab-memlock-4m.txt", pid=1293)
    assert d["limits"]["max_locked_memory"] == {"soft": 4194304, "hard": 4194304, "unit": "bytes"}
    assert d["limits"]["max_stack_size"] == {"soft": None, "hard": None, "unit": "bytes"}
    assert not judge_slurmd_memlock("lab-c1", d, {"slurm_compute_memlock_limit": "4M"}).findings
    (f,) = judge_slurmd_memlock("lab-c1", d, {"slurm_compute_memlock_limit": "infinity"}).findings
    assert "memlock 4 MiB, expected unlimited" in f.message


def test_a_listing_without_its_locked_memory_row_parses_without_it() -> None:
    # a /proc/<pid>/limits cut (or trimmed) before 'Max locked memory': what is there is read; the check says it
    # cannot judge memlock (tests/unit/test_session22_verdicts.py)
    text = ("Limit                     Soft Limit           Hard Limit           Units\n"
            "Max cpu time              unlimited            unlimited            seconds\n")
    d = registry.parse("proc-limits", text)
    assert d["limits"] == {"max_cpu_time": {"soft": None, "hard": None, "unit": "seconds"}}
