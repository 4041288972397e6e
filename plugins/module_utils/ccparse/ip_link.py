"""Parser for ``ip -d link show`` (iproute2) text output. KIND ``ip-link``.

Output::

    {"links": [{"index": 3, "ifname": "ens6f0np0", "parent": None, "flags": ["BROADCAST", ...],
                "mtu": 9000, "qdisc": "mq", "master": "bond0" | None, "state": "UP",
                "mode": "DEFAULT", "group": "default", "qlen": 1000, "carrier": True,
                "link_type": "ether" | "infiniband" | "loopback" | ..., "address": "94:6d:...",
                "minmtu": 68, "maxmtu": 9978, "kind": "bond_slave" | "bond" | "vlan" | "ipoib" | None,
                "kind_info": {"state": "ACTIVE", "mii_status": "UP", ...}, "altnames": [...],
                "parentdev": "0000:4d:00.0" | None, "vfs": 0, "vfs_assigned": 0}]}

``carrier`` is False when the flags show NO-CARRIER. A header quoted without its index (``eth0: <FLAGS> mtu
1500 ...``, indented in prose) is read with ``index`` None. ``kind_info`` holds the key/value pairs
of the ``-d`` kind line up to the generic attributes (``addrgenmode`` ...), e.g. a bond's
``mode``/``miimon``, a bond slave's ``state``/``mii_status``/``link_failure_count``, a VLAN's
``protocol``/``id``, an IPoIB port's ``pkey``/``mode``. ``vfs`` counts the SR-IOV virtual functions (``vf 0 link/ether
...``) listed under a physical function, ``vfs_assigned`` those with a MAC address (a new VF's reads all zeros).
Each entry must have its ``link/`` line. ``ip -s [-s] link`` adds ``stats``: ``{"rx": {"bytes": ..., "packets": ...,
"errors": ..., "dropped": ..., "missed" | "overrun": ..., "mcast": ..., and with ``-s -s`` "length", "crc", "frame",
"fifo", "missed" | "overrun"}, "tx": {...}}`` under the column names the head rows print (older iproute2 prints
``overrun`` in the first row and ``missed`` in the second, newer the other way round); a link without them has no
``stats`` key.

``ip -j [-d] link`` / ``ip -j addr`` (one JSON array) is read into the same dicts (``ifindex`` -> ``index``,
``operstate`` -> ``state``, ``txqlen`` -> ``qlen``, ``linkinfo``'s kind and its data or a member's,
``vfinfo_list``); the parse then says ``"json": True``.

``ip -br link`` / ``ip -br addr`` (brief: one line a netdev, ``ens3np0   UP   10.99.91.43/31`` or ``eth0   DOWN
52:54:00:12:34:56 <NO-CARRIER,BROADCAST,MULTICAST,UP>``) are read where no full header is: ``state`` as the column
says, ``flags`` and ``carrier`` where ``-br link`` prints the flags (``carrier`` None where the brief address form
does not show them), ``mtu``/``link_type`` None; the parse then says ``"brief": True``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .common import ParseError, need_int, parser, strip_source_line, to_int

TOOL = "ip-link"

_HEAD = re.compile(r"^(\d{1,9}):\s+([^\s:@]{1,64})(?:@([^\s:]{1,64}))?:\s+<([^>]{0,400})>\s*(.*)$")
#: a header pasted without its index (quoted in prose, cut by the paster): 'eth0: <NO-CARRIER,...> mtu 1500 ...';
#: taken only with its ``mtu`` (otherwise it is prose such as 'Note: <...>')
_HEAD_NO_INDEX = re.compile(r"^[ \t]{0,8}()([^\s:@<]{1,64})(?:@([^\s:]{1,64}))?:\s+<([A-Z0-9_,-]{0,400})>\s*"
                            r"(mtu \d.*)$")
_INT_KEYS = {"mtu", "qlen", "minmtu", "maxmtu", "link_failure_count", "id", "miimon", "numtxqueues",
             "numrxqueues", "ad_aggregator_id", "min_links"}
#: first generic attribute that iproute2 prints after the kind-specific ones
_GENERIC = {"addrgenmode", "numtxqueues", "numrxqueues", "gso_max_size", "gso_max_segs", "tso_max_size",
            "tso_max_segs", "gro_max_size", "parentbus", "parentdev", "portname", "portid", "switchid"}
_KINDS = {"bond", "bond_slave", "vlan", "ipoib", "bridge", "bridge_slave", "veth", "vxlan", "macvlan",
          "macvtap", "team", "team_slave", "geneve", "tun", "dummy", "ipvlan", "vrf", "gre", "ip6tnl",
          "sit", "ipip", "wireguard", "openvswitch", "openvswitch_slave", "nlmon", "hsr", "macsec"}


def _val(key: str, v: str) -> Any:
    if key in _INT_KEYS:
        n = to_int(v)
        return v if n is None else n
    return v


def _pairs(tokens: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith("<"):  # vlan flags like <REORDER_HDR>
            out.setdefault("flags", []).extend(tok.strip("<>").split(","))
            i += 1
            continue
        if i + 1 < len(tokens):
            out[tok] = _val(tok, tokens[i + 1])
            i += 2
        else:
            out[tok] = None
            i += 1
    return out


#: an interface's continuation line at column 0, where a web page's copy dropped its indentation
_CONTINUED = re.compile(r"(?:link/\S|altname |inet6? \S|valid_lft |alias |vlan protocol |[RT]X: |[RT]X errors: |vf \d)")


#: the keys of a header line after its flags (iproute2's print_linkinfo): a mail or terminal wrapping the header puts
#: the rest of them on the next line at column 0 ('mq master bond0 state DOWN group default qlen 1000')
_HEAD_KEYS = frozenset({"mtu", "qdisc", "master", "state", "mode", "group", "qlen", "link-netnsid", "link-netns",
                        "netns"})


def _head_rest(head_attrs: list[str], raw: str) -> list[str] | None:
    """The header's attribute tokens with ``raw`` (the line after the header, at column 0) joined on, where ``raw``
    is the wrapped rest of that header: its tokens are the value the header's last key lacks, then key/value pairs
    of header keys. None otherwise."""
    tokens = raw.split()
    if not tokens or len(tokens) > 16:
        return None
    dangling = bool(head_attrs) and len(head_attrs) % 2 == 1 and head_attrs[-1] in _HEAD_KEYS
    rest = tokens[1:] if dangling else tokens
    if rest[0::2] and all(k in _HEAD_KEYS for k in rest[0::2]) and len(rest) % 2 == 0:
        return head_attrs + tokens
    return None


#: a line of ``ip -br link`` / ``ip -br addr``: the netdev (``veth1@if12``), its operational state, then the MAC and
#: flags (``-br link``) or the addresses (``-br addr``)
#: (its head: the netdev and its state, also what ccparse.detect recognises such rows by)
BRIEF_HEAD = (r"[ \t]{0,4}(?P<ifname>[^\s@:<>]{1,64})(?:@(?P<parent>\S{1,64}))?[ \t]+"
              r"(?P<state>UP|DOWN|UNKNOWN|LOWERLAYERDOWN|DORMANT|NOTPRESENT|TESTING)")
_BRIEF = re.compile(r"^" + BRIEF_HEAD + r"(?:\s+(?P<rest>.*?))?\s*$")
_BRIEF_FLAGS = re.compile(r"<([A-Z0-9_,-]{0,400})>")


def _brief(lines: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """The netdevs of a brief listing (at least two lines of it: one such line may be prose)."""
    links: list[dict[str, Any]] = []
    for _n, raw in lines:
        m = _BRIEF.match(raw)
        if m is None:
            continue
        fl = _BRIEF_FLAGS.search(m.group("rest") or "")
        flags = [f for f in fl.group(1).split(",") if f] if fl else None
        links.append({"index": None, "ifname": m.group("ifname"), "parent": m.group("parent"), "flags": flags or [],
                      "mtu": None, "qdisc": None, "master": None, "state": m.group("state"), "mode": None,
                      "group": None, "qlen": None, "carrier": ("NO-CARRIER" not in flags) if flags is not None else
                      (True if m.group("state") == "UP" else None),
                      "link_type": "loopback" if m.group("ifname") == "lo" else None, "address": None, "minmtu": None,
                      "maxmtu": None, "kind": None, "kind_info": {}, "altnames": [], "parentdev": None, "vfs": 0,
                      "vfs_assigned": 0})
    return links if len(links) >= 2 else []


#: ``ip -j`` / ``ip -j -d``'s keys of a link's own fields, as the text form names them
_JSON_KEYS = (("mtu", "mtu"), ("qdisc", "qdisc"), ("master", "master"), ("operstate", "state"), ("linkmode", "mode"),
              ("group", "group"), ("txqlen", "qlen"), ("link_type", "link_type"), ("address", "address"),
              ("min_mtu", "minmtu"), ("max_mtu", "maxmtu"), ("parentdev", "parentdev"))


#: ``ip -j -s``'s counter names the text form prints otherwise (the rest lose their ``_errors``)
_JSON_STAT = {"over_errors": "overrun", "multicast": "mcast", "collisions": "collsns"}


def _json_link(obj: dict[str, Any]) -> dict[str, Any]:
    """One link of ``ip -j [-d] link`` / ``ip -j addr`` as the text form's dict."""
    flags = [str(f) for f in obj.get("flags") or [] if isinstance(f, str)]
    link: dict[str, Any] = {"index": obj.get("ifindex") if isinstance(obj.get("ifindex"), int) else None,
                            "ifname": str(obj.get("ifname") or ""), "parent": obj.get("link"), "flags": flags,
                            "carrier": "NO-CARRIER" not in flags, "kind": None, "kind_info": {},
                            "altnames": [str(a) for a in obj.get("altnames") or []], "vfs": 0, "vfs_assigned": 0}
    for key, name in _JSON_KEYS:
        link[name] = obj.get(key)
    info: dict[str, Any] = obj["linkinfo"] if isinstance(obj.get("linkinfo"), dict) else {}
    if info.get("info_slave_kind"):  # a bond's (bridge's...) member: its kind line is the slave's
        link["kind"] = f"{info['info_slave_kind']}_slave"
        link["kind_info"] = dict(info.get("info_slave_data") or {})
    elif info.get("info_kind"):
        link["kind"] = str(info["info_kind"])
        link["kind_info"] = dict(info.get("info_data") or {})
    stats = obj.get("stats64") or obj.get("stats")
    if isinstance(stats, dict):  # ``ip -j -s link``: 'crc_errors', 'over_errors' ... under the text form's names
        link["stats"] = {way: {_JSON_STAT.get(k, k.replace("_errors", "")): v for k, v in stats[way].items()
                               if isinstance(v, int)}
                         for way in ("rx", "tx") if isinstance(stats.get(way), dict)}
    for vf in obj.get("vfinfo_list") or []:
        link["vfs"] += 1
        mac = str((vf.get("address") or vf.get("mac") or "") if isinstance(vf, dict) else "")
        if mac.replace(":", "").strip("0"):
            link["vfs_assigned"] += 1
    return link


