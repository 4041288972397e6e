"""The node check (clusterctl/lifecycle/nodecheck.py) through its production path: the bundle the
node_health role installs (clusterctl/lifecycle/bundle.py), run by the system python3 as Slurm runs
it, on simulated sysfs trees (tests/simfabric.py), real kernel-log and nvidia-smi -q captures
(tests/fixtures), and stand-ins for nvidia-smi, systemctl and scontrol that print captured text."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import simfabric
from conftest import read_fixture

from clusterctl.lifecycle import bundle, core

PY = shutil.which("python3", path="/usr/bin:/bin") or "python3"
PORTS = {"devices": [{"name": f"mlx5_{i}", "ports": [{"port": 1, "link_layer": "InfiniBand", "rate": 400}]}
                     for i in range(2)]}


@pytest.fixture(scope="module")
def pyz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "node-check.pyz"
    bundle.write(out)
    return out


def _body(fixture: str) -> str:
    """A capture without its provenance line (what the kernel wrote)."""
    return read_fixture(fixture).split("\n", 1)[1]


class Node:
    def __init__(self, tmp: Path, pyz: Path, **conf: Any) -> None:
        self.tmp, self.pyz = tmp, pyz
        self.bin = tmp / "bin"
        self.bin.mkdir(exist_ok=True)
        self.scontrol_log = tmp / "scontrol.log"
        self.kern = tmp / "kern.log"
        self.kern.touch()
        self.show_node = "NodeName=gpu07 State=IDLE Partitions=gpu\n"
        self.conf = {"state_dir": str(tmp / "state"), "kernel_log": str(self.kern), "nodename": "gpu07",
                     "sysfs_root": str(tmp / "none"), "dev_root": str(tmp / "dev"), "proc_root": str(tmp / "proc"),
                     "tool_dirs": [str(self.bin)], "tool_timeout": 5, "budget": 20, **conf}
        self.tool("scontrol",
                  f'case "$1" in show) cat {tmp}/show-node.txt;; *) echo "$@" >> {self.scontrol_log};; esac')

    def tool(self, name: str, body: str) -> None:
        p = self.bin / name
        p.write_text(f"#!/bin/sh\n{body}\n")
        p.chmod(0o755)

    def run(self, *args: str) -> tuple[int, str, str]:
        (self.tmp / "c.json").write_text(json.dumps(self.conf))
        (self.tmp / "show-node.txt").write_text(self.show_node)
        p = subprocess.run([PY, str(self.pyz), "--config", str(self.tmp / "c.json"), *args], capture_output=True,
                           text=True, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}, check=False, timeout=120)
        assert not p.stderr, p.stderr
        drained = self.scontrol_log.read_text() if self.scontrol_log.exists() else ""
        self.scontrol_log.unlink(missing_ok=True)
        return p.returncode, p.stdout, drained

    def verdict(self, line: str) -> dict[str, Any]:
        run_dir = Path(re.search(r"evidence=(\S+):", line).group(1))  # type: ignore[union-attr]
        return json.loads((run_dir / "verdict.json").read_text())


def test_kernel_log_since_the_last_run(tmp_path: Path, pyz: Path) -> None:
    node = Node(tmp_path, pyz)
    node.kern.write_text(_body("kernel-log/xid69-31-syslog.txt"))  # before the check was installed
    assert node.run() == (0, "", "")  # the first run only sets the cursor
    with node.kern.open("a") as fh:
        fh.write(_body("kernel-log/xid79-fallen-off-bus-journal.txt"))
    rc, out, drained = node.run()
    # read off the capture: 'NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.'
    assert rc == 1 and out.startswith("clusterctl: node-check: xid gpu07/0000:2b:00.0 evidence=")
    assert "Xid 79" in out
    assert drained.startswith("update NodeName=gpu07 State=DRAIN Reason=clusterctl: node-check: xid gpu07/0000:2b:00")
    v = node.verdict(out)
    assert v["status"] == "failed" and {f["kind"] for f in v["findings"]} == {"kernel-log"}
    run_dir = Path(re.search(r"evidence=(\S+):", out).group(1))  # type: ignore[union-attr]
    assert (run_dir / "kernel-log.txt").read_text() == _body("kernel-log/xid79-fallen-off-bus-journal.txt")
    # the loop reads the remedy off this reason: the xid check's failed rules say reboot
    reason = drained.split("Reason=", 1)[1].strip()
    assert core.remedy_of(reason)[0] == "reboot" and len(reason) <= 200
    assert node.run() == (0, "", "")  # nothing new since
    # Xid 69/31 (application faults / a class error, not held against the node) do not fail it
    with node.kern.open("a") as fh:
        fh.write(_body("kernel-log/xid69-31-syslog.txt"))
    assert node.run()[0] == 0


def test_kernel_ring_buffer_without_journald(tmp_path: Path, pyz: Path) -> None:
    node = Node(tmp_path, pyz, kernel_log="dmesg")
    ring = tmp_path / "ring.txt"
    ring.write_text("[   10.100000] Linux version 6.1.0\n")
    node.tool("dmesg", f"cat {ring}")
    assert node.run() == (0, "", "")  # the cursor: the last timestamp
    # read off the capture (dmesg form, timestamps kept): GPU 0000:b3:00.0 fallen off the bus, no Xid
    with ring.open("a") as fh:
        fh.write(_body("kernel-log/fallen-off-bus-no-xid-dmesg.txt"))
    rc, out, _ = node.run("--no-drain")
    assert rc == 1 and out.startswith("clusterctl: node-check: xid ") and "fallen off the bus" in out
    assert node.run()[0] == 0


def test_fatal_aer_fails_and_an_admin_drain_is_not_overwritten(tmp_path: Path, pyz: Path) -> None:
    node = Node(tmp_path, pyz)
    node.run()
    with node.kern.open("a") as fh:
        fh.write(_body("kernel-log/syslog-aer-uncorrected-fatal-completion-timeout-no-xid.txt"))
    node.show_node = ("NodeName=gpu07 State=IDLE+DRAIN Partitions=gpu\n"
                      "   Reason=bob: new PSU [root@2026-12-01T00:00:00]\n")
    rc, out, drained = node.run()
    assert rc == 1 and "kernel_pcie gpu07/0000:00:01.0" in out and "already out of service" in out
    assert drained == ""


def test_gpu_state_from_nvidia_smi_q(tmp_path: Path, pyz: Path) -> None:
    node = Node(tmp_path, pyz, gpus=8)
    (tmp_path / "smi.txt").write_text(_body("nvidia-smi-q/a100-xid63-dram-correctable-177-remap-pending-excerpt.txt"))
    node.tool("nvidia-smi", f"cat {tmp_path}/smi.txt")
    rc, out, drained = node.run("--no-drain")
    assert rc == 1 and drained == ""
    checks = {f["check"] for f in node.verdict(out)["findings"] if f["severity"] == "critical"}
    assert "gpu_row_remap" in checks  # the capture: Remapped Rows Pending : Yes
    (tmp_path / "smi.txt").write_text(_body("nvidia-smi-q/h100x8-535.183.01-full-sw-thermal-active.txt"))
    assert node.run()[0] == 0  # 8 GPUs, Reset Required: No; SW thermal slowdown is degraded, not a drain


def test_a_healthy_h200_under_load_raises_nothing(tmp_path: Path, pyz: Path) -> None:
    """The capture the node check itself took on a borrowed H200 during an all_reduce_perf + GEMM load
    (tests/fixtures/h200-live/node-check/: 40 runs, idle and loaded, all healthy): SW Power Cap Active at
    ~680 W is the normal state of a GPU at its power limit, not a fault; no HW slowdown, ECC, remap or
    reset state in it. A check that judged the power cap would drain every busy node."""
    node = Node(tmp_path, pyz, gpus=1, spec={"gpus_per_node": 1})
    (tmp_path / "smi.txt").write_text(_body("h200-live/nvidia-smi-q-load-580.159.04.txt"))
    node.tool("nvidia-smi", f"cat {tmp_path}/smi.txt")
    rc, out, drained = node.run("--no-drain", "--json")
    assert rc == 0 and drained == "", out
    v = json.loads(out)
    assert v["status"] == "healthy" and not [f for f in v["findings"] if f["severity"] != "info"], v
    assert not v["not_judged"], v


def test_rdma_ports_from_a_simulated_tree(tmp_path: Path, pyz: Path) -> None:
    healthy = simfabric.build(PORTS, tmp_path / "good")
    node = Node(tmp_path, pyz, sysfs_root=str(healthy), rdma_devices=2,
                spec={"rdma_devices_per_node": 2, "ib_rate_gbps": 400, "fabric": "infiniband"})
    assert node.run() == (0, "", "")
    down = {"devices": [dict(PORTS["devices"][0]), {"name": "mlx5_1", "ports": [
        {"port": 1, "link_layer": "InfiniBand", "rate": 400, "faults": ["port_down"]}]}]}
    node.conf["sysfs_root"] = str(simfabric.build(down, tmp_path / "bad"))
    rc, out, drained = node.run()
    assert rc == 1 and out.startswith("clusterctl: node-check: ib_port_state gpu07/mlx5_1/1 evidence=")
    assert core.remedy_of(drained.split("Reason=", 1)[1])[0] == "reboot"


def test_nvswitch_services_and_mounts(tmp_path: Path, pyz: Path) -> None:
    node = Node(tmp_path, pyz, mounts=["/mnt/shared"])
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "mounts").write_text("sysfs /sys sysfs rw,nosuid 0 0\nJuiceFS:vol /mnt/shared fuse.juicefs "
                                              "rw,relatime,user_id=0 0 0\n")
    assert node.run() == (0, "", "")  # no NVSwitch: the services are not asked about
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "nvidia-nvswitch0").touch()
    node.tool("systemctl", "printf 'Id=nvidia-fabricmanager.service\\nLoadState=loaded\\nActiveState=failed\\n"
                           "SubState=failed\\n\\nId=nvidia-persistenced.service\\nLoadState=loaded\\n"
                           "ActiveState=active\\nSubState=running\\n'")
    (tmp_path / "proc" / "mounts").write_text("sysfs /sys sysfs rw,nosuid 0 0\n")
    rc, out, _ = node.run("--no-drain")
    bad = {(f["check"], f["subject"]) for f in node.verdict(out)["findings"] if f["severity"] == "critical"}
    assert rc == 1 and bad == {("node_service", "gpu07/nvidia-fabricmanager.service"),
                               ("node_mount", "gpu07:/mnt/shared")}


def test_a_hung_tool_is_cut_and_the_run_stays_in_budget(tmp_path: Path, pyz: Path) -> None:
    node = Node(tmp_path, pyz, gpus=8, tool_timeout=1, budget=3)
    node.tool("nvidia-smi", "sleep 60")
    t0 = time.monotonic()
    rc, out, drained = node.run("--json")
    assert time.monotonic() - t0 < 15
    v = json.loads(out)
    assert "nvidia-smi -q: timeout" in v["not_judged"]["nvidia-smi-q"]
    assert rc == 0 and drained == ""  # not judged is not a failure (collect.tool_failed is degraded)
    node.tool("nvidia-smi", "exit 0")
    os.remove(node.bin / "nvidia-smi")
    rc, out, _ = node.run("--no-drain")  # GPUs expected and no nvidia-smi: the GPUs cannot be judged
    assert rc == 1 and "collect gpu07" in out


def test_evidence_runs_are_pruned(tmp_path: Path, pyz: Path) -> None:
    node = Node(tmp_path, pyz, keep=2)
    for _ in range(4):
        node.run()
    assert len(list((tmp_path / "state" / "runs").iterdir())) == 2


def test_bundle_is_the_same_bytes_for_the_same_sources() -> None:
    assert bundle.build() == bundle.build()


def test_identity_for_the_burn_in_gate(tmp_path: Path, pyz: Path) -> None:
    from clusterctl.lifecycle import burnin

    sysfs = simfabric.build(PORTS, tmp_path / "sys")
    node = Node(tmp_path, pyz, gpus=8, sysfs_root=str(sysfs))
    smi = _body("nvidia-smi-q/h100x8-535.183.01-full-sw-thermal-active.txt")
    (tmp_path / "smi.txt").write_text(smi)
    node.tool("nvidia-smi", f"cat {tmp_path}/smi.txt")
    rc, out, _ = node.run("--identity")
    ident = json.loads(out)
    # read off the capture: Driver Version 535.183.01, 8 GPUs each with its UUID and serial
    assert rc == 0 and ident["driver"] == "535.183.01" and len(ident["gpus"]) == 8
    uuids = re.findall(r"GPU UUID\s+: (\S+)", smi)
    serials = re.findall(r"Serial Number\s+: (\S+)", smi)
    assert sorted(ident["gpus"]) == sorted(f"{u}/{s}" for u, s in zip(uuids, serials, strict=True))
    guids = [(sysfs / "class" / "infiniband" / d / "node_guid").read_text().strip() for d in ("mlx5_0", "mlx5_1")]
    assert ident["nics"] == sorted(guids) and ident["kernel"] == os.uname().release
    # the fingerprint ignores order; a swapped GPU changes it and is named
    again = {**ident, "gpus": list(reversed(ident["gpus"]))}
    assert burnin.fingerprint(again) == burnin.fingerprint(ident)
    swapped = {**ident, "gpus": [*ident["gpus"][1:], "GPU-new/123"]}
    assert burnin.fingerprint(swapped) != burnin.fingerprint(ident)
    assert burnin.changes(ident, swapped) == "gpus -1 +1"


def _samples(text: str) -> dict[str, str]:
    """``name{labels}`` -> value of a textfile, the timestamp sample left out."""
    return {ln.rsplit(" ", 1)[0]: ln.rsplit(" ", 1)[1] for ln in text.splitlines()
            if ln and not ln.startswith("#") and not ln.startswith("clusterctl_last_verify_timestamp_seconds")}


def test_verdict_as_node_exporter_textfile(tmp_path: Path, pyz: Path) -> None:
    """Issue 26: each run writes its verdict into node_exporter's textfile folder, rendered by
    clusterctl/report/prom.py (the families and labels of verify's --prom), atomically."""
    from clusterctl.report import prom

    tf = tmp_path / "textfile"
    node = Node(tmp_path, pyz, textfile_dir=str(tf))
    node.run()
    assert "clusterctl_node_status{host=\"gpu07\",status=\"healthy\"} 1" in (tf / "clusterctl.prom").read_text()
    with node.kern.open("a") as fh:
        fh.write(_body("kernel-log/xid79-fallen-off-bus-journal.txt"))
    rc, out, _ = node.run("--no-drain")
    assert rc == 1
    text = (tf / "clusterctl.prom").read_text()
    assert [p.name for p in tf.iterdir()] == ["clusterctl.prom"]  # no temporary file left
    got = _samples(text)
    assert got['clusterctl_node_status{host="gpu07",status="failed"}'] == "1"
    assert got['clusterctl_node_status{host="gpu07",status="healthy"}'] == "0"
    assert got['clusterctl_findings{host="gpu07",check="xid",severity="critical"}'] == "1"
    # the capture's Xid 79 lines: each is one event of code 79
    events = sum(1 for ln in _body("kernel-log/xid79-fallen-off-bus-journal.txt").splitlines()
                 if re.search(r"Xid \(PCI:[^)]*\): 79,", ln))
    assert events and got['clusterctl_xid_events{host="gpu07",code="79"}'] == str(events)
    # one code path: the same text verify's renderer gives for this verdict
    assert _samples(prom.render_verdict(node.verdict(out))) == got
    if shutil.which("promtool"):
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                               check=False)
        assert check.returncode == 0, check.stdout + check.stderr
    # a textfile folder that cannot be written never changes the verdict; the line says why
    shutil.rmtree(tf)
    tf.write_text("not a folder")
    with node.kern.open("a") as fh:
        fh.write(_body("kernel-log/xid79-fallen-off-bus-journal.txt"))
    rc, out, _ = node.run("--no-drain")
    assert rc == 1 and f"textfile not written: {tf}/clusterctl.prom" in out, out
