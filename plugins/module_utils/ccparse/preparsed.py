"""Pre-parsed evidence: the collectors parse on the node, the controller only judges.

The collector modules (``fabric_evidence``, ``fabric_pairtest``, ``nccl_pairtest``) run on every
node in parallel; each successful capture is parsed there with the same ccparse parser the
controller would use, and returned beside the raw text as an envelope that the verify/pairtest
playbooks write as ``<host>/<KIND>.json`` next to ``<host>/<KIND>.txt``::

    {"schema": "clusterctl-preparsed/1", "kind": "nvidia-smi-q",
     "parser_version": "<sha256 of the parser's source and its ccparse imports>",
     "raw_crc32": "<crc32 of the raw text, trailing white space stripped>:<its length in bytes>",
     "data": <what ccparse.registry.parse(kind, raw) returns>}

:func:`load` gives the data back only when every field matches what this controller would
produce: the schema, the KIND, the parser version (its source hash, computed the same way on
both sides, so a node running an older or newer parser falls back to raw) and the raw text's
check (a ``.txt`` edited or replaced after collection falls back to raw; envelopes written before
``raw_crc32`` carry ``raw_sha256``, the sha256 of the same bytes, and are checked by it). Anything
else returns :data:`MISSING` and the caller parses the raw text. Only JSON-faithful results are wrapped:
a parse whose data does not survive ``json.dumps``/``json.loads`` unchanged (tuples, integer
keys, NaN) and a parse that raises give no envelope, so the controller parses and reports
those itself, exactly as before.

Stdlib only (runs inside the modules on the nodes). The parser modules are imported here by
name so that Ansible ships them with a collector that imports this file.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import zlib
from typing import Any

from . import (  # noqa: F401  # pylint: disable=unused-import  # imported to register their KINDs and ship with collectors
    dcgmi_diag,
    ib_write_bw,
    ibstat,
    ibstatus,
    mlnx_qos,
    nccl_tests,
    nvidia_smi_q,
    nvidia_smi_query,
    nvidia_smi_topo,
    proc_limits,
    sysfs_ib,
)
from .capture import clean_capture, log_named_host
from .common import PARSERS

SCHEMA = "clusterctl-preparsed/1"
#: returned by :func:`load` when the envelope cannot be used (parse the raw text instead)
MISSING: Any = object()

_REL_IMPORT = re.compile(r"^from \.(\w+) import|^from \. import \(?([\w, ]+)", re.M)
_versions: dict[str, str | None] = {}


def _source(modname: str) -> str | None:
    mod = sys.modules.get(modname)
    if mod is None:
        return None
    loader = getattr(mod, "__loader__", None)
    try:
        src = loader.get_source(modname) if loader is not None and hasattr(loader, "get_source") else None
        path = getattr(mod, "__file__", None)
        if src is None and path:
            with open(path, encoding="utf-8") as f:
                src = f.read()
    except (OSError, ImportError):
        return None
    return src


def parser_version(kind: str) -> str | None:
    """sha256 over the source of ``kind``'s parser module and the ccparse modules it imports
    (recursively); None when a source cannot be read (then nothing is pre-parsed)."""
    if kind in _versions:
        return _versions[kind]
    fn = PARSERS.get(kind)
    version: str | None = None
    if fn is not None:
        pkg = fn.__module__.rpartition(".")[0]
        seen: list[str] = []
        todo = [fn.__module__]
        h = hashlib.sha256()
        readable = True
        while todo and readable:
            name = todo.pop(0)
            if name in seen:
                continue
            seen.append(name)
            src = _source(name)
            if src is None:
                readable = False
                break
            h.update(name.rpartition(".")[2].encode() + b"\0" + src.encode("utf-8", "replace") + b"\0")
            for m in _REL_IMPORT.finditer(src):
                for dep in (m.group(1) or m.group(2) or "").split(","):
                    dep = dep.strip()
                    if dep and f"{pkg}.{dep}" in sys.modules:
                        todo.append(f"{pkg}.{dep}")
        version = h.hexdigest() if readable else None
    _versions[kind] = version
    return version


def raw_hash(text: str) -> str:
    return hashlib.sha256(text.rstrip().encode("utf-8", "replace")).hexdigest()


def raw_check(text: str) -> str:
    """The envelope's ``raw_crc32``: ``<crc32 of the raw text, trailing white space stripped, as
    UTF-8, 8 hex digits>:<its length in bytes>``. It tells a stale envelope from a changed capture
    (what it is for: whoever can write the capture can write the envelope too, so a cryptographic
    hash protected nothing more), at 2.5x the speed of sha256."""
    data = text.rstrip().encode("utf-8", "replace")
    return f"{zlib.crc32(data):08x}:{len(data)}"


_ASCII_SPACE = b" \t\n\r\x0b\x0c"


def _stripped_end(data: bytes) -> int | None:
    """The length of ``data.decode("utf-8").rstrip()`` in bytes, found in the bytes, or None when that
    is not certain (see :func:`raw_hash_bytes`)."""
    end = len(data)
    while end and data[end - 1] in _ASCII_SPACE:  # data.rstrip(_ASCII_SPACE) without copying the text
        end -= 1
    if end and (data[end - 1] >= 0x80 or 0x1C <= data[end - 1] <= 0x1F):
        return None
    return end


def raw_hash_bytes(data: bytes) -> str | None:
    """:func:`raw_hash` of ``data.decode("utf-8")`` without decoding and encoding it again, or None
    when that is not certain to be the same (the caller then hashes the text): ``data`` must be
    valid UTF-8 (the caller decoded it strictly) and, with ASCII white space stripped from its end,
    end in an ASCII character that is no white space (``str.rstrip`` strips more: U+001C-U+001F,
    U+0085, U+00A0, ...)."""
    end = _stripped_end(data)
    if end is None:
        return None
    return hashlib.sha256(memoryview(data)[:end] if end < len(data) else data).hexdigest()


def raw_check_bytes(data: bytes) -> str | None:
    """:func:`raw_check` of ``data.decode("utf-8")`` from the bytes, or None, as :func:`raw_hash_bytes`."""
    end = _stripped_end(data)
    if end is None:
        return None
    return f"{zlib.crc32(memoryview(data)[:end] if end < len(data) else data):08x}:{end}"


def base_kind(key: str) -> str:
    """``mlnx_qos#eth2`` / ``ib_write_bw#mlx5_0@node2`` -> the KIND (``mlnx_qos``, ``ib_write_bw``)."""
    return key.partition("@")[0].partition("#")[0]


