"""What people paste, made readable for the GPU/NCCL/Slurm parsers (issue 14).

Captures arrive with a fixture's ``# source:`` line, CRLF line ends, ANSI colour/underline codes
(``nvidia-smi topo -m`` underlines its header on a tty) and the shell command that made them on
the first line (``$ nvidia-smi -q``, ``[root@n1 ~]# dcgmi diag -r 3``, ``adev0: sinfo``,
``NCCL_DEBUG=INFO ./build/all_reduce_perf ...``). :func:`lines` returns the text's lines with
their original 1-based numbers, CR and ANSI removed; :func:`is_command` tells a prompt/command
line from output so a parser can skip it. Nothing here guesses at content: a line the parser
does not understand still raises its ``ParseError`` naming that line.

(i14-gpu's helper; branch i14-net's shared clean-up in ``common.py`` covers the same ground for
the network parsers, the lead unifies them.)
"""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
#: a shell prompt before a command: ``user@host:~$``, ``[root@n1 dir]#``, ``$``, ``#``, ``>``, ``sh-5.1#``,
#: ``(venv) $``, ``PS C:\>``, ``hii$``
_PROMPT = re.compile(r"^(?:\([^)]{1,40}\)\s*)?(?:\S{0,80}@\S{0,80}?[$#%>]|\[[^\]]{1,80}\][$#%>]|PS [^>]{0,80}>|"
                     r"[\w.~/:-]{0,40}[$#%>])\s+\S")
#: ``host: command`` (the Slurm docs' ``adev0: sinfo``)
_HOST_PROMPT = re.compile(r"^[\w.-]{1,64}:\s+(\S+)")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_LAUNCHERS = {"sudo", "srun", "mpirun", "mpiexec", "kubectl", "docker", "podman", "watch", "timeout", "time",
              "env", "bash", "sh", "ssh", "exec", "nice", "numactl", "stdbuf", "oc", "enroot"}


def lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` pairs of ``text`` without a leading ``# source:`` line (numbers stay
    those of the file), without ``\\r`` and ANSI escape sequences, right-stripped."""
    offset = 0
    if text.startswith(("# source:", "#source:")):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        offset = 1
    out = []
    for i, raw in enumerate(text.split("\n"), start=1 + offset):
        line = raw.replace("\r", "")
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        out.append((i, line.rstrip()))
    while out and not out[-1][1]:
        out.pop()
    return out


def _command_word(tokens: list[str]) -> str | None:
    if tokens:
        tokens = [tokens[0].lstrip("$#>%"), *tokens[1:]]  # a prompt glued to the command: '$nvidia-smi'
    for tok in tokens:
        if _ENV.match(tok):
            continue
        base = tok.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
        if base in _LAUNCHERS or base.startswith("-"):
            continue
        return base
    return None


def is_command(line: str, words: tuple[str, ...]) -> bool:
    """``line`` is a shell prompt and/or the command that printed the capture: a prompt followed by
    anything, or a command line whose program (after ``VAR=value`` assignments and launchers such
    as ``sudo``/``srun``/``mpirun``) starts with one of ``words`` (``("nvidia-smi", "dcgmi")``)."""
    s = line.strip()
    if not s or len(s) > 2000:
        return False
    if _PROMPT.match(s):
        return True
    m = _HOST_PROMPT.match(s)
    if m and any(m.group(1).lower().startswith(w) for w in words):
        return True
    word = _command_word(s.split()[:12])
    return bool(word and any(word.startswith(w) for w in words))
