"""Judge RoCE QoS readback from ``mlnx_qos`` (KIND ``mlnx_qos``) against the lossless profile.

Expectations:

``qos_trust``
    the priority trust state, default :data:`DEFAULT_TRUST` ``"dscp"``: RoCE v2 is routed (L3),
    so switches and NICs classify by the DSCP in the IP header; NVIDIA's lossless RoCE recipe
    (``mlnx_qos -i <if> --trust dscp``, as in the fixture's setup trace) uses DSCP trust.
``pfc_priority``
    the one priority PFC must be enabled on, default :data:`DEFAULT_PFC_PRIORITY` 3: RoCE traffic
    marked DSCP 26 maps to priority 3 in the default dscp2prio table, and NVIDIA's RoCE
    configuration guides and the fixture enable PFC on priority 3 only.

Findings (subject ``host/<interface>``, or ``host`` when the interface is not known):
trust state not as expected (critical: RoCE lands in a lossy queue), PFC off on the expected
priority (critical: drops under congestion), PFC on extra priorities (warning: pause storms
can spread to other traffic classes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterctl.analysis.model import CheckResult, Finding, check

DEFAULT_TRUST = "dscp"
DEFAULT_PFC_PRIORITY = 3


@check("mlnx_qos")
def judge_mlnx_qos(host: str, data: Mapping[str, Any], expectations: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    want_trust = str(expectations.get("qos_trust", DEFAULT_TRUST)).lower()
    want_prio = int(expectations.get("pfc_priority", DEFAULT_PFC_PRIORITY))
    for reading in data.get("interfaces") or ():
        iface = reading.get("interface")
        subject = f"{host}/{iface}" if iface else host
        trust = reading.get("trust")
        if trust != want_trust:
            res.findings.append(Finding(host, "qos_trust", "critical", subject,
                                        f"priority trust {trust or 'not shown'}, expected {want_trust}"))
        enabled = list(reading.get("pfc_enabled_priorities") or ())
        if want_prio not in enabled:
            res.findings.append(Finding(host, "qos_pfc", "critical", subject,
                                        f"PFC off on priority {want_prio} (enabled on "
                                        f"{enabled or 'none'})"))
        extra = [p for p in enabled if p != want_prio]
        if extra:
            res.findings.append(Finding(host, "qos_pfc", "warning", subject,
                                        f"PFC also enabled on priorities {extra}, expected only {want_prio}"))
    return res
