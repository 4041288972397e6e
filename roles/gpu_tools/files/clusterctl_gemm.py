"""clusterctl-gemm: dense GEMM throughput of every GPU of a node, all GPUs loaded at once (issue 25, the
burn-in gate's compute floor). Installed by the gpu_tools role; run by ``verify --level full``
(clusterctl.hpc.fabric_evidence, active test ``gemm``); parsed by ccparse.gemm (KIND ``gemm``), judged by
clusterctl/analysis/checks/gemm.py. It only loads the GPUs: nothing is written anywhere. No shebang here: the
role writes one naming gpu_tools_gemm_python; run it as ``python3 clusterctl_gemm.py`` from a checkout.

Backends (``--backend auto`` takes the first that loads): ``torch``, PyTorch's ``torch.matmul`` on CUDA (it
calls cuBLAS) in the interpreter that runs this file (the role writes its shebang from
gpu_tools_gemm_python); ``cublas``, cuBLAS' ``cublasGemmEx`` called through ctypes from the CUDA runtime and
cuBLAS libraries (the CUDA toolkit's, ``$CUDA_HOME/lib64``, or the ``nvidia-*`` Python wheels'), no build and no
PyTorch. Every GPU gets an M x N x K matmul of random ``--dtype`` matrices; the work is queued on all GPUs
before any is waited for, so they run together (the node's power and cooling under full load, as a training
job sees them). Each round times ``--iters`` matmuls per GPU with CUDA events; rounds repeat for
``--seconds`` after one warm-up round, and a GPU's result is the median round (best and worst printed too).

Output (stable, one tab-separated line each; the parser reads these and nothing else)::

    # clusterctl-gemm 1<TAB>backend=torch|cublas<TAB>torch=2.5.1|none<TAB>cuda=12.4<TAB>host=<name>
    gemm<TAB>index=0<TAB>uuid=GPU-...<TAB>bus=0000:18:00.0<TAB>name=NVIDIA H200<TAB>dtype=bf16<TAB>m=8192<TAB>
        n=8192<TAB>k=8192<TAB>iters=20<TAB>rounds=25<TAB>tflops=702.3<TAB>best=710.2<TAB>worst=690.1
    gemm<TAB>index=3<TAB>...<TAB>error=<one line>           (this GPU failed: CUDA error, out of memory)
    status<TAB>tool_missing|device_absent<TAB><why>          (nothing measured; exit 3 or 4)
    # done gpus=8 failed=0

Exit status: 0 every GPU measured; 1 a GPU failed (its line says why); 2 bad arguments; 3 no backend
(neither PyTorch with CUDA nor the CUDA runtime and cuBLAS libraries: "tool missing"); 4 no GPU visible
("device absent"). GPU indices are nvidia-smi's (CUDA_DEVICE_ORDER=PCI_BUS_ID) when CUDA_VISIBLE_DEVICES is
not set.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

VERSION = 1
DTYPES = ("bf16", "fp16", "tf32", "fp32")
EXIT_FAILED, EXIT_USAGE, EXIT_NO_BACKEND, EXIT_NO_GPU = 1, 2, 3, 4


class NoBackend(Exception):
    """The backend cannot run here (not installed): tool missing."""


class NoDevice(Exception):
    """The backend runs, but sees no GPU: device absent."""


def one_line(text: object, limit: int = 300) -> str:
    return " ".join(str(text).split())[:limit] or "?"


def args_of(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="clusterctl-gemm", description=(__doc__ or "").split("\n\n", maxsplit=1)[0])
    p.add_argument("--backend", choices=("auto", "torch", "cublas"), default="auto")
    p.add_argument("--dtype", choices=DTYPES, default="bf16")
    p.add_argument("--size", type=int, default=8192, help="M = N = K (default 8192)")
    p.add_argument("--iters", type=int, default=20, help="matmuls per GPU per timed round")
    p.add_argument("--seconds", type=float, default=10.0, help="time spent in timed rounds (after a warm-up round)")
    p.add_argument("--max-rounds", type=int, default=1000)
    a = p.parse_args(argv)
    if not 256 <= a.size <= 32768 or not 1 <= a.iters <= 10000 or not 0 < a.seconds <= 600 or a.max_rounds < 1:
        p.error("--size 256-32768, --iters 1-10000, --seconds (0, 600], --max-rounds >= 1")
    return a


def nvidia_smi_gpus() -> dict[int, dict[str, str]]:
    """index -> uuid, bus, name as nvidia-smi lists them ({} without nvidia-smi)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id,name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    gpus = {}
    for row in out.splitlines():
        f = [x.strip() for x in row.split(",", 3)]
        if len(f) == 4 and f[0].isdigit():
            bus = f[2][4:] if len(f[2]) == 16 and f[2].startswith("0000") else f[2]  # 00000000:18:00.0
            gpus[int(f[0])] = {"uuid": f[1], "bus": bus.lower(), "name": f[3]}
    return gpus


