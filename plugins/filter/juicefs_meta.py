"""Split a JuiceFS metadata URL into the part that may be shown and the password that may not.

``juicefs_meta_split('redis://:s3cret@meta1:6379/1')`` returns::

    {"scheme": "redis", "public_url": "redis://meta1:6379/1", "password": "s3cret",
     "host": "meta1", "port": 6379}

The password goes to ``META_PASSWORD`` in a root-only EnvironmentFile (JuiceFS reads it from
there when the URL has none), the public URL goes into the unit file and the logs.
``host``/``port`` are the first metadata server, used for a quick TCP probe; they are empty/0 for
engines without a network address (sqlite3, badger, memkv).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

DEFAULT_PORTS = {
    "redis": 6379,
    "rediss": 6379,
    "unix": 0,
    "mysql": 3306,
    "postgres": 5432,
    "tikv": 2379,
    "etcd": 2379,
    "fdb": 0,
}
LOCAL_SCHEMES = {"sqlite3", "badger", "memkv", "unix", "fdb"}
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>.*)$", re.S)


def juicefs_meta_split(url: Any) -> dict[str, Any]:
    if not isinstance(url, str) or not url:
        raise ValueError("metadata URL must be a non-empty string")
    m = _URL.match(url.strip())
    if not m:
        raise ValueError("metadata URL must look like <engine>://...")
    scheme, rest = m.group("scheme").lower(), m.group("rest")
    user, password = "", ""
    # Userinfo ends at the last '@' before the path ('/'), so a password may hold '@' only
    # percent-encoded; JuiceFS gets it decoded through META_PASSWORD.
    head, sep, tail = rest.partition("/")
    if "@" in head:
        userinfo, _at, hostpart = head.rpartition("@")
        user, _colon, password = userinfo.partition(":")
        rest = hostpart + sep + tail
        head = hostpart
    public = f"{scheme}://{user + '@' if user else ''}{rest}"
    host, port = "", 0
    if scheme not in LOCAL_SCHEMES:
        netloc = head
        paren = re.search(r"\(([^)]*)\)", netloc)  # mysql://user@(host:3306)/db
        if paren:
            netloc = paren.group(1)
        first = netloc.split(",")[0]
        if first.startswith("["):  # [ipv6]:port
            h, _bracket, p = first[1:].partition("]")
            host, port_s = h, p.lstrip(":")
        else:
            host, _colon, port_s = first.partition(":")
        port = int(port_s) if port_s.isdigit() else DEFAULT_PORTS.get(scheme, 0)
    return {
        "scheme": scheme,
        "public_url": public,
        "password": unquote(password),
        "host": host,
        "port": port,
    }


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"juicefs_meta_split": juicefs_meta_split}
