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

Subject ``host/<interface>`` (``host/<mlx5_N>/<port>`` for RDMA port state changes). A port's one down, then up,
within :data:`BOOT_SECONDS` of boot (dmesg's seconds) is its bring-up, a note (``link_flap.at_boot``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clusterctl.analysis.model import CheckResult, Finding, check
from clusterctl.analysis.severity import sev as rule_sev

DEFAULT_FLAP_WARNING = 1
DEFAULT_FLAP_CRITICAL = 3
#: link-ups beyond the downs (and the excerpt's first up) from which a port counts as re-opened repeatedly
REOPEN_WARNING = 2
_PCI = re.compile(r"\b[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\b")


#: seconds since boot within which a port's one down-then-up is its bring-up (link negotiation as it is opened)
BOOT_SECONDS = 120.0
_SECONDS = re.compile(r"^\d{1,6}\.\d{1,9}$")


#: dmesg's seconds since boot inside a line another head was put before (a journal's, a CI runner's)
_INNER_SECONDS = re.compile(r"(?:^|\[)\s{0,12}(\d{1,6}\.\d{1,9})\] ")


def _uptime(event: Mapping[str, Any]) -> float | None:
    """Seconds since boot of a link event: its dmesg time, or the dmesg time inside its text."""
    t = str(event.get("time") or "")
    if _SECONDS.match(t):
        return float(t)
    inner = _INNER_SECONDS.search(str(event.get("text") or "")[:80])
    return float(inner.group(1)) if inner else None


def _at_boot(rec: Mapping[str, Any]) -> bool:
    """The interface's events are one down, then up, all stamped in dmesg's seconds since boot below BOOT_SECONDS."""
    events = list(rec.get("events") or ())
    ups = [_uptime(e) for e in events]
    return (bool(events) and all(u is not None and u < BOOT_SECONDS for u in ups)
            and events[0].get("event") == "down" and events[-1].get("event") == "up")


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

        # 'Link up' again and again without a 'Link down' between: the port is re-opened (ifdown/ifup, a driver
        # reset); the first up of an excerpt may follow a down before it (severity.yml link_flap.reopened)
        # counted from the NIC driver's own 'Link up' (its line names the PCI function): a virtual device's
        # 'link becomes ready' (a container's veth/eth0 created, IPv6 ADDRCONF) is no re-open of a port
        ups = sum(1 for e in rec.get("events") or () if e.get("event") == "up" and _PCI.search(str(e.get("text"))))
        reopened = ups - int(rec.get("downs") or 0) - 1
        if flaps == 1 and _at_boot(rec):
            # the one down of a port opened at boot, before its link negotiated (r8169/igb: 'Link is Down', then
            # 'Link is Up' seconds later): bring-up, not a flap (severity.yml link_flap.at_boot)
            res.findings.append(Finding(
                host, "link_flap", rule_sev("link_flap.at_boot"), f"{host}/{name}",
                f"{name}: link down {_uptime(rec['events'][0]):g} s after boot, up at "
                f"{_uptime(rec['events'][-1]):g} s: the link negotiating as the interface was brought up, not a flap"))
            continue
        if flaps >= crit:
            sev = rule_sev("link_flap.many")
        elif flaps >= warn:
            sev = rule_sev("link_flap.repeated")
        elif reopened >= REOPEN_WARNING:
            res.findings.append(Finding(
                host, "link_flap", rule_sev("link_flap.reopened"), f"{host}/{name}",
                f"{name}: link up {ups} times between {rec.get('first')} and {rec.get('last')} with "
                f"{rec.get('downs') or 0} link down logged: the interface is re-opened again and again"))
            continue
        else:
            continue
        # the PCI function the driver's lines name ('i40e 0000:d8:00.1 eth1: NIC Link is Down'): the card to look at
        pci = next((m.group(0) for e in rec.get("events") or () if (m := _PCI.search(str(e.get("text"))))), None)
        res.findings.append(Finding(
            host, "link_flap", sev, f"{host}/{name}",
            f"{flaps} link flap(s){f' of {pci}' if pci else ''} between {rec.get('first')} and {rec.get('last')} "
            f"(warning at {warn}, critical at {crit})"))
    return res
