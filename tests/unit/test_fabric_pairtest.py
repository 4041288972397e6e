"""fabric_pairtest: both sides of a pair over real TCP on loopback, with the fake ib_write_bw.

The fake (tests/fakebin/ib_write_bw) listens/connects like perftest and reports 96 % of the slower
side's port rate read from each side's simulated sysfs tree: lab-roce-healthy.yml has two ports at
400 Gb/s; lab-roce-degraded.yml has mlx5_1 port 1 trained at 200 of 400 Gb/s.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import simfabric
from ccparse import registry
from fabric_modrun import run_module

from clusterctl.analysis.checks.perftest import judge_ib_write_bw

REPO = Path(__file__).resolve().parents[2]
SIM = REPO / "tests" / "fixtures" / "simfabric"
FAKE = REPO / "tests" / "fakebin" / "ib_write_bw"


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake perftest server listens on 127.0.0.1 only in these tests."""
    monkeypatch.setenv("FAKE_IB_BIND", "127.0.0.1")


def node(tmp: Path, desc: str) -> Path:
    simfabric.build(simfabric.load(SIM / desc), tmp / "sys")
    shutil.copytree(REPO / "tests" / "fakebin", tmp / "bin", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp / "proc").mkdir()
    return tmp


def free_port_pair() -> int:
    """A base port with base and base+1 free on loopback."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base < 65000:
            with socket.socket() as s2:
                try:
                    s2.bind(("127.0.0.1", base + 1))
                except OSError:
                    continue
            return base
    raise RuntimeError("no free port pair")


def params(root: Path, role: str, peer: str, base: int, **kw: object) -> dict:
    p = {"role": role, "peer": peer, "base_port": base, "seconds": 1, "connect_timeout": 20,
         "sysfs_root": str(root / "sys"), "proc_root": str(root / "proc"), "tool_dirs": [str(root / "bin")]}
    p.update(kw)
    return p


def raw_fake(root: Path, dev: str, port: int, server: str | None = None) -> subprocess.Popen:
    cmd = [sys.executable, str(FAKE), "-d", dev, "-D", "1", "-s", "1048576", "-p", str(port), "--report_gbits"]
    if server:
        cmd.append(server)
    env = dict(os.environ, FAKE_IB_SYSFS=str(root / "sys"))
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_client_retries_until_the_server_listens(tmp_path: Path) -> None:
    good, bad = node(tmp_path / "good", "lab-roce-healthy.yml"), node(tmp_path / "bad", "lab-roce-degraded.yml")
    base = free_port_pair()
    servers: list[subprocess.Popen] = []
    # the server side starts 2 s after the client: the client must keep retrying, not fail
    timer = threading.Timer(2.0, lambda: servers.extend(raw_fake(bad, d, base + i) for i, d in
                                                        enumerate(["mlx5_0", "mlx5_1"])))
    timer.start()
    t0 = time.monotonic()
    r = run_module("fabric_pairtest", params(good, "client", "127.0.0.1", base))
    timer.join()
    for s in servers:
        s.wait(timeout=20)
    assert time.monotonic() - t0 >= 2.0
    assert r["changed"] is False and "failed" not in r, r
    res = r["tests"]
    assert sorted(res) == ["mlx5_0", "mlx5_1"]
    assert all(v["status"] == "ok" for v in res.values()), res
    # rail i uses TCP port base+i; the client names the server last, as perftest wants
    assert res["mlx5_1"]["cmd"][-1] == "127.0.0.1" and ["-p", str(base + 1)] == res["mlx5_1"]["cmd"][9:11]
    bw = {d: registry.parse("ib_write_bw", v["stdout"])["bw_avg_gbps"] for d, v in res.items()}
    assert bw == {"mlx5_0": pytest.approx(0.96 * 400), "mlx5_1": pytest.approx(0.96 * 200)}
    # the pair's own check flags the rail that trained down, not the healthy one
    exp = {"ib_rate_gbps": 400}
    assert not judge_ib_write_bw("good", registry.parse("ib_write_bw", res["mlx5_0"]["stdout"]), exp).findings
    f = judge_ib_write_bw("good", registry.parse("ib_write_bw", res["mlx5_1"]["stdout"]), exp).findings
    assert [x.severity for x in f] == ["critical"] and "48%" in f[0].message


def test_server_waits_for_its_client(tmp_path: Path) -> None:
    good, bad = node(tmp_path / "good", "lab-roce-healthy.yml"), node(tmp_path / "bad", "lab-roce-degraded.yml")
    base = free_port_pair()
    outputs: list[str] = []

    def clients() -> None:
        for i, dev in enumerate(["mlx5_0", "mlx5_1"]):
            for _ in range(100):
                p = raw_fake(good, dev, base + i, server="127.0.0.1")
                out, _ = p.communicate(timeout=20)
                if p.returncode == 0:
                    outputs.append(out)
                    break
                time.sleep(0.2)

    t = threading.Thread(target=clients)
    t.start()
    r = run_module("fabric_pairtest", params(bad, "server", "good", base))
    t.join()
    assert r["changed"] is False and all(v["status"] == "ok" for v in r["tests"].values()), r
    assert "-x" in r["tests"]["mlx5_0"]["cmd"]  # RoCE: the RoCE v2 GID index is passed
    assert len(outputs) == 2


def roce_v2_ipv4_index(sys_root: Path, dev: str) -> int:
    """Read straight from the tree: the lowest GID index typed 'RoCE v2' holding ::ffff:a.b.c.d."""
    port = sys_root / "class" / "infiniband" / dev / "ports" / "1"
    found = []
    for t in (port / "gid_attrs" / "types").iterdir():
        try:
            typ = t.read_text().strip()
        except OSError:
            continue
        gid = (port / "gids" / t.name).read_text().strip()
        if typ == "RoCE v2" and gid.startswith("0000:0000:0000:0000:0000:ffff:"):
            found.append(int(t.name))
    return min(found)


def test_roce_gid_index_comes_from_sysfs(tmp_path: Path) -> None:
    good = node(tmp_path / "good", "lab-roce-healthy.yml")
    r = run_module("fabric_pairtest", params(good, "client", "127.0.0.1", free_port_pair(), connect_timeout=1))
    cmd = r["tests"]["mlx5_0"]["cmd"]
    assert cmd[cmd.index("-x") + 1] == str(roce_v2_ipv4_index(good / "sys", "mlx5_0"))


def test_no_server_is_an_error_naming_the_peer(tmp_path: Path) -> None:
    good = node(tmp_path / "good", "lab-roce-healthy.yml")
    r = run_module("fabric_pairtest", params(good, "client", "127.0.0.1", free_port_pair(), connect_timeout=2))
    assert r["changed"] is False and "failed" not in r
    for v in r["tests"].values():
        assert v["status"] == "error"
        assert "server 127.0.0.1 did not accept within 2 s" in v["stderr"]
        assert "Couldn't connect" in v["stderr"]


def test_tool_missing_device_absent_and_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    good = node(tmp_path / "good", "lab-roce-healthy.yml")
    r = run_module("fabric_pairtest", params(good, "client", "x", 18515, tool_dirs=[]))
    assert r["tests"]["_"]["status"] == "tool_missing"
    (tmp_path / "empty").mkdir()
    r = run_module("fabric_pairtest", params(good, "server", "x", 18515, sysfs_root=str(tmp_path / "empty")))
    assert r["tests"]["_"]["status"] == "device_absent"
    (good / "proc" / "4242").mkdir()
    (good / "proc" / "4242" / "comm").write_text("slurmstepd\n")
    r = run_module("fabric_pairtest", params(good, "server", "x", 18515))
    assert r["tests"]["_"]["status"] == "skipped" and r["running_jobs"] == 1
    assert all(x["changed"] is False for x in [r])
