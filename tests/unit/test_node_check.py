"""roles/node_health clusterctl-node-check on simulated sysfs trees with fake nvidia-smi/scontrol."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import simfabric

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "roles" / "node_health" / "files" / "clusterctl-node-check"


def tree(tmp: Path, faults: list[str] | None = None, rate: int = 400) -> Path:
    desc = {"devices": [{"name": f"mlx5_{i}", "ports": [{"port": 1, "link_layer": "InfiniBand", "rate": rate,
                                                          "faults": faults if i == 1 and faults else []}]}
                        for i in range(2)]}
    return simfabric.build(desc, tmp / "sys")


def run(tmp: Path, conf: str, gpus: str | None = None, remap: str = "") -> tuple[int, str, str]:
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    log = tmp / "scontrol.log"
    (bindir / "scontrol").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    if gpus is not None:
        (bindir / "nvidia-smi").write_text(
            "#!/bin/sh\ncase \"$1\" in --query-remapped-rows*) printf '%s' \"$REMAP\";; "
            "*) printf '%s' \"$GPUS\";; esac\n")
    for f in bindir.iterdir():
        f.chmod(0o755)
    (tmp / "conf").write_text(conf + "\nNODE_CHECK_NODENAME=gpu07\n")
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "GPUS": gpus or "", "REMAP": remap, "TMPDIR": str(tmp)}
    p = subprocess.run(["/bin/sh", str(SCRIPT), "--config", str(tmp / "conf")], capture_output=True, text=True,
                       env=env, check=False)
    return p.returncode, p.stdout, log.read_text() if log.exists() else ""


def test_healthy_node(tmp_path: Path) -> None:
    sysfs = tree(tmp_path)
    conf = f"NODE_CHECK_RDMA_DEVICES=2\nNODE_CHECK_RATE_GBPS=400\nNODE_CHECK_GPUS=2\nNODE_CHECK_SYSFS={sysfs}"
    rc, out, drained = run(tmp_path, conf, gpus="0, 0\n1, 0\n", remap="00000000:18:00.0, No, No\n")
    assert (rc, out, drained) == (0, "", "")


def test_port_down_drains_with_clusterctl_reason(tmp_path: Path) -> None:
    sysfs = tree(tmp_path, ["port_down"])
    rc, out, drained = run(tmp_path, f"NODE_CHECK_RDMA_DEVICES=2\nNODE_CHECK_SYSFS={sysfs}")
    assert rc == 1
    assert out.startswith("clusterctl: node-check: mlx5_1/1 state 1: DOWN")
    assert "1 RDMA devices with a healthy port, 2 expected" in out
    assert drained.startswith("update NodeName=gpu07 State=DRAIN Reason=clusterctl: node-check: mlx5_1/1")


def test_degraded_rate_and_gpu_problems(tmp_path: Path) -> None:
    sysfs = tree(tmp_path, rate=200)
    conf = (f"NODE_CHECK_RDMA_DEVICES=2\nNODE_CHECK_RATE_GBPS=400\nNODE_CHECK_GPUS=8\nNODE_CHECK_SYSFS={sysfs}\n"
            "NODE_CHECK_DRAIN=0")
    rc, out, drained = run(tmp_path, conf, gpus="0, 0\n1, 3\n", remap="00000000:18:00.0, Yes, No\n")
    assert rc == 1 and drained == ""
    for part in ("mlx5_0/1 rate 200 Gb/s < 400", "2 GPUs visible, 8 expected", "gpu1 uncorrectable ECC 3",
                 "GPU 00000000:18:00.0 row remap pending"):
        assert part in out


def test_no_rdma_no_gpu_expected_passes_and_missing_tools_fail(tmp_path: Path) -> None:
    rc, out, _ = run(tmp_path, f"NODE_CHECK_RDMA_DEVICES=0\nNODE_CHECK_GPUS=0\nNODE_CHECK_SYSFS={tmp_path}/none")
    assert (rc, out) == (0, "")
    rc, out, _ = run(tmp_path, f"NODE_CHECK_RDMA_DEVICES=8\nNODE_CHECK_GPUS=8\nNODE_CHECK_SYSFS={tmp_path}/none")
    assert rc == 1 and "no RDMA devices" in out and "nvidia-smi not found" in out
    assert os.access(SCRIPT, os.X_OK)
