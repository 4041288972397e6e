"""Judge nccl-tests results (``nccl-tests``, ``nccl-tests-json``) and NCCL_DEBUG=INFO logs (``nccl-log``).

Bus bandwidth is judged at the **largest message size** of the run (out-of-place busbw), never
with nccl-tests' ``Avg bus bandwidth``, which averages latency-bound small sizes in (the shared
H100 a3-mega fixture: 70.7 GB/s average, 338.8 GB/s at 8 GiB).

Floor (GB/s, all_reduce busbw at the largest size): ``nccl_busbw_floor_GBps`` from the cluster
spec wins; otherwise :data:`BUSBW_FLOORS` by GPU model (``gpu_model`` or the model nccl-tests
printed) and scope (``intra``: one node; ``inter``: more than one). Each default says where it
comes from. Without a floor only the metric and an information note are emitted. Below the floor
is a warning, below :data:`CRITICAL_FRACTION` of it critical; at or above it an information note
gives the efficiency (busbw / floor, and the model below) for the report.

Theoretical model shown in the messages: busbw = algbw x 2(n-1)/n for all_reduce (nccl-tests'
definition, ``n`` ranks), and, when ``rdma_devices_per_node`` and ``ib_rate_gbps`` are known, the
node's NIC line rate in GB/s for an inter-node run (efficiency = busbw / line rate, informative:
with two nodes NCCL's tree/NVLS can exceed a naive ring bound).

Also: ``#wrong`` > 0 or out-of-bounds values critical (data corruption); NCCL fallen back to
sockets (``Using network Socket``: on a single node too, since NCCL then has no usable IB device
for multi-node jobs either), or finding no IB device, when ``fabric`` is infiniband/roce critical (RoCE where
InfiniBand was expected or the reverse a warning); GPUDirect RDMA off on a multi-node run when
``nccl_gdr_expected`` (default: fabric is infiniband/roce) a warning. A single-rank run (one GPU,
nRanks 1: the live H200 fixture) has no bus bandwidth (2(n-1)/n = 0): said as information, not a
failure, and no metric is emitted (a zero would drag the straggler statistics); an NCCL log of a
single-rank communicator says the same. Sockets on a ``fabric: ethernet`` node (or with no fabric
given) are information.

Metric ``nccl_busbw_GBps`` (subject: the collective, e.g. ``all_reduce``) feeds the straggler
analysis.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from clusterctl.analysis.model import NOTHING, CheckResult, Finding, Metric, check
from clusterctl.analysis.severity import sev as rule_sev

CRITICAL_FRACTION = 0.5

#: (model family, scope) -> all_reduce busbw floor in GB/s at the largest message size.
BUSBW_FLOORS: dict[tuple[str, str], float] = {
    # 85 % of the shared fixture nccl-tests/a100x8-single-node-all-reduce-gcm.txt (231.72 GB/s at
    # 1 GiB; superbench-a100x8 reaches 235.26 at 8 GiB): A100 SXM, NVLink 3 through NVSwitch
    ("A100", "intra"): 197.0,
    # 85 % of nccl-tests/a100x8-2node-pairwise-all-reduce-gcm.txt (182.8 GB/s at 1 GiB, 2 nodes x 8
    # A100 over InfiniBand)
    ("A100", "inter"): 155.0,
    # 70 % of the 450 GB/s per-direction NVLink 4 bandwidth of H100/H200 SXM (NVIDIA datasheet: 900 GB/s
    # total); the A100 fixtures reach 77 % of their 300 GB/s, so 70 % leaves margin for NVLS off
    ("H100", "intra"): 315.0,
    ("H200", "intra"): 315.0,
    # 85 % of nccl-tests/h100x16-2node-a3mega-all-reduce-8B-8G.txt (338.82 GB/s at 8 GiB, 2 x 8 H100,
    # 8 x 200 Gb/s per node); H200 nodes ship with the same NVLink 4 and 8-NIC layouts
    ("H100", "inter"): 288.0,
    ("H200", "inter"): 288.0,
    # 70 % of the 150 GB/s per-direction NVLink 2 bandwidth of V100 SXM2 (datasheet: 300 GB/s total)
    ("V100", "intra"): 105.0,
}

DEFAULTS: dict[str, Any] = {
    # None: pick from BUSBW_FLOORS by GPU model and scope (see the table for the sources)
    "nccl_busbw_floor_GBps": None,
    # None: expected when fabric is infiniband or roce
    "nccl_gdr_expected": None,
}

_RDMA_FABRICS = ("infiniband", "roce")


def model_family(name: str | None) -> str | None:
    if not name:
        return None
    m = re.search(r"\b([ABHLV]\d{2,3}|GB\d{3}|B\d{3})", name.upper())
    return m.group(1) if m else None


def _collective(data: Mapping[str, Any]) -> str:
    name = data.get("collective") or "all_reduce_perf"
    return re.sub(r"_perf$", "", str(name))


#: ranks beyond which one communicator cannot sit on one (8-GPU) node
NODE_GPUS_MAX = 8


def _spans_nodes(nccl: Mapping[str, Any], hosts: Any = (), *, by_ranks: bool = False) -> bool:
    """A communicator spans nodes: NCCL's nNodes says so where it is printed; else lines of two hosts (the
    capture's own or NCCL's), or - with `by_ranks`, for an NCCL log with no rank table - more ranks than a
    node holds."""
    if nccl.get("n_nodes"):
        return int(nccl["n_nodes"]) > 1
    return len(hosts or []) > 1 or len(nccl.get("hosts") or []) > 1 or (
        by_ranks and (nccl.get("n_ranks") or 0) > NODE_GPUS_MAX)


def _said_one_node(nccl: Mapping[str, Any]) -> bool:
    """NCCL's own ``nNodes 1``: the job runs on one node. (:func:`_spans_nodes` false is weaker: no evidence of a
    second node, which a log cut before NCCL's rank lines or one host's lines of a larger job also give.)"""
    return str(nccl.get("n_nodes")) == "1"


def _one_node_words(nccl: Mapping[str, Any]) -> str:
    """How a log that shows no second node is worded: NCCL's own word, or the absence of a second one."""
    return "single-node run (NCCL: nNodes 1)" if _said_one_node(nccl) else "no second node in the log"