def _json_links(text: str) -> list[dict[str, Any]] | None:
    """The links of ``ip -j`` output (one JSON array, also ``-p``'s pretty form); None when the text is not one."""
    body = text.strip()
    if not body.startswith("[") or '"ifname"' not in body:
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, list) or not all(isinstance(o, dict) and "ifname" in o for o in data) or not data:
        return None
    return [_json_link(o) for o in data]


def _finish(link: dict[str, Any] | None, truncated: list[bool]) -> None:
    """A link without its ``link/<type>`` line (``ip a | grep mtu``, a cut paste) is kept as shown."""
    if link is not None and link["link_type"] is None:
        truncated[0] = True


@parser("ip-link")
def parse_ip_link(text: str) -> dict[str, Any]:
    """Parse ``ip -d link show`` (also plain ``ip link show``, and ``ip -j`` JSON) into one dict per interface."""
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    if "[" in text and (js := _json_links(strip_source_line(text))) is not None:
        return {"links": js, "truncated": False, "json": True}
    links: list[dict[str, Any]] = []
    link: dict[str, Any] | None = None
    truncated = [False]
    lineno = offset
    head_attrs: list[str] | None = None  # the last header's attribute tokens, while its wrapped rest may follow
    stat_cols: tuple[str, list[str]] | None = None  # ('rx'|'tx', the column names) of an ``ip -s`` head row
    for lineno, raw in enumerate(strip_source_line(text).splitlines(), start=1 + offset):
        if not raw.strip():
            continue
        head = _HEAD.match(raw[:4000])
        if head is None and "> mtu " in raw:
            head = _HEAD_NO_INDEX.match(raw[:4000])
        if head:
            _finish(link, truncated)
            attrs = _pairs(head.group(5).split())
            flags = [f for f in head.group(4).split(",") if f]
            link = {
                "index": need_int(head.group(1), TOOL, lineno, "index") if head.group(1) else None,
                "ifname": head.group(2), "parent": head.group(3),
                "flags": flags, "mtu": attrs.get("mtu"), "qdisc": attrs.get("qdisc"),
                "master": attrs.get("master"), "state": attrs.get("state"), "mode": attrs.get("mode"),
                "group": attrs.get("group"), "qlen": attrs.get("qlen"),
                "carrier": "NO-CARRIER" not in flags,
                "link_type": None, "address": None, "minmtu": None, "maxmtu": None,
                "kind": None, "kind_info": {}, "altnames": [], "parentdev": None, "vfs": 0,
                "vfs_assigned": 0,
            }
            if not isinstance(link["mtu"], int):
                raise ParseError(TOOL, f"{link['ifname']}: no numeric mtu in header", lineno)
            links.append(link)
            head_attrs = head.group(5).split()
            continue
        if link is not None and head_attrs is not None and raw[0] not in " \t" \
                and (joined := _head_rest(head_attrs, raw)) is not None:
            # the header wrapped by a mail or a terminal: its last keys on this line
            attrs = _pairs(joined)
            for key in ("mtu", "qdisc", "master", "state", "mode", "group", "qlen"):
                link[key] = attrs.get(key, link[key])
            head_attrs = None
            continue
        head_attrs = None
        if link is None or (raw[0] not in " \t" and _CONTINUED.match(raw) is None
                            and (stat_cols is None or not raw.replace(" ", "").isdigit())):
            truncated[0] = truncated[0] or bool(re.match(r"^\d{1,6}:", raw))  # a header cut mid-line
            continue  # prose or another command's output between the links
        tokens = raw.split()[:400]
        first = tokens[0]
        if stat_cols is not None and all(t.isdigit() for t in tokens):
            # the counters under an ``ip -s link`` head row (a row of ``-h``'s 1.2M is not read)
            row = link.setdefault("stats", {}).setdefault(stat_cols[0], {})
            row.update(zip(stat_cols[1], map(int, tokens)))
            stat_cols = None
            continue
        stat_cols = None
        if first in ("RX:", "TX:") or (first in ("RX", "TX") and tokens[1:2] == ["errors:"]):
            stat_cols = (first[:2].lower(), tokens[2 if first in ("RX", "TX") else 1:])
            continue
        if first.startswith("link/"):
            link["link_type"] = first[5:]
            rest = tokens[1:]
            if rest and rest[0] not in ("brd", "promiscuity", "permaddr"):
                link["address"] = rest.pop(0)
            attrs = _pairs(rest)
            link["minmtu"], link["maxmtu"] = attrs.get("minmtu"), attrs.get("maxmtu")
            tokens = rest
        elif first == "altname":
            link["altnames"].extend(tokens[1:])
            continue
        elif first == "vf" and len(tokens) > 1 and tokens[1].isdigit():
            link["vfs"] += 1  # an SR-IOV virtual function of this physical function
            mac = next((t.rstrip(",") for t in tokens[2:6] if t.count(":") == 5), None)
            if mac and mac.replace(":", "").strip("0"):
                link["vfs_assigned"] += 1  # given a MAC: handed to a pod or VM (a new VF reads all zeros)
            continue
        elif first in _KINDS:
            link["kind"] = first
            cut = next((i for i, t in enumerate(tokens[1:], 1) if t in _GENERIC), len(tokens))
            link["kind_info"] = _pairs(tokens[1:cut])
            tokens = tokens[cut:]
        if "parentdev" in tokens:
            i = tokens.index("parentdev")
            if i + 1 < len(tokens):
                link["parentdev"] = tokens[i + 1]
    _finish(link, truncated)
    if not links:
        brief = _brief(list(enumerate(strip_source_line(text).splitlines(), start=1 + offset)))
        if brief:
            return {"links": brief, "truncated": False, "brief": True}
        raise ParseError(TOOL, "no '<index>: <ifname>: <FLAGS> mtu N' line found", lineno or None)
    return {"links": links, "truncated": truncated[0]}
