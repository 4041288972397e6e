"""Import every parser module so each registers its KIND; then look parsers up by KIND."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from . import __name__ as _pkg
from . import __path__ as _path
from .capture import clean_capture, typeset
from .common import PARSERS, ParseError

__all__ = ["ParseError", "kinds", "parse", "parse_raw"]

_loaded = False
#: KINDs whose parser reads ``nvidia-smi -q -x`` XML (see :func:`_raw_xml`)
_XML_KINDS = frozenset({"nvidia-smi-q", "nvidia-smi-q-xml"})


def _raw_xml(text: str) -> bool:
    """True for an XML document as the tool wrote it: it starts (after a ``# source:`` line) with
    the XML declaration, ends with its markup (no terminal's line after it: ssh's 'Connection to
    node07 closed.') and holds no escape, carriage return or NUL that a terminal paste adds, nor a
    blog's typesetting (curly quotes)."""
    body = text.split("\n", 1)[1] if text.startswith(("# source:", "#source:")) and "\n" in text else text
    return body.startswith("<?xml ") and body.rstrip().endswith(">") and "\x1b" not in body and \
        "\r" not in body and "\x00" not in body and not typeset(body)


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(list(_path)):
        if info.name not in ("common", "registry", "capture"):
            importlib.import_module(f"{_pkg}.{info.name}")
    _loaded = True


def kinds() -> list[str]:
    _load_all()
    return sorted(PARSERS)


def parse(kind: str, text: str) -> Any:
    """Parse ``text`` as the output of ``kind``, as pasted: the capture clean-up
    (:func:`ccparse.capture.clean_capture`: prompt/command lines, ANSI, CRLF, quoting, fences)
    runs first, and a ``ParseError`` names the line of ``text`` itself. Raises KeyError for an
    unknown kind."""
    _load_all()
    if kind not in PARSERS:
        raise KeyError(kind)
    if kind in _XML_KINDS and _raw_xml(text):
        return PARSERS[kind](text)  # the tool's own XML document: nothing pasted to clean up
    cleaned = clean_capture(text, kind)
    try:
        out = PARSERS[kind](cleaned.text)
    except ParseError as exc:
        line = cleaned.original_line(exc.line)
        if line == exc.line:
            raise
        raise ParseError(exc.tool, exc.reason, line) from exc
    if cleaned.elided and isinstance(out, dict):
        # the paster's '...': what is left was judged, the cut is said (the engine's coverage note)
        at = ", ".join(map(str, cleaned.elided[:4])) + (", ..." if len(cleaned.elided) > 4 else "")
        out = {**out, "cut": [*(out.get("cut") or []), f"lines elided ('...' at line {at})"]}
    return out


def parse_raw(kind: str, text: str) -> Any:
    """Parse ``text`` with the KIND's parser alone (no capture clean-up)."""
    _load_all()
    if kind not in PARSERS:
        raise KeyError(kind)
    return PARSERS[kind](text)
