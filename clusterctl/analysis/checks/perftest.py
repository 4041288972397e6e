"""Judge perftest ``ib_write_bw`` results (KIND ``ib_write_bw``) against the link's line rate.

Expectations:

``ib_rate_gbps``
    the line rate in Gb/s (a number, or a mapping by link layer ``{"infiniband": 400,
    "ethernet": 400}`` picked by the test's ``Link type``). Without it only the metric is emitted:
    a fraction of an unknown rate cannot be judged. Without it, the engine takes the port's active
    rate from the same host folder's ibstat/ibstatus/ibv_devinfo/sysfs-ib evidence
    (:func:`clusterctl.analysis.expectations.ib_line_rate_from_ports`, named in ``ib_rate_source``).
``ib_write_bw_min_fraction``
    default :data:`DEFAULT_MIN_FRACTION` 0.9: on a healthy HDR/NDR link a single-QP
    ``ib_write_bw`` at >= 1 MiB messages reaches about 95-98 % of the line rate (the shared
    superbench fixtures: 194.96 and 201.80 Gb/s on HDR 200), so 90 % leaves room for PCIe and
    CPU noise while catching a link that trained down or a bad cable/NUMA placement.
``ib_port``
    the HCA port the test used, default :data:`DEFAULT_IB_PORT` 1 (perftest's ``-i`` default).

The bandwidth judged is the average at the largest message size (``bw_avg_gbps``), not a mean
over all sizes. Below the fraction is a warning; below :data:`CRITICAL_FRACTION` of the line
rate it is critical. Metric ``ib_write_bw_Gbps`` (subject ``<device>/<port>``, or ``loopback``
when perftest did not name the device) feeds the cross-node straggler analysis.

InfiniBand's SDR, DDR and QDR rates (2.5/5/10 Gb/s a lane: ``Rate: 10``, ``20``, ``40`` in ibstat) are signalling
rates of an 8b/10b code: their data rate, what a transfer can reach, is 80 % of them (QDR 4x: 32 Gb/s); the fraction
is taken of that data rate on an InfiniBand link (FDR and later use 64b/66b: the rate is the data rate).

Without a line rate, the smallest standard rate at or above the result (allowing :data:`RATE_SLACK`) is a lower
bound of it: a result at line-rate message sizes below the fraction of even that rate is a finding; one at or above
it is read as a port of that rate at line rate (``ib_write_bw.at_standard_rate``, a note: "392 Gb/s" is an NDR port
running well, as an engineer reads it; a 400 Gb/s port cannot be told from an 800 Gb/s one at half its rate without
``ib_rate_gbps``). A RoCE run that printed no result row after exchanging an all-zero GID is
``ib_write_bw.zero_gid`` (critical): the GID index holds no address, RoCE cannot connect. A run whose queue pair could
not be connected (``Failed to modify QP ... to RTR``, ``Unable to Connect the HCA's through the link``) is
``ib_write_bw.qp_connect_failed`` (critical): the RDMA path between the two ports does not work.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from clusterctl.analysis.model import NOTHING, CheckResult, Finding, Metric, check
from clusterctl.analysis.severity import sev as rule_sev

#: the data rates (Gb/s) an RDMA port can have: Ethernet 10-800G, InfiniBand SDR/DDR/QDR/FDR data rates
#: (8b/10b and 64b/66b), EDR and up; a measurement cannot exceed its port's rate, so the smallest of
#: these at or above it is a lower bound of the line rate
#: the lower-bound judgement needs messages this large (perftest reaches line rate from ~64 KiB; 1 MiB
#: leaves no doubt)
LOWER_BOUND_MIN_BYTES = 1 << 20
#: below this message size perftest does not reach line rate at all: such a result alone cannot be judged
LINE_RATE_MIN_BYTES = 1 << 16
STANDARD_RATES_GBPS = (8.0, 10.0, 16.0, 25.0, 32.0, 40.0, 50.0, 54.5, 100.0, 200.0, 400.0, 800.0)


def _judge_lower_bound(host: str, subject: str, bw: float, data: Mapping[str, Any],
                       expectations: Mapping[str, Any]) -> list[Finding]:
    """No line rate from the inventory: the smallest standard rate at or above the measurement is
    one the port has at least; below the fraction of even that is a finding (a warning: the true
    rate may be higher, so the true shortfall is at least this); otherwise (and always for messages
    below :data:`LINE_RATE_MIN_BYTES`) a note that it cannot be judged without ``ib_rate_gbps``."""
    size = data.get("max_size_bytes")
    if isinstance(size, int | float) and LINE_RATE_MIN_BYTES <= size < LOWER_BOUND_MIN_BYTES:
        return []
    if not isinstance(size, int | float) or size < LINE_RATE_MIN_BYTES:
        # messages too small to reach line rate are bound by latency and message rate, not by the
        # link: the result shows nothing about it (an unjudged result is not a pass)
        return [Finding(host, "ib_write_bw", rule_sev("ib_write_bw.cannot_judge"), f"{host}/{subject}",
                        f"cannot judge: needs ib_rate_gbps (ib_write_bw {bw:.2f} Gb/s at {size} B messages, below "
                        f"{LINE_RATE_MIN_BYTES} B: bound by message rate, and the capture states no line rate)")]
    # perftest's figure may pass the nominal data rate by a little (its MB is 2^20 bytes, timer granularity,
    # an HCA-internal loopback): the lower bound allows RATE_SLACK before taking the next standard rate
    floor = next((r for r in STANDARD_RATES_GBPS if r * RATE_SLACK >= bw), None)
    min_fraction = float(expectations.get("ib_write_bw_min_fraction", DEFAULT_MIN_FRACTION))
    if floor is not None and bw < floor * min_fraction:
        return [Finding(host, "ib_write_bw", rule_sev("ib_write_bw.below_line_rate"), f"{host}/{subject}",
                        f"ib_write_bw {bw:.1f} Gb/s at {data.get('max_size_bytes')} B is {bw / floor:.0%} or less of "
                        f"the port's line rate (at least {floor:g} Gb/s, the next standard rate above the result; "
                        "set ib_rate_gbps to judge it exactly)")]
    if floor is None:
        return [Finding(host, "ib_write_bw", rule_sev("ib_write_bw.cannot_judge"), f"{host}/{subject}",
                        f"cannot judge: needs ib_rate_gbps (ib_write_bw {bw:.1f} Gb/s; the capture states no line "
                        "rate)")]
    # at line-rate message sizes the result sits just below a standard rate: read, as an engineer reads '392 Gb/s'
    # or '97.6 Gb/s', as a port of that rate running at line rate (a faster port would be at half its rate or less,
    # which a single result cannot tell; ib_rate_gbps judges it exactly) (severity.yml ib_write_bw.at_standard_rate)
    return [Finding(host, "ib_write_bw", rule_sev("ib_write_bw.at_standard_rate"), f"{host}/{subject}",
                    f"ib_write_bw {bw:.1f} Gb/s at {size} B is {bw / floor:.0%} of {floor:g} Gb/s, the standard rate "
                    "just above it: read as a port of that rate at line rate (the capture states no line rate; "
                    "set ib_rate_gbps to judge it against the port's own)")]

#: how far a measurement may pass a standard rate and still be read as that rate (201.8 Gb/s on HDR 200)
RATE_SLACK = 1.05
DEFAULT_MIN_FRACTION = 0.9
DEFAULT_IB_PORT = 1
#: below half the line rate the link is as good as broken for collective traffic
CRITICAL_FRACTION = 0.5

_LINK_TYPE = {"IB": "infiniband", "Ethernet": "ethernet", "ETH": "ethernet"}


#: InfiniBand signalling rates of the 8b/10b generations (SDR/DDR/QDR at 1x, 4x, 8x and 12x) and their share of data
_8B10B_RATES_GBPS = frozenset({2.5, 5.0, 10.0, 20.0, 30.0, 40.0, 60.0, 80.0, 120.0})
_8B10B_DATA_SHARE = 0.8


def _data_rate(rate: float, link_type: str | None, expectations: Mapping[str, Any]) -> tuple[float, str]:
    """The data rate of a line rate (and how it was derived, for the message): 80 % of an SDR/DDR/QDR InfiniBand
    signalling rate, the rate itself otherwise (Ethernet's 10/40 Gb/s are data rates; FDR onward code 64b/66b)."""
    ib = (link_type == "IB" if link_type else str(expectations.get("fabric") or "").lower() == "infiniband")
    if ib and rate in _8B10B_RATES_GBPS:
        return rate * _8B10B_DATA_SHARE, f" (8b/10b: {rate * _8B10B_DATA_SHARE:g} Gb/s of data)"
    return rate, ""


def _line_rate(exp: Any, link_type: str | None) -> float | None:
    if exp is None:
        return None
    if isinstance(exp, Mapping):
        want = _LINK_TYPE.get(link_type or "", (link_type or "").lower())
        for key, val in exp.items():
            k = str(key).lower()
            if k == want or (k == "roce" and want == "ethernet"):
                return float(val)
        return None
    return float(exp)


def _zero_gid(data: Mapping[str, Any]) -> bool:
    """A RoCE (Link type Ethernet) address exchange with an all-zero GID."""
    return str(data.get("link_type") or "").lower() in ("ethernet", "eth") and any(
        g and not g.replace(":", "").strip("0") for g in data.get("gids") or ())


#: perftest's words when the queue pair cannot be connected after the out-of-band exchange ('Failed to modify QP 1399
#: to RTR', 'Unable to Connect the HCA's through the link')
_QP_FAILED = ("to RTR", "to RTS", "Unable to Connect the HCA")


def _device_subject(host: str, data: Mapping[str, Any]) -> str:
    """A finding's subject about the run's device: ``host/<device>``, or the host when perftest named none."""
    return f"{host}/{data['device']}" if data.get("device") else host


def _qp_not_connected(data: Mapping[str, Any]) -> str | None:
    """The first of perftest's messages saying its queue pair could not be connected, or None."""
    return next((str(e) for e in data.get("errors") or () if any(w in str(e) for w in _QP_FAILED)), None)


@check("ib_write_bw")
def judge_ib_write_bw(host: str, data: Mapping[str, Any], expectations: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    bw = data.get("bw_avg_gbps")
    if data.get("completion_error"):
        # a work completion in error: the RDMA transfer itself failed (severity.yml ib_write_bw.completion_error)
        dev = data.get("device")
        res.findings.append(Finding(host, "ib_write_bw", rule_sev("ib_write_bw.completion_error"),
                                    _device_subject(host, data),
                                    f"perftest's RDMA transfer failed: {str(data['completion_error'])[:120]} (a work "
                                    "completion in error: the link, the HCA or GPUDirect RDMA on this path is broken)"))
    if data.get("device_error") and not data.get("results") and not data.get("completion_error"):
        # perftest could not create its RDMA resources on the HCA (severity.yml ib_write_bw.device_error)
        dev = data.get("device")
        res.findings.append(Finding(host, "ib_write_bw", rule_sev("ib_write_bw.device_error"),
                                    _device_subject(host, data),
                                    f"perftest could not set up RDMA on {dev or 'its device'}: "
                                    f"{str(data['device_error'])[:120]} (the HCA's attributes, queue pair or "
                                    "completion queue could not be created: driver/firmware/user-space mismatch or a "
                                    "device in error)"))
        return res
    if bw is None:
        if data.get("completion_error"):
            return res
        if data.get("gpu_mr_failed") and not data.get("results"):
            # a --use_cuda run whose GPU buffer the HCA could not register: GPUDirect RDMA is not available
            # (severity.yml ib_write_bw.gpu_memory_registration)
            dev = data.get("device")
            res.findings.append(Finding(host, "ib_write_bw", rule_sev("ib_write_bw.gpu_memory_registration"),
                                        _device_subject(host, data),
                                        f"perftest could not register its GPU buffer with the HCA: "
                                        f"{str(data['gpu_mr_failed'])[:120]} (GPUDirect RDMA unavailable: is "
                                        "nvidia-peermem loaded? GPU jobs stage RDMA through host memory)"))
        elif data.get("not_run") and not data.get("results"):
            # the client never reached the server over TCP: no RDMA traffic ran, the link is not measured
            res.findings.append(Finding(host, "ib_write_bw", rule_sev("ib_write_bw.not_run"), host,
                                        f"{NOTHING}the test did not run: {str(data['not_run'])[:160]} (perftest's "
                                        "out-of-band TCP connection to the server failed: no server listening, "
                                        "a firewall or a wrong address; no RDMA traffic ran)"))
        elif not data.get("results") and _zero_gid(data):
            # a RoCE test whose address exchange carries an empty GID: the GID index holds no address,
            # so the QPs cannot connect (severity.yml ib_write_bw.zero_gid)
            dev = data.get("device") or "the device"
            res.findings.append(Finding(host, "ib_write_bw", rule_sev("ib_write_bw.zero_gid"),
                                        _device_subject(host, data),
                                        f"perftest on {dev} (Link type {data.get('link_type')}) exchanged an all-zero "
                                        "GID and measured nothing: the GID index it used holds no address, RoCE "
                                        "cannot connect (show_gids; a routable RoCE v2 GID and its -x index)"))
        elif not data.get("results") and (qp := _qp_not_connected(data)):
            # the out-of-band exchange worked but the queue pair could not be moved to ready-to-receive/send: the
            # two ports cannot reach each other over RDMA (severity.yml ib_write_bw.qp_connect_failed)
            dev = data.get("device")
            res.findings.append(Finding(host, "ib_write_bw", rule_sev("ib_write_bw.qp_connect_failed"),
                                        _device_subject(host, data),
                                        f"perftest on {dev or 'its device'} could not connect its queue pair over "
                                        f"RDMA: {qp[:120]} (the TCP exchange worked; the RDMA path does not: a port "
                                        "down, a GID index without a routable address, an MTU or subnet mismatch)"))
        elif data.get("results"):
            # rows pasted without their '#bytes' header: their unit is not known, nothing to judge
            res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                        f"{NOTHING}perftest result rows without their '#bytes' header: the "
                                        "bandwidth unit (MB/sec by default, Gb/sec with --report_gbits) is not "
                                        "in the capture"))
        elif not data.get("results"):
            # the banner (and maybe the address exchange) but no result row: a paste cut before the
            # measurement, or a run that had not finished (severity.yml coverage.nothing_judgeable)
            errs = [str(e)[:120] for e in data.get("errors") or []]
            res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                        f"{NOTHING}perftest printed no result row"
                                        + (f" (its messages: {'; '.join(errs[:2])})" if errs else
                                           " (the capture ends before the measurement)")))
        return res
    if data.get("cpu_freq_conflict") and not any(r.get("bw_avg_gbps") for r in data.get("results") or []):
        # every bandwidth 0.00 after perftest's word that the cores' clocks conflict: it could not time the
        # transfers (frequency scaling), nothing was measured (severity.yml coverage.nothing_judgeable)
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}perftest printed 0.00 after {str(data['cpu_freq_conflict'])[:100]!r}: "
                                    "its cycle-count clock could not time the transfers under CPU frequency scaling "
                                    "(set the cores' governor to performance, or perftest's -F), no bandwidth "
                                    "was measured"))
        return res
    device = data.get("device")
    port = expectations.get("ib_port", DEFAULT_IB_PORT)
    subject = f"{device}/{port}" if device else "loopback"
    res.metrics.append(Metric(host, "ib_write_bw_Gbps", float(bw), subject=subject, unit="Gb/s"))
    rate = _line_rate(expectations.get("ib_rate_gbps"), data.get("link_type"))
    if rate is None or rate <= 0:
        res.findings += _judge_lower_bound(host, subject, float(bw), data, expectations)
        return res
    min_fraction = float(expectations.get("ib_write_bw_min_fraction", DEFAULT_MIN_FRACTION))
    # the report draws the floor this check applied
    source = str(expectations.get("ib_rate_source") or "ib_rate_gbps")
    data_rate, coded = _data_rate(rate, data.get("link_type"), expectations)
    res.metrics[-1] = replace(res.metrics[-1], floor=data_rate * min_fraction,
                              floor_source=f"{min_fraction:.0%} of the {rate:g} Gb/s line rate{coded} ({source})")
    frac = float(bw) / data_rate
    if frac < min_fraction:
        sev = rule_sev("ib_write_bw.far_below_line_rate" if frac < CRITICAL_FRACTION else "ib_write_bw.below_line_rate")
        res.findings.append(Finding(
            host, "ib_write_bw", sev, f"{host}/{subject}",
            f"ib_write_bw {float(bw):.1f} Gb/s at {data.get('max_size_bytes')} B is {frac:.0%} of the "
            f"{rate:g} Gb/s line rate{coded} ({source}; minimum {min_fraction:.0%})"))
    return res