def _multi_node(data: Mapping[str, Any]) -> bool:
    return _spans_nodes(data.get("nccl") or {}, data.get("hosts"))


def _floor(data: Mapping[str, Any], exp: Mapping[str, Any], scope: str) -> tuple[float | None, str]:
    override = exp.get("nccl_busbw_floor_GBps")
    if override is not None:
        return float(override), "nccl_busbw_floor_GBps"
    model = exp.get("gpu_model") or next((d.get("model") for d in data.get("devices") or [] if d.get("model")), None)
    fam = model_family(model)
    network = str((data.get("nccl") or {}).get("network") or "")
    if scope == "inter" and network and network not in ("IB", "Socket") and not network.startswith("IBext"):
        # (the SHARP plugin's 'IBext' / 'IBext_v8' is InfiniBand through the plugin: the rails the defaults assume)
        # a net plugin's network ('Using network AWS Libfabric': EFA; GCP's GPUDirect-TCPX, ...): its per-node
        # bandwidth is the instance type's, not an InfiniBand/RoCE rail set's the defaults were measured on
        return None, (f"no default floor for NCCL's {network} network (the defaults are for InfiniBand/RoCE "
                      "fabrics)")
    if scope == "intra" and model and "PCIE" in str(model).upper().replace("-", "").replace(" ", ""):
        # a PCIe card (Tesla V100-PCIE-32GB, A100-PCIE-40GB, H100 PCIe): the intra-node floors are the SXM
        # boards', whose GPUs talk over NVLink through NVSwitch; PCIe cards reach a tenth of that or less
        return None, f"no default floor for {model} (intra-node): a PCIe card, the defaults are for SXM boards"
    if fam and (fam, scope) in BUSBW_FLOORS:
        floor, why = BUSBW_FLOORS[(fam, scope)], f"default for {fam} {scope}-node"
        per_node = _ranks_per_node(data)
        if scope == "inter" and per_node and per_node < FLOOR_RANKS_PER_NODE:
            # the inter-node defaults were measured with eight GPUs (and eight NICs) a node: a node's network
            # bandwidth, and so the busbw across nodes, scales with the rails it has, one per GPU
            floor = floor * per_node / FLOOR_RANKS_PER_NODE
            why = f"{why}, x {per_node}/{FLOOR_RANKS_PER_NODE} ranks a node"
        return floor, why
    return None, f"no default floor for {model or 'an unknown GPU'} ({scope}-node)"


#: ranks (GPUs) a node of the runs the inter-node defaults of BUSBW_FLOORS were measured on
FLOOR_RANKS_PER_NODE = 8


def _ranks_per_node(data: Mapping[str, Any]) -> int | None:
    """The ranks a host holds by nccl-tests' device list, where that list is whole (ranks 0..n-1, every host the same
    count, two hosts or more); None otherwise (a list cut or elided by the paster says nothing of a node's GPUs)."""
    devices = list(data.get("devices") or ())
    hosts: dict[str, int] = {}
    for d in devices:
        if d.get("host"):
            hosts[str(d["host"])] = hosts.get(str(d["host"]), 0) + 1
    whole = sorted(d.get("rank") for d in devices if isinstance(d.get("rank"), int)) == list(range(len(devices)))
    counts = set(hosts.values())
    return counts.pop() if whole and len(hosts) >= 2 and len(counts) == 1 else None


#: NCCL WARN lines that end the job (NCCL's ncclSystemError/ncclRemoteError paths): an IB async
#: fatal event, a completion with error status, a communicator fatal error
_FATAL = re.compile(r"async fatal event|fatal error|Got completion .{0,80}with error|"
                    r"local (?:work queue|protection|length) error|remote (?:access|invalid request|operation) error|"
                    r"transport retry counter exceeded|IBV_WC_RETRY_EXC_ERR|ncclSystemError|ncclRemoteError|"
                    # older NCCL: 'Got completion from peer <ip> with status=12 ...' (any non-zero
                    # ibv_wc_status is an error); a verbs call failing ('Call to ibv_modify_qp failed')
                    r"Got completion .{0,120}with status=0*[1-9]\d{0,3}\b|Call to ibv_\w{1,40} failed|"
                    # verbs async events NCCL's IB transport reports (ibv_event_type_str): a port that went
                    # down, a device or work queue in error; the aws-ofi-nccl plugin's own failure
                    r"Got async event\s*:\s*(?:port error|local catastrophic error|.{0,40}work queue .{0,20}error"
                    r"|CQ error|SRQ catastrophic error)|OFI NCCL failure: [1-9]|"
                    # the aws-ofi-nccl plugin's completion in error ('NET/OFI Request 0x7f.. completed with error')
                    r"NET/OFI Request \S{1,40} completed with error|"
                    # a libfabric provider's completion-queue error under the plugin (ccparse.nccl_log keeps it)
                    r":cq:\w{1,80}\(\):\d{1,6}<warn> err: [1-9]",
                    re.IGNORECASE)


#: busbw (GB/s) below which a run at >= SOCKET_MIN_BYTES cannot have stayed on a GPU path inside a node
#: (PCIe Gen3 x16 shared memory gives ~10 GB/s): with NET/Socket chosen, the data went over TCP
SOCKET_BUSBW_GBPS = 5.0
SOCKET_MIN_BYTES = 64 << 20
#: the largest message below which busbw is latency-bound and not judged against a floor (the default floors
#: were measured at 8 GiB; nccl-tests' bus bandwidth is the link's only once the per-call latency is amortised)
FLOOR_MIN_BYTES = 64 << 20
#: the message size the default floors (BUSBW_FLOORS) were measured at, and how far below one a run that stops at a
#: smaller size may stay unjudged (its busbw is still climbing: 16 ranks reach about 90 % of the plateau at 1 GiB)
DEFAULT_FLOOR_BYTES = 8 << 30
SHORT_RUN_FRACTION = 0.85
#: messages from which a run's own busbw counts as its peak (below, latency decides)
DROP_MIN_BYTES = 1 << 20
#: the largest message's busbw below this fraction of the run's own peak at a smaller size is a collapse
DROP_FRACTION = 0.5


