"""The burn-in gate's compute floor (issue 25 item 3): clusterctl-gemm, its parser (KIND gemm), the judgement
(checks/gemm.py) and the collector (fabric_evidence active test ``gemm``).

No GPU and no PyTorch here: the program itself runs for real for the "tool missing" path; the measured
lines below are written in the exact format the program prints (roles/gpu_tools/files/clusterctl_gemm.py,
``print("gemm\\t" + "\\t".join(fields))``), built from the numbers each test names. A real H200 capture is
taken by bench/device/gemm_floor.sh into tests/fixtures/gemm/ (test_real_capture reads it when present).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from ccparse import registry
from ccparse.common import ParseError
from ccparse.detect import detect_kind
from conftest import LOCAL_FIXTURES
from fabric_modrun import run_module

from clusterctl.analysis import engine, expectations
from clusterctl.analysis.checks import gemm

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "roles" / "gpu_tools" / "files" / "clusterctl_gemm.py"
HEAD = "# clusterctl-gemm 1\tbackend=torch\ttorch=2.5.1+cu124\tcuda=12.4\thost=gpu01"


def line(index: int, tflops: float | None = None, name: str = "NVIDIA H200", error: str = "") -> str:
    f = [f"index={index}", f"uuid=GPU-{index:08d}-0000-0000-0000-000000000000", f"bus=0000:{0x18 + index:02x}:00.0",
         f"name={name}", "dtype=bf16", "m=8192", "n=8192", "k=8192", "iters=20"]
    if error:
        f.append(f"error={error}")
    else:
        assert tflops is not None
        f += ["rounds=25", f"tflops={tflops:.1f}", f"best={tflops + 5:.1f}", f"worst={tflops - 5:.1f}"]
    return "gemm\t" + "\t".join(f)


def run_text(values: list[float | str], name: str = "NVIDIA H200", done: bool = True) -> str:
    rows = [line(i, error=v) if isinstance(v, str) else line(i, v, name) for i, v in enumerate(values)]
    failed = sum(isinstance(v, str) for v in values)
    return "\n".join([HEAD, *rows, *([f"# done gpus={len(values)} failed={failed}"] if done else [])]) + "\n"


def judge(text: str, **spec: object) -> dict[str, tuple[str, str]]:
    res = gemm.judge_gemm("gpu01", registry.parse("gemm", text), expectations.build(spec))
    return {f.subject: (f.severity, f.message) for f in res.findings}


def test_parser_reads_every_field_and_the_closing_line() -> None:
    data = registry.parse("gemm", run_text([701.5, 699.0, "CUDA error: an illegal memory access was encountered"]))
    assert (data["status"], data["backend"], data["torch"], data["cuda"], data["host"]) == \
        ("ok", "torch", "2.5.1+cu124", "12.4", "gpu01")
    assert data["complete"] is True and data["gpus_reported"] == 3
    g0, _, g2 = data["gpus"]
    assert g0 == {"index": 0, "uuid": "GPU-00000000-0000-0000-0000-000000000000", "bus": "0000:18:00.0",
                  "name": "NVIDIA H200", "dtype": "bf16", "m": 8192, "n": 8192, "k": 8192, "iters": 20,
                  "rounds": 25, "tflops": 701.5, "best": 706.5, "worst": 696.5, "error": None}
    assert g2["tflops"] is None and g2["error"] == "CUDA error: an illegal memory access was encountered"
    assert detect_kind(run_text([700.0])) == "gemm"


@pytest.mark.parametrize("text", ["", "hello\n", "gemm\tindex=0\tname=x\n", "gemm\tindex=x\ttflops=1\n",
                                  HEAD + "\n" + line(0, 700.0) + "\n" + line(0, 700.0) + "\n", "gemm\tindex=0\tbad\n"])
def test_parser_refuses_what_the_program_does_not_print(text: str) -> None:
    with pytest.raises(ParseError):
        registry.parse("gemm", text)


def test_healthy_h200_node_passes_at_its_floor() -> None:
    found = judge(run_text([702.0, 698.5, 705.1, 700.3, 699.9, 703.2, 697.0, 701.1]))
    assert len(found) == 8 and {s for s, _ in found.values()} == {"info"}
    msg = found["gpu01/gpu3"][1]
    # 0.6 x 794.5 (the H100/H200 SXM row) = 476.7
    assert "of the compute floor 477 TFLOP/s" in msg and "H200 SXM" in msg and "700.3 TFLOP/s" in msg


def test_gpu_below_the_floor_fails_with_its_evidence() -> None:
    found = judge(run_text([702.0, 698.5, 350.2, 700.3]))
    sev, msg = found["gpu01/gpu2"]
    assert sev == "critical" and "350.2 TFLOP/s" in msg and "below the compute floor 477" in msg
    assert "GPU-00000002" in msg and "0000:1a:00.0" in msg and "median 700.3" in msg
    assert {s for k, (s, _) in found.items() if k != "gpu01/gpu2"} == {"info"}


def test_straggler_above_the_floor_is_degraded_and_far_below_the_node_fails() -> None:
    found = judge(run_text([702.0, 698.5, 560.0, 700.3]))  # 80 % of 700.3: above the 477 floor
    assert found["gpu01/gpu2"][0] == "warning" and "a straggler" in found["gpu01/gpu2"][1]
    # an unknown model: no floor, but 60 % of the node's other GPUs is still a failure
    found = judge(run_text([100.0, 101.0, 60.0, 99.0], name="NVIDIA RTX 9999"))
    assert found["gpu01/gpu2"][0] == "critical" and "below 70%" in found["gpu01/gpu2"][1]
    assert found["gpu01/gpu0"][0] == "info" and found["gpu01/gpu0"][1].startswith(engine.NEEDS + "gemm_floor_tflops")


def test_floor_override_and_fraction_from_the_spec() -> None:
    text = run_text([702.0, 698.5, 700.3])
    assert judge(text, gemm_floor_tflops=750)["gpu01/gpu0"][0] == "critical"
    assert "gemm_floor_tflops" in judge(text, gemm_floor_tflops=750)["gpu01/gpu0"][1]
    assert judge(text, gemm_floor_fraction=0.95)["gpu01/gpu1"][0] == "critical"  # 0.95 x 794.5 = 754.8
    assert judge(text, gemm_floor_fraction=0.5)["gpu01/gpu1"][0] == "info"


def test_gpu_error_and_a_cut_short_run() -> None:
    found = judge(run_text([702.0, "CUDA out of memory", 700.3], done=False))
    assert found["gpu01/gpu1"][0] == "critical" and "CUDA out of memory" in found["gpu01/gpu1"][1]
    assert found["gpu01"][0] == "warning" and "cut short" in found["gpu01"][1]


def test_model_table() -> None:
    assert gemm.expected_tflops("NVIDIA H100 80GB HBM3", "bf16") == (794.5, "H100 SXM")
    assert gemm.expected_tflops("NVIDIA H100 PCIe", "fp16")[1] == "H100 PCIe"
    assert gemm.expected_tflops("NVIDIA H200 NVL", "bf16")[1] == "H200 NVL"
    assert gemm.expected_tflops("NVIDIA A100-SXM4-80GB", "bf16") == (271.2, "A100 SXM")
    assert gemm.expected_tflops("NVIDIA A100 80GB PCIe", "bf16")[1] == "A100 PCIe"
    assert gemm.expected_tflops("NVIDIA GH200 480GB", "bf16")[1] == "GH200"
    assert gemm.expected_tflops("NVIDIA H200", "tf32") == (794.5 / 2, "H200 SXM")
    assert gemm.expected_tflops("NVIDIA H200", "fp32")[0] is None


def test_the_real_program_without_pytorch_says_tool_missing(tmp_path: Path) -> None:
    probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, check=False)
    if probe.returncode == 0:
        pytest.skip("PyTorch is importable here: the missing-backend path cannot be shown")
    r = subprocess.run([sys.executable, str(PROGRAM), "--seconds", "1"], capture_output=True, text=True, check=False)
    assert r.returncode == 3, r.stdout + r.stderr
    data = registry.parse("gemm", r.stdout)
    assert data["status"] == "tool_missing" and "PyTorch not importable" in data["why"] and data["gpus"] == []
    found = judge(r.stdout)
    assert next(iter(found.values()))[0] == "info"
    bad = subprocess.run([sys.executable, str(PROGRAM), "--size", "7"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "--size 256-32768" in bad.stderr


def _program(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "clusterctl-gemm"
    p.write_text(body)
    p.chmod(0o755)
    return p


def test_collector_tells_tool_missing_no_gpu_failed_gpu_and_ok_apart(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    base = {"sysfs_root": str(tmp_path / "nosys"), "proc_root": str(tmp_path / "proc"), "kinds": [],
            "active": ["gemm"]}
    ev = run_module("fabric_evidence", {**base, "gemm_program": str(tmp_path / "absent")})["evidence"]
    assert ev["gemm"]["status"] == "tool_missing"
    # the real program, in an interpreter without PyTorch: its exit 3 is "tool missing"
    real = _program(tmp_path, f"#!{sys.executable}\n" + PROGRAM.read_text())
    probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, check=False)
    if probe.returncode != 0:
        r = run_module("fabric_evidence", {**base, "gemm_program": str(real), "gemm_args": ["--seconds", "1"]})
        assert r["evidence"]["gemm"]["status"] == "tool_missing", r["evidence"]["gemm"]
        assert "PyTorch not importable" in r["summary"]["gemm"]["stderr"]
    no_gpu = _program(tmp_path, "#!/bin/sh\nprintf 'status\\tdevice_absent\\tno CUDA device visible\\n'; exit 4\n")
    ev = run_module("fabric_evidence", {**base, "gemm_program": str(no_gpu)})["evidence"]
    assert ev["gemm"]["status"] == "device_absent"
    out = tmp_path / "out.txt"
    out.write_text(run_text([702.0, "CUDA error: unspecified launch failure"]))
    failed_gpu = _program(tmp_path, f"#!/bin/sh\ncat {out}\nexit 1\n")
    r = run_module("fabric_evidence", {**base, "gemm_program": str(failed_gpu)})
    assert r["changed"] is False and r["evidence"]["gemm"]["status"] == "ok" and r["evidence"]["gemm"]["rc"] == 1
    assert r["parsed"]["gemm"]["data"]["gpus"][1]["error"] == "CUDA error: unspecified launch failure"
    crashed = _program(tmp_path, f"#!/bin/sh\nhead -2 {out}\nexit 139\n")
    r = run_module("fabric_evidence", {**base, "gemm_program": str(crashed)})
    assert r["evidence"]["gemm"]["status"] == "error"


def test_engine_judges_the_collector_status_at_full_level() -> None:
    ok = {"nvidia-smi-query": {"status": "ok"}}
    missing = engine._collect_findings("gpu01", {**ok, "gemm": {"status": "tool_missing", "stderr": "x"}}, {})
    assert [(f.severity, "clusterctl-gemm" in f.message) for f in missing] == [("critical", True)]
    absent = engine._collect_findings("gpu01", {"gemm": {"status": "device_absent"}}, {"gpus_per_node": 8})
    assert absent[0].severity == "critical" and "no GPUs found" in absent[0].message
    none = engine._collect_findings("gpu01", {"gemm": {"status": "tool_missing"}}, {})
    assert none[0].severity == "info"  # no GPU expected nor found: not installed, not judged


def test_real_capture() -> None:
    caps = sorted((LOCAL_FIXTURES / "gemm").glob("*.txt")) if (LOCAL_FIXTURES / "gemm").is_dir() else []
    if not caps:
        pytest.skip("no real clusterctl-gemm capture yet (bench/device/gemm_floor.sh on an H200 writes one)")
    for cap in caps:
        text = cap.read_text()
        data = registry.parse("gemm", text)
        assert data["complete"] and data["gpus"], cap
        res = gemm.judge_gemm("h200", data, expectations.build({}))
        sevs = {f.severity for f in res.findings}
        # the script's contended run shares every GPU with a stray matmul process: about half speed
        assert sevs == ({"critical"} if "contended" in cap.name else {"info"}), [f.message for f in res.findings]
        for g in data["gpus"]:  # the numbers judged are the ones the capture prints
            assert f"index={g['index']}\t" in text and f"tflops={g['tflops']:.1f}" in text



def test_h200_captures_read_as_printed() -> None:
    """Values read off the H200 captures (tests/fixtures/gemm, line 1 names the run): idle bf16 run 1
    662.7 TFLOP/s (best 729.0, worst 564.1, 301 rounds), the cuBLAS backend 692.5, and 316.6 while a
    second process ran its own matmuls on the GPU - below the 477 TFLOP/s floor, the idle runs above it."""
    from conftest import read_fixture

    idle = registry.parse("gemm", read_fixture("gemm/h200-bf16-1.txt"))
    (gpu,) = idle["gpus"]
    assert (gpu["index"], gpu["uuid"], gpu["dtype"]) == (0, "GPU-b737794c-af37-f8e0-d5cb-a3f2fb129f3c", "bf16")
    assert (gpu["tflops"], gpu["best"], gpu["worst"], gpu["rounds"]) == (662.7, 729.0, 564.1, 301)
    cublas = registry.parse("gemm", read_fixture("gemm/h200-bf16-cublas.txt"))
    assert cublas["gpus"][0]["tflops"] == 692.5
    shared = registry.parse("gemm", read_fixture("gemm/h200-bf16-contended.txt"))
    assert shared["gpus"][0]["tflops"] == 316.6
    spec = expectations.build({})
    assert {f.severity for f in gemm.judge_gemm("h200", idle, spec).findings} == {"info"}
    below = gemm.judge_gemm("h200", shared, spec).findings
    assert [f.severity for f in below] == ["critical"] and "below the compute floor 477" in below[0].message

# --- verify.yml --level full (what the burn-in gate's full level runs), plain ansible-playbook here ------------


def _verify_full(tmp_path: Path, program: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    import os

    import yaml

    from clusterctl import collection

    inv = tmp_path / "inv"
    (inv / "group_vars" / "all").mkdir(parents=True, exist_ok=True)
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {
        "slurm_controller": {"hosts": {"ctl01": local}}, "slurm_compute": {"hosts": {"gpu01": local}}}}}))
    (inv / "group_vars" / "all" / "cluster.yml").write_text(yaml.safe_dump({
        "cluster_name": "floor", "fabric": "ethernet", "gpus_per_node": 0}))
    (inv / "group_vars" / "all" / "verify.yml").write_text(yaml.safe_dump({
        "clusterctl_verify_kinds": [], "clusterctl_verify_sysfs_root": str(tmp_path / "nosys"),
        "clusterctl_verify_nccl_tests_binary": str(tmp_path / "no-nccl-tests"),
        "clusterctl_verify_gemm_program": str(program)}))
    evidence = tmp_path / f"evidence{len(list(tmp_path.glob('evidence*')))}"
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), **collection.ansible_env(),
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default", ANSIBLE_CACHE_PLUGIN="memory",
               PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    (tmp_path / "bin").mkdir(exist_ok=True)
    exe = Path(sys.executable).parent / "ansible-playbook"
    res = subprocess.run([str(exe), "-i", str(inv), str(REPO / "playbooks" / "verify.yml"),
                          "-e", "clusterctl_verify_level=full", "-e", f"clusterctl_evidence_dir={evidence}", *extra],
                         capture_output=True, text=True, timeout=300, env=env, check=False)
    return res, evidence / "gpu01"


def test_verify_full_runs_the_compute_floor_and_fails_a_slow_gpu(tmp_path: Path) -> None:
    import json

    out = tmp_path / "out.txt"
    out.write_text(run_text([702.0, 698.5, 350.2, 700.3]))
    program = _program(tmp_path, f"#!/bin/sh\ncat {out}\n")
    res, host = _verify_full(tmp_path, program)
    log = res.stdout + res.stderr
    assert res.returncode == 2, log[-3000:]  # the verdict task fails the node
    assert (host / "gemm.txt").read_text() == out.read_text()
    assert json.loads((host / "_collect.json").read_text())["gemm"]["status"] == "ok"
    flat = " ".join(log.split())
    assert "subject: gpu01/gpu2" in flat and "350.2 TFLOP/s" in flat and "below the compute floor 477" in flat
    # turned off: not run (this node then has no evidence at all, which fails it on its own)
    res, host = _verify_full(tmp_path, program, "-e", "clusterctl_verify_gemm=false")
    assert "gemm" not in json.loads((host / "_collect.json").read_text())
    assert not (host / "gemm.txt").exists() and "check: gemm" not in res.stdout


def test_gpu_tools_installs_the_program_once_with_its_interpreter(tmp_path: Path) -> None:
    """roles/gpu_tools/tasks/gemm.yml on this machine (local connection), twice: installed with the shebang
    gpu_tools_gemm_python names, then changed=0; the installed program runs (here: no PyTorch, exit 3)."""
    import os
    import re

    import yaml

    from clusterctl import collection

    dest = tmp_path / "bin" / "clusterctl-gemm"
    dest.parent.mkdir()
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "gemm", "ansible.builtin.include_role": {"name": "clusterctl.hpc.gpu_tools", "tasks_from": "gemm"},
         "vars": {"gpu_tools_gemm_path": str(dest), "gpu_tools_gemm_python": sys.executable}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), **collection.ansible_env(),
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default")
    exe = Path(sys.executable).parent / "ansible-playbook"
    changed = []
    for _ in range(2):
        r = subprocess.run([str(exe), "-i", "localhost,", "-c", "local", "-e",
                            f"ansible_python_interpreter={sys.executable}", str(play)],
                           capture_output=True, text=True, timeout=300, env=env, check=False)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        changed.append(int(re.search(r"changed=(\d+)", r.stdout).group(1)))  # type: ignore[union-attr]
    assert changed == [1, 0]
    assert dest.read_text().splitlines()[0] == f"#!{sys.executable}" and os.access(dest, os.X_OK)
    assert PROGRAM.read_text().rstrip("\n") in dest.read_text()
    run = subprocess.run([str(dest), "--seconds", "1"], capture_output=True, text=True, check=False)
    assert run.returncode in (0, 1, 3, 4) and registry.parse("gemm", run.stdout)["version"] == 1


def test_the_program_end_to_end_on_a_cuda_stand_in() -> None:
    """The program's rounds, timing and output through tests/faketorch (PyTorch's CUDA calls it uses, with
    set per-GPU matmul times; no GPU here), parsed and judged: GPU 2 at half speed fails the floor, GPU 3 whose
    matmul raises is named with its error, exit 1."""
    import os

    env = dict(os.environ, PYTHONPATH=str(REPO / "tests" / "faketorch"), FAKE_GPUS="0.00157,0.00158,0.0031,x")
    r = subprocess.run([sys.executable, str(PROGRAM), "--seconds", "0.2"], capture_output=True, text=True,
                       env=env, check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    data = registry.parse("gemm", r.stdout)
    assert data["complete"] and [g["index"] for g in data["gpus"]] == [0, 1, 2, 3]
    # 2 x 8192^3 x 20 / (20 x 0.00157 s) = 700.3 TFLOP/s
    assert data["gpus"][0]["tflops"] == pytest.approx(2 * 8192**3 / 0.00157 / 1e12, abs=0.1)
    assert data["gpus"][0]["uuid"] == "GPU-00000000-1111-2222-3333-444444444444"
    found = judge(r.stdout)
    assert found["gpu01/gpu2"][0] == "critical" and "below the compute floor" in found["gpu01/gpu2"][1]
    assert found["gpu01/gpu3"][0] == "critical" and "illegal memory access" in found["gpu01/gpu3"][1]
    assert found["gpu01/gpu0"][0] == found["gpu01/gpu1"][0] == "info"
    none = subprocess.run([sys.executable, str(PROGRAM)], capture_output=True, text=True,
                          env={**env, "FAKE_GPUS": ""}, check=False)
    assert none.returncode == 4 and registry.parse("gemm", none.stdout)["status"] == "device_absent"


def test_cublas_backend_reads_the_real_cuda_runtime_and_sees_no_gpu() -> None:
    """The ctypes backend against the real CUDA runtime library where one is installed (this machine: CUDA 13's
    libcudart, no driver, no GPU, no cuBLAS): its runtime calls (version, device count, error string) work and
    give "device absent" (the driver is too old for the runtime, or no device); cuBLAS' own calls need a GPU
    (bench/device/gemm_floor.sh runs them: --backend cublas)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("clusterctl_gemm", PROGRAM)
    assert spec is not None and spec.loader is not None
    prog = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prog)
    try:
        prog._load(["libcudart.so", "libcudart.so.13", "libcudart.so.12"], "libcudart")
    except prog.NoBackend:
        pytest.skip("no CUDA runtime library here")
    real = prog._load
    # libcublas is only looked up here, its symbols used once a GPU is there: the runtime stands in for it
    prog._load = lambda names, what: real(["libcudart.so", "libcudart.so.13", "libcudart.so.12"], what)
    try:
        be = prog.Cublas("bf16", 8192)
    except prog.NoDevice as exc:
        assert "no CUDA device visible (cudaGetDeviceCount" in str(exc)
    else:
        pytest.skip(f"a GPU is visible here ({be.count}): nothing absent to show")


def test_a_whole_node_slow_against_its_peers_is_a_cross_node_straggler(tmp_path: Path) -> None:
    """Every GPU of gpu05 at 500 TFLOP/s: above the 477 floor and equal to its node's median, so only the
    cross-node analysis sees it (metric gemm_tflops per GPU index, 29 % below the other nodes)."""
    for h in range(1, 6):
        (tmp_path / f"gpu0{h}").mkdir()
        (tmp_path / f"gpu0{h}" / "gemm.txt").write_text(run_text([500.0] * 4 if h == 5 else [700.0 + h] * 4))
    rep = engine.analyze_dir(tmp_path, {}, jobs=1)
    assert {s.host for s in rep.stragglers} == {"gpu05"}
    assert {s.subject for s in rep.stragglers} == {"gpu0", "gpu1", "gpu2", "gpu3"}
    assert rep.hosts["gpu05"].status == "degraded" and rep.hosts["gpu01"].status == "healthy"
