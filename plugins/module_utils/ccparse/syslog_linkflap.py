"""Link-flap events from syslog / journal / dmesg text. KIND ``syslog-linkflap``.

Recognised events (the interface is the name before the colon):
  down: ``<if>: lost carrier`` (systemd-networkd), ``<if>: Link down`` / ``NIC Link is Down``, FreeBSD's
        ``<if>: link state changed to DOWN``, a router's switch port ``eth3 (Int switch port: 7) ... Link DOWN.``
        (mlx5_core and other NIC drivers), ``bond0: (slave <if>): link status definitely down``,
        ``<mlx5_N>: ... port <n> ... state change ... -> DOWN`` style RDMA port state changes,
        mlx5_core's ``<mlx5_N>: Port: <n> Link DOWN`` (``Link INIT`` is the bring-up, no event)
  up:   ``<if>: gained carrier``, ``<if>: Link up`` / ``NIC Link is Up``, ``link becomes ready``,
        ``link status definitely up``, RDMA port state change to ``ACTIVE``, ``Port: <n> Link ACTIVE``
A flap is one down event; when several sources log the same flap (the NIC driver's "Link down"
and the bond's "link status definitely down"), ``flaps`` is the largest per-source count
(``downs_by_source``), so one flap is not counted twice. Output::

    {"interfaces": {"ib6": {"flaps": 6, "downs": 6, "ups": 6, "downs_by_source": {"carrier": 6},
                            "first": "Aug 17 06:18:01",
                            "last": "Aug 17 06:18:06",
                            "events": [{"line": 4, "time": "Aug 17 06:18:01", "host": "vm-0",
                                        "event": "down", "source": "carrier", "text": "..."}]}},
     "lines": 14, "events": 12}

Lines must look like log lines (syslog ``Mon DD HH:MM:SS``, ISO 8601, dmesg ``[sec.usec]``, or OpenWrt
logread ``Sun Jun 11 23:02:41 2023 kern.info`` prefixes; journal ``-- ... --`` markers are skipped).
Input where fewer than half the lines do,
or that is empty, is a ParseError naming the first unrecognised line.
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, parser, strip_source_line

TOOL = "syslog-linkflap"

_SYSLOG = re.compile(r"^(?P<time>[A-Z][a-z]{2}\s+\d{1,2}\s+\d{2}:\d{2}:\d{2})\s+(?P<host>\S+)\s+(?P<msg>.*)$")
_ISO = re.compile(r"^(?P<time>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)"
                  r"\s+(?P<host>\S+)\s+(?P<msg>.*)$")
#: dmesg's own time column: seconds since boot ('  12.345678'), dmesg -d's delta ('12.345 <    0.001>'),
#: dmesg -H / --reltime ('+0.000844', 'Jan11 09:52', 'Feb 1 21:56'; a decimal comma in some locales: '+0,000089')
DMESG_TIME = (r"\+?\d+\.\d+(?:\s{0,8}<\s{0,12}\d+\.\d+>)?|\+\d+,\d{6}|"
              r"[A-Z][a-z]{2} ?\d{1,2} \d{2}:\d{2}(?::\d{2})?")
#: dmesg -T's clock time ('Fri Feb 12 11:47:20 2021')
DMESG_CLOCK = r"[^\W\d_]{2,4}\.? [^\W\d_]{3,4}\.?\s+\d{1,2} \d{2}:\d{2}:\d{2} \d{4}"
_DMESG = re.compile(r"^\[\s*(?P<time>" + DMESG_TIME + "|" + DMESG_CLOCK + r")\]\s*(?P<msg>.*)$")
#: OpenWrt's logread: 'Sun Jun 11 23:02:41 2023 kern.info kernel: [39210.778735] igc 0000:05:00.0 eth5: ...'
_LOGREAD = re.compile(r"^(?P<time>" + DMESG_CLOCK + r")\s+"
                      r"[a-z]{2,8}\.[a-z]{3,7}\s+(?P<msg>.*)$")
_DMESG_IN_MSG = re.compile(r"^kernel:\s*\[\s*\d+\.\d+\]\s*")

#: an interface name starts a word and is short (IFNAMSIZ is 16; 32 leaves room for RDMA names):
#: unbounded, the search retried it at every position of a long word (quadratic on a long line)
_IF = r"(?P<if>(?<![\w.\-])[A-Za-z][\w.\-]{0,31})"
_MLX = r"(?P<if>(?<![\w.\-])mlx\d{1,3}_\d{1,3})"
#: printk's longest record line (LOG_LINE_MAX 1024 - 32): text past it is no kernel message, and
#: the RDMA state patterns (three lazy gaps) stay cheap on it
MAX_MSG = 1024
_I = re.IGNORECASE
#: (event, source, pattern); one physical flap may be logged by several sources (driver and bond)
_PATTERNS = [
    ("down", "carrier", re.compile(_IF + r":\s+lost carrier\b", _I)),
    ("up", "carrier", re.compile(_IF + r":\s+gained carrier\b", _I)),
    ("down", "driver", re.compile(_IF + r":\s+(?:link (?:is )?down|nic link is down)\b", _I)),
    ("up", "driver", re.compile(_IF + r":\s+(?:link (?:is )?up|nic link is up|link becomes ready)\b", _I)),
    # switch-port drivers (mtk_soc_eth, DSA): 'eth0: port 2 link down'
    ("down", "driver", re.compile(_IF + r":\s+port\s+(?P<port>\d{1,3})\s+link (?:is )?down\b", _I)),
    ("up", "driver", re.compile(_IF + r":\s+port\s+(?P<port>\d{1,3})\s+link (?:is )?up\b", _I)),
    # FreeBSD's ifnet (pfSense, OPNsense, TrueNAS CORE): 'igb1: link state changed to DOWN'
    ("down", "driver", re.compile(_IF + r":\s+link state changed to DOWN\b")),
    ("up", "driver", re.compile(_IF + r":\s+link state changed to UP\b")),
    # Broadcom switch ports of a router's kernel: 'eth3 (Int switch port: 7) (Logical Port: 7) (phyId: 15) Link DOWN.'
    ("down", "driver", re.compile(_IF + r"(?:\s\([^()\n]{1,40}\)){1,4}\s+Link DOWN\b")),
    ("up", "driver", re.compile(_IF + r"(?:\s\([^()\n]{1,40}\)){1,4}\s+Link Up\b")),
    ("down", "bond", re.compile(r"\(slave " + _IF + r"\):\s+link status (?:definitely )?down", _I)),
    ("up", "bond", re.compile(r"\(slave " + _IF + r"\):\s+link status (?:definitely )?up", _I)),
    # kernels without the '(slave X)' form: 'bond1: link status definitely down for interface ens3f1, disabling it'
    ("down", "bond", re.compile(r":\s+link status (?:definitely )?down for interface " + _IF, _I)),
    ("up", "bond", re.compile(r":\s+link status (?:definitely )?up for interface " + _IF, _I)),
    ("down", "rdma", re.compile(_MLX + r"\b.*?\bport\s+(?P<port>\d{1,3})\b.*?state.*?(?:->|to)\s*"
                                r"(?:PORT_)?(?:DOWN|INIT|ARMED|POLLING)\b", _I)),
    ("up", "rdma", re.compile(_MLX + r"\b.*?\bport\s+(?P<port>\d{1,3})\b.*?state.*?(?:->|to)\s*"
                              r"(?:PORT_)?ACTIVE\b", _I)),
    ("down", "rdma", re.compile(_MLX + r": Port: (?P<port>\d{1,3}) Link DOWN\b", _I)),
    ("up", "rdma", re.compile(_MLX + r": Port: (?P<port>\d{1,3}) Link ACTIVE\b", _I)),
]


def _match(msg: str) -> tuple[str, str, str] | None:
    msg = msg[:MAX_MSG]
    for event, source, rx in _PATTERNS:
        m = rx.search(msg)
        if m:
            name = m.group("if")
            port = m.groupdict().get("port")
            return event, source, f"{name}/{port}" if port else name
    return None


@parser("syslog-linkflap")
def parse_syslog_linkflap(text: str) -> dict[str, Any]:
    """Count link down/up events per interface in syslog-style text."""
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    ifaces: dict[str, dict[str, Any]] = {}
    total = recognised = events = 0
    first_bad: int | None = None
    lineno = offset
    for lineno, raw in enumerate(strip_source_line(text).splitlines(), start=1 + offset):
        line = raw.strip()
        if not line:
            continue
        total += 1
        if line.startswith("-- ") and line.endswith(" --"):
            recognised += 1
            continue
        m = _SYSLOG.match(line) or _ISO.match(line)
        host: str | None
        if m:
            time, host, msg = m.group("time"), m.group("host"), m.group("msg")
        else:
            d = _DMESG.match(line) or _LOGREAD.match(line)
            if not d:
                if first_bad is None:
                    first_bad = lineno
                continue
            time, host, msg = d.group("time"), None, d.group("msg")
        recognised += 1
        msg = _DMESG_IN_MSG.sub("", msg)
        hit = _match(msg)
        if hit is None:
            continue
        event, source, name = hit
        events += 1
        rec = ifaces.setdefault(name, {"flaps": 0, "downs": 0, "ups": 0, "first": None, "last": None,
                                       "downs_by_source": {}, "events": []})
        rec["downs" if event == "down" else "ups"] += 1
        if event == "down":
            by = rec["downs_by_source"]
            by[source] = by.get(source, 0) + 1
            rec["flaps"] = max(by.values())
        rec["first"] = rec["first"] or time
        rec["last"] = time
        rec["events"].append({"line": lineno, "time": time, "host": host, "event": event, "source": source,
                              "text": msg})
    if total == 0:
        raise ParseError(TOOL, "empty input", None)
    if recognised * 2 < total:
        raise ParseError(TOOL, f"only {recognised} of {total} lines look like syslog/journal/dmesg lines",
                         first_bad)
    return {"interfaces": ifaces, "lines": total, "events": events}
