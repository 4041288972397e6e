#!/usr/bin/env python3
"""clusterctl-gemm: dense GEMM throughput of every GPU of a node, all GPUs loaded at once (issue 25, the
burn-in gate's compute floor). Installed by the gpu_tools role; run by ``verify --level full``
(clusterctl.hpc.fabric_evidence, active test ``gemm``); parsed by ccparse.gemm (KIND ``gemm``), judged by
clusterctl/analysis/checks/gemm.py. It only loads the GPUs: nothing is written anywhere.

Backend: PyTorch (``torch.matmul`` on CUDA, which calls cuBLAS) in the interpreter that runs this file
(the role writes its shebang from gpu_tools_gemm_python). Every GPU gets an M x N x K matmul of random
``--dtype`` matrices; the work is queued on all GPUs before any is waited for, so they run together
(the node's power and cooling under full load, as a training job sees them). Each round times
``--iters`` matmuls per GPU with CUDA events; rounds repeat for ``--seconds`` after one warm-up round,
and a GPU's result is the median round (its best and worst round are printed too).

Output (stable, one tab-separated line each; the parser reads these and nothing else)::

    # clusterctl-gemm 1<TAB>backend=torch<TAB>torch=2.5.1<TAB>cuda=12.4<TAB>host=<name>
    gemm<TAB>index=0<TAB>uuid=GPU-...<TAB>bus=0000:18:00.0<TAB>name=NVIDIA H200<TAB>dtype=bf16<TAB>m=8192<TAB>
        n=8192<TAB>k=8192<TAB>iters=20<TAB>rounds=25<TAB>tflops=702.3<TAB>best=710.2<TAB>worst=690.1
    gemm<TAB>index=3<TAB>...<TAB>error=<one line>           (this GPU failed: CUDA error, out of memory)
    status<TAB>tool_missing|device_absent<TAB><why>          (nothing measured; exit 3 or 4)
    # done gpus=8 failed=0

Exit status: 0 every GPU measured; 1 a GPU failed (its line says why); 2 bad arguments; 3 no backend
(torch not importable or built without CUDA: "tool missing"); 4 no GPU visible ("device absent").
GPU indices are nvidia-smi's (CUDA_DEVICE_ORDER=PCI_BUS_ID), when CUDA_VISIBLE_DEVICES is not set.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import time

VERSION = 1
DTYPES = ("bf16", "fp16", "tf32", "fp32")
EXIT_FAILED, EXIT_USAGE, EXIT_NO_BACKEND, EXIT_NO_GPU = 1, 2, 3, 4


def one_line(text: object, limit: int = 300) -> str:
    return " ".join(str(text).split())[:limit] or "?"


def args_of(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="clusterctl-gemm", description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", choices=DTYPES, default="bf16")
    p.add_argument("--size", type=int, default=8192, help="M = N = K (default 8192)")
    p.add_argument("--iters", type=int, default=20, help="matmuls per GPU per timed round")
    p.add_argument("--seconds", type=float, default=10.0, help="time spent in timed rounds (after a warm-up round)")
    p.add_argument("--max-rounds", type=int, default=200)
    a = p.parse_args(argv)
    if not 256 <= a.size <= 32768 or not 1 <= a.iters <= 10000 or not 0 < a.seconds <= 600 or a.max_rounds < 1:
        p.error("--size 256-32768, --iters 1-10000, --seconds (0, 600], --max-rounds >= 1")
    return a


def status(kind: str, why: str, code: int) -> int:
    print(f"status\t{kind}\t{one_line(why)}", flush=True)
    return code


def main(argv: list[str]) -> int:
    a = args_of(argv)
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    head = f"# clusterctl-gemm {VERSION}\tbackend=torch"
    try:
        import torch
    except Exception as exc:  # ImportError, or a broken install raising anything else
        print(f"{head}\ttorch=none\thost={socket.gethostname()}", flush=True)
        return status("tool_missing", f"PyTorch not importable by {sys.executable}: {exc}", EXIT_NO_BACKEND)
    print(f"{head}\ttorch={torch.__version__}\tcuda={torch.version.cuda or 'none'}\thost={socket.gethostname()}",
          flush=True)
    if not torch.version.cuda:
        return status("tool_missing", f"PyTorch {torch.__version__} is built without CUDA", EXIT_NO_BACKEND)
    try:
        n = torch.cuda.device_count()
    except Exception as exc:
        return status("device_absent", f"CUDA cannot count devices: {exc}", EXIT_NO_GPU)
    if n == 0:
        return status("device_absent", "no CUDA device visible (torch.cuda.device_count() == 0)", EXIT_NO_GPU)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "fp32": torch.float32}[a.dtype]
    torch.backends.cuda.matmul.allow_tf32 = a.dtype == "tf32"
    size, flop = a.size, 2.0 * a.size ** 3 * a.iters
    gpus: dict[int, dict[str, object]] = {}
    for i in range(n):
        info: dict[str, object] = {"index": i, "uuid": "", "bus": "", "name": ""}
        gpus[i] = info
        try:
            props = torch.cuda.get_device_properties(i)
            info["name"] = props.name
            if getattr(props, "uuid", None) is not None:
                info["uuid"] = f"GPU-{props.uuid}"
            if getattr(props, "pci_bus_id", None) is not None:
                info["bus"] = (f"{getattr(props, 'pci_domain_id', 0):04x}:{props.pci_bus_id:02x}:"
                               f"{getattr(props, 'pci_device_id', 0):02x}.0")
            with torch.cuda.device(i):
                info["ab"] = (torch.randn(size, size, device=i, dtype=dtype),
                              torch.randn(size, size, device=i, dtype=dtype))
                info["out"] = torch.empty(size, size, device=i, dtype=dtype)
        except Exception as exc:
            info["error"] = one_line(exc)
        info["times"] = []

    def one_round() -> None:
        ev = {}
        for i, g in gpus.items():
            if "error" in g:
                continue
            try:
                with torch.cuda.device(i):
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    x, y = g["ab"]  # type: ignore[misc]
                    start.record()
                    for _ in range(a.iters):
                        torch.matmul(x, y, out=g["out"])
                    end.record()
                    ev[i] = (start, end)
            except Exception as exc:
                g["error"] = one_line(exc)
        for i, (start, end) in ev.items():
            try:
                end.synchronize()
                gpus[i]["times"].append(start.elapsed_time(end) / 1000.0)  # type: ignore[attr-defined]
            except Exception as exc:
                gpus[i]["error"] = one_line(exc)

    one_round()  # warm-up: cuBLAS heuristics, clocks up; not counted
    for g in gpus.values():
        g["times"] = []
    t_end, rounds = time.monotonic() + a.seconds, 0
    while rounds < a.max_rounds and (rounds == 0 or time.monotonic() < t_end):
        one_round()
        rounds += 1
    failed = 0
    for i, g in sorted(gpus.items()):
        fields = [f"index={i}", f"uuid={g['uuid'] or '?'}", f"bus={g['bus'] or '?'}", f"name={g['name'] or '?'}",
                  f"dtype={a.dtype}", f"m={size}", f"n={size}", f"k={size}", f"iters={a.iters}"]
        times = list(g["times"])  # type: ignore[call-overload]
        if "error" in g or not times:
            failed += 1
            fields.append(f"error={g.get('error') or 'no round finished'}")
        else:
            tf = [flop / t / 1e12 for t in times if t > 0]
            fields += [f"rounds={len(tf)}", f"tflops={statistics.median(tf):.1f}", f"best={max(tf):.1f}",
                       f"worst={min(tf):.1f}"]
        print("gemm\t" + "\t".join(fields), flush=True)
    print(f"# done gpus={n} failed={failed}", flush=True)
    return EXIT_FAILED if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
