"""Judge link flaps counted from syslog/journal/dmesg (KIND ``syslog-linkflap``).

Expectations:

``link_flap_warning``
    flaps per interface (in the collected log window) from which to warn, default
    :data:`DEFAULT_FLAP_WARNING` 1: any carrier loss on a fabric link during the window is worth
    a look (a reseated cable or switch reboot also shows here).
``link_flap_critical``
    flaps from which the node fails, default :data:`DEFAULT_FLAP_CRITICAL` 3: repeated losses
    of one link mean an unstable cable/transceiver/port that collective jobs will hit again.
``exclude_interfaces``
    interface names not judged (e.g. a management NIC); default none.

Subject ``host/<interface>`` (``host/<mlx5_N>/<port>`` for RDMA port state changes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterctl.analysis.model import CheckResult, Finding, check
from clusterctl.analysis.severity import sev as rule_sev

DEFAULT_FLAP_WARNING = 1
DEFAULT_FLAP_CRITICAL = 3


@check("syslog-linkflap")
def judge_link_flaps(host: str, data: Mapping[str, Any], expectations: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    warn = int(expectations.get("link_flap_warning", DEFAULT_FLAP_WARNING))
    crit = int(expectations.get("link_flap_critical", DEFAULT_FLAP_CRITICAL))
    exclude = set(expectations.get("exclude_interfaces") or ())
    for name, rec in sorted((data.get("interfaces") or {}).items()):
        if name in exclude:
            continue
        flaps = int(rec.get("flaps") or 0)

        if flaps >= crit:
            sev = rule_sev("link_flap.many")
        elif flaps >= warn:
            sev = rule_sev("link_flap.repeated")
        else:
            continue
        res.findings.append(Finding(
            host, "link_flap", sev, f"{host}/{name}",
            f"{flaps} link flap(s) between {rec.get('first')} and {rec.get('last')} "
            f"(warning at {warn}, critical at {crit})"))
    return res