def _gdr_off(host: str, nccl: Mapping[str, Any], ver: str, where: str) -> Finding:
    """nccl_gdr.off: the HCAs NCCL printed GPUDirect RDMA disabled for (all of them when it named none)."""
    hcas = ", ".join(h for h, on in (nccl.get("gdr_hcas") or {}).items() if not on)
    gpus = ", ".join(f"GPU {g}" for g, on in (nccl.get("gdr_gpus") or {}).items() if not on)
    which = hcas or gpus
    return Finding(host, "nccl_gdr", rule_sev("nccl_gdr.off"), host,
                   f"{ver}GPUDirect RDMA disabled" + (f" for {which}" if which else "") + where
                   + ": inter-node traffic is staged through host memory")


def _gdr_partial(host: str, nccl: Mapping[str, Any], ver: str) -> list[Finding]:
    """NCCL 2.4-2.6's per-GPU decision with GPUDirect RDMA on for some GPUs and off for others (their distance to
    the HCA beyond NCCL_NET_GDR_LEVEL, a GPU on the other CPU socket): those GPUs' inter-node traffic is staged
    through host memory (severity.yml nccl_gdr.off)."""
    gpus = nccl.get("gdr_gpus") or {}
    off = [g for g, on in gpus.items() if not on]
    if not off or len(off) == len(gpus) or _said_one_node(nccl):
        return []
    on = [g for g, v in gpus.items() if v]
    return [Finding(host, "nccl_gdr", rule_sev("nccl_gdr.off"), host,
                    f"{ver}GPUDirect RDMA disabled for GPU {', '.join(off)} (enabled for GPU {', '.join(on)})"
                    f"{_on(nccl)}: their inter-node traffic is staged through host memory (an HCA beyond "
                    "NCCL_NET_GDR_LEVEL from them: a GPU on the other CPU socket, or no HCA of their own)")]


def transport_findings(host: str, nccl: Mapping[str, Any], exp: Mapping[str, Any], multi: bool) -> list[Finding]:
    out: list[Finding] = []
    ifs = list(nccl.get("socket_interfaces") or [])
    # NCCL takes lo only when NCCL_SOCKET_IFNAME lets it: lo listed beside a real interface is a setting meant
    # for several nodes ('^docker', 'eth0,lo'), judged unless NCCL says the job is on one node
    if "lo" in ifs and nccl.get("transport") in ("Socket", None) and (
            multi or (len(ifs) > 1 and not _said_one_node(nccl))):
        # NCCL_SOCKET_IFNAME=lo, or an interface list that lets NCCL take the loopback: no other node is reachable
        job = "on a multi-node job" if multi else f"beside {', '.join(i for i in ifs if i != 'lo')}"
        out.append(Finding(host, "nccl_transport", rule_sev("nccl_transport.loopback"), f"{host}/lo",
                           f"NCCL's socket transport uses the loopback interface lo {job}: the other nodes cannot "
                           "be reached over it (set NCCL_SOCKET_IFNAME to the node's network interface)"))
    fabric = str(exp.get("fabric") or "").lower()
    fabric = {"ib": "infiniband"}.get(fabric, fabric)  # the short name people write for InfiniBand
    transport = nccl.get("transport")
    ver = f"NCCL {nccl['version']}: " if nccl.get("version") else ""
    if fabric in _RDMA_FABRICS:
        if nccl.get("ib_no_device"):
            out.append(Finding(host, "nccl_transport", rule_sev("nccl_transport.no_rdma_device"), host,
                               f"{ver}NCCL found no IB/RoCE device (NET/IB : No device found) on a {fabric} node"
                               + (f"; it used {transport}" if transport else "")))
        elif transport == "Socket":
            out.append(Finding(host, "nccl_transport", rule_sev("nccl_transport.socket_on_rdma_fabric"), host,
                               f"{ver}NCCL fell back to sockets (NET/Socket) although the fabric is {fabric}"
                               + ("" if multi else
                                  f"; {_one_node_words(nccl)}, but multi-node jobs would use sockets too")))
        elif transport in ("IB", "RoCE") and transport.lower() != {"infiniband": "ib", "roce": "roce"}[fabric]:
            out.append(Finding(host, "nccl_transport", rule_sev("nccl_transport.other_rdma_kind"), host,
                               f"{ver}NCCL used {transport} devices but the fabric is {fabric}"))
        gdr_expected = exp.get("nccl_gdr_expected")
        gdr_expected = True if gdr_expected is None else bool(gdr_expected)
        if gdr_expected and multi and nccl.get("gdr") is False and transport in ("IB", "RoCE"):
            out.append(_gdr_off(host, nccl, ver, ""))
    elif nccl.get("gdr") is False and exp.get("nccl_gdr_expected") is not False and (
            (transport in ("IB", "RoCE") and multi)
            # NCCL's IB transport names the HCAs it set GPUDirect RDMA off for: lines an operator singles out
            # (no transport line pasted) say the node's HCAs run without it, unless NCCL says the job is on one node
            or (transport is None and (nccl.get("gdr_hcas") or nccl.get("gdr_gpus")) and not _said_one_node(nccl))):
        # no fabric stated: NCCL's own use of IB/RoCE devices says it is an RDMA fabric
        out.append(_gdr_off(host, nccl, ver, f" on the {transport or 'IB'} devices NCCL uses"))
    elif transport == "Socket":
        out.append(Finding(host, "nccl_transport", rule_sev("nccl_transport.socket_no_fabric"), host,
                           f"{ver}NCCL used sockets" + (f" (fabric {fabric})" if fabric else " (fabric not specified)")
                           + ("" if multi else f"; {_one_node_words(nccl)}, the network was not on the data path")))
    if nccl.get("gdr") and exp.get("nccl_gdr_expected") is not False:
        out += _gdr_partial(host, nccl, ver)
    return out


