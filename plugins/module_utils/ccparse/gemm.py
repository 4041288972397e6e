"""Parse the output of clusterctl-gemm (KIND ``gemm``): dense GEMM throughput per GPU.

The program (roles/gpu_tools/files/clusterctl_gemm.py, installed by the gpu_tools role) prints one
tab-separated line per GPU, fields ``key=value``::

    # clusterctl-gemm 1<TAB>backend=torch<TAB>torch=2.5.1<TAB>cuda=12.4<TAB>host=gpu01
    gemm<TAB>index=0<TAB>uuid=GPU-...<TAB>bus=0000:18:00.0<TAB>name=NVIDIA H200<TAB>dtype=bf16<TAB>m=8192<TAB>n=8192
        <TAB>k=8192<TAB>iters=20<TAB>rounds=25<TAB>tflops=702.3<TAB>best=710.2<TAB>worst=690.1
    gemm<TAB>index=3<TAB>...<TAB>error=CUDA error: ...
    status<TAB>tool_missing|device_absent<TAB><why>
    # done gpus=8 failed=0

Result::

    {"version": 1 | None, "backend": "torch", "torch": "2.5.1", "cuda": "12.4", "host": "gpu01",
     "status": "ok" | "tool_missing" | "device_absent", "why": str,
     "gpus": [{"index": 0, "uuid": "GPU-...", "bus": "0000:18:00.0", "name": "NVIDIA H200", "dtype": "bf16",
               "m": 8192, "n": 8192, "k": 8192, "iters": 20, "rounds": 25,
               "tflops": 702.3, "best": 710.2, "worst": 690.1, "error": None}],
     "gpus_reported": 8 | None, "complete": bool}

``complete`` is true when the ``# done`` line closed the run (a run cut short has no such line). A GPU
with ``error`` has no ``tflops``. Unknown keys are ignored (a later version may add fields).
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, parser, strip_source_line, to_float, to_int

TOOL = "clusterctl-gemm"
_HEAD = re.compile(r"^#\s*clusterctl-gemm\s+(\d{1,4})\b")
_DONE = re.compile(r"^#\s*done\s+gpus=(\d{1,4})(?:\s+failed=(\d{1,4}))?\s*$")
_KEY = re.compile(r"^[a-z_]{1,20}$")
_INT_KEYS = ("index", "m", "n", "k", "iters", "rounds")
_FLOAT_KEYS = ("tflops", "best", "worst")
STATUSES = ("tool_missing", "device_absent")


def _fields(parts: list[str], n: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in parts:
        key, eq, value = p.partition("=")
        if not eq or not _KEY.match(key):
            raise ParseError(TOOL, f"expected key=value, got {p[:80]!r}", n)
        out[key] = value.strip()
    return out


def _gpu(parts: list[str], n: int) -> dict[str, Any]:
    f = _fields(parts, n)
    g: dict[str, Any] = {"uuid": f.get("uuid") if f.get("uuid") not in (None, "", "?") else None,
                         "bus": f.get("bus") if f.get("bus") not in (None, "", "?") else None,
                         "name": f.get("name") if f.get("name") not in (None, "", "?") else None,
                         "dtype": f.get("dtype") or None, "error": f.get("error") or None}
    for key in _INT_KEYS:
        g[key] = to_int(f[key]) if key in f else None
    for key in _FLOAT_KEYS:
        v = to_float(f[key]) if key in f else None
        g[key] = v if v is None or v >= 0 else None
    if g["index"] is None or g["index"] < 0:
        raise ParseError(TOOL, f"a gemm line needs index=<GPU index>, got {f.get('index')!r}", n)
    if g["error"] is None and g["tflops"] is None:
        raise ParseError(TOOL, "a gemm line needs tflops=<number> or error=<why>", n)
    return g


@parser("gemm")
def parse_gemm(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {"version": None, "backend": None, "torch": None, "cuda": None, "host": None,
                           "status": "ok", "why": "", "gpus": [], "gpus_reported": None, "complete": False}
    seen = False
    for n, raw in enumerate(strip_source_line(text).splitlines(), 1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        head = _HEAD.match(line)
        if head:
            seen = True
            out["version"] = to_int(head.group(1))
            for key, value in _fields([p for p in line.split("\t")[1:] if p.strip()], n).items():
                if key in ("backend", "torch", "cuda", "host"):
                    out[key] = value or None
            continue
        done = _DONE.match(line)
        if done:
            out["gpus_reported"], out["complete"] = to_int(done.group(1)), True
            continue
        if line.startswith("#"):
            continue
        parts = line.split("\t")
        if parts[0] == "gemm":
            seen = True
            out["gpus"].append(_gpu(parts[1:], n))
        elif parts[0] == "status" and len(parts) >= 2 and parts[1] in STATUSES:
            seen = True
            out["status"], out["why"] = parts[1], "\t".join(parts[2:]).strip()
        else:
            raise ParseError(TOOL, f"not a clusterctl-gemm line: {line[:80]!r}", n)
    if not seen:
        raise ParseError(TOOL, "no '# clusterctl-gemm' header, gemm or status line")
    indices = [g["index"] for g in out["gpus"]]
    if len(set(indices)) != len(indices):
        raise ParseError(TOOL, f"a GPU index reported twice: {sorted(indices)}")
    out["gpus"].sort(key=lambda g: g["index"])
    return out
