"""Import every parser module so each registers its KIND; then look parsers up by KIND."""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

from . import __name__ as _pkg
from . import __path__ as _path
from .capture import KIND_COMMANDS, NOT_NAMED, clean_capture, json_named_host, log_named_host, prompt_hosts, typeset
from .common import COMMAND_READERS, PARSERS, ParseError, with_cut

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


def parse(kind: str, text: str, *, salvage: bool = False) -> Any:
    """Parse ``text`` as the output of ``kind``, as pasted: the capture clean-up
    (:func:`ccparse.capture.clean_capture`: prompt/command lines, ANSI, CRLF, quoting, fences)
    runs first, and a ``ParseError`` names the line of ``text`` itself. Raises KeyError for an
    unknown kind. With ``salvage`` (the analysis of captures), lines the parser rejects are left out within a
    budget (:func:`_salvaging`) and named in the parse's ``cut`` and ``unread_lines``; without it (collectors,
    the lifecycle's own probes, the Prometheus textfiles) any such line is a ParseError."""
    _load_all()
    if kind not in PARSERS:
        raise KeyError(kind)
    if kind in _XML_KINDS and _raw_xml(text):
        return PARSERS[kind](text)  # the tool's own XML document: nothing pasted to clean up
    cleaned = clean_capture(text, kind)
    refused = tool_refused(kind, text) if salvage else None
    if refused is not None and _little_else(kind, cleaned.text):
        # the tool's refusal with at most a label or prompt around it (whatever time or host prefix each line has)
        return {"tool_refused": refused}
    try:
        out, unread = _salvaging(PARSERS[kind], cleaned.text) if salvage else (PARSERS[kind](cleaned.text), [])
    except ParseError as exc:
        if salvage and (missing := tool_missing(kind, text)) is not None:
            # the shell's own answer that the tool is not installed: no output of it to read, and nothing wrong with
            # what it would have shown (the engine's coverage note says 'tool missing', not 'unreadable')
            return {"tool_missing": missing}
        if refused is not None:
            # the tool ran, but the account it ran as may not read what it reads (dmesg under kernel.dmesg_restrict,
            # NVML without access to /dev/nvidia*): nothing of the node was shown, nothing wrong with it either
            return {"tool_refused": refused}
        line = cleaned.original_line(exc.line)
        if line == exc.line:
            raise
        raise ParseError(exc.tool, exc.reason, line) from exc
    if isinstance(out, dict) and cleaned.commands and (reader := COMMAND_READERS.get(kind)):
        out = reader(out, cleaned.commands)  # what the KIND reads off the capture's own command lines
    if isinstance(out, dict) and (named := _named_host(kind, text, cleaned)):
        out = {**out, "named_host": named}  # the one host the capture names (the engine says it in each finding)
    if isinstance(out, dict) and cleaned.commands and (cut := next(
            (m.group(1) for c in cleaned.commands if (m := _HEAD_TAIL.search(c))), None)):
        # 'nvidia-smi -L | head': the command itself showed only the first (last) lines; what is there is judged,
        # a count of what it lists is not (the engine's COUNTING_CHECKS)
        out = with_cut(out, f"the command pipes its output through {cut}: only part is shown", partial=True)
    if unread and isinstance(out, dict):
        # lines the parser rejected, left out: what is left was read and is judged, the lines are said
        said = "; ".join(f"line {cleaned.original_line(n)}: {why[:120]}" for n, why in unread[:3])
        out = with_cut(out, f"{len(unread)} line(s) not read ({said})",
                       unread_lines=[cleaned.original_line(line) for line, _why in unread])
    if cleaned.elided and isinstance(out, dict):
        # the paster's '...': what is left was judged, the cut is said (the engine's coverage note)
        at = ", ".join(map(str, cleaned.elided[:4])) + (", ..." if len(cleaned.elided) > 4 else "")
        out = with_cut(out, f"lines elided ('...' at line {at})")
    return out


#: the tools of each KIND a shell can report missing (KIND_COMMANDS without the generic commands that print them)
_GENERIC = frozenset({"cat", "grep", "head", "tail", "find", "for", "ls", "ulimit"})
#: a shell's, a container runtime's or Windows' words that a command is not installed: bash/dash/busybox
#: ('-bash: nvidia-smi: command not found', 'sh: 1: ibstat: not found'), zsh ('zsh: command not found: dcgmi'),
#: fish ('fish: Unknown command: ibstat'), cmd.exe ("'nvidia-smi' is not recognized as an internal or external
#: command"), PowerShell ("The term 'nvidia-smi' is not recognized"), docker/containerd ('exec: "nvidia-smi":
#: executable file not found in $PATH')
_NOT_FOUND = re.compile(
    r"(?P<a>[\w./+-]{1,200}): (?:command )?not found\b(?!:)"
    r"|command not found: (?P<b>[\w./+-]{1,200})"
    r"|Unknown command:? '?(?P<c>[\w./+-]{1,200})"
    r"|'(?P<d>[\w./+-]{1,200})' is not recognized as"
    r"|exec: \"(?P<e>[\w./+-]{1,200})\": executable file not found")