def _one_nic_GBps(exp: Mapping[str, Any]) -> float | None:
    """One fabric port's line rate (``ib_rate_gbps``) in GB/s, or None where the inventory does not state it."""
    rate = exp.get("ib_rate_gbps")
    if isinstance(rate, Mapping):
        rate = next(iter(rate.values()), None)
    try:
        return float(rate) / 8.0 if rate else None
    except (TypeError, ValueError):
        return None


def _ranks_by_ratio(data: Mapping[str, Any]) -> int | None:
    """The fewest ranks an all_reduce run can have had by its own largest row (busbw = algbw x 2(n-1)/n, so
    n = 2 / (2 - busbw/algbw)), the two decimals nccl-tests prints taken at their worst; None for another collective,
    an algbw below 1 GB/s (too few digits) or a ratio that says nothing."""
    if _collective(data) != "all_reduce":
        return None
    algbw, busbw = data.get("algbw_largest_GBps"), data.get("busbw_largest_GBps")
    if not isinstance(algbw, int | float) or not isinstance(busbw, int | float) or algbw < 1.0:
        return None
    low = (float(busbw) - 0.005) / (float(algbw) + 0.005)
    return int(2 / (2 - low)) if 1.0 <= low < 2.0 else None


def _nics_line_rate_GBps(exp: Mapping[str, Any]) -> float | None:
    """All of a node's fabric ports' line rate (``rdma_devices_per_node`` x one port's) in GB/s, or None."""
    n, one = exp.get("rdma_devices_per_node"), _one_nic_GBps(exp)
    try:
        return float(n) * one if n and one else None
    except (TypeError, ValueError):
        return None


#: findings of a run that concern the path between its hosts: named with them (a pair test names both ends)
_RUN_CHECKS = frozenset({"nccl_failed", "nccl_busbw", "nccl_wrong"})
#: runs over at most this many hosts name them in those findings
_NAMED_HOSTS = 8