class Torch:
    name = "torch"

    def __init__(self, dtype: str, size: int) -> None:
        try:
            import torch
        except Exception as exc:  # ImportError, or a broken install raising anything else
            raise NoBackend(f"PyTorch not importable by {sys.executable}: {exc}") from exc
        self.torch, self.version, self.cuda = torch, str(torch.__version__), torch.version.cuda
        if not torch.version.cuda:
            raise NoBackend(f"PyTorch {torch.__version__} is built without CUDA")
        try:
            self.count = torch.cuda.device_count()
        except Exception as exc:
            raise NoDevice(f"CUDA cannot count devices: {exc}") from exc
        if self.count == 0:
            raise NoDevice("no CUDA device visible (torch.cuda.device_count() == 0)")
        self.dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32,
                      "fp32": torch.float32}[dtype]
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        self.size = size
        self.mats: dict[int, Any] = {}
        self.events: dict[int, Any] = {}

    def info(self, i: int) -> dict[str, str]:
        props = self.torch.cuda.get_device_properties(i)
        out = {"name": str(props.name)}
        if getattr(props, "uuid", None) is not None:
            out["uuid"] = f"GPU-{props.uuid}"
        if getattr(props, "pci_bus_id", None) is not None:
            out["bus"] = (f"{getattr(props, 'pci_domain_id', 0):04x}:{props.pci_bus_id:02x}:"
                          f"{getattr(props, 'pci_device_id', 0):02x}.0")
        return out

    def prepare(self, i: int) -> None:
        t, s = self.torch, self.size
        with t.cuda.device(i):
            self.mats[i] = (t.randn(s, s, device=i, dtype=self.dtype), t.randn(s, s, device=i, dtype=self.dtype),
                            t.empty(s, s, device=i, dtype=self.dtype))

    def enqueue(self, i: int, iters: int) -> None:
        t = self.torch
        with t.cuda.device(i):
            start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            x, y, out = self.mats[i]
            start.record()
            for _rep in range(iters):
                t.matmul(x, y, out=out)
            end.record()
            self.events[i] = (start, end)

    def seconds(self, i: int) -> float:
        start, end = self.events[i]
        end.synchronize()
        return float(start.elapsed_time(end)) / 1000.0


def _load(names: list[str], what: str) -> ctypes.CDLL:
    dirs = [os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), d) for d in ("lib64", "lib")]
    for p in sys.path:  # the nvidia-*-cu12 wheels PyTorch installs: site-packages/nvidia/<lib>/lib
        dirs += glob.glob(os.path.join(p, "nvidia", "*", "lib"))
    tried = []
    for name in names:
        for cand in [name, *(os.path.join(d, name) for d in dirs)]:
            try:
                return ctypes.CDLL(cand)
            except OSError as exc:
                tried.append(str(exc))
    raise NoBackend(f"{what} not loadable ({', '.join(names)}; in the loader path, $CUDA_HOME/lib64 or the nvidia "
                    f"Python wheels): {tried[0] if tried else '?'}")


