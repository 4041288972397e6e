"""``clusterctl verify --prom``: each verified host with monitoring on also gets its own part of the verdict
in its node_exporter textfile folder (clusterctl/report/node_textfiles.py, issue 26). The copy runs through
the real ansible-runner ad-hoc path against two hosts of a throw-away inventory (local connection)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_report_prom import _evidence, _samples

from clusterctl.analysis.engine import analyze_dir
from clusterctl.report import node_textfiles, prom

PROMTOOL = shutil.which("promtool")


def test_targets_are_the_hosts_with_monitoring_on() -> None:
    hv: dict[str, dict[str, Any]] = {
          "a": {"monitoring_enabled": True}, "b": {"monitoring_enabled": "yes", "monitoring_textfile_dir": "/srv/tf/"},
          "c": {"monitoring_enabled": False}, "d": {},
          "e": {"monitoring_enabled": True, "node_health_textfile_dir": "/var/tf", "monitoring_textfile_dir": "/x"},
          "f": {"monitoring_enabled": True, "monitoring_textfile_dir": "{{ my_dir }}"}}
    assert node_textfiles.targets(["a", "b", "c", "d", "e", "f", "g"], hv) == {
        "a": node_textfiles.DEFAULT_DIR, "b": "/srv/tf", "e": "/var/tf"}


def test_each_host_gets_its_own_part(tmp_path: Path) -> None:
    report = analyze_dir(_evidence(tmp_path / "ev"), {"nccl_busbw_floor_GBps": 1000.0}, jobs=1)
    hosts = sorted(report.hosts)
    assert len(hosts) >= 2
    folders = {h: "/tf" for h in hosts}
    files = node_textfiles.write_local(report, folders, tmp_path / "prom", now=1700000000, drained=[hosts[0]])
    assert sorted(files) == hosts
    whole = _samples(prom.render(report, now=1700000000, drained=[hosts[0]]))
    for h in hosts:
        part = _samples(files[h].read_text())
        assert {k for k in part if 'host="' in k} == {k for k in whole if f'host="{h}"' in k}
        assert all(whole[k] == v for k, v in part.items() if 'host="' in k)
        assert (f'clusterctl_node_drained{{host="{h}"}}' in part) == (h == hosts[0])
        if PROMTOOL:
            r = subprocess.run([PROMTOOL, "check", "metrics"], input=files[h].read_text(), capture_output=True,
                               text=True, timeout=60)
            assert r.returncode == 0, r.stdout + r.stderr


def test_push_copies_each_part_through_ansible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    inv = tmp_path / "inv"
    inv.mkdir()
    tf1, tf2 = tmp_path / "n1-tf", tmp_path / "n2-tf"
    tf1.mkdir()
    tf2.mkdir()
    local = {"ansible_connection": "local", "ansible_python_interpreter": shutil.which("python3") or "python3"}
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"slurm_compute": {"hosts": {
        "n1": {**local, "monitoring_textfile_dir": str(tf1)}, "n2": {**local, "monitoring_textfile_dir": str(tf2)},
        "n3": local}}}}}))
    out = tmp_path / "prom"
    out.mkdir()
    for h in ("n1", "n2"):
        (out / f"{h}.prom").write_text(f'clusterctl_hosts{{status="{h}"}} 1\n')
    failed = node_textfiles.push(inv, {"n1": str(tf1), "n2": str(tf2), "n3": str(tmp_path / "missing")}, out)
    assert (tf1 / prom.TEXTFILE).read_text() == 'clusterctl_hosts{status="n1"} 1\n'
    assert (tf2 / prom.TEXTFILE).read_text() == 'clusterctl_hosts{status="n2"} 1\n'
    assert oct((tf1 / prom.TEXTFILE).stat().st_mode & 0o777) == "0o644"
    assert list(failed) == ["n3"]  # no part rendered for it, and its folder does not exist: said, not raised