def judge_results(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = _judge_results(host, data, exp)
    hosts = sorted({str(d["host"]) for d in data.get("devices") or () if d.get("host")})
    if 2 <= len(hosts) <= _NAMED_HOSTS:
        said = f" [ranks on {', '.join(hosts)}]"
        res.findings = [replace(f, message=f.message + said) if f.check in _RUN_CHECKS and f.subject == host else f
                        for f in res.findings]
    return res


def _judge_results(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    coll = _collective(data)
    failure = data.get("failure")
    if failure:
        res.findings.append(Finding(host, "nccl_failed", rule_sev("nccl_failed.wrong_or_error"), host,
                                    f"nccl-tests {coll} failed (line {failure.get('line')}): "
                                    f"{str(failure.get('text'))[:240]}"))
        if data.get("nccl"):
            res.findings += transport_findings(host, data["nccl"], exp, _multi_node(data))
            res.findings += warning_findings(host, data["nccl"])
        return res
    if not data.get("rows") and not data.get("largest"):
        # the capture ends after the column header, or before it (the parameter line and rank list
        # only): nothing measured (severity.yml coverage.nothing_judgeable)
        cut = (data.get("cut") or [""])[-1]
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}nccl-tests {coll}: the capture holds no result row"
                                    + (f" ({cut})" if cut else "")))
        if data.get("nccl"):
            res.findings += transport_findings(host, data["nccl"], exp, _multi_node(data))
            res.findings += warning_findings(host, data["nccl"])
        return res
    largest = data.get("largest") or {}
    size = largest.get("size_bytes")
    n = data.get("n_ranks") or (data.get("nccl") or {}).get("n_ranks")
    wrong = data.get("wrong_total")
    if wrong:
        res.findings.append(Finding(host, "nccl_wrong", rule_sev("nccl_wrong.errors"), host,
                                    f"nccl-tests {coll}: {wrong} wrong element(s) (#wrong): data corruption"))
    if data.get("out_of_bounds"):
        res.findings.append(Finding(host, "nccl_wrong", rule_sev("nccl_wrong.errors"), host,
                                    f"nccl-tests {coll}: {int(data['out_of_bounds'])} out-of-bounds value(s)"))
    multi = _multi_node(data)
    at_least = _ranks_by_ratio(data) if n is None and not multi else None
    if at_least is not None and at_least > int(exp.get("gpus_per_node") or NODE_GPUS_MAX):
        # no rank list, but the run's own busbw/algbw says more ranks than a node holds: it crossed nodes
        multi = True
    if data.get("nccl"):
        res.findings += transport_findings(host, data["nccl"], exp, multi)
        # NCCL WARN lines between the rows (NCCL_DEBUG=WARN/INFO) are judged as in an NCCL log
        res.findings += warning_findings(host, data["nccl"])
    if n is not None and int(n) <= 1:
        said = (f"nccl-tests {coll} ran on a single rank: no data crossed a GPU boundary (algbw "
                f"{data.get('algbw_largest_GBps')} GB/s is a local memory copy)")
        if not data.get("busbw_largest_GBps"):
            # no bus bandwidth was measured either (severity.yml coverage.nothing_judgeable)
            res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                        f"{NOTHING}{said}; its bus bandwidth is 0 by definition (busbw = algbw x "
                                        "2(n-1)/n): run it across the node's GPUs (-g) or ranks"))
        else:
            res.findings.append(Finding(host, "nccl_busbw", rule_sev("nccl_busbw.single_rank"), host,
                                        f"{said}, nothing to judge"))
        return res
    busbw = data.get("busbw_largest_GBps")
    if busbw is None:
        return res
    res.metrics.append(Metric(host, "nccl_busbw_GBps", float(busbw), subject=coll, unit="GB/s"))
    scope = "inter" if multi else "intra"
    model_note = ""
    algbw = data.get("algbw_largest_GBps")
    if n and algbw is not None and coll == "all_reduce":
        model = float(algbw) * 2 * (int(n) - 1) / int(n)
        model_note = f"; model algbw x 2(n-1)/n = {model:.1f} GB/s for n={n}"
    line = _nics_line_rate_GBps(exp) if multi else None
    if line:
        model_note += f"; {busbw / line:.0%} of the {line:g} GB/s NIC line rate"
    floor, why = _floor(data, exp, scope)
    ranks = n if n is not None or at_least is None else f"at least {at_least} (by busbw/algbw)"
    where = f"{float(busbw):.1f} GB/s busbw at {size} B ({scope}-node, {ranks} ranks)"
    peak = _peak_before_largest(data)
    if peak is not None and float(busbw) < DROP_FRACTION * peak[1]:
        res.findings.append(Finding(host, "nccl_busbw", rule_sev("nccl_busbw.drop_in_run"), host,
                                    f"nccl-tests {coll}: {where} is {float(busbw) / peak[1]:.0%} of the "
                                    f"{peak[1]:g} GB/s the same run reached at {peak[0]} B: bandwidth collapses at "
                                    "larger messages (a protocol or path falls back); check NCCL_DEBUG=INFO "
                                    "transports, PCIe/NVLink and the NICs"))
    if size is not None and int(size) < FLOOR_MIN_BYTES:
        res.findings.append(Finding(host, "nccl_busbw", rule_sev("nccl_busbw.small_messages"), host,
                                    f"nccl-tests {coll}: {where}: the largest message is below "
                                    f"{FLOOR_MIN_BYTES >> 20} MiB, latency-bound: busbw not judged against a floor"))
        if data.get("validation") == 0 or wrong is None:
            # no result was checked either (validation: 0, or every #wrong N/A): nothing in the run is judged
            res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                        f"{NOTHING}nccl-tests {coll}: latency-bound messages only ({where}) and "
                                        "no result validated (#wrong N/A or validation: 0)"))
        return res
    transport = (data.get("nccl") or {}).get("transport")
    if floor is None and transport == "Socket" and size and int(size) >= SOCKET_MIN_BYTES \
            and 0 < float(busbw) < SOCKET_BUSBW_GBPS:
        res.findings.append(Finding(host, "nccl_transport", rule_sev("nccl_transport.socket_fallback"), host,
                                    f"nccl-tests {coll}: {where} over NET/Socket: the data crossed TCP sockets, "
                                    f"not RDMA (no GPU path inside a node is below {SOCKET_BUSBW_GBPS:g} GB/s)"))
        return res
    if floor is None and data.get("validation") == 0:
        # neither the results (not checked: #wrong 0 means nothing) nor the bandwidth (no floor) can be judged
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}nccl-tests {coll}: {where} with validation off (validation: 0, "
                                    f"#wrong not checked) and {why}: set nccl_busbw_floor_GBps{model_note}"))
        return res
    one_nic = _one_nic_GBps(exp) if multi else None
    if floor is None and one_nic and float(busbw) < CRITICAL_FRACTION * one_nic:
        # whatever the rails a node has, an inter-node busbw below half of one port's line rate is far below any
        # floor they give (the bus bandwidth across nodes is at least one port's worth once it runs at all)
        res.findings.append(Finding(host, "nccl_busbw", rule_sev("nccl_busbw.far_below_floor"), host,
                                    f"nccl-tests {coll}: {where} is {float(busbw) / one_nic:.0%} of one "
                                    f"{one_nic * 8:g} Gb/s port's {one_nic:g} GB/s line rate (ib_rate_gbps), below "
                                    f"half of it whatever the ports a node has{model_note}"))
        return res
    if floor is None:
        res.findings.append(Finding(host, "nccl_busbw", rule_sev("nccl_busbw.no_floor"), host,
                                    f"nccl-tests {coll}: {where}; {why}, set nccl_busbw_floor_GBps{model_note}"))
        return res
    # the report draws the floor this check applied (derived or from the inventory)
    res.metrics[-1] = Metric(host, "nccl_busbw_GBps", float(busbw), subject=coll, unit="GB/s", floor=floor,
                             floor_source=why)
    frac = float(busbw) / floor
    sev = rule_sev("nccl_busbw.at_floor" if frac >= 1.0 else "nccl_busbw.far_below_floor" if frac < CRITICAL_FRACTION
                   else "nccl_busbw.below_floor")
    if why.startswith("default") and size is not None and int(size) < DEFAULT_FLOOR_BYTES \
            and SHORT_RUN_FRACTION <= frac < 1.0:
        # the default floors are 8 GiB results: a run that stops before that has not reached its plateau
        sev = rule_sev("nccl_busbw.short_run")
        model_note += (f"; the run stops at {int(size)} B, below the {DEFAULT_FLOOR_BYTES >> 30} GiB the default "
                       f"floor was measured at: within {1 - SHORT_RUN_FRACTION:.0%} of it is not judged")
    res.findings.append(Finding(host, "nccl_busbw", sev, host,
                                f"nccl-tests {coll}: {where} is {frac:.0%} of the {floor:g} GB/s floor ({why})"
                                f"{model_note}"))
    return res


def _peak_before_largest(data: Mapping[str, Any]) -> tuple[int, float] | None:
    """(size, busbw) of the run's highest out-of-place busbw at a message of at least
    :data:`DROP_MIN_BYTES` smaller than the largest one, or None."""
    largest = (data.get("largest") or {}).get("size_bytes")
    best: tuple[int, float] | None = None
    for row in data.get("rows") or ():
        size, bw = row.get("size_bytes"), (row.get("out_of_place") or {}).get("busbw_GBps")
        if size is None or bw is None or largest is None or not DROP_MIN_BYTES <= int(size) < int(largest):
            continue
        if best is None or float(bw) > best[1]:
            best = (int(size), float(bw))
    return best


