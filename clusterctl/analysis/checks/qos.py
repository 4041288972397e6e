"""Judge RoCE QoS readback from ``mlnx_qos`` (KIND ``mlnx_qos``) and the upstream ``dcb`` tool
(KIND ``dcb``) against the lossless profile. A trust state or PFC table the capture does not
show (an excerpt, a cut paste) is not judged.

Expectations:

``qos_trust``
    the priority trust state, default :data:`DEFAULT_TRUST` ``"dscp"``: RoCE v2 is routed (L3),
    so switches and NICs classify by the DSCP in the IP header; NVIDIA's lossless RoCE recipe
    (``mlnx_qos -i <if> --trust dscp``, as in the fixture's setup trace) uses DSCP trust.
``pfc_priority``
    the one priority PFC must be enabled on, default :data:`DEFAULT_PFC_PRIORITY` 3: RoCE traffic
    marked DSCP 26 maps to priority 3 in the default dscp2prio table, and NVIDIA's RoCE
    configuration guides and the fixture enable PFC on priority 3 only. Without the key, a reading
    whose PFC is on for exactly one priority states the site's lossless priority itself (a site that
    marks RoCE for priority 5 is set up as it means to be); the default judges the rest.

Findings (subject ``host/<interface>``, or ``host`` when the interface is not known):
trust state not as expected (critical: RoCE lands in a lossy queue), PFC off on the expected
priority (critical: drops under congestion), PFC on extra priorities (warning: pause storms
can spread to other traffic classes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterctl.analysis.model import CheckResult, Finding, check
from clusterctl.analysis.severity import sev as rule_sev

DEFAULT_TRUST = "dscp"
DEFAULT_PFC_PRIORITY = 3


@check("mlnx_qos")
def judge_mlnx_qos(host: str, data: Mapping[str, Any], expectations: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    want_trust = str(expectations.get("qos_trust", DEFAULT_TRUST)).lower()
    for reading in data.get("interfaces") or ():
        _judge_reading(host, reading, want_trust, _want_priority(expectations, reading), res)
    return res


def _want_priority(expectations: Mapping[str, Any], reading: Mapping[str, Any]) -> int:
    """The inventory's ``pfc_priority``; without it the reading's one PFC-enabled priority (the lossless
    priority the capture states), else :data:`DEFAULT_PFC_PRIORITY`."""
    if expectations.get("pfc_priority") is not None:
        return int(expectations["pfc_priority"])
    enabled = list(reading.get("pfc_enabled_priorities") or ())
    return int(enabled[0]) if len(enabled) == 1 else DEFAULT_PFC_PRIORITY


def _judge_reading(host: str, reading: Mapping[str, Any], want_trust: str, want_prio: int,
                   res: CheckResult) -> None:
    """Trust and PFC of one reading; what the capture does not show (an excerpt) is not judged."""
    iface = reading.get("interface")
    subject = f"{host}/{iface}" if iface else host
    trust = reading.get("trust")
    if trust is not None and trust != want_trust:
        res.findings.append(Finding(host, "qos_trust", rule_sev("qos_trust.pcp"), subject,
                                    f"priority trust {trust}, expected {want_trust}"))
    if reading.get("pfc_enabled_priorities") is None:
        return
    enabled = list(reading.get("pfc_enabled_priorities") or ())
    if want_prio not in enabled:
        res.findings.append(Finding(host, "qos_pfc", rule_sev("qos_pfc.off"), subject,
                                    f"PFC off on priority {want_prio} (enabled on "
                                    f"{enabled or 'none'})"))
    extra = [p for p in enabled if p != want_prio]
    if extra:
        res.findings.append(Finding(host, "qos_pfc", rule_sev("qos_pfc.extra_priorities"), subject,
                                    f"PFC also enabled on priorities {extra}, expected only {want_prio}"))


@check("dcb")
def judge_dcb(host: str, data: Mapping[str, Any], expectations: Mapping[str, Any]) -> CheckResult:
    """The same lossless-profile judgement for the upstream ``dcb`` tool's readback."""
    res = CheckResult()
    _judge_reading(host, data, str(expectations.get("qos_trust", DEFAULT_TRUST)).lower(),
                   _want_priority(expectations, data), res)
    return res
