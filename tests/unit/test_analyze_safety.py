"""clusterctl analyze DIR reads only regular files inside DIR, reports an empty host folder as "no
evidence" (exit 3), and validates --inventory like every other command (exit 2, nothing read)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, read_fixture
from typer.testing import CliRunner

from clusterctl.analysis.engine import NO_EVIDENCE, analyze_dir
from clusterctl.cli import app

runner = CliRunner()
SECRET = "root:x:0:0:SECRET-OUTSIDE-THE-FOLDER:/root:/bin/bash\n"


def evidence(tmp: Path) -> Path:
    ev = tmp / "ev"
    (ev / "n1").mkdir(parents=True)
    (ev / "n1" / "ibstat.txt").write_text(read_fixture("ibstat/h100-all-active-2.txt"))
    return ev


def outside(tmp: Path) -> Path:
    d = tmp / "outside"
    d.mkdir(exist_ok=True)
    (d / "passwd").write_text(SECRET)
    return d


def messages(report: object, host: str) -> list[str]:
    r = report.hosts[host]  # type: ignore[attr-defined]
    return [f.message for f in r.findings + r.notes]


def test_a_file_symlink_leaving_the_folder_is_refused_and_named(tmp_path: Path) -> None:
    ev = evidence(tmp_path)
    (ev / "n1" / "nvidia-smi-q.txt").symlink_to(outside(tmp_path) / "passwd")
    rep = analyze_dir(ev)
    msgs = messages(rep, "n1")
    assert any(m.startswith("n1/nvidia-smi-q.txt: symlink to ") and "outside the evidence folder: refused" in m
               for m in msgs), msgs
    assert "SECRET" not in json.dumps(rep.to_dict())
    assert rep.hosts["n1"].kinds == ["ibstat"]  # the refused file is not evidence


def test_a_symlink_inside_the_folder_is_followed(tmp_path: Path) -> None:
    ev = evidence(tmp_path)
    (ev / "n1" / "ibstat#copy.txt").symlink_to(ev / "n1" / "ibstat.txt")
    assert sorted(analyze_dir(ev).hosts["n1"].kinds) == ["ibstat", "ibstat#copy"]


def test_a_host_folder_symlink_leaving_the_folder_is_refused(tmp_path: Path) -> None:
    ev = evidence(tmp_path)
    out = outside(tmp_path)
    (out / "ibstat.txt").write_text(SECRET)
    (ev / "n2").symlink_to(out)
    rep = analyze_dir(ev)
    assert set(rep.hosts) == {"n1"}
    assert rep.refused and rep.refused[0].startswith("n2/: symlink to ") and str(out) in rep.refused[0]
    r = runner.invoke(app, ["analyze", str(ev), "--json"])
    assert "n2/: symlink to" in r.stderr and "SECRET" not in r.stdout


def test_a_collect_status_symlink_is_refused(tmp_path: Path) -> None:
    ev = evidence(tmp_path)
    (ev / "n1" / "_collect.json").symlink_to(outside(tmp_path) / "passwd")
    assert any(m.startswith("n1/_collect.json: symlink to") for m in messages(analyze_dir(ev), "n1"))


def test_fifo_device_and_folder_named_like_a_kind_are_refused_without_blocking(tmp_path: Path) -> None:
    ev = evidence(tmp_path)
    os.mkfifo(ev / "n1" / "nvidia-smi-q.txt")  # nobody writes: an open for reading would block forever
    (ev / "n1" / "ibstatus.txt").mkdir()
    try:
        os.mknod(ev / "n1" / "nvidia-smi-topo.txt", 0o600 | 0o020000, os.makedev(1, 3))  # a char device (null)
        device = True
    except (PermissionError, OSError):
        device = False
    # through the CLI in a subprocess, so a blocking read fails the test by its timeout
    env = {**os.environ, "PYTHONPATH": f"{REPO}:{REPO / 'plugins' / 'module_utils'}"}
    out = subprocess.run([sys.executable, "-m", "clusterctl.cli", "analyze", str(ev), "--json"], env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    d = json.loads(out.stdout)["result"]
    msgs = [f["message"] for f in d["hosts"]["n1"]["findings"]]
    assert "n1/nvidia-smi-q.txt: a fifo, not a regular file: refused" in msgs, msgs
    assert "n1/ibstatus.txt: a folder, not a regular file: refused" in msgs, msgs
    if device:
        assert "n1/nvidia-smi-topo.txt: a device, not a regular file: refused" in msgs, msgs
    assert d["hosts"]["n1"]["status"] == "degraded"  # refused evidence is a warning, never a silent pass


def test_an_empty_host_folder_is_no_evidence_and_exit_3(tmp_path: Path) -> None:
    ev = evidence(tmp_path)
    (ev / "n2").mkdir()
    rep = analyze_dir(ev)
    assert rep.hosts["n2"].status == NO_EVIDENCE and rep.no_evidence == ["n2"]
    assert rep.to_dict()["summary"]["no_evidence"] == 1
    r = runner.invoke(app, ["analyze", str(ev)])
    assert r.exit_code == 3, r.output
    assert "no evidence" in r.stdout
    shutil.rmtree(ev / "n2")
    assert runner.invoke(app, ["analyze", str(ev)]).exit_code == 0


def test_a_folder_of_refused_files_only_is_no_evidence(tmp_path: Path) -> None:
    ev = tmp_path / "ev"
    (ev / "n1").mkdir(parents=True)
    (ev / "n1" / "ibstat.txt").symlink_to(outside(tmp_path) / "passwd")
    rep = analyze_dir(ev)
    # the refusal is a warning (degraded), and nothing was judged: not healthy either way
    assert rep.hosts["n1"].status == "degraded" and rep.hosts["n1"].kinds == []


@pytest.mark.parametrize("bad", ["fabric-unknown", "host-in-two-groups"])
def test_a_bad_inventory_is_refused_before_anything_is_read(tmp_path: Path, bad: str) -> None:
    ev = evidence(tmp_path)
    html = tmp_path / "r.html"
    expect = dict(line.split(": ", 1) for line in (REPO / "tests" / "bad_inventories" / bad / "EXPECT.txt")
                  .read_text().splitlines() if ": " in line)
    r = runner.invoke(app, ["analyze", str(ev), "--inventory", str(REPO / "tests" / "bad_inventories" / bad),
                            "--html", str(html)])
    assert r.exit_code == 2, r.output
    assert "rejected" in r.stderr and "nothing was run" in r.stderr
    assert expect["key"].split(".")[-1] in r.stderr and expect["value"] in r.stderr
    assert r.stdout == "" and not html.exists()


def test_an_oversized_file_is_refused_and_named(tmp_path: Path) -> None:
    ev = evidence(tmp_path)
    with (ev / "n1" / "nvidia-smi-q.txt").open("wb") as f:  # sparse: 65 MiB that take no disk
        f.truncate(65 * 1024 * 1024)
    msgs = messages(analyze_dir(ev, jobs=1), "n1")
    assert "n1/nvidia-smi-q.txt: the file is larger than 64 MiB: refused" in msgs, msgs


@pytest.mark.parametrize("source", ["/dev/zero", "-"])
def test_parse_of_an_endless_stream_ends_with_exit_2(source: str) -> None:
    """`clusterctl parse KIND /dev/zero` read until the memory was gone; now 64 MiB at most."""
    env = {**os.environ, "PYTHONPATH": f"{REPO}:{REPO / 'plugins' / 'module_utils'}"}
    with open("/dev/zero", "rb") as zero:
        out = subprocess.run([sys.executable, "-m", "clusterctl.cli", "parse", "ibstat", source], env=env,
                             stdin=zero, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 2, out.stderr
    assert "larger than 64 MiB: refused" in out.stderr and "Traceback" not in out.stderr