@check("nccl-tests")
def judge_nccl_tests(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    return judge_results(host, data, exp)


@check("nccl-tests-json")
def judge_nccl_tests_json(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    return judge_results(host, data, exp)


def _settings_only(data: Mapping[str, Any]) -> bool:
    """Every NCCL line of the log is one of NCCL's settings ('NCCL_SOCKET_IFNAME set by environment to eth0'): no
    transport, device, rank or warning to judge."""
    return bool(data.get("lines")) and data.get("settings_lines") == data.get("lines")


@check("nccl-log")
def judge_nccl_log(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    if _settings_only(data):
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}NCCL log of {data.get('lines')} line(s) without a transport, device, "
                                    "rank or warning line (NCCL's settings only, NCCL_DEBUG_SUBSYS narrowed?)"))
        return res
    if pairs := data.get("p2p_not_enabled"):
        said = ", ".join(f"{a}/{b}" for a, b in pairs[:8])
        res.findings.append(Finding(host, "nccl_p2p", rule_sev("nccl_p2p.not_enabled"), host,
                                    f"NCCL could not enable P2P between {len(pairs)} GPU pair(s) ({said}): their "
                                    "traffic goes through host shared memory, slower than P2P over NVLink or PCIe "
                                    "(ACS or the IOMMU on the PCIe switch, a VM's passthrough, a consumer board)"))
    res.findings += transport_findings(host, data, exp, _spans_nodes(data, by_ranks=True))
    if data.get("n_ranks") == 1:
        ver = f"NCCL {data['version']}: " if data.get("version") else ""
        res.findings.append(Finding(host, "nccl_busbw", rule_sev("nccl_busbw.single_rank"), host,
                                    f"{ver}communicator of a single rank (nRanks 1): no GPU-to-GPU traffic, "
                                    "no bus bandwidth to judge"))
    res.findings += warning_findings(host, data)
    if not any(f.severity == rule_sev("nccl_error.connect_retry") for f in res.findings):
        # the retries before a WARN that ended them, or beside a fatal error, add nothing the failed finding lacks
        res.findings += connect_retry_findings(host, data)
    timeouts = data.get("pg_timeouts") or []
    if timeouts or data.get("pg_errors"):
        # PyTorch's watchdog alone: the job is dead, no host or device is named (severity.yml nccl_watchdog.timeout)
        ops = sorted({f"{t.get('op')} SeqNum {t.get('seq')}" for t in timeouts})
        ranks = sorted({int(e["rank"]) for e in [*timeouts, *(data.get("pg_errors") or [])]
                        if e.get("rank") is not None})
        what = (f"{', '.join(ops)} timed out" if ops else "NCCL operations failed or timed out")
        which = f" (rank {', '.join(map(str, ranks))})" if ranks else ""
        res.findings.append(Finding(host, "nccl_watchdog", rule_sev("nccl_watchdog.timeout"), host,
                                    f"{NOTHING}PyTorch ProcessGroupNCCL watchdog{which}: "
                                    f"{what}; no NCCL WARN or transport error names a host or device"))
    return res


def warning_findings(host: str, nccl: Mapping[str, Any]) -> list[Finding]:
    """The NCCL WARN lines of an NCCL log summary (``ccparse.nccl_log.summarize``), wherever they were
    read: a fatal transport error is ``nccl_transport.fatal``, any other WARN ``nccl_warn.warning``."""
    out: list[Finding] = []
    warnings = nccl.get("warnings") or []
    fatal = [w for w in warnings if _FATAL.search(w[:2000]) and not _skipped_device(nccl, w)]
    for w in fatal[:5]:
        out.append(Finding(host, "nccl_transport", rule_sev("nccl_transport.fatal"), host,
                           f"NCCL fatal transport error: {w[:200]}"
                           + (f" (and {len(fatal) - 5} more)" if len(fatal) > 5 and w is fatal[4] else "")))
    bus = [w for w in nccl.get("bus_errors") or [] if w not in fatal]
    if bus:
        out.append(Finding(host, "nccl_error", rule_sev("nccl_error.bus_error"), host,
                           f"{len(bus)} line(s) of a process of the job killed by SIGBUS ({bus[0][:160]}){_on(nccl)}: "
                           "a page of shared memory it mapped could not be backed (in a container: /dev/shm too "
                           "small for NCCL's buffers, docker --shm-size or --ipc=host), the job cannot run as set up"))
    rest = [w for w in warnings if w not in fatal and w not in bus]
    oom = [w for w in rest if _OOM.search(w[:2000])]
    returns = [r for r in nccl.get("error_returns") or []
               if r["at"] == "application" or (_CALL_SITE.search(r["at"]) and not r["at"].startswith("plugin/"))]
    if not rest and not any(r["at"] == "application" or _TOP_CALL.search(r["at"]) or _NET_TRANSPORT.search(r["at"])
                            for r in returns):
        # a trace that stops below the API with no WARN before it (the IB plugin finding no device while NCCL goes on
        # over another network): NCCL recovered, nothing failed; not so in the net transport's set-up of a channel
        # (transport/net.cc: its connect failing fails the communicator's init), a trace cut before it climbs further
        returns = []
    setup = [w for w in rest if _SETUP_FATAL.search(w[:2000]) and not _OOM.search(w[:2000])
             and not _NO_P2P.search(w[:2000])]
    # a CUDA failure with NCCL's own trace after it: the trace says what it failed (the branch below)
    if setup and not fatal and not oom and not (returns and all(_CUDA_FAILURE.search(w[:2000]) for w in setup)):
        what = ("a CUDA call inside NCCL failed: the NCCL call returns an error, the job cannot run"
                if _CUDA_FAILURE.search(setup[0][:2000]) else
                "the communicator cannot be set up, the job cannot run as launched" + _odd_link_layer(nccl))
        out.append(Finding(host, "nccl_error", rule_sev("nccl_error.call_failed"), host,
                           f"NCCL WARN {setup[0][:200]}{_on(nccl)}{_sockets(nccl, setup)}: {what}"))
    elif returns and not fatal and not oom and not _only_no_p2p(nccl, rest):
        first = returns[0]
        names = sorted({_RESULT_NAMES.get(r["code"], f"result {r['code']}") for r in returns})
        own = _own(nccl, rest)
        cause = f", after NCCL WARN {own[0][:160]}" if own else ""
        if all(r["at"] == "application" for r in returns):
            how = f"the application's NCCL call returned {', '.join(names)} ({len(returns)} line(s){cause})"
        else:
            how = (f"{', '.join(names)} returned from {first['at']} up {len(returns)} call(s) of NCCL's trace"
                   f"{cause}")
        out.append(Finding(host, "nccl_error", rule_sev("nccl_error.call_failed"), host,
                           f"an NCCL call failed ({how}){_on(nccl)}{_sockets(nccl, rest)}: the communicator or "
                           "collective did not complete, the job cannot run as set up"))
    if oom and not fatal:
        # the job ran out of GPU memory: an application's limit, and the other WARN lines (a peer's socket closed,
        # a failed proxy operation) follow from ranks dying of it: nothing in them judges a device or link
        out.append(Finding(host, "nccl_warn", rule_sev("nccl_warn.out_of_memory"), host,
                           f"{NOTHING}the job ran out of GPU memory (NCCL WARN {oom[0][:160]}); {len(rest)} WARN "
                           "line(s) follow from it: an application limit, no device or link fault shown"))
        return out
    single = _said_one_node(nccl)
    for w in rest[:5]:
        if single and _NO_VERBS.search(w[:2000]):
            # the verbs library is for the network transport; a job on one node runs over P2P/SHM without it
            out.append(Finding(host, "nccl_warn", rule_sev("nccl_warn.no_verbs_one_node"), host,
                               f"NCCL WARN {w[:200]}: the job runs on one node, where NCCL needs no IB transport"))
            continue
        if _DMABUF_FALLBACK.search(w[:2000]):
            out.append(Finding(host, "nccl_warn", rule_sev("nccl_warn.gdr_dmabuf"), host,
                               f"NCCL WARN {w[:200]}: GPUDirect RDMA still runs, through DMA-BUF"))
            continue
        if _skipped_device(nccl, w):
            used = ", ".join(str(d.get("name")) for d in nccl.get("net_devices") or [])[:120]
            out.append(Finding(host, "nccl_warn", rule_sev("nccl_warn.device_skipped"), host,
                               f"NCCL WARN {w[:200]}: left out of the HCAs NCCL uses ({used})"))
            continue
        out.append(Finding(host, "nccl_warn", rule_sev("nccl_warn.warning"), host, f"NCCL WARN {w[:200]}{_on(nccl)}"))
    return out


