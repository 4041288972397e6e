"""A secret is vaulted or refused.

Vaulted means: a ``!vault`` value that is structurally an Ansible vault payload (checked when the
file was read), a variable from an encrypted file, or a bare reference ``{{ name }}`` to a variable
that is not set in plain text anywhere in the inventory. Anything else under a secret-looking key
(``*_password``, ``munge_key``, ``ansible_ssh_pass``, ``metaurl``, ...) is refused, and so is a
password inside any URL (``redis://user:pw@host/1``) and private key material anywhere. A
``{{ vault_x | default('plain') }}`` is not vaulted: its fallback is plain text. Refused values are
never shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from clusterctl.inventory.model import Definition, Problem, VaultValue, secret_looking

#: a bare ``{{ name }}`` reference to another variable (validation leaves such values alone too)
REFERENCE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# A password in a URL: scheme://user:PASSWORD@host. Found from each "://" (a regular expression
# searched from every position of a long run of letters is quadratic: 200,000 letters took 38 s).
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_AFTER_SCHEME = re.compile(r"[^/\s:@]*:([^@/\s]+)@")


def _url_password(text: str) -> str | None:
    """The password of the first ``scheme://user:password@`` in text (a scheme: a letter, then
    letters, digits, '+', '.' or '-'), or None. Linear in the length of text."""
    at = text.find("://")
    while at != -1:
        start = at
        while start > 0 and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        if any(c.isascii() and c.isalpha() for c in text[start:at]):
            m = _AFTER_SCHEME.match(text, at + 3)
            if m:
                return m.group(1)
        at = text.find("://", at + 3)
    return None


_KEY_MATERIAL = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----|PuTTY-User-Key-File")
_NAME_OF_A_SECRET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HOW = "use ansible-vault (!vault or an encrypted file) or a '{{ vault_... }}' reference to a vaulted variable"


def _walk(value: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """(key path, last key, value) for the value and everything nested in it."""
    last = re.split(r"[.\[]", path)[-1]
    yield path, last, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, f"{path}[{i}]")


def plain_names(defs: list[Definition]) -> set[str]:
    """Variables set to a plain (not vaulted, not templated) value somewhere."""
    return {d.key for d in defs if not d.vaulted and isinstance(d.value, str | int) and not isinstance(d.value, bool)
            and "{{" not in str(d.value)}


def check(d: Definition, plain: set[str]) -> list[Problem]:
    out: list[Problem] = []
    for path, last, v in _walk(d.value, d.shown_key):
        if isinstance(v, VaultValue) or v is None or v == "" or isinstance(v, dict | list):
            continue
        text = str(v)
        if _KEY_MATERIAL.search(text):
            out.append(Problem(d.file, path, "<redacted>", f"private key material in plain text: {_HOW}"))
            continue
        pw = _url_password(text)
        if pw is not None and not REFERENCE.fullmatch(pw):
            out.append(Problem(d.file, path, "<redacted>", f"password inside a URL in plain text: {_HOW}"))
            continue
        if not secret_looking(last) or isinstance(v, bool):
            continue
        if last.endswith("_secret") and isinstance(v, str) and _NAME_OF_A_SECRET.fullmatch(v):
            continue  # the *name* of a vaulted variable, not the secret itself
        ref = REFERENCE.fullmatch(text.strip())
        if ref:
            if ref.group(1) in plain:
                out.append(Problem(d.file, path, "<redacted>",
                                   f"refers to {ref.group(1)}, which is set in plain text: {_HOW}"))
            continue
        why = "templated, but not a bare reference to a vaulted variable (a default or a filter can leak plain " \
              "text)" if "{{" in text or "{%" in text else "secret given in plain text"
        out.append(Problem(d.file, path, "<redacted>", f"{why}: {_HOW}"))
    return out
