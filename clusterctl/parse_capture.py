"""``clusterctl parse KIND FILE`` as a library: one parser of ``ccparse`` on one captured tool output.

:func:`parse_capture` returns the parser's result as plain JSON-able data and raises
:class:`~clusterctl.errors.UsageError` for an unknown KIND, an unreadable file or an output the
parser refuses (``ccparse.common.ParseError``: which line, what was expected).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from clusterctl.errors import UsageError

#: the largest capture read (``parse``, ``analyze``): a real one is kilobytes (an 8-GPU
#: ``nvidia-smi -q`` about 50 KB) to a few MB (a kernel log); anything larger, or an endless
#: stream such as /dev/zero, is refused after this many bytes instead of filling the memory
MAX_CAPTURE_BYTES = 64 * 1024 * 1024


def read_bounded(stream: Any, what: str) -> str:
    """At most MAX_CAPTURE_BYTES of a binary stream as text; ValueError naming ``what`` past that."""
    data = stream.read(MAX_CAPTURE_BYTES + 1)
    if len(data) > MAX_CAPTURE_BYTES:
        raise ValueError(f"{what} is larger than {MAX_CAPTURE_BYTES // (1024 * 1024)} MiB: refused")
    return data.decode("utf-8", errors="replace")


def kinds() -> list[str]:
    """The KINDs the parser registry knows."""
    from ccparse import registry

    return registry.kinds()


def to_jsonable(obj: Any) -> Any:
    """Parser results are plain dicts/lists; dataclasses and tuples are converted just in case."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(dataclasses.asdict(obj))
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set):
        return [to_jsonable(v) for v in obj]
    return obj


def parse_capture(kind: str, file: Path) -> Any:
    """Parse ``file`` (``-``: stdin) as the output of ``kind``; the normalised result."""
    from ccparse import registry
    from ccparse.common import ParseError

    known = kinds()
    if kind not in known:
        raise UsageError(f"parse: unknown KIND {kind!r}; known kinds: {', '.join(known)}")
    try:
        if str(file) == "-":
            text = read_bounded(sys.stdin.buffer, "standard input")
        else:
            with file.open("rb") as f:
                text = read_bounded(f, str(file))
    except OSError as exc:
        raise UsageError(f"parse: cannot read {file}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"parse: {exc}") from None
    try:
        data = registry.parse(kind, text)
    except ParseError as exc:
        raise UsageError(f"parse: {file}: {exc}", file=str(file), line=exc.line, key=kind) from None
    return to_jsonable(data)