#: NCCL cannot load the verbs library ('Failed to open libibverbs.so[.1]'): no NET/IB transport in this process
_NO_VERBS = re.compile(r"Failed to open libibverbs", re.IGNORECASE)


#: ncclResult_t (nccl.h): the codes NCCL's error trace ('init.cc:695 -> 2') returns
_RESULT_NAMES = {1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError",
                 4: "ncclInvalidArgument", 5: "ncclInvalidUsage", 6: "ncclRemoteError", 7: "ncclInProgress"}
#: the files of NCCL's error trace ('init.cc:695 -> 2') whose frames fail a communicator's set-up or a collective
#: (its init, group launch, bootstrap, transports, proxy and enqueue), not a helper thread's teardown ('socket.cc'
#: alone), each with True where its frames are NCCL's API calls: a trace reaching one failed the application's call
_TRACE_FILES = {"init": True, "group": True, "enqueue": True, "bootstrap": True, "collectives": True,
                "transport": False, r"net(?:_\w+)?": False, "proxy": False, "p2p": False, "shm": False, "nvls": False,
                "coll_net": False, "channel": False, "connect": False, "comm": False, "ib_plugin": False,
                r"net_ib\w*": False}


def _frames(top_only: bool) -> re.Pattern[str]:
    names = "|".join(name for name, top in _TRACE_FILES.items() if top or not top_only)
    return re.compile(rf"(?:^|/)(?:{names})\.\w+:\d+$")


#: the net transport's set-up and connect of a channel (NCCL's src/transport/net.cc), not the network plugin's init
_NET_TRANSPORT = re.compile(r"(?:^|/)transport/net\.cc:\d+$")
_CALL_SITE = _frames(top_only=False)
_TOP_CALL = _frames(top_only=True)
#: a CUDA (HIP) call inside NCCL failed (CUDACHECK: ncclUnhandledCudaError returned to the caller); out of memory and
#: GPUs without peer access are judged apart (_OOM, _NO_P2P)
_CUDA_FAILURE = re.compile(r"\b(?:Cuda|HIP) failure\b", re.IGNORECASE)
#: WARN lines that end a communicator's set-up by themselves (bootstrap.cc / init.cc / net.cc): two processes on one
#: rank or one GPU, no interface for the bootstrap socket (nor one to listen on: 'NET/Socket : No usable listening
#: interface found'), the network NCCL_NET names absent, a rank out of range; and a CUDA failure inside NCCL
#: (also) the topology XML NCCL read or built lacks an attribute it needs (graph/xml.h 'NCCL WARN Attribute busid of
#: node nic not found': xmlGetAttr returns ncclInternalError, the topology search and the communicator's init stop;
#: NCCL's INFO form of the line is a default taken, not an error)
_SETUP_FATAL = re.compile(r"ranks? has already checked in|Duplicate GPU detected|no socket interface found|"
                          r"No usable listening interface found|Attribute \S{1,40} of node \S{1,40} not found|"
                          r"\bnetwork \S{1,40} not found|Invalid rank requested|" + _CUDA_FAILURE.pattern,
                          re.IGNORECASE)
def _odd_link_layer(nccl: Mapping[str, Any]) -> str:
    """Where NCCL's HCA list (``NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ...``) mixes link layers, the devices
    of the fewer one, said after a set-up failure: a NIC named inside the fabric's range (a topology file's NIC
    entries no longer match the devices); else ''."""
    devices = [d for d in nccl.get("net_devices") or () if d.get("link_layer")]
    layers: dict[str, list[str]] = {}
    for d in devices:
        layers.setdefault(str(d["link_layer"]), []).append(str(d.get("name")))
    if len(layers) != 2:
        return ""
    (few, odd), (many, rest) = sorted(layers.items(), key=lambda kv: len(kv[1]))
    if len(odd) >= len(rest):
        return ""
    return (f"; NCCL's HCA list puts {', '.join(odd)} ({few}) among {len(rest)} {many} device(s): a NIC of another "
            "network named inside the fabric's device range (pin NCCL_IB_HCA or fix the device naming)")


