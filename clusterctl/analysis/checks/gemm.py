"""Judge the compute floor (KIND ``gemm``, clusterctl-gemm: dense GEMM TFLOP/s per GPU, all GPUs loaded).

Issue 25's burn-in gate accepts a node only with "a compute floor": every GPU must multiply matrices
at a believable rate for its model. Per GPU (subject ``host/gpuN``):

- **below the floor** (critical): the median round under ``floor``. The floor is ``gemm_floor_tflops``
  from the cluster spec when set (one number for every GPU), else ``gemm_floor_fraction`` (default
  :data:`FLOOR_FRACTION`) of the model's expected dense throughput, :data:`EXPECTED_TFLOPS` (bf16/fp16;
  tf32 half of it; fp32 not judged against a floor). A GPU whose model is not in the table and no
  ``gemm_floor_tflops``: "cannot judge: needs gemm_floor_tflops" (information), the node median rule
  below still applies.
- **far below its node** (critical) / **straggler in its node** (warning): below
  ``gemm_node_fail_fraction`` (0.7) / ``gemm_straggler_fraction`` (0.85) of the median of the node's
  *other* GPUs (at least 2 others: with one, which of two is slow cannot be told). GPUs of one node under
  the same load agree within a few per cent (power and cooling spread); 15 % below the others is a GPU
  throttled, power-capped or on a slower clock, and it sets the pace of every synchronous step.
- **a GPU that failed the test** (critical): the program's ``error=`` (a CUDA error, out of memory).
- a run that measured nothing (``status tool_missing``/``device_absent`` in a capture fed to
  ``clusterctl analyze``; in ``verify`` the collector's status says it): information, nothing judged.

Metric ``gemm_tflops`` (subject ``gpuN``) feeds the cross-node straggler analysis, with the floor applied.

Why the numbers (TFLOP/s, dense, no sparsity):

- expected = the measured "Maximum Achievable Matmul FLOPS" of stas00/ml-engineering
  (compute/accelerator/README.md, BF16 table: A100 SXM 271.2, A100 PCIe 252.9, H100 SXM 794.5,
  GH200 828.6 of the 989 datasheet peak) where a model has a measured row; H200 SXM takes the H100 SXM row
  (same GH100 die, clocks and 989 TFLOP/s datasheet peak, NVIDIA H200 datasheet); models without a
  measured row take 80 % of the NVIDIA datasheet dense peak (80 % is the H100 SXM's measured
  efficiency: 794.5 / 989).
- floor = 0.6 x expected: clusterctl-gemm runs square 8192 matmuls, below the best shape of those
  searches; a public cuBLAS 8192^3 bf16 run on an H100 with CUDA 12.4 reached 518.6 TFLOP/s
  (pranjalssh/fast.cu issue 13), 65 % of the H100 SXM row, so 60 % (477 TFLOP/s on H100/H200 SXM)
  passes a healthy GPU on an older software stack and fails one at half speed (clocks cut by a
  hardware slowdown, a GPU stuck at a low power limit).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from statistics import median
from typing import Any

from clusterctl.analysis.model import CheckResult, Finding, Metric, check
from clusterctl.analysis.severity import sev as rule_sev

FLOOR_FRACTION = 0.6
STRAGGLER_FRACTION = 0.85
NODE_FAIL_FRACTION = 0.7
#: at least this many other GPUs of the node before one GPU is judged against their median
MIN_NODE_PEERS = 2

#: (model, pattern on the upper-cased GPU name, expected dense bf16/fp16 TFLOP/s); first match wins
EXPECTED_TFLOPS: tuple[tuple[str, str, float], ...] = (
    ("GH200", r"GH200", 828.6),  # MAMF row (900 W, 141 GB HBM3e)
    ("B200", r"\bB200\b", 1800.0),  # 80 % of the 2250 TFLOP/s datasheet dense peak (HGX B200: 18 PF sparse / 8 / 2)
    ("H200 NVL", r"\bH200\b.*\bNVL\b", 668.0),  # 80 % of the 835 TFLOP/s datasheet peak (H200 NVL)
    ("H200 SXM", r"\bH200\b", 794.5),  # the H100 SXM MAMF row: same die, clocks, 989 peak
    ("H100 NVL", r"\bH100\b.*\bNVL\b", 668.0),  # 80 % of 835 (H100 NVL datasheet)
    ("H100 PCIe", r"\bH100\b.*\bPCIE\b", 604.8),  # 80 % of 756 (H100 PCIe datasheet)
    ("H100 SXM", r"\bH100\b", 794.5),  # MAMF row
    ("A100 PCIe", r"\bA100\b.*\bPCIE\b", 252.9),  # MAMF row
    ("A100 SXM", r"\bA100\b", 271.2),  # MAMF row
    ("L40S", r"\bL40S\b", 289.6),  # 80 % of 362.05 (L40S datasheet, dense)
)
#: the expected throughput of a dtype, as a share of the bf16/fp16 row (fp32 is not on tensor cores)
DTYPE_SHARE = {"bf16": 1.0, "fp16": 1.0, "tf32": 0.5}

DEFAULTS: dict[str, Any] = {
    # None: the floor per model from EXPECTED_TFLOPS x gemm_floor_fraction (sources above)
    "gemm_floor_tflops": None,
    # share of the model's expected throughput a GPU must reach (see the module doc for why 0.6)
    "gemm_floor_fraction": FLOOR_FRACTION,
    # below these shares of the node's other GPUs' median: straggler (warning) / failed
    "gemm_straggler_fraction": STRAGGLER_FRACTION,
    "gemm_node_fail_fraction": NODE_FAIL_FRACTION,
}


def expected_tflops(name: str | None, dtype: str | None) -> tuple[float | None, str]:
    """(expected TFLOP/s, which row) for a GPU name and dtype; (None, why) when the table has none."""
    share = DTYPE_SHARE.get(str(dtype or "bf16"))
    if share is None:
        return None, f"no expected {dtype} throughput (only bf16, fp16, tf32 have one)"
    upper = str(name or "").upper()
    for model, pattern, tflops in EXPECTED_TFLOPS:
        if re.search(pattern, upper):
            return tflops * share, model
    return None, f"no expected throughput for {name or 'an unnamed GPU'}"


def floor_for(gpu: Mapping[str, Any], exp: Mapping[str, Any]) -> tuple[float | None, str]:
    """(floor, where it comes from) of one GPU's result."""
    override = exp.get("gemm_floor_tflops")
    if override is not None:
        return float(override), "gemm_floor_tflops"
    expected, row = expected_tflops(gpu.get("name") or exp.get("gpu_model"), gpu.get("dtype"))
    if expected is None:
        return None, row
    frac = float(exp.get("gemm_floor_fraction", FLOOR_FRACTION))
    return expected * frac, f"{frac:.0%} of {expected:g} TFLOP/s expected of {row} {gpu.get('dtype') or 'bf16'}"