class Cublas:
    """cuBLAS through ctypes: cudaMalloc'd matrices filled with random finite values, cublasGemmEx per round."""

    name = "cublas"
    #: cudaDataType / cublasComputeType_t (library_types.h, cublas_api.h)
    TYPES = {"bf16": (14, 68, 2), "fp16": (2, 68, 2), "tf32": (0, 77, 4), "fp32": (0, 68, 4)}
    NO_DEVICE = (100, 35)  # cudaErrorNoDevice, cudaErrorInsufficientDriver

    def __init__(self, dtype: str, size: int) -> None:
        self.rt = _load(["libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"],
                        "the CUDA runtime (libcudart)")
        self.blas = _load(["libcublas.so", "libcublas.so.13", "libcublas.so.12", "libcublas.so.11"],
                          "cuBLAS (libcublas)")
        self.rt.cudaGetErrorString.restype = ctypes.c_char_p
        ver = ctypes.c_int(0)
        self.rt.cudaRuntimeGetVersion(ctypes.byref(ver))
        self.version, self.cuda = "none", f"{ver.value // 1000}.{ver.value % 1000 // 10}"
        n = ctypes.c_int(0)
        rc = self.rt.cudaGetDeviceCount(ctypes.byref(n))
        if rc in self.NO_DEVICE or (rc == 0 and n.value == 0):
            raise NoDevice(f"no CUDA device visible (cudaGetDeviceCount: {self._err(rc) if rc else '0 devices'})")
        self._check(rc, "cudaGetDeviceCount")
        self.count, self.size = n.value, size
        self.dtype, self.compute, self.width = self.TYPES[dtype]
        self.alpha, self.beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
        self.smi = nvidia_smi_gpus()
        self.state: dict[int, dict[str, Any]] = {}

    def _err(self, rc: int) -> str:
        s = self.rt.cudaGetErrorString(rc)
        return f"{rc} {s.decode(errors='replace') if s else ''}".strip()

    def _check(self, rc: int, call: str) -> None:
        if rc != 0:
            raise RuntimeError(f"{call}: CUDA error {self._err(rc)}")

    def info(self, i: int) -> dict[str, str]:
        return dict(self.smi.get(i, {}))

    def prepare(self, i: int) -> None:
        rt, s = self.rt, self.size
        self._check(rt.cudaSetDevice(i), "cudaSetDevice")
        nbytes = s * s * self.width
        # random bytes, every byte's top bits masked so that no value is Inf/NaN (bf16/fp16/fp32 alike)
        table = bytes(0x38 | (b & 0x87) for b in range(256))
        tile = os.urandom(1 << 20).translate(table)
        ptrs = []
        for _rep in range(3):
            p = ctypes.c_void_p()
            self._check(rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(nbytes)), "cudaMalloc")
            ptrs.append(p)
            for off in range(0, nbytes, len(tile)):
                n = min(len(tile), nbytes - off)
                self._check(rt.cudaMemcpy(ctypes.c_void_p(p.value + off), tile, ctypes.c_size_t(n), 1), "cudaMemcpy")
        handle = ctypes.c_void_p()
        rc = self.blas.cublasCreate_v2(ctypes.byref(handle))
        if rc != 0:
            raise RuntimeError(f"cublasCreate: cuBLAS status {rc}")
        ev = [ctypes.c_void_p(), ctypes.c_void_p()]
        for e in ev:
            self._check(rt.cudaEventCreate(ctypes.byref(e)), "cudaEventCreate")
        self.state[i] = {"ptrs": ptrs, "handle": handle, "events": ev}

    def enqueue(self, i: int, iters: int) -> None:
        st, s = self.state[i], self.size
        self._check(self.rt.cudaSetDevice(i), "cudaSetDevice")
        a, b, c = st["ptrs"]
        self._check(self.rt.cudaEventRecord(st["events"][0], None), "cudaEventRecord")
        for _rep in range(iters):
            rc = self.blas.cublasGemmEx(st["handle"], 0, 0, s, s, s, ctypes.byref(self.alpha), a, self.dtype, s,
                                        b, self.dtype, s, ctypes.byref(self.beta), c, self.dtype, s,
                                        self.compute, -1)
            if rc != 0:
                raise RuntimeError(f"cublasGemmEx: cuBLAS status {rc}")
        self._check(self.rt.cudaEventRecord(st["events"][1], None), "cudaEventRecord")

    def seconds(self, i: int) -> float:
        st = self.state[i]
        self._check(self.rt.cudaSetDevice(i), "cudaSetDevice")
        self._check(self.rt.cudaEventSynchronize(st["events"][1]), "cudaEventSynchronize")
        ms = ctypes.c_float(0.0)
        self._check(self.rt.cudaEventElapsedTime(ctypes.byref(ms), st["events"][0], st["events"][1]),
                    "cudaEventElapsedTime")
        return ms.value / 1000.0