def envelope(kind: str, text: str) -> dict[str, Any] | None:
    """The pre-parsed envelope of ``text`` as ``kind``, or None (unknown KIND, parse error,
    data that JSON does not carry unchanged, parser source unreadable, a pasted session with its commands)."""
    fn = PARSERS.get(kind)
    version = parser_version(kind)
    if fn is None or version is None:
        return None
    if clean_capture(text, kind).commands:
        return None  # a pasted session (prompts, commands): the controller reads it, and what its lines name
    try:
        data = fn(text)
        faithful = json.loads(json.dumps(data, allow_nan=False)) == data
    except Exception:  # the controller parses the raw text and reports the error itself
        return None
    if not faithful:
        return None
    if isinstance(data, dict) and (named := log_named_host(kind, text)):
        data = {**data, "named_host": named}  # as the controller's own reading of the text names it
    return {"schema": SCHEMA, "kind": kind, "parser_version": version, "raw_crc32": raw_check(text), "data": data}


def parse_results(results: dict[str, Any], kind: str | None = None) -> dict[str, Any]:
    """``{key: envelope}`` for a collector's ``{key: entry}`` results (status ok, non-empty stdout).

    ``kind``: the KIND of every result (a pair test's results are keyed by device or pair);
    None: each key names its KIND (``mlnx_qos#eth2``).
    """
    out: dict[str, Any] = {}
    for key, ent in results.items():
        if isinstance(ent, dict) and ent.get("status") == "ok" and ent.get("stdout"):
            env = envelope(kind or base_kind(key), ent["stdout"])
            if env is not None:
                out[key] = env
    return out


def load(doc: Any, kind: str, text: str | None, raw: bytes | None = None) -> Any:
    """The data of envelope ``doc`` when it is valid for ``text`` as ``kind`` here, else :data:`MISSING`.

    The raw text is checked by the envelope's ``raw_crc32`` (:func:`raw_check`), or by ``raw_sha256``
    (:func:`raw_hash`) in an envelope written before ``raw_crc32`` existed; an envelope with neither
    is not used. ``raw``: the bytes ``text`` was strictly decoded from, when the caller has them
    (the check is then taken of the bytes where that is certain to be the same).

    ``text`` None: ``raw`` is a file's bytes, not decoded. The check is then taken of the bytes alone,
    and :data:`MISSING` answers where that is not certain to be the text's check (:func:`raw_check_bytes`
    None) or where nothing but white space is there (the stripped length 0): the caller decodes the
    text and asks again. A check that matches says the bytes are those the envelope's text encoded
    to, so valid UTF-8, whose decoding is that text (bytes that are no UTF-8 could only match by a
    collision of the check, which is as likely as a changed capture keeping it)."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or doc.get("kind") != kind or "data" not in doc:
        return MISSING
    if doc.get("parser_version") != parser_version(kind):
        return MISSING
    check = doc.get("raw_crc32")
    if check is not None:
        got = raw_check_bytes(raw) if raw is not None else None
        if text is None and (got is None or got.endswith(":0")):
            return MISSING
        if check != (got or raw_check(str(text))):
            return MISSING
    else:
        got = raw_hash_bytes(raw) if raw is not None else None
        if text is None and (got is None or raw is None or _stripped_end(raw) == 0):
            return MISSING
        if doc.get("raw_sha256") != (got or raw_hash(str(text))):
            return MISSING
    return doc["data"]