def tool_missing(kind: str, text: str) -> str | None:
    """The line of ``text`` where a shell says a tool of ``kind`` is not installed, or None."""
    tools = KIND_COMMANDS.get(kind, frozenset()) - _GENERIC
    for m in _NOT_FOUND.finditer(text):
        name = next(g for g in m.groups() if g).rsplit("/", 1)[-1]
        if name in tools:
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            return text[start:end if end >= 0 else len(text)].strip()[:200]
    return None


#: a tool's own words that the account it ran as may not read what it reads, per KIND: dmesg under
#: kernel.dmesg_restrict ('dmesg: read kernel buffer failed: Operation not permitted'), journalctl without the journal
#: group ('No journal files were opened due to insufficient permissions.'), NVML without access to the device files
#: (NVML_ERROR_NO_PERMISSION: 'Failed to initialize NVML: Insufficient Permissions', a rootless container)
_REFUSED = {
    "kernel-log": re.compile(r"dmesg: read kernel buffer failed: Operation not permitted"
                             r"|No journal files were opened due to insufficient permissions"),
    **dict.fromkeys(("nvidia-smi", "nvidia-smi-q", "nvidia-smi-query", "nvidia-smi-nvlink", "nvidia-smi-topo"),
                    re.compile(r"Failed to initialize NVML: Insufficient Permissions")),
}


def tool_refused(kind: str, text: str) -> str | None:
    """The tool's words in ``text`` that it was refused access (:data:`_REFUSED`; to the end of their line, without
    the line's prefix), or None."""
    pattern = _REFUSED.get(kind)
    if pattern is None or not ("not permitted" in text or "nsufficient" in text):  # the words every form holds
        return None
    m = pattern.search(text)
    if m is None:
        return None
    end = text.find("\n", m.end())
    return text[m.start():end if end >= 0 else len(text)].strip()[:200]  # from the tool's words: no prefix


def _little_else(kind: str, cleaned: str) -> bool:
    """A capture holding a tool's refusal (:func:`tool_refused`) has at most two other lines (a label, a prompt),
    which a parser would otherwise read as a log of nothing wrong."""
    pattern = _REFUSED[kind]
    return sum(1 for ln in cleaned.splitlines() if ln.strip() and not pattern.search(ln)) <= 2


def _named_host(kind: str, text: str, cleaned: Any) -> dict[str, str] | None:
    """``{"host": "n1", "by": "shell prompt"}`` where the capture's ``user@host`` prompts name one host, or
    ``"by": "line prefix"`` where a launcher's or parallel shell's prefix names one (``gpu017: ...``), or (a kernel
    log) ``"by": "syslog line head"`` where its syslog/journal lines name one, or ``"by": "JSON log field"`` where a
    structured log's node fields name one; else None."""
    if len(cleaned.hosts) == 1 and any(c.isalpha() for c in cleaned.hosts[0]):
        return {"host": cleaned.hosts[0], "by": "line prefix"}
    if cleaned.commands and len(hosts := prompt_hosts(text)) == 1 and hosts[0] not in NOT_NAMED:
        return {"host": hosts[0], "by": "shell prompt"}
    return log_named_host(kind, text) or json_named_host(text)


#: a command line that keeps only the first or last lines of the output ('nvidia-smi -L | head', '| tail -n 20')
_HEAD_TAIL = re.compile(r"\|\s*(head|tail)\b")
#: at most one line in SALVAGE_SHARE of a capture's non-blank lines, and never more than SALVAGE_MAX, may be left
#: unread for the rest to be read (issue 29: a line a parser does not know never decides the whole capture)
SALVAGE_SHARE = 4
SALVAGE_MAX = 40


def _salvaging(fn: Any, text: str) -> tuple[Any, list[tuple[int, str]]]:
    """``fn(text)``; where it raises a ParseError naming a line, that line is left out and the rest parsed again,
    within the budget above. Returns the parse and the (line of ``text``, reason) of each line left out; raises
    the first ParseError when the budget is spent or an error names no line."""
    try:
        return fn(text), []
    except ParseError as first:
        lines = text.split("\n")
        budget = min(SALVAGE_MAX, sum(1 for ln in lines if ln.strip()) // SALVAGE_SHARE)
        keep = list(range(1, len(lines) + 1))
        unread: list[tuple[int, str]] = []
        exc = first
        while exc.line is not None and 1 <= exc.line <= len(keep) and len(unread) < budget:
            unread.append((keep.pop(exc.line - 1), exc.reason))
            try:
                return fn("\n".join(lines[n - 1] for n in keep)), unread
            except ParseError as again:
                exc = again
        raise first from None


def parse_raw(kind: str, text: str) -> Any:
    """Parse ``text`` with the KIND's parser alone (no capture clean-up)."""
    _load_all()
    if kind not in PARSERS:
        raise KeyError(kind)
    return PARSERS[kind](text)
