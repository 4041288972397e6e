"""bcrypt hashes of basic-auth users for a Prometheus web config file (roles/monitoring, issue 26).

``monitoring_basic_auth_users | clusterctl.hpc.web_users(seed)`` gives ``{name: "$2b$10$..."}``: the
hashes node_exporter, Prometheus and Alertmanager check a request's password against (their
``--web.config.file``). The password (plain or vaulted in the inventory) never leaves this filter;
callers run with ``no_log``. The salt of each hash is derived from ``seed`` (the host) and the user's
name, not drawn at random, so the same password gives the same file and a second run changes nothing;
a new password gives a new hash. Hashing uses the ``bcrypt`` package (a clusterctl dependency), else
the standard library's ``crypt`` where the platform's crypt(3) knows bcrypt.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

COST = 10
_STD = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_BCRYPT = b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#: bcrypt reads at most 72 bytes of a password
MAX_PASSWORD_BYTES = 72


class WebUsersError(ValueError):
    pass


def _salt(seed: str, name: str) -> bytes:
    raw = hashlib.sha256(f"clusterctl-web-users\0{seed}\0{name}".encode()).digest()[:16]
    return base64.b64encode(raw).rstrip(b"=").translate(bytes.maketrans(_STD, _BCRYPT))


def bcrypt_hash(password: str, seed: str, name: str) -> str:
    """The bcrypt hash (``$2b$10$``) of ``password`` with the salt of ``seed`` and ``name``."""
    setting = b"$2b$%02d$" % COST + _salt(seed, name)
    secret = password.encode()
    if len(secret) > MAX_PASSWORD_BYTES:
        raise WebUsersError(f"the password of {name!r} is longer than {MAX_PASSWORD_BYTES} bytes (bcrypt's limit)")
    try:
        import bcrypt

        return str(bcrypt.hashpw(secret, setting).decode())
    except ImportError:
        pass
    try:
        import crypt  # the standard library until Python 3.12

        out: str | None = crypt.crypt(password, setting.decode())
    except ImportError:
        out = None
    if not out or not out.startswith("$2b$"):
        raise WebUsersError("hashing basic-auth passwords needs the Python package bcrypt on the controller "
                            "(pip install bcrypt)")
    return str(out)


def web_users(users: Sequence[Mapping[str, Any]], seed: str) -> dict[str, str]:
    """``{name: bcrypt hash}`` of ``users`` (each ``{name, password}``), in their order."""
    if not isinstance(users, Sequence) or isinstance(users, (str, bytes)):
        raise WebUsersError("monitoring_basic_auth_users: must be a list of {name, password}")
    out: dict[str, str] = {}
    for i, user in enumerate(users):
        if not isinstance(user, Mapping) or not isinstance(user.get("name"), str) or "password" not in user:
            raise WebUsersError(f"monitoring_basic_auth_users[{i}]: must be a mapping with name and password")
        out[user["name"]] = bcrypt_hash(str(user["password"]), str(seed), user["name"])
    return out


_NAME_OK = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def web_user_problems(users: Any, scrape_user: str = "") -> list[str]:
    """What is wrong with ``monitoring_basic_auth_users`` and ``monitoring_scrape_user``, one message each,
    naming the key and the value (a password only as ``(hidden)``)."""
    key = "monitoring_basic_auth_users"
    if not isinstance(users, Sequence) or isinstance(users, (str, bytes)):
        return [f"{key}={str(users)[:60]!r}: must be a list of {{name, password}}"]
    out: list[str] = []
    names: list[str] = []
    for i, user in enumerate(users):
        if not isinstance(user, Mapping):
            out.append(f"{key}[{i}]={str(user)[:60]!r}: must be a mapping with name and password")
            continue
        name = user.get("name")
        if not isinstance(name, str) or not name or not name[0].isalpha() or len(name) > 63 or set(name) - _NAME_OK:
            out.append(f"{key}[{i}].name={name!r}: must be a name (letters, digits, '_', '-', a letter first)")
        elif name in names:
            out.append(f"{key}[{i}].name={name!r}: given twice")
        else:
            names.append(name)
        if "password" not in user or user["password"] is None:
            out.append(f"{key}[{i}].password: missing (user {name!r})")
            continue
        pw = str(user["password"])
        if not pw or pw != pw.strip() or any(c in pw for c in "\r\n\0"):
            out.append(f"{key}[{i}].password=(hidden): must be non-empty, one line, without leading or trailing "
                       f"blanks (user {name!r})")
        elif len(pw.encode()) > MAX_PASSWORD_BYTES:
            out.append(f"{key}[{i}].password=(hidden): longer than {MAX_PASSWORD_BYTES} bytes, bcrypt's limit "
                       f"(user {name!r})")
    if names and not scrape_user:
        out.append("monitoring_scrape_user='': required with monitoring_basic_auth_users (one of their names)")
    elif scrape_user and scrape_user not in names:
        out.append(f"monitoring_scrape_user={scrape_user!r}: must be one of monitoring_basic_auth_users "
                   f"({', '.join(names) or 'none given'})")
    return out


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"web_users": web_users, "web_user_problems": web_user_problems}