def backend_for(which: str, dtype: str, size: int) -> Torch | Cublas:
    errors = []
    for cls in (Torch, Cublas):
        if which not in ("auto", cls.name):
            continue
        try:
            return cls(dtype, size)
        except NoBackend as exc:
            errors.append(str(exc))
    raise NoBackend("; ".join(errors))


def main(argv: list[str]) -> int:
    a = args_of(argv)
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    host = socket.gethostname()
    try:
        be = backend_for(a.backend, a.dtype, a.size)
    except (NoBackend, NoDevice) as exc:
        print(f"# clusterctl-gemm {VERSION}\tbackend={a.backend}\thost={host}", flush=True)
        kind, code = ("tool_missing", EXIT_NO_BACKEND) if isinstance(exc, NoBackend) else \
            ("device_absent", EXIT_NO_GPU)
        print(f"status\t{kind}\t{one_line(exc)}", flush=True)
        return code
    print(f"# clusterctl-gemm {VERSION}\tbackend={be.name}\ttorch={be.version}\tcuda={be.cuda or 'none'}\t"
          f"host={host}", flush=True)
    gpus: dict[int, dict[str, Any]] = {}
    for i in range(be.count):
        g: dict[str, Any] = {"uuid": "", "bus": "", "name": "", "times": []}
        gpus[i] = g
        try:
            g.update(be.info(i))
            be.prepare(i)
        except Exception as exc:
            g["error"] = one_line(exc)

    def one_round() -> None:
        queued = []
        for i, g in gpus.items():
            if "error" not in g:
                try:
                    be.enqueue(i, a.iters)
                    queued.append(i)
                except Exception as exc:
                    g["error"] = one_line(exc)
        for i in queued:
            try:
                gpus[i]["times"].append(be.seconds(i))
            except Exception as exc:
                gpus[i]["error"] = one_line(exc)

    one_round()  # warm-up: cuBLAS heuristics, clocks up; not counted
    for g in gpus.values():
        g["times"] = []
    t_end, rounds = time.monotonic() + a.seconds, 0
    while rounds < a.max_rounds and (rounds == 0 or time.monotonic() < t_end):
        one_round()
        rounds += 1
    failed, flop = 0, 2.0 * a.size ** 3 * a.iters
    for i, g in sorted(gpus.items()):
        fields = [f"index={i}", f"uuid={g['uuid'] or '?'}", f"bus={g['bus'] or '?'}", f"name={g['name'] or '?'}",
                  f"dtype={a.dtype}", f"m={a.size}", f"n={a.size}", f"k={a.size}", f"iters={a.iters}"]
        tf = [flop / t / 1e12 for t in g["times"] if t > 0]
        if "error" in g or not tf:
            failed += 1
            fields.append(f"error={g.get('error') or 'no round finished'}")
        else:
            fields += [f"rounds={len(tf)}", f"tflops={statistics.median(tf):.1f}", f"best={max(tf):.1f}",
                       f"worst={min(tf):.1f}"]
        print("gemm\t" + "\t".join(fields), flush=True)
    print(f"# done gpus={be.count} failed={failed}", flush=True)
    return EXIT_FAILED if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