def _what(g: Mapping[str, Any]) -> str:
    parts = [str(g.get("name") or "GPU"), str(g.get("uuid") or ""), str(g.get("bus") or "")]
    return ", ".join(p for p in parts if p)


@check("gemm")
def judge_gemm(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    if data.get("status") in ("tool_missing", "device_absent"):
        res.findings.append(Finding(host, "gemm", rule_sev("gemm.not_measured"), host,
                                    f"clusterctl-gemm measured nothing ({data['status']}): {data.get('why') or '?'}"))
        return res
    gpus = list(data.get("gpus") or [])
    ok = {int(g["index"]): float(g["tflops"]) for g in gpus if g.get("error") is None and g.get("tflops") is not None}
    strag, fail = float(exp.get("gemm_straggler_fraction", STRAGGLER_FRACTION)), \
        float(exp.get("gemm_node_fail_fraction", NODE_FAIL_FRACTION))
    for g in gpus:
        idx = int(g["index"])
        subj = f"{host}/gpu{idx}"
        shape = f"{g.get('dtype') or '?'} {g.get('m')}x{g.get('n')}x{g.get('k')}"
        if g.get("error") is not None or idx not in ok:
            res.findings.append(Finding(host, "gemm", rule_sev("gemm.gpu_error"), subj,
                                        f"GEMM ({shape}) failed on GPU {idx} ({_what(g)}): {g.get('error')}"))
            continue
        value = ok[idx]
        floor, why = floor_for(g, exp)
        res.metrics.append(Metric(host, "gemm_tflops", value, subject=f"gpu{idx}", unit="TFLOP/s", floor=floor,
                                  floor_source=why if floor is not None else ""))
        where = (f"GPU {idx} ({_what(g)}): {value:g} TFLOP/s {shape} (median of {g.get('rounds')} rounds, "
                 f"worst {g.get('worst')}, best {g.get('best')})")
        others = [v for i, v in ok.items() if i != idx]
        node_med = median(others) if len(others) >= MIN_NODE_PEERS else None
        node_note = f"; the node's other {len(others)} GPUs: median {node_med:g}" if node_med else ""
        if floor is not None and value < floor:
            res.findings.append(Finding(host, "gemm", rule_sev("gemm.below_floor"), subj,
                                        f"{where} is below the compute floor {floor:.0f} TFLOP/s ({why}){node_note}"))
        elif node_med and value < fail * node_med:
            res.findings.append(Finding(host, "gemm", rule_sev("gemm.far_below_node"), subj,
                                        f"{where} is {value / node_med:.0%} of the median of the node's other "
                                        f"{len(others)} GPUs ({node_med:g}), below {fail:.0%}"))
        elif node_med and value < strag * node_med:
            res.findings.append(Finding(host, "gemm", rule_sev("gemm.node_straggler"), subj,
                                        f"{where} is {value / node_med:.0%} of the median of the node's other "
                                        f"{len(others)} GPUs ({node_med:g}), below {strag:.0%}: a straggler"))
        elif floor is None:
            res.findings.append(Finding(host, "gemm", rule_sev("gemm.no_floor"), subj,
                                        f"cannot judge: needs gemm_floor_tflops ({where}; {why}){node_note}"))
        else:
            res.findings.append(Finding(host, "gemm", rule_sev("gemm.at_floor"), subj,
                                        f"{where}: {value / floor:.0%} of the compute floor {floor:.0f} TFLOP/s "
                                        f"({why}){node_note}"))
    if not gpus:
        res.findings.append(Finding(host, "gemm", rule_sev("gemm.not_measured"), host,
                                    "clusterctl-gemm reported no GPU"))
    elif not data.get("complete"):
        res.findings.append(Finding(host, "gemm", rule_sev("gemm.incomplete"), host,
                                    f"clusterctl-gemm output ends before its '# done' line: {len(gpus)} GPU(s) "
                                    "reported, the run was cut short"))
    return res