def _own(nccl: Mapping[str, Any], warnings: list[str]) -> list[str]:
    """NCCL's own WARN lines among ``warnings``: not the application's lines of an NCCL result the parser marked
    (``app_errors``: 'RuntimeError: NCCL error in: ..., unhandled cuda error'); NCCL's own lines say what failed."""
    app = set(nccl.get("app_errors") or [])
    return [w for w in warnings if w not in app]


#: RCCL's IB transport without the peer-memory module, registering GPU memory through DMA-BUF instead ('NET/IB: Peermem
#: not available, falling back to GPU Direct RDMA (DMAbuf) for device 0')
_DMABUF_FALLBACK = re.compile(r"falling back to GPU ?Direct RDMA \(DMA-?buf\)", re.IGNORECASE)
#: NCCL's IB transport enumerating the HCAs: one it cannot open is left out of its list ('Call to ibv_open_device
#: failed', 'NET/IB : Unable to open device mlx5_58')
_OPEN_DEVICE = re.compile(r"Call to ibv_open_device failed|NET/IB ?: Unable to open device", re.IGNORECASE)


def _skipped_device(nccl: Mapping[str, Any], warning: str) -> bool:
    """A device NCCL could not open while it enumerated the HCAs, where the same log lists the HCAs it then uses
    (``NET/IB : Using [0]mlx5_1:1/RoCE``) or runs over IB (``Using network IB``, channels ``via NET/IB``): the device
    was left out (one not given to the pod or container), the job runs on the others; that WARN is no fatal transport
    error."""
    uses_ib = bool(nccl.get("net_devices")) or nccl.get("transport") in ("IB", "RoCE") or "IB" in (
        nccl.get("networks") or ())  # ('Using network IB', channels 'via NET/IB/0': a wrapped 'Using' line)
    return bool(_OPEN_DEVICE.search(warning[:2000])) and uses_ib


def _on(nccl: Mapping[str, Any]) -> str:
    """' (on node23)': the hosts NCCL's own lines name, where there are one to three of them."""
    hosts = [str(h) for h in nccl.get("hosts") or []]
    return f" (on {', '.join(hosts)})" if 0 < len(hosts) <= 3 else ""


#: a WARN of NCCL's own socket calls failing ('Call to bind failed : Cannot assign requested address', 'Call to connect
#: failed : Connection timed out', 'Connect to 10.0.0.7<43215> failed : ...')
_SOCKET_CALL = re.compile(r"Call to (?:bind|connect|listen|accept)\b|\bConnect to \S{1,80} failed", re.IGNORECASE)


def _sockets(nccl: Mapping[str, Any], warnings: list[str]) -> str:
    """'; NCCL's sockets use ib0 fe80::...%ib0 (an IPv6 link-local address ...)' where a WARN is a failed socket call
    and the log names the interfaces of NCCL's sockets (its Bootstrap and NET/Socket lines), else ''."""
    addrs = list((nccl.get("socket_addresses") or {}).items())
    if not addrs or not any(_SOCKET_CALL.search(w[:2000]) for w in warnings):
        return ""
    return f"; NCCL's sockets use {', '.join(_socket_said(name, addr) for name, addr in addrs[:4])}"


def _socket_said(name: str, addr: Any) -> str:
    """'ib0 fe80::...%ib0 (an IPv6 link-local address, not routed off its link)': an interface of NCCL's sockets and
    its address (the interface alone where the log names none)."""
    if addr is None:
        return name
    return f"{name} {addr}" + (" (an IPv6 link-local address, not routed off its link)"
                               if str(addr).lower().startswith("fe80") else "")


def connect_retry_findings(host: str, nccl: Mapping[str, Any]) -> list[Finding]:
    """NCCL's socket connect retried after a timeout or an unreachable route ('Call to connect returned Connection
    timed out, retrying'): its peer's address cannot be reached from this node over the interface NCCL chose; each try
    waits out the kernel's connect timeout and the set-up fails when the tries run out (severity.yml
    nccl_error.connect_retry). A refused connect is retried while the peer starts listening: not judged."""
    unreachable = [r for r in nccl.get("connect_retries") or [] if "refused" not in str(r.get("error")).lower()]
    if not unreachable:
        return []
    names = list(nccl.get("socket_interfaces") or [])
    addrs = nccl.get("socket_addresses") or {}
    used = [names[i] for i in nccl.get("socket_channel_devices") or [] if 0 <= i < len(names)]
    said = ", ".join(_socket_said(name, addrs.get(name)) for name in used[:4])
    over = f"; its channels run over socket device(s) {said}" if said else _sockets(nccl, ["Call to connect"])
    errors = sorted({str(r["error"]) for r in unreachable})
    return [Finding(host, "nccl_error", rule_sev("nccl_error.connect_retry"), host,
                    f"NCCL's socket connect retried {len(unreachable)} time(s) after {', '.join(errors)}{_on(nccl)}"
                    f"{over}: the peer cannot be reached over the interface NCCL chose, the communicator's set-up "
                    "stalls and fails when the tries run out (NCCL_SOCKET_IFNAME names a routed interface)")]


def _only_no_p2p(nccl: Mapping[str, Any], warnings: list[str]) -> bool:
    """NCCL's own WARN lines (not an application's result lines) are all of GPUs without peer-to-peer access."""
    own = _own(nccl, warnings)
    return bool(own) and all(_NO_P2P.search(w[:2000]) for w in own)


#: a WARN of GPUs without peer-to-peer access between them (consumer boards, some hypervisors): NCCL_P2P_DISABLE sets
#: the platform right; the GPUs and links are not at fault (degraded, as the WARN rule)
_NO_P2P = re.compile(r"peer access is not supported|failed to open CUDA IPC handle", re.IGNORECASE)
#: a CUDA allocation failure in an NCCL WARN line ('Cuda failure 'out of memory'', 'Failed to CUDA calloc N bytes')
_OOM = re.compile(r"Cuda failure '?out of memory|CUDA out of memory|cudaErrorMemoryAllocation|"
                  r"Failed to CUDA (?:c|m)alloc")
