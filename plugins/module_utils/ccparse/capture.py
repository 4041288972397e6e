"""One clean-up of a pasted capture, applied by the registry before every parser (issue 14).

Operators paste what their terminal showed, not what the tool printed. :func:`clean_capture`
takes that back to the tool's own output, for every KIND alike:

* ``\\r\\n`` and lone ``\\r`` become ``\\n``; a web page's no-break spaces (U+00A0, U+202F) become
  spaces; NUL bytes and ANSI/VT100 escape sequences (colour,
  cursor, OSC titles) are dropped; a blog's typesetting (curly quotes, en and em dashes for ``--`` /
  ``---``) is undone; a copy of a page's HTML source (``&lt;BROADCAST,UP&gt;``, no bare
  ``<`` left) is unescaped;
* a provenance line (``# source: ...``) first is kept as it is (the parsers skip it);
* Markdown code fences (lines that are only ``````` or ``~~~``) are dropped, and so are the lines of a GitHub
  issue's collapsed section around a paste (``<details>``, ``<summary>nvidia-smi -q</summary>``, ``</details>``);
* a launcher's or parallel shell's prefix on (nearly) every line is removed and the hosts it names
  recorded (:attr:`Cleaned.hosts`): Open MPI ``--tag-output`` ``[1,0]<stdout>:``, pdsh/clush
  ``host: ``, ``[host] `` (pssh, ansible-style), srun ``-l`` ``0: `` (padded to the widest task
  number: ``  3: ``), Intel MPI ``-l`` ``[0] `` (also where it
  tagged output flushed mid-line, ``-1[0]``), a log's time on every line (a CI runner's
  ``2024-03-05T10:21:33.1234567Z ``, ``kubectl logs --timestamps``, moreutils ``ts``'s ``[...] `` and its
  default ``Mar 05 10:21:33 ``; not for :data:`STAMPED_KINDS`, whose own lines start with a time), journalctl's
  head of a service's line (``Dec 05 10:21:33 node07 healthcheck.sh[4242]: ``), ``docker compose logs``'
  ``trainer-1  | ``, ``kubectl logs --prefix``' ``[pod/trainer-0/main] `` (see :func:`strip_launcher_prefix`);
  also indented (a Markdown code block), nested (pdsh running ``srun -l``), under a prompt line, and on a lone line
  (:func:`_strip_lone`); a ``host: `` is a host only when it holds a digit, ``-`` or ``.``
  (``LnkSta: `` of a grep'd excerpt is the tool's key);
* a line that is only an elision (``...``, ``[...]``, ``…``) is removed and recorded
  (:attr:`Cleaned.elided`, the registry adds it to the parse's ``cut``), except for
  :data:`ELISION_KINDS`, whose parsers read it;
* a prefix every non-blank line carries (``> `` of a quoted reply, `` * `` of a C comment) is
  removed, and for :data:`DEDENT_KINDS` the common leading whitespace too (relative indentation
  stays; prompt lines at column 0 do not count), for :data:`REPORT_KINDS` (``nvidia-smi -q``) when
  a report's top-level line sits at it;
* an Ansible task's result is replaced by the command's output it holds, first of all (:func:`_unansibled`:
  ``ok: [node07] => {`` over a ``debug`` of ``out.stdout_lines``, ``-v``'s whole result as JSON on the host's line,
  the YAML result format, a failed task's ``stderr``, ad hoc ``-o``'s ``node07 | CHANGED | rc=0 | (stdout) ...`` and a
  module's ``node07 | CHANGED => {...}``); its host is recorded, and line numbers are then the unwrapped text's;
* the header a parallel shell or Ansible prints above a host's output is removed and its host
  recorded (:func:`_without_banners`): ``ansible -m shell``'s ``node07 | CHANGED | rc=0 >>``, ``pssh -i``'s
  ``[1] 10:21:33 [SUCCESS] node07``, and the host (or folded host list) between two lines of dashes of
  ``dshbak`` / ``clush -b``;
* shell prompt and command lines (``$ ibstat``, ``[root@x ~]# ibv_devinfo -v``,
  ``user@host:~$ ...``, ``+ mlnx_qos -i eth4`` of ``set -x``, a bare ``ip link | grep mtu``) are
  removed; when the paste holds several commands, only the output of the KIND's own commands is
  kept (``ibdev2netdev`` followed by ``ifconfig`` keeps the first); for :data:`KEEP_COMMAND_KINDS`
  the KIND's command line stays as ``$ <command>`` because it names the interface read (nvidia-smi-query:
  the fields a ``--format=csv,noheader`` run printed; lspci: the device a ``-s`` selector names).

Nothing else is rewritten, so a capture without any of this reaches the parser unchanged
(byte for byte). Every pattern is bounded, so a long line costs
linear time. :class:`Cleaned` carries the original line number of every kept line, so a
``ParseError`` can name the line of the file the user gave.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from typing import overload

#: commands whose output each KIND parses (first word of the command, path and ``sudo`` removed)
KIND_COMMANDS: dict[str, frozenset[str]] = {
    "ibstat": frozenset({"ibstat"}),
    "ibstatus": frozenset({"ibstatus"}),
    "ibv_devinfo": frozenset({"ibv_devinfo"}),
    "ibdev2netdev": frozenset({"ibdev2netdev", "rdma"}),
    "show_gids": frozenset({"show_gids", "show_gid"}),
    "sysfs-ib": frozenset({"cat", "grep", "head", "tail", "find", "for", "ls"}),
    "ip-link": frozenset({"ip"}),
    "mlnx_qos": frozenset({"mlnx_qos"}),
    "dcb": frozenset({"dcb", "lldptool"}),
    "ib_write_bw": frozenset({"ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_atomic_bw", "raw_ethernet_bw"}),
    "lspci": frozenset({"lspci"}),
    "nvidia-smi": frozenset({"nvidia-smi"}),
    "nvidia-smi-q": frozenset({"nvidia-smi"}),
    "nvidia-smi-q-xml": frozenset({"nvidia-smi"}),
    "nvidia-smi-query": frozenset({"nvidia-smi"}),
    "nvidia-smi-topo": frozenset({"nvidia-smi"}),
    "nvidia-smi-nvlink": frozenset({"nvidia-smi"}),
    "dcgmi-diag": frozenset({"dcgmi"}),
    "sinfo": frozenset({"sinfo"}),
    "scontrol-node": frozenset({"scontrol"}),
    "proc-limits": frozenset({"cat", "prlimit", "ulimit"}),
    "syslog-linkflap": frozenset({"dmesg", "journalctl", "grep", "cat", "tail"}),
}
#: KINDs whose parsers do not depend on absolute indentation: their captures are dedented
#: (``nvidia-smi -q`` excerpts keep their indentation: that parser reads the nesting from it)
DEDENT_KINDS = frozenset({"ibstat", "ibstatus", "ibv_devinfo", "ibdev2netdev", "show_gids", "sysfs-ib",
                          "ip-link", "mlnx_qos", "dcb", "ib_write_bw", "lspci"})
#: KINDs whose parser reads the interface from the command line (``mlnx_qos -i eth4``)
#: (nvidia-smi-query: a ``--format=csv,noheader`` run is read with the fields its command line names;
#: lspci: a grep'd excerpt without its device header line is the device its ``-s`` selector names;
#: proc-limits: a bare value is the locked-memory limit only under ``ulimit -l``)
KEEP_COMMAND_KINDS = frozenset({"mlnx_qos", "dcb", "nvidia-smi-query", "lspci", "proc-limits"})
#: first words that are commands on any line that looks like a prompt line
_KNOWN = frozenset().union(*KIND_COMMANDS.values()) | frozenset({
    "ifconfig", "ethtool", "ofed_info", "ibv_devices", "rdma", "ibportstate", "ibnetdiscover", "perfquery",
    "mst", "mlxconfig", "mlxlink", "kubectl", "mpirun", "srun", "sysctl", "cma_roce_tos", "modprobe",
    "lsmod", "echo", "sh", "bash", "export", "systemctl", "ping", "rping", "ib_write_lat", "ib_read_lat",
    "ib_send_lat", "all_reduce_perf", "all_gather_perf", "sleep", "which", "ibdev2lid", "iblinkinfo",
    "sminfo", "ibswitches", "ibhosts", "uname", "hostname", "dcbtool", "tc", "nvidia-bug-report.sh",
    # not in KIND_COMMANDS: sdiag's own first line starts with its name ('sdiag output at ...')
    "sdiag",
})
#: wrappers skipped to find the command word
_WRAPPERS = frozenset({"sudo", "time", "nice", "nohup", "watch", "env", "command", "exec", "stdbuf"})

_ANSI = re.compile(r"\x1b(?:\[[0-?]{0,32}[ -/]{0,8}[@-~]|\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)|[@-Z\\-_])")
_FENCE = re.compile(r"^[ \t]{0,16}(?:`{3,}|~{3,})[\w+.-]{0,32}[ \t]*$")
#: a line of a GitHub issue's collapsed section (HTML in the Markdown): ``<details>``, ``<details open>``,
#: ``<summary>...</summary>``, ``</details>``, or several of them on one line
_DETAILS = re.compile(
    r"^[ \t]{0,16}(?:(?:<details(?: open)?>|<summary>.{0,300}?</summary>|</details>)[ \t]{0,8}){1,3}$", re.IGNORECASE)
#: prompts that are prompts whatever follows: ``[user@host dir]#``, ``user@host:~$``, ``host:~#``, ``$``
_PROMPT_SURE = re.compile(
    # also quoted alone: '>[root@login ~]# cat ...'; a conda env or cluster name before it: '(baobab)-[root@gpu048 ~]$'
    r"^[ \t]{0,40}(?:>[ \t]?)?(?:\([\w.-]{1,64}\)[ \t-])?"
    r"(?:\[[^\]\n]{1,160}\][ \t]?[#$%]"
    r"|[\w.-]{1,64}@[\w.-]{1,128}(?::[^\s]{0,256}?|[ \t][~/][^\s]{0,256}?)?[ \t]?[#$%>]"
    r"|[\w.-]{1,64}:[~/][^\s]{0,256}?[#$]"
    # a prompt of the working directory alone ('\\w \\$'): '~ $', '~/src $'
    r"|~[^\s]{0,256}?[ \t]?[#$]"
    r"|\$)"
    r"[ \t]{0,8}(?P<cmd>\S.{0,4000})?$")
#: prompts that are only prompts when a known command follows: ``# ibstat``, ``+ ibstat``, ``> ibstat``, a
#: notebook's shell escape (``!nvidia-smi``: Jupyter, Colab), and the glyph prompts of zsh themes and starship
#: (U+279C HEAVY ROUND-TIPPED RIGHTWARDS ARROW of oh-my-zsh, ``(base) <arrow>  ~ git:(main) <x> ibstat``; U+276F
#: of starship/pure, U+03BB lambda: the working directory and a git mark may stand between glyph and command,
#: :func:`_maybe_command`)
_PROMPT_MAYBE = re.compile(r"^[ \t]{0,40}(?:\([\w.-]{1,64}\)[ \t]{1,8})?"
                           r"(?:#|\+{1,3}|>|%|!|(?P<glyph>[\u279c\u276f\u03bb]))[ \t]{0,8}(?P<cmd>\S.{0,4000})$")
#: a short prompt of the host name alone (``hsw228$ ulimit -l``, csh's ``node1% ``, zsh's ``%m%~`` as
#: ``lasers~ nvidia-smi``), or of the host and its working directory (Gentoo's root prompt ``heq /var/log/slurm #``):
#: a prompt only when a known command follows
_PROMPT_HOST = re.compile(r"^[ \t]{0,40}[\w.-]{1,64}(?:[$%#]|~[$%#>]?|[ \t][~/][^\s]{0,256}[ \t][$#])[ \t]{1,8}"
                          r"(?P<cmd>\S.{0,4000})$")
#: the first characters a line _PROMPT_MAYBE matches can start with (after blanks; ``(`` of a conda env)
_MAYBE_FIRST = frozenset("#+>%!(\u279c\u276f\u03bb")

#: a character every line _PROMPT_MAYBE matches holds: only such lines are tried
_MAYBE_CHARS = "#+>%!\u279c\u276f\u03bb"
#: a character every line _PROMPT_SURE matches holds (besides one of ``#$%``), one per alternative:
#: the ``]`` of ``[user@host dir]#``, the ``@`` of ``user@host$``, the ``#`` or ``$`` of ``host:~#``
#: and of a bare prompt; a ``%`` alone (``Gpu : 0 %``, frequent in output) is never enough
_SURE_NEEDLES = "$]@#"
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,64}=")
_PREFIXES = ("> ", ">", " * ", "* ", "// ")
#: launcher / parallel-shell line prefixes: Open MPI --tag-output (after --timestamp-output's ISO
#: time, if any; also indented, as a markdown list item pastes it), ``[host] `` (not a dmesg timestamp:
#: the name holds a letter), ``host: `` or ``10.3.35.83: `` (pdsh, clush, dshbak -c off), srun -l ``N: ``
#: and Intel MPI -l ``[N] ``
#: a syslog date and time without the year ('Mar 05 10:21:33'): journalctl's head of a line, moreutils ts' default
_SYSLOG_TIME = r"[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}"
_LAUNCHER = re.compile(r"^[ \t]{0,8}"  # also indented: a Markdown code block or list item indents the whole paste
                       r"(?:(?:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z?: )?"
                       r"\[(?P<mpi>\d{1,6},\d{1,6})\]<std(?:out|err)>:"
                       r"|\[(?P<bracket>[A-Za-z][\w.-]{0,63}|[\w.-]{0,63}[A-Za-z][\w.-]{0,63})\] "
                       r"|(?P<host>[A-Za-z][\w.-]{0,63}|\d{1,3}(?:\.\d{1,3}){3}): "
                       # srun -l pads the task number to the width of the largest: '  3: ' of 100+ tasks
                       # (an empty output line is the label alone: ' 0:' at the line's end)
                       r"|(?P<rank>\d{1,5}):(?: |$)"
                       # Intel MPI -l / -prepend-rank: '[0] ' (digits only: never a dmesg '[  12.345]' stamp)
                       r"|\[(?P<brank>\d{1,5})\](?=\s)"
                       # a test harness' log of the tool's output: '2019-07-16 03:43:24,132 process L0458 DEBUG|
                       # [stdout] ...' (time stamp, logger, then the stream tag before the tool's own text)
                       # Ray's tag of a remote worker's line: '(ReferenceModelRayActor pid=5823, ip=10.164.227.153) ';
                       # SkyPilot's of a task's: '(sky-cmd, pid=13008) ', '(worker1, rank=1, pid=2345, ip=10.0.0.2) '
                       r"|\((?P<ray>[A-Za-z_][\w.:-]{0,80},? (?:rank=\d{1,6}, )?pid=\d{1,9}(?:, ip=[\d.]{7,15})?)\) "
                       r"|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?[^\[\n]{0,100}?"
                       r"\[(?P<logstd>std(?:out|err))\] ?"
                       # a log's time on every line: a CI runner's ('2024-03-05T10:21:33.1234567Z ', GitHub
                       # Actions), kubectl / docker logs --timestamps, moreutils ts ('[2024-03-05 10:21:33] ',
                       # '[10:21:33] '); not for STAMPED_KINDS, whose own lines start with a time
                       r"|(?P<stamp>\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?"
                       # (a console server's bracketed wall clock glued to the line:
                       # '[2023-06-22 21:55:31.352446][5975153.869131] ', '[2023-06-24 00:40:54.482177]ERROR: ...')
                       r"(?:Z|[+-]\d{2}:?\d{2})?\]?(?: |$|(?<=\]))|\[\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\] )"
                       # journalctl's line of a service that ran the tool: 'Dec 05 10:21:33 gpu-node07
                       # healthcheck.sh[4242]: ' (the host recorded)
                       r"|" + _SYSLOG_TIME + r" (?P<journal>[\w.-]{1,64}) (?!\d)[\w.@/:-]{1,64}"
                       r"(?:\[\d{1,9}\])?: "
                       # docker compose logs' service (container) column: 'trainer-1  | '
                       r"|(?P<compose>[A-Za-z][\w.-]{0,63}) {0,32}\| "
                       # kubectl logs --prefix: '[pod/trainer-0/main] ' (the pod and container recorded)
                       r"|\[(?P<kube>pod/[\w.-]{1,253}/[\w.-]{1,63})\] "
                       # moreutils ts' default time, a syslog date without host or tag: 'Mar 05 10:21:33 '
                       # (after the journal form, which is that time followed by a host and a tag)
                       r"|(?P<ts>" + _SYSLOG_TIME + r") "
                       r")")
#: moreutils ts' time alone (:data:`_LAUNCHER`'s ``ts`` form)
_TS_HEAD = re.compile(r"^[ \t]{0,8}(?P<ts>" + _SYSLOG_TIME + r") ")
#: KINDs whose own lines start with a time (and a host): a kernel log's syslog or journal lines keep it
STAMPED_KINDS = frozenset({"kernel-log", "syslog-linkflap"})
#: launcher forms that are a time or a log's line head, not a launcher's host or rank
_STAMP_FORMS = frozenset({"stamp", "journal", "ts"})


def _any_launcher(lines: Iterable[str], kind: str = "") -> bool:
    """``any(_LAUNCHER.match(ln) for ln in lines)``, the regex asked only of the lines that can match: each
    of its forms starts with ``[``, ``(`` (Ray), a letter or a digit (``str.isalnum`` takes the others), or with
    the blanks of an indented tag, which are followed by its ``[`` or a digit (an indented report line,
    ``    Product Name : ...``, is not tried: most lines of -q and ibstat), except on the first line of
    text (a whole paste indented as a Markdown code block: ``    gpu-node07: ...``). For
    :data:`STAMPED_KINDS` a line's own time or journal head is no launcher's."""
    match = _LAUNCHER.match
    stamped = kind in STAMPED_KINDS
    text = False  # the first line of text is asked whatever it starts with (a whole paste indented: 'n7: ')
    for ln in lines:
        first = ln[:1]
        if first.isalnum() or first == "[" or first == "(":
            m = match(ln)
        elif first == " " or first == "\t":
            first = ln.lstrip(" \t")[:1]
            m = match(ln) if first == "[" or first == "(" or first.isdigit() or (first and not text) else None
        else:
            m = None
        if m and not (stamped and m.lastgroup in _STAMP_FORMS
                      and not _bracketed_stamps(m.lastgroup, [m.group(m.lastgroup)])):
            return True
        if not text and ln.lstrip(" \t"):
            text = True
    return False


#: words that start log lines as ``word: `` or ``[word] `` without being a host
_NOT_HOSTS = frozenset({"nvrm", "kernel", "nccl", "error", "warning", "warn", "info", "debug", "note", "fatal",
                        "notice", "crit", "err", "systemd", "dcgm", "nvidia", "mlx5_core", "mlx5_ib", "pcieport",
                        "failed", "ok", "pass", "fail", "result", "status", "usage", "trace", "stdout", "stderr"})
#: KINDs whose own lines are ``<name>: <value>`` at column 0 (sysfs files printed by grep/head); a
#: /proc/<pid>/limits row (``Max locked memory  ...``) has no such colon, so its pdsh prefix comes off
NO_LAUNCHER_KINDS = frozenset({"sysfs-ib"})
#: share of the non-blank lines that must carry one launcher prefix form before it is removed
LAUNCHER_SHARE = 0.9


class _SameLines(Sequence[int]):
    """``range(1, n + 1)`` for the ``n`` lines of a text returned unchanged, counted only when asked
    (a parse error's line): the count is a scan of the whole text (20 us for a 56 kB report)."""

    __slots__ = ("_range", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._range: range | None = None

    def _lines(self) -> range:
        if self._range is None:
            text = self._text
            self._range = range(1, text.count("\n") + (0 if text.endswith("\n") else 1) + 1)
        return self._range

    def __len__(self) -> int:
        return len(self._lines())

    @overload
    def __getitem__(self, i: int) -> int: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...

    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        return self._lines()[i]

    def __repr__(self) -> str:
        return repr(self._lines())


@dataclass
class Cleaned:
    """The cleaned text and, for each of its lines, the 1-based line of the original."""

    text: str
    lines: Sequence[int] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    #: hosts (or ranks) a launcher prefix named, in order of first appearance
    hosts: list[str] = field(default_factory=list)
    #: lines of the original that were an elision (``...``) the paster made: removed (see :data:`ELISION_KINDS`)
    elided: list[int] = field(default_factory=list)

    def original_line(self, line: int | None) -> int | None:
        if line is None or not self.lines:
            return line
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return self.lines[-1] if line > len(self.lines) else line


def command_word(cmd: str) -> str | None:
    """The command's first word after wrappers (``sudo``, ``taskset -c 3``, paths), or None."""
    words = cmd.split()[:24]
    i = 0
    while i < len(words):
        w = words[i]
        base = w.rsplit("/", 1)[-1]
        if base in _WRAPPERS or _ASSIGN.match(w):
            i += 1
        elif base == "taskset":
            i += 2 if i + 1 < len(words) and words[i + 1].startswith("-") else 1
            i += 1  # the cpu list
        elif base == "numactl":
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
        elif base == "ip" and words[i + 1:i + 2] == ["netns"]:
            i += 4  # ip netns exec <ns> <cmd>
        else:
            return base or None
    return None


def _command(line: str, kind: str) -> tuple[bool, str | None]:
    """(is a prompt/command line, the command or None) for one line.

    Each pattern is tried only when the line holds what it cannot match without (a prompt
    character; the KIND's command name): the same answers, without a regex run per output line."""
    if "$" in line or "#" in line or "%" in line or "~" in line or ("@" in line and ">" in line):
        m = _PROMPT_SURE.match(line)
        if m:
            return True, (m.group("cmd") or "").strip() or None
        if _host_prompt(line):
            m = _PROMPT_HOST.match(line)
            if m:
                return True, m.group("cmd").strip()
    first = line.lstrip(" \t")[:1]
    if first in _MAYBE_FIRST:
        cmd = _maybe_command(line)
        if cmd is not None:
            return True, cmd or None
    if line[:1] not in ("", "#", " ", "\t") or first.isalpha():
        own = KIND_COMMANDS.get(kind, frozenset())
        if any(name in line for name in own):
            word = command_word(line)
            if word is not None and word in own:
                return True, line.strip()
    return False, None


def _spans_holding(text: str, chars: Iterable[str]) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of ``text`` that holds one of ``chars`` (characters or strings without a
    newline), once (``str.find``: C speed per character)."""
    seen: set[int] = set()
    for ch in chars:
        pos = text.find(ch)
        while pos >= 0:
            start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            if end < 0:
                end = len(text)
            if start not in seen:
                seen.add(start)
                yield start, end
            pos = text.find(ch, end)


def _lines_holding(text: str, chars: Iterable[str]) -> Iterator[str]:
    """Each line of ``text`` that holds one of ``chars``, once."""
    return (text[start:end] for start, end in _spans_holding(text, chars))


def _plain(text: str, kind: str) -> bool:
    """True when no line of ``text`` is a prompt or command line for ``kind`` (what :func:`_command`
    says of each line, asked only of the lines that hold what its patterns need): nothing to cut
    into segments."""
    if any(name in text for name in KIND_COMMANDS.get(kind, ())):
        return False
    return not any(map(_sure_prompt, _lines_holding(text, _SURE_NEEDLES))) and \
        not any(map(_maybe_prompt, _lines_holding(text, _MAYBE_CHARS))) and \
        not any(map(_host_prompt, _lines_holding(text, "$%#~")))


#: host names of a prompt or a log line head that name no node
NOT_NAMED = frozenset({"localhost", "localhost.localdomain"})

#: the host of a ``user@host`` prompt ('fds@n1:~$', '[root@gpu048 ~]#', '(base) alice@node07:/scratch$')
_PROMPT_USER_HOST = re.compile(r"[\w.-]{1,64}@(?P<host>[A-Za-z][\w.-]{0,63}?)(?=[:\s\]$#%>])")


#: the host a syslog's or journal's line head names ('Feb 17 08:02:06 abggdna-DGX-Station-A100 kernel: ...',
#: '2024-05-01T10:00:00.123456+00:00 gpu07 kernel: ...'), and syslogd's console broadcast ('Message from
#: syslogd@spinoza at May  4 22:28:15 ...', a mail archive's '_at_' for the '@')
_LOG_HOST = re.compile(r"^[ \t]{0,8}(?:(?:" + _SYSLOG_TIME + r"|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?"
                       r"(?:Z|[+-]\d{2}:?\d{2})?)(?:\.\d{1,9})? (?P<host>[A-Za-z][\w.-]{0,63}) kernel: "
                       r"|Message from syslogd(?:@|_at_)(?P<wall>[A-Za-z][\w.-]{0,63}) at )", re.MULTILINE)


def log_named_host(kind: str, text: str) -> dict[str, str] | None:
    """``{"host": h, "by": "syslog line head"}`` where a kernel log's syslog or journal lines (or syslogd's broadcasts)
    name one host (not ``localhost``), else None: the raw reading and a pre-parsed envelope both carry it."""
    if kind not in STAMPED_KINDS or len(hosts := log_hosts(text)) != 1:
        return None
    return None if hosts[0] in NOT_NAMED else {"host": hosts[0], "by": "syslog line head"}


#: a structured (JSON) log's field naming the node it ran on ('"node_name": "aks-gpu-xxx-vmss00000j"', a
#: Kubernetes or preflight checker's log; '"hostname": "gpu07"')
_JSON_HOST = re.compile(r'"(?:node_?name|nodeName|node|host_?name|hostName)"[ \t]{0,4}:[ \t]{0,4}'
                        r'"(?P<host>[A-Za-z][\w.-]{0,252})"')


def json_named_host(text: str) -> dict[str, str] | None:
    """``{"host": h, "by": "JSON log field"}`` where a structured log's node fields (:data:`_JSON_HOST`) name one
    host, else None."""
    if '"node' not in text and '"host' not in text:
        return None
    hosts = list(dict.fromkeys(m.group("host") for m in _JSON_HOST.finditer(text[:65536])))
    return {"host": hosts[0], "by": "JSON log field"} if len(hosts) == 1 and hosts[0] not in NOT_NAMED else None


#: the characters of a log's head and of its tail whose line heads are read for the host (a central syslog of many
#: hosts shows a second one there; a node's own log of thousands of lines is not read line by line for it)
LOG_HOST_SAMPLE = 8192


def log_hosts(text: str) -> list[str]:
    """The hosts a kernel log's syslog or journal line heads (and syslogd's broadcasts) name in its first and last
    :data:`LOG_HOST_SAMPLE` characters, in order of first appearance."""
    if " kernel: " not in text and "syslogd" not in text:
        return []
    if len(text) > 2 * LOG_HOST_SAMPLE:
        text = text[:LOG_HOST_SAMPLE] + "\n" + text[text.index("\n", len(text) - LOG_HOST_SAMPLE) + 1:] \
            if "\n" in text[len(text) - LOG_HOST_SAMPLE:] else text[:LOG_HOST_SAMPLE]
    return list(dict.fromkeys(m.group("host") or m.group("wall") for m in _LOG_HOST.finditer(text)))


def prompt_hosts(text: str) -> list[str]:
    """The hosts the capture's shell prompts name (``user@host``), in order of first appearance."""
    out: list[str] = []
    if "_at_" in text:
        text = _ARCHIVE_AT.sub(r"\g<u>@\g<h>", text)
    for ln in text.split("\n", 4000)[:4000]:
        if "@" not in ln:
            continue
        ln = ln[:600]
        if not _sure_prompt(ln) and (pre := _LAUNCHER.match(ln)):
            ln = ln[pre.end():]  # the prompt line under a launcher's prefix ('0: user@node:~$ ibstat')
        if _sure_prompt(ln) and (m := _PROMPT_USER_HOST.search(ln)) and m.group("host") not in out:
            out.append(m.group("host"))
    return out


# The two line tests of _plain, each a pure function of the line: the lines that hold a prompt
# character repeat across the nodes of a fleet (nccl-tests' '#' header, '%' of nvidia-smi -q), so
# each distinct line is matched once (bounded).
@lru_cache(maxsize=16384)
def _sure_prompt(ln: str) -> bool:
    return bool(("#" in ln or "$" in ln or "%" in ln or ("@" in ln and ">" in ln)) and _PROMPT_SURE.match(ln))


@lru_cache(maxsize=16384)
def _host_prompt(ln: str) -> bool:
    m = _PROMPT_HOST.match(ln)
    return bool(m and command_word(m.group("cmd")) in _KNOWN)


@lru_cache(maxsize=16384)
def _maybe_prompt(ln: str) -> bool:
    if ln.lstrip(" \t")[:1] not in _MAYBE_FIRST:
        return False
    return _maybe_command(ln) is not None


#: a zsh theme's git mark after the working directory: ``git:(main)``, U+2717 of a dirty tree
_GIT_MARK = re.compile(r"^(?:git:\(\S{0,200}\)|\u2717)$")


def _maybe_command(line: str) -> str | None:
    """The known command after a :data:`_PROMPT_MAYBE` prompt, or None. Behind a glyph prompt the command
    is sought past up to four words of the prompt's own (the working directory, ``user@host``, ``git:(main)``,
    U+2717 of a dirty git tree)."""
    m = _PROMPT_MAYBE.match(line)
    if not m:
        return None
    cmd = m.group("cmd").strip()
    if command_word(cmd) in _KNOWN:
        return cmd
    glyph = m.group("glyph")
    if glyph:
        words = cmd.split(None, 5)
        for skip in range(1, min(5, len(words))):
            rest = " ".join(words[skip:])
            if command_word(rest) in _KNOWN:
                return rest
        # no tool's output starts with the glyph: a prompt whatever follows (another command, or none: the
        # prompt after the output); oh-my-zsh's arrow is followed by the working directory
        return " ".join(w for w in words[1 if glyph == "\u279c" else 0:] if not _GIT_MARK.match(w))
    return None


def _bracketed_stamps(form: str, names: Iterable[str]) -> bool:
    """Times of moreutils ts' ``[...] `` (never a kernel log's own: dmesg's ``[  12.345]`` has no date)."""
    return form == "stamp" and all(nm.startswith("[") for nm in names)


def strip_launcher_prefix(lines: list[str], kind: str = "") -> tuple[list[str], list[str]]:
    """``lines`` without a launcher's prefix, and the hosts/ranks it named; unchanged when fewer than
    :data:`LAUNCHER_SHARE` of the non-blank lines carry one form of it. ``host: `` needs at most a
    few distinct names (a ``Key: value`` format has many keys), srun's ``N: `` every line and ranks
    that repeat (an ``ip link`` listing's ``2: eth0:`` has unprefixed continuation lines, or one line
    per distinct index). A lone line of text: :func:`_strip_lone`."""
    # a prompt line (the command that ran under the launcher, the prompt after it) carries no prefix
    body = [ln for ln in lines if ln.strip() and not ln.startswith(("# source:", "#source:")) and not _prompt_line(ln)]
    if len(body) == 1:
        return _strip_lone(lines, body[0], kind in NUMBERED_KINDS, kind in STAMPED_KINDS)
    if not body:
        return lines, []
    forms: dict[str, dict[str, int]] = {}
    for ln in body:
        m = _LAUNCHER.match(ln)
        if m:
            form = m.lastgroup or ""
            names = forms.setdefault(form, {})
            name = m.group(form)
            names[name] = names.get(name, 0) + 1
    if "ts" in forms and "journal" in forms and sum(forms["journal"].values()) < LAUNCHER_SHARE * len(body):
        # ts' time on every line, behind which some lines of the tool's text read as a journal's host and tag
        # ('Mar 05 10:21:09 Physical state: LinkUp'): the time is the prefix of them all
        forms["ts"] = {**forms["ts"], **forms.pop("journal")}
    for form, names in sorted(forms.items(), key=lambda kv: -sum(kv[1].values())):
        if form in _STAMP_FORMS and kind in STAMPED_KINDS and not _bracketed_stamps(form, names):
            continue  # a kernel log's own time and host (journalctl -o short-iso); ts' '[...] ' is not its own
        n = sum(names.values())
        need = len(body) if form in ("rank", "brank") else LAUNCHER_SHARE * len(body)
        if form in ("host", "bracket") and any(nm.lower() in _NOT_HOSTS or nm.isupper() for nm in names):
            continue  # 'NVRM: Xid ...', 'kernel: ...', '[ERROR] ...': message tags, not hosts
        if form == "host" and max(names.values()) < 2 and not all(any(c.isdigit() for c in nm) for nm in names):
            continue  # 'state: 4: ACTIVE' / 'rate: 5 Gb/sec' (sysfs files): keys, not hosts
        if form in ("host", "bracket") and not all(_HOSTLIKE.search(nm) for nm in names) and not (
                len(names) == 1 and next(iter(names)).isalpha() and next(iter(names)).islower()):
            # 'LnkCap: ...' / 'LnkSta: ...' of a grep'd excerpt: keys, not hosts (gpu-node07, dgx3, 10.0.0.7;
            # one lower-case name alone, 'login: ', is a host too)
            continue
        if n < need or (form in ("host", "journal", "compose") and len(names) > max(8, n // 4)) or (
                form in ("rank", "brank") and len(names) > n // 2):
            continue
        out = []
        for ln in lines:
            m = _LAUNCHER.match(ln)
            if m and form == "ts" and m.lastgroup == "journal":
                m = _TS_HEAD.match(ln)
            out.append(ln[m.end():] if m and m.lastgroup == form else ln)
        if form == "brank":
            # the launcher also tags output it flushed mid-line: '... -1[0]    1626.5 ...' (glued to the text)
            glued = re.compile(r"(?<=\S)\[(?:" + "|".join(names) + r")\](?=\s)")
            out = [glued.sub(" ", ln) if "[" in ln else ln for ln in out]
        return out, [] if form in ("logstd", "stamp", "ts") else list(names)
    return lines, []


#: grep -n / -b output: the line number or byte offset, ``:`` on a matching line, ``-`` on a context line
_GREP_NUMBER = re.compile(r"^(\d{1,12})([:-])(?!\d\d[-:])")  # not a date or a time: '2019-07-16', '03:43:24'


def strip_grep_numbers(lines: list[str]) -> list[str]:
    """``lines`` without grep's ``-n``/``-b`` prefix (``3879:CA 'mlx5_19'``, ``3892-   CA type: MT4120``),
    when every non-blank line (two at least) but grep's ``--`` group separators carries one, the numbers go up
    and the prefix cannot be a tool's own numbering: a context line (``-``) is there, or a ``:`` is not
    followed by a blank (srun -l's ``0: ``, ip link's ``2: eth0:`` always are); else ``lines`` itself."""
    first = next((ln for ln in lines if ln.strip()), "")
    if not first[:1].isdigit():
        return lines
    if not _GREP_NUMBER.match(first):
        return _strip_view_numbers(lines)
    last = -1
    seen = 0
    out: list[str] = []
    context = glued = False
    for ln in lines:
        if not ln.strip() or ln.strip() == "--":
            out.append("" if ln.strip() else ln)  # grep's group separator goes; a blank line stays
            continue
        m = _GREP_NUMBER.match(ln)
        if m is None or int(m.group(1)) <= last:
            return lines
        last = int(m.group(1))
        seen += 1
        if m.group(2) == "-":
            context = True
        elif not ln[m.end():m.end() + 1].isspace():
            glued = True
        out.append(ln[m.end():] or ln)
    if seen < 2 or not (context or glued):
        return lines
    return out


#: an editor's or a numbered view's line number before a line: ``1700[   22.316553] ...``, ``1701 [ ...``, ``12\t...``
_VIEW_NUMBER = re.compile(r"^(\d{1,7})(?:\t| {1,2}(?=\S)|(?=[\[<(]))")


def _strip_view_numbers(lines: list[str]) -> list[str]:
    """``lines`` without a numbered view's line numbers (three numbered lines at least, each one more than the
    one before; a line without a number is the indented rest of a wrapped line, or blank); else ``lines``."""
    out: list[str] = []
    last = -1
    numbered = 0
    for ln in lines:
        m = _VIEW_NUMBER.match(ln)
        if m is None:
            if ln.strip() and not (last >= 0 and ln[:1] in " \t"):
                return lines
            out.append(ln)
            continue
        n = int(m.group(1))
        if last >= 0 and n != last + 1:
            return lines
        last = n
        numbered += 1
        out.append(ln[m.end():])
    return out if numbered >= 3 else lines


#: a name a ``host: `` / ``[host] `` prefix gives on several lines holds a digit, a ``-`` or a ``.``
#: (or is the only name, in lower-case letters: ``login: ``)
_HOSTLIKE = re.compile(r"[\d.-]")
#: KINDs whose own lines start ``N: `` (``2: eth0: <BROADCAST,...>``): a lone such line keeps it
NUMBERED_KINDS = frozenset({"ip-link"})
#: a host a lone line's ``host: `` / ``[host] `` prefix names: a digit and a ``-`` or ``.`` in it
#: (``gpu-node07``, ``dgx-a100-3.cluster``, ``10.3.35.83``); ``node07: `` / ``ib0: `` / ``eth0: `` (a
#: driver's own line) cannot be told apart, so a lone line keeps them
_LONE_HOST = re.compile(r"(?=[^-.]*[-.])(?=\D*\d)[\w.-]+$")


def _strip_lone(lines: list[str], line: str, numbered: bool = False,
                stamped: bool = False) -> tuple[list[str], list[str]]:
    """``lines`` (one line of text among blank ones) without the launcher prefix of that line, when
    the prefix cannot be the line's own text: Open MPI's tag, srun's ``N: `` (not for
    :data:`NUMBERED_KINDS`), a host name that holds a digit and a ``-`` or ``.``."""
    m = _LAUNCHER.match(line)
    if m is None or not line[m.end():].strip():
        return lines, []
    form = m.lastgroup or ""
    name = m.group(form)
    if form in ("host", "bracket"):
        if name.lower() in _NOT_HOSTS or not _LONE_HOST.match(name):
            return lines, []
    elif (form == "rank" and numbered) or form == "brank" or (
            form in _STAMP_FORMS and stamped and not _bracketed_stamps(form, [name])):
        return lines, []
    elif form == "compose" and not _LONE_HOST.match(name):
        return lines, []  # 'Speed  | ...' of a table: a service name alone holds a digit and a '-' or '.'
    if form in ("stamp", "ts"):
        i = lines.index(line)
        return [*lines[:i], line[m.end():], *lines[i + 1:]], []
    i = lines.index(line)
    return [*lines[:i], line[m.end():], *lines[i + 1:]], [name]


def _prompt_line(ln: str) -> bool:
    """A shell prompt line of any form: a sure prompt, a maybe prompt before a known command, a host prompt."""
    return _sure_prompt(ln) or _maybe_prompt(ln) or _host_prompt(ln)


def _unquoted_prompt(ln: str) -> bool:
    """A prompt line that does not start as a quoted one does (``> ibstat`` may be either: it stays quoted)."""
    return _prompt_line(ln) and not ln.startswith(_PREFIXES)


def _quoted(ln: str) -> bool:
    """A line of a reply's quote: ``> `` before its text, or the quote mark alone."""
    return ln.startswith("> ") or ln.rstrip() == ">"


def _without_bare_command(body: list[str]) -> list[str]:
    """``body`` without the bare command written above a quoted output ('nvidia-smi', then '> ...' lines)."""
    if len(body) > 2 and not body[0].startswith(_PREFIXES) and command_word(body[0].strip()) in _KNOWN:
        return body[1:]
    return body


def _strip_prefix(lines: list[str]) -> list[str]:
    """``lines`` without the quoting prefix every line of text carries (:func:`_strip_quote`), also under an
    indentation every line of text shares (a quoted reply pasted into a Markdown code block or a mail's indented
    excerpt: ``    > [  171.94] ...``): the indentation goes with the prefix; the same list when there is none."""
    first = next((ln for ln in lines if ln.strip()), "")
    if first[:1] in (" ", "\t") and first.lstrip()[:1] in (">", "*", "/"):
        width = len(first) - len(first.lstrip())
        ind = first[:width]
        if all(ln.startswith(ind) or not ln.strip() for ln in lines):
            inner = [ln[width:] for ln in lines]
            out = _strip_quote(inner)
            return lines if out is inner else out
    return _strip_quote(lines)


def _strip_quote(lines: list[str]) -> list[str]:
    # a prompt line outside the quote (the command typed above a quoted paste) carries no prefix
    text = (ln for ln in lines if ln.strip() and not _unquoted_prompt(ln))
    # the first lines of text decide (most captures carry no prefix): the rest is read only when they carry one
    head = list(islice(text, 3))
    first = _without_bare_command(head)[0] if head else ""
    if head and not any(first.startswith(pre) or first.rstrip() == pre.rstrip() for pre in _PREFIXES):
        return lines  # the first line of text carries none of them: neither can every line
    body = _without_bare_command(head + list(text) if head else [ln for ln in lines if ln.strip()])
    first = body[0] if body else ""
    if not any(first.startswith(pre) or first.rstrip() == pre.rstrip() for pre in _PREFIXES):
        return lines
    if len(body) < 2:
        # a lone quoted line ('> NVRM: Xid ...' of a reply): quoting unless it is a '> command' prompt line
        if body and not _maybe_prompt(first) and (pre := next((p for p in _PREFIXES if first.startswith(p)), "")) \
                and first[len(pre):].strip():
            return [ln[len(pre):] if ln is first else ln for ln in lines]
        return lines
    for pre in _PREFIXES:
        bare = pre.rstrip()
        # a paster's elision line between the quoted ones ('...(cutting ...)...') is the paster's, not quoted
        if all(ln.startswith(pre) or ln.rstrip() == bare or (pre == "> " and _ELISION.match(ln)) for ln in body):
            return [ln[len(pre):] if ln.startswith(pre) else ("" if ln.rstrip() == bare else ln) for ln in lines]
    if first.startswith("> ") and first[2:3].strip() and all(ln[:1] in (" ", "\t") for ln in body[1:]):
        # Markdown's lazy blockquote: only the record's first line carries '> ', its indented lines follow bare
        return [ln[2:] if ln is first else ln for ln in lines]
    run = next((i for i, ln in enumerate(body) if not _quoted(ln)), len(body))
    if run >= _QUOTED_RUN and not any(map(_quoted, body[run:])):
        # the paste quoted with '> ' from its first line of text on, the paster's own lines after it (a note, a
        # comment), never quoted again: the quoted lines are the capture
        end = lines.index(body[run]) if run < len(body) else len(lines)
        return [(ln[2:] if ln.startswith("> ") else "" if ln.rstrip() == ">" else ln) if i < end else ln
                for i, ln in enumerate(lines)]
    if run and (n_quoted := sum(map(_quoted, body))) >= _QUOTED_RUN and n_quoted >= _QUOTED_SHARE * len(body):
        # a quote whose long lines a mail client wrapped when it was sent: the rests of the wrapped lines carry no
        # '> ' (the paster typed it before each line, the client wrapped after), the quoted lines are most of it
        return [ln[2:] if ln.startswith("> ") else "" if ln.rstrip() == ">" else ln for ln in lines]
    return lines


#: the quoted lines a paste must open with before the paster's own unquoted lines after them (:func:`_strip_prefix`)
_QUOTED_RUN = 5
#: the share of a paste's lines of text a quote holds when the rests of its wrapped lines carry no prefix
_QUOTED_SHARE = 0.4


#: KINDs whose parser reads the nesting from the indentation (``nvidia-smi -q``): a whole paste indented
#: (a Markdown code block) is dedented only when one of the report's top-level lines sits at the
#: common indentation (:func:`_dedent_report`); an excerpt that starts inside a section keeps it
REPORT_KINDS = frozenset({"nvidia-smi-q"})
#: the top-level lines of an ``nvidia-smi -q`` report (column 0 in the tool's output)
_REPORT_TOP = re.compile(r"^[ \t]{1,16}(?:=+\s*NVSMI LOG\s*=+|Timestamp\s+:|Driver Version\s+:|Attached GPUs\s+:"
                         r"|GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d\s*$)", re.MULTILINE)


def _dedent_report(lines: list[str]) -> list[str]:
    """``lines`` without their common indentation when a report's top-level line sits at it."""
    first = next((ln for ln in lines if ln.strip()), "")
    if not first[:1].isspace():
        return lines
    dedented = _dedent(lines)
    if dedented is not lines and any(new[:1].strip() and _REPORT_TOP.match(old)
                                     for old, new in zip(lines, dedented)):
        return dedented
    return lines


def strip_quoting(lines: list[str]) -> list[str]:
    """``lines`` without the quoting prefix (``> ``, `` * ``, ``// ``) every non-blank line carries, nested
    ones too (``>> ``); the same list when none is there (what :func:`clean_capture` takes off)."""
    out = lines
    for _depth in range(4):
        stripped = _strip_prefix(out)
        if stripped is out:
            return out
        out = stripped
    return out


#: a paster's note after a line's text, behind an arrow: ``   <= GPU is unusable``, ``  <-- this one``,
#: ``   ---> Here It's not showing the GPU values.``
ARROW_NOTE = re.compile(r"\s+(?:<(?:=|-{1,3})\s.*|<-{2,3}.*|-{2,3}>(?:\s.*)?|==>(?:\s.*)?)$")


#: one line of output as a JSON string of a list (Ansible's ``stdout_lines``, a script's ``json.dumps``):
#: ``        "cyclecloud_node_fail slurm     2022-11-22T13:25:08 viz3d-1",``
#: also a source file's string literal concatenated line by line (Java, C#, JavaScript: ``"| GPU  Name ...|\n" +``,
#: the first after its assignment ``String str1="Tue Jun  9 19:46:24 2020\n" +``, the last ending ``";``)
_JSON_LINE = re.compile(r'^[ \t]{0,16}(?:(?:[A-Za-z_][\w<>\[\].]{0,40}[ \t]{1,4})?[A-Za-z_]\w{0,40}[ \t]{0,4}='
                        r'[ \t]{0,4})?("(?:[^"\\]|\\.)*")[ \t]*(?:,|\+|\)?;)?[ \t]*$')
#: the list's own frame around such lines: ``"stdout_lines": [``, ``]``, ``],``
_JSON_FRAME = re.compile(r'^[ \t]{0,16}(?:"[\w.-]{1,40}"[ \t]*:[ \t]*\[|\],?|\[)[ \t]*$')


def _may_unwrap(lines: list[str], kind: str) -> bool:
    """Whether :func:`_uncommented` or :func:`_unjsoned` may change a paste whose first lines are ``lines``: its first
    or second line of text is commented out, or its first is a JSON string or the list's frame (a superset of what
    either takes off: the fast path of :func:`clean_capture` leaves such a paste to :func:`_general`)."""
    text = [ln for ln in lines[:42] if ln.strip()][:2]
    if not text:
        return False
    return (kind not in COMMENTED_KINDS and any(_COMMENTED.match(ln) for ln in text)) or bool(
        _JSON_LINE.match(text[0]) or _JSON_FRAME.match(text[0]))


def _unjsoned(lines: list[str]) -> list[str]:
    """A paste whose every line is a JSON string of a list (two at least; the list's brackets and key may
    frame them): each line's text, decoded; the frame lines blank. The same list when it is not one."""
    body = [ln for ln in lines if ln.strip()]
    strings = [ln for ln in body if _JSON_LINE.match(ln)]
    if len(strings) < 2 or len(strings) + sum(1 for ln in body if _JSON_FRAME.match(ln)) != len(body):
        return lines
    out = []
    for ln in lines:
        m = _JSON_LINE.match(ln)
        if m:
            try:
                decoded = str(json.loads(m.group(1)))
                out.append(decoded[:-1] if decoded.endswith("\n") else decoded)  # a literal's own line end
                continue
            except ValueError:
                return lines
        out.append("" if _JSON_FRAME.match(ln) else ln)
    return out


#: KINDs whose own output holds ``# `` lines (nccl-tests' parameter, rank and column-header lines): a paste of
#: them is never taken for one commented out
COMMENTED_KINDS = frozenset({"nccl-tests", "nccl-tests-json"})
#: a line commented out: a shell's or README's '# ', a C-family source's '//' (kept in a Java file after its parser)
_COMMENTED = re.compile(r"^[ \t]{0,16}(?:#(?: |$)|//)")


def _uncommented(lines: list[str], kind: str) -> list[str]:
    """A paste commented out line by line (a README's or a script's ``# `` before every line of the output, under
    the code's indentation; the command line above it may stand bare): the indentation and ``# `` taken off.
    The same list when it is not one (a line of text without the mark, fewer than two marked lines)."""
    if kind in COMMENTED_KINDS:
        return lines
    body = [ln for ln in lines if ln.strip()]
    if body and not _COMMENTED.match(body[0]) and command_word(body[0]) in KIND_COMMANDS.get(kind, ()):
        body = body[1:]  # 'show_gids' typed above its commented output
    if len(body) < 2 or not all(map(_COMMENTED.match, body)):
        return lines
    return [_COMMENTED.sub("", ln, count=1) if _COMMENTED.match(ln) else ln for ln in lines]


def _dedent(lines: list[str]) -> list[str]:
    body = [ln for ln in lines if ln.strip()]
    if not body:
        return lines
    common = body[0][: len(body[0]) - len(body[0].lstrip(" \t"))]
    for ln in body[1:]:
        n = 0
        while n < len(common) and n < len(ln) and ln[n] == common[n]:
            n += 1
        common = common[:n]
        if not common:
            return lines
    return [ln[len(common):] if ln.startswith(common) else ln.lstrip(" \t") for ln in lines]


#: KINDs whose parser reads an elision line itself (an ``nvidia-smi -q`` excerpt, ``....`` between nvlink
#: GPUs, a cut ``--query-gpu`` table, sdiag, scontrol, ibstat values, mlnx_qos); for every other KIND a
#: line that is only an elision (``...``, ``[...]``, ``…``) is removed before the parser and recorded
#: (:attr:`Cleaned.elided`; the registry adds it to the parse's ``cut``): what is left is judged
ELISION_KINDS = frozenset({"nvidia-smi-q", "nvidia-smi-query", "nvidia-smi-nvlink", "sdiag", "scontrol-node",
                           "ibstat", "mlnx_qos"})
#: ``...``, ``[...]``, ``…``, and a paster's note between two ellipses (``...(cutting a lot of mpt3sas messages)...``,
#: ``[... snip ...]``)
_ELISION = re.compile(r"^[ \t]{0,40}(?:[\[(] ?)?(?:\.{3,16}|…)(?:[^.…\n][^\n]{0,160}?(?:\.{3,16}|…))?"
                      r"(?: ?[\])])?[ \t]{0,40}$")
_ELISION_ANY = re.compile(_ELISION.pattern, re.MULTILINE)


#: a mail's or forum post's cut mark: ``[snip]``, ``<snip>``, ``-- snip --``, ``8<--- snip ---``, ``(snipped)``
_SNIP = re.compile(r"^[ \t]{0,40}(?:8<)?[\[<(-]{0,12} ?(?i:snip(?:ped)?)(?: [^\n]{0,60}?)? ?[\]>)-]{0,12}[ \t]{0,40}$")
_SNIP_ANY = re.compile(_SNIP.pattern, re.MULTILINE)


def _snipped(text: str) -> bool:
    """Whether ``text`` holds a cut mark line (:data:`_SNIP`), which the reading layer reads as a ``...`` line."""
    # one scan of the text: 'nip' is in 'snip' and 'Snip' (a scan costs about as much as the rest of a 55 kB -q
    # report's clean-up; an upper-case 'SNIP' mark is not read)
    return any(_SNIP_ANY.match(text, start, end) for start, end in _spans_holding(text, ("nip",)))


def is_elision(line: str) -> bool:
    """``line`` is an elision line (``...``, ``[...]``, ``…``, a note between ellipses, a cut mark ``[snip]``): for
    the parsers of :data:`ELISION_KINDS`, which read it themselves."""
    return _ELISION.match(line) is not None or _SNIP.match(line) is not None


#: KINDs whose parser reads every elision line itself (:func:`is_elision`, cut marks too): the reading layer does not
#: scan their text for a cut mark (a scan of a 55 kB nvidia-smi -q report costs 40 us, a twentieth of its parse)
SELF_ELIDING_KINDS = frozenset({"nvidia-smi-q"})


def _elided(text: str, kind: str) -> bool:
    """Whether ``text`` holds an elision line the reading layer removes for ``kind``: the line of each
    ``...``/``…`` is matched (``str.find``; a regex search of the whole text costs 3 ms on a 250 kB log)."""
    if kind in ELISION_KINDS:
        return False
    match = _ELISION_ANY.match
    return any(match(text, start, end) for start, end in _spans_holding(text, ("...", "…")))


#: a markdown autolink an issue editor made of a file:line or an address: ``[net_ib.cc:101](http://net_ib.cc:101/)``
_AUTOLINK = re.compile(r"\[(?P<t>[^\]\s]{1,200})\]\(https?://(?P=t)/?\)")


def unlinked(text: str) -> str:
    """``text`` without the markdown autolinks an issue editor made (what :func:`clean_capture` removes),
    for a parser that reads a line behind another tool's prefix on its own."""
    return _AUTOLINK.sub(r"\g<t>", text) if "](http" in text else text


def _inline_tick(text: str) -> str:
    """``text`` without the single markdown backtick a paste opens with (a backtick before the
    first line, and one after the last if present); a fence of three is :data:`_FENCE`'s."""
    head, sep, body = "", "", text
    if text.startswith(("# source:", "#source:")):
        head, sep, body = text.partition("\n")
    if not body.startswith("`") or body.startswith("``"):
        return text
    body = body[1:]
    end = body.rstrip()
    if end.endswith("`") and not end.endswith("``"):
        body = body[:len(end) - 1] + body[len(end):]
    return head + sep + body


def _tick_opened(numbered: Sequence[tuple[int, str]]) -> bool:
    """The first non-blank line opens a markdown inline code span (a single backtick after its indentation)."""
    first = next((ln.lstrip(" \t") for _n, ln in numbered if ln.strip()), "")
    return first.startswith("`") and not first.startswith("``")


def _ticked_line(line: str) -> bool:
    """A line that is one markdown inline code span: a single backtick at each end (a reporter who wraps every
    line of a paste in its own, ```NodeName=n1 Arch=x86_64```)."""
    s = line.strip(" \t")
    return len(s) > 2 and s[0] == s[-1] == "`" and s[1] != "`" and s[-2] != "`"


def _unticked_line(line: str) -> str:
    """A :func:`_ticked_line` without its backticks (indentation kept), and without markdown's bold (``**``)
    around all of what is left."""
    lead = line[:len(line) - len(line.lstrip(" \t"))]
    s = line.strip(" \t")[1:-1]
    if len(s) > 4 and s.startswith("**") and s.endswith("**"):
        s = s[2:-2]
    return lead + s


def _each_line_unticked(text: str) -> str:
    """``text`` whose every non-blank line (two or more; a ``# source:`` line aside) is a :func:`_ticked_line`,
    without those backticks; else ``text``."""
    lines = text.split("\n")
    start = 1 if lines[0].startswith(("# source:", "#source:")) else 0
    body = [ln for ln in lines[start:] if ln.strip()]
    if len(body) < 2 or not all(_ticked_line(ln) for ln in body):
        return text
    return "\n".join(lines[:start] + [_unticked_line(ln) if ln.strip() else ln for ln in lines[start:]])


def _inline_ticks_of_lines(lines: list[str]) -> list[str]:
    """``lines`` without the markdown inline code span's single backticks: one opening the first non-blank line
    and one closing the last (after a launcher prefix, indentation or a fence has come off), as
    :func:`_inline_tick` does for a text that starts with one."""
    out = list(lines)
    body = [i for i, ln in enumerate(out) if ln.strip()]
    if not body:
        return out
    first, last = body[0], body[-1]
    head = out[first].lstrip(" \t")
    tail = out[last].rstrip(" \t")
    if not (head.startswith("`") and not head.startswith("``") and tail.endswith("`") and not tail.endswith("``")):
        return out
    if first == last and len(head.strip()) < 3:
        return out
    lead = out[first][:len(out[first]) - len(head)]
    out[first] = lead + head[1:]
    tail = out[last].rstrip(" \t")
    out[last] = tail[:-1] + out[last][len(tail):]
    return out


#: U+00A0 and U+202F (no-break spaces a forum or wiki page renders a paste's runs of blanks with) to a space
_NO_BREAK_SPACES = str.maketrans({"\xa0": " ", "\u202f": " "})


def _unescaped(text: str) -> str:
    """Terminal escapes, NULs and carriage returns out first, then Markdown's inline ticks and
    autolinks: in that order a second call changes nothing (a tick behind an escape is seen)."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.isascii():
        if "\xa0" in text or "\u202f" in text:  # a web page's no-break spaces, copied with its text
            text = text.translate(_NO_BREAK_SPACES)
        if any(ch in text for ch in _SMART):
            text = _untypeset(text)
    if "&" in text and "<" not in text and ("&gt;" in text or "&lt;" in text or "&amp;" in text):
        # a copy of a page's HTML source: its markup escaped ('&lt;BROADCAST,UP&gt;', '&lt;nvidia_smi_log&gt;');
        # only where no '<' is left (a tool's text holds no such entity, an escaped page holds no bare '<')
        text = _html_unescaped(text)
    if "`" in text[:300]:
        text = _inline_tick(_each_line_unticked(text))
    if _has_autolink_end(text):
        text = _AUTOLINK.sub(r"\g<t>", text)
    if "_at_" in text:
        text = _ARCHIVE_AT.sub(r"\g<u>@\g<h>", text)
    if "\u23bf" in text:
        text = _agent_unframed(text)
    return text


#: a coding agent's transcript of a shell tool call (Claude Code): '● Bash(sinfo -s | head -20)', its output behind
#: '  ⎿  ' on the first line and indented under it, the display's '… +18 lines (ctrl+o to expand)' for a collapsed rest
_AGENT_CALL = re.compile(r"^[ \t]{0,4}[\u25cf\u23fa] ?Bash\((?P<cmd>.{1,1000})\)[ \t]*$")
_AGENT_RESULT = re.compile(r"^([ \t]{0,8})\u23bf  ?")
_AGENT_COLLAPSED = re.compile(r"^[ \t]*(?:\u2026|\.\.\.) ?\+\d{1,7} lines?(?: \(ctrl\+\w to expand\))?[ \t]*$")


def _agent_unframed(text: str) -> str:
    """An agent transcript's tool call as a shell session: the call as a '$ ' command line, the result marker as
    blanks (the output keeps its columns), the collapsed rest as the paster's '...'."""
    out = []
    for ln in text.split("\n"):
        if (call := _AGENT_CALL.match(ln)) is not None:
            ln = f"$ {call.group('cmd')}"
        elif (res := _AGENT_RESULT.match(ln)) is not None:
            ln = res.group(1) + " " * (res.end() - res.start(1) - len(res.group(1))) + ln[res.end():]
        elif _AGENT_COLLAPSED.match(ln):
            ln = "..."
        out.append(ln)
    return "\n".join(out)


#: a mail archive's spelling of a prompt's '@' (MHonArc, the Open MPI list archive: 'asnrcw_at_dmc129:~> ulimit -l',
#: '[root_at_node01 ~]# ibstat'): a user and host followed by a prompt's directory and mark (also behind a launcher's
#: prefix, as the '@' form is read)
_ARCHIVE_AT = re.compile(r"(?<![\w.@-])(?P<u>[a-z_][\w.-]{0,31})_at_(?P<h>[A-Za-z0-9][\w.-]{0,63})"
                         r"(?=(?::\S{0,80}?|[ \t]+\S{1,80}?\])[$#>%](?:\s|$))")


#: the entities a page's source escapes a paste's text with ('&amp;' last: '&amp;lt;' is a literal '&lt;')
_ENTITIES = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&#39;", "'"), ("&#x27;", "'"), ("&amp;", "&"))


#: a blog's typesetting of a paste's text (WordPress' wptexturize, an editor's smart quotes): curly quotes,
#: dashes for '--' / '---' (a table's rule of dashes), an ellipsis for '...', a multiplication sign between digits
_SMART = "\u2018\u2019\u201c\u201d\u2013\u2014\u00d7\u2026"
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2014": "---", "\u2026": "..."})
_EN_DASH = re.compile("( ?)\u2013( ?)")
_TIMES = re.compile(r"(?<=\d)\u00d7(?=\d)")


def typeset(text: str) -> bool:
    """Whether a blog's typesetting (:data:`_SMART`) is in ``text``."""
    return not text.isascii() and any(ch in text for ch in _SMART)


def _untypeset(text: str) -> str:
    """The paste's ASCII back: curly quotes to straight ones, an em dash to ``---``, an ellipsis to ``...``, an
    en dash to ``--`` (between blanks to ``-``: wptexturize's ``' - '``), a multiplication sign between digits to
    ``x`` (:data:`_SMART`)."""
    text = text.translate(_QUOTES)
    if "\u2013" in text:
        text = _EN_DASH.sub(lambda m: " - " if m.group(1) and m.group(2) else m.group(1) + "--" + m.group(2), text)
    if "\u00d7" in text:
        text = _TIMES.sub("x", text)
    return text


def _html_unescaped(text: str) -> str:
    for entity, char in _ENTITIES:
        if entity in text:
            text = text.replace(entity, char)
    return text


def _has_autolink_end(text: str) -> bool:
    """``"](http" in text``, asked of each ``]`` (``str.find`` of one character is a ``memchr``; of
    six, a scan about 50 times slower over a 56 kB ``nvidia-smi -q`` report); a text with many ``]``
    (a kernel log's timestamps) is searched for the six from the 32nd on."""
    pos = text.find("]")
    for _step in range(32):
        if pos < 0:
            return False
        if text.startswith("(http", pos + 1):
            return True
        pos = text.find("]", pos + 1)
    return pos >= 0 and "](http" in text[pos:]


def _lines_of(text: str) -> tuple[list[str], bool]:
    raw = text.split("\n")
    trailing_newline = text.endswith("\n")
    return (raw[:-1] if trailing_newline else raw), trailing_newline


def _fenced(text: str) -> bool:
    """``"```" in text or "~~~" in text`` or a collapsed section's tag (:data:`_DETAILS`), asked first of one
    character (``str.find`` of one character is a ``memchr``; of three, a much slower scan of the whole text)."""
    return ("`" in text and "```" in text) or ("~" in text and "~~~" in text) or (
        "<" in text and ("details>" in text or "</summary>" in text))


#: the head of a task's result in Ansible's output: ``ok: [gpu-node07] => {`` (a ``debug`` task, the JSON below it),
#: ``changed: [gpu-node07] => {"changed": true, "cmd": ...}`` (``-v``: the whole result on the line),
#: ``fatal: [gpu-node07]: FAILED! => {...}``, a loop's ``ok: [gpu-node07] => (item=mlx5_0) => {...}``; with the YAML
#: result format (``callback_result_format = yaml``, community.general's ``yaml`` callback) nothing or
#: ``changed=true`` follows the arrow and the result is the indented YAML below it
_ANSIBLE_RESULT = re.compile(r"^(?P<indent>[ \t]{0,8})(?:ok|changed|failed|fatal|skipping): "
                             r"\[(?P<host>[^\]\s]{1,200})\](?::? FAILED!)?(?: => \(item=.{0,400}?\))?"
                             r" =>(?: ?(?P<obj>\{.*)| ?(?:changed=(?:true|false))?[ \t]*)$")
#: the head every ad-hoc ``ansible`` result line shares after its host: ``node07 | CHANGED`` (then ``=> {...}``,
#: ``-o``'s ``| rc=0 | (stdout) ...`` or a command module's ``| rc=0 >>``: :data:`_ANSIBLE_ADHOC`,
#: :data:`_ANSIBLE_ONE_LINE`, :data:`_BANNER`)
_ADHOC_STATUS = r" \| (?:CHANGED|SUCCESS|FAILED!?)"
#: an ad-hoc module's result (``ansible all -m command -a ...`` of a module without ``>>`` output, or ``-B``):
#: ``node07 | CHANGED => {"changed": true, "stdout": ...}``, the JSON on the line or below it
_ANSIBLE_ADHOC = re.compile(r"^(?P<indent>[ \t]{0,8})(?P<host>[^\s|\[\]]{1,200})" + _ADHOC_STATUS + r" =>"
                            r" ?(?P<obj>\{.*)$")
#: ``ansible -o`` (one line a host): ``node07 | CHANGED | rc=0 | (stdout) line 1\nline 2``, newlines written ``\n``
_ANSIBLE_ONE_LINE = re.compile(r"^[ \t]{0,8}(?P<host>[^\s|]{1,200})" + _ADHOC_STATUS + r" \| rc=-?\d{1,5} \| "
                               r"\(stdout\) ?(?P<out>.*?)(?: \| \(stderr\) ?(?P<err>.*))?$")
#: Ansible's framing around the results: the play's and task's titles and the recap of each host
_ANSIBLE_FRAME = re.compile(r"^[ \t]{0,8}(?:(?:PLAY|TASK|RUNNING HANDLER|PLAY RECAP)(?: \[.{0,400}\])? \*{3,}.*"
                            r"|[\w.-]{1,200}[ \t]+: ok=\d+ .*changed=\d+ .*)$")
#: the keys of a task's result that hold what the command printed, in the order they are taken
_OUTPUT_KEYS = ("stdout_lines", "stdout", "stderr_lines", "stderr")


def _strings(value: object) -> list[str] | None:
    """A list of strings (a result's ``*_lines``, a ``debug`` message's list) as it is, a string as its lines."""
    if isinstance(value, str):
        return value.splitlines()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _result_output(obj: object, depth: int = 0) -> list[str] | None:
    """What the command of one Ansible result printed: its ``stdout_lines`` (else ``stdout``) then its
    ``stderr_lines`` (else ``stderr``), also of a registered result shown by ``debug: var=``
    (``{"out": {...}}``, ``{"out.stdout_lines": [...]}``); else a ``debug`` message (``msg``, a string of several
    lines or a list of strings); None when the result holds neither. (The YAML format's ``stdout_lines: <omitted>``
    is no list: ``stdout`` is taken.)"""
    if not isinstance(obj, dict) or depth > 3:
        return None
    found: dict[str, list[str]] = {}
    for key, value in obj.items():
        name = next((k for k in _OUTPUT_KEYS if key == k or key.endswith("." + k)), None)
        stream = (name or "").replace("_lines", "")
        if name is None or stream in found or (name.endswith("_lines") and not isinstance(value, list)):
            continue
        lines = _strings(value)
        if lines is not None:
            found[stream] = lines
    if found:
        return found.get("stdout", []) + found.get("stderr", [])
    for value in obj.values():
        inner = _result_output(value, depth + 1)
        if inner is not None:
            return inner
    msg = obj.get("msg")
    return _strings(msg) if isinstance(msg, list) or (isinstance(msg, str) and "\n" in msg) else None


def _json_result(lines: list[str], i: int, first: str, indent: str) -> tuple[object, int]:
    """The JSON result that starts with ``first`` on line ``i`` (the rest of the head's line) and its last line: on
    the head's line (``-v``), else ending on a ``}`` line at the head's indentation; ``(None, i)`` if none parses."""
    block = [first]
    for j in range(i, min(len(lines), i + 200_000)):
        if j > i:
            block.append(lines[j])
        if j == i or lines[j].rstrip() == indent + "}":
            try:
                return json.loads("\n".join(block)), j
            except ValueError:
                continue
    return None, i


def _yaml_result(lines: list[str], i: int, indent: str) -> tuple[object, int]:
    """The YAML result below the head on line ``i`` (its lines indented deeper than the head) and its last line;
    ``(None, i)`` where none parses (or PyYAML, which ansible-core brings, is not there)."""
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or
                              (lines[j].startswith(indent) and lines[j][len(indent):len(indent) + 1] in (" ", "\t"))):
        j += 1
    while j > i + 1 and not lines[j - 1].strip():
        j -= 1
    if j == i + 1:
        return None, i
    # imported here: only a paste in Ansible's YAML format needs it; any YAML error (or no PyYAML on a managed node)
    # leaves the lines as they are
    try:
        import yaml

        return yaml.safe_load("\n".join(lines[i + 1:j])), j - 1
    except Exception:
        return None, i


def _one_line_output(text: str) -> list[str]:
    """The lines of ``ansible -o``'s stdout or stderr, whose newlines it writes as ``\\n`` (and returns as ``\\r``)."""
    return text.replace("\\r", "").split("\\n") if text else []


def _unansibled(text: str) -> tuple[str, list[str]]:
    """A paste of Ansible's output with the command's own output in place of each task result that holds it
    (:data:`_ANSIBLE_RESULT`, :func:`_result_output`; the play's and task's titles and the recap dropped), and
    the hosts the results name; ``(text, [])`` when no result holds output. Line numbers after this are the
    unwrapped text's (a ``-v`` result is one line of the paste)."""
    lines = text.split("\n")
    out: list[str] = []
    hosts: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _ANSIBLE_RESULT.match(line) if "] " in line else _ANSIBLE_ADHOC.match(line) if " => " in line else None
        if m is None and " | (stdout)" in line and (one := _ANSIBLE_ONE_LINE.match(line)):
            hosts.append(one.group("host"))
            out.extend(_one_line_output(one.group("out")) + _one_line_output(one.group("err") or ""))
            i += 1
            continue
        if m is None:
            out.append(line)
            i += 1
            continue
        if m.group("obj") is not None:
            obj, end = _json_result(lines, i, m.group("obj"), m.group("indent"))
        else:
            obj, end = _yaml_result(lines, i, m.group("indent"))
        output = _result_output(obj)
        if output is None:
            out.append(lines[i])
            i += 1
            continue
        hosts.append(m.group("host"))
        out.extend(output)
        i = end + 1
    if not hosts:
        return text, []
    kept = [ln for ln in out if not _ANSIBLE_FRAME.match(ln)]
    return "\n".join(kept), list(dict.fromkeys(hosts))


def clean_capture(text: str, kind: str, fast: bool = True) -> Cleaned:
    """The tool's output inside a pasted capture; see the module docstring.

    A tool's own output (what the collectors write: no fence, no launcher or quoting prefix,
    nothing to dedent, no prompt or command line) is returned as it is, without cutting it into segments:
    the answer :func:`_general` gives for such a text (``fast=False`` asks :func:`_general` always;
    tests/unit/test_capture_fast.py holds the two equal on every capture of the repository)."""
    text = _unescaped(text)
    hosts: list[str] = []
    if ("=>" in text and ("] => " in text or "| CHANGED => " in text or "| SUCCESS => " in text
                          or "| FAILED! => " in text)) or ("(stdout)" in text and " | rc=" in text):
        text, hosts = _unansibled(text)
        if hosts:
            text = _unescaped(text)  # the command's own output, decoded from the result's JSON or YAML
    cleaned = _clean(text, kind) if fast else _general(text, kind)
    if hosts:
        cleaned.hosts = hosts + [h for h in cleaned.hosts if h not in hosts]
    return cleaned


def _clean(text: str, kind: str) -> Cleaned:
    """clean_capture() of a text already unescaped."""
    if _fenced(text) or _elided(text, kind) or (kind not in SELF_ELIDING_KINDS and _snipped(text)) or \
            _has_banner(text) or _terminal_last(text) or (
            "`" in text[:400] and _tick_opened([(0, ln) for ln in text[:400].split("\n")])):
        return _general(text, kind)
    if kind not in DEDENT_KINDS:
        # without cutting the whole text into lines: its first lines tell whether a launcher or
        # quoting prefix is there (then the listed path below decides)
        first = text.split("\n", 42)
        head = 1 if first[0].startswith(("# source:", "#source:")) else 0
        lead = first[head:42]
        if kind not in NO_LAUNCHER_KINDS and _any_launcher(lead[:40], kind):
            return _general(text, kind)
        nonblank = next((ln for ln in lead if ln.strip()), None)
        if nonblank is not None and _terminal_first(nonblank):
            return _general(text, kind)
        if nonblank is not None and nonblank[:1].isdigit() and strip_grep_numbers(lead) is not lead:
            return _general(text, kind)  # grep -n / -b numbers before every line
        if nonblank is not None and kind in REPORT_KINDS and nonblank[:1] in (" ", "\t") and \
                _REPORT_TOP.search(text):
            return _general(text, kind)
        if _may_unwrap(lead, kind):
            return _general(text, kind)  # a paste commented out line by line (_uncommented), or JSON strings
        # (a quote under an indentation every line shares is a quote too: _strip_prefix)
        if nonblank is not None and not any(nonblank.lstrip(" \t").startswith(pre)
                                            or nonblank.rstrip() == pre.rstrip() for pre in _PREFIXES):
            if _plain(text[len(first[0]) + 1:] if head else text, kind):
                return Cleaned(text, _SameLines(text), [])
            return _general(text, kind)
    raw, _trailing = _lines_of(text)
    if raw:
        head = 1 if raw[0].startswith(("# source:", "#source:")) else 0
        body = raw[head:]
        if (kind not in NO_LAUNCHER_KINDS and _any_launcher(body[:40], kind)) or \
                _terminal_first(next((ln for ln in body if ln.strip()), "")):
            return _general(text, kind)
        if body and body[0][:1].isdigit() and strip_grep_numbers(body[:40]) is not body[:40]:
            return _general(text, kind)
        stripped = _strip_prefix(body)
        if kind in DEDENT_KINDS:
            stripped = _dedent(stripped)
        if stripped is body and not _may_unwrap(body[:42], kind) and \
                _plain(text[len(raw[0]) + 1:] if head else text, kind):
            return Cleaned(text, range(1, len(raw) + 1), [])
    return _general(text, kind)


#: lines a terminal shows before or after a tool's output that no KIND's tool prints: ssh's known-hosts note and
#: its closing one, sudo's password prompt, kubectl's choice of container and its deleted pod, srun's / salloc's
#: allocation notes, pyxis' and apptainer's progress notes, a shell's locale warning, watch's header
#: ('Every 2.0s: nvidia-smi   node07: Thu Mar  5 10:21:33 2024'), script(1)'s first and last line, docker's
#: 'Unable to find image' (:data:`_PULL_TEXT` the pull's progress lines after it)
_NOISE = re.compile(
    r"^[ \t]{0,8}(?:Warning: Permanently added .{1,300} to the list of known hosts\.?"
    r"|(?:Shared c|C)onnection to \S{1,253} closed\.?"
    r"|\[sudo\] password for [^:\n]{1,64}:.{0,200}"
    r"|Defaulted container \"[^\"]{1,253}\" out of: .{0,500}"
    r"|pod \"[^\"]{1,253}\" deleted(?: from \S{1,253} namespace)?"
    r"|s(?:run|alloc): (?:job \d{1,12} (?:queued and waiting for resources|has been allocated resources)"
    r"|Granted job allocation \d{1,12}|Pending job allocation \d{1,12}|Waiting for resource configuration"
    r"|Nodes \S{1,200} are ready for job|Relinquishing job allocation \d{1,12})"
    r"|pyxis: (?:importing|imported|creating|created|reusing|starting|mounting) .{0,300}"
    r"|INFO: {4}.{1,300}"
    r"|-?(?:ba)?sh(?:: line \d{1,6})?: warning: setlocale: .{0,200}"
    r"|Every \d{1,4}(?:\.\d{1,3})?s: .{1,400}"
    r"|Script (?:started|done) on .{1,300}"
    r"|Unable to find image '[^'\n]{1,300}' locally"
    r")[ \t]*$")
#: the first character of a :data:`_NOISE` line (after its indentation)
_NOISE_FIRST = frozenset("W[Ds-bESIpUC")
#: docker's pull progress after 'Unable to find image ... locally'
_PULL_TEXT = re.compile(
    r"^(?:\S{1,200}: Pulling from \S{1,200}|[0-9a-f]{12}: (?:Pulling fs layer|Waiting|Verifying Checksum|"
    r"Download complete|Pull complete|Already exists|Extracting.{0,100}|Downloading.{0,100})"
    r"|Digest: sha256:[0-9a-f]{64}|Status: (?:Downloaded newer image|Image is up to date) for \S{1,300})[ \t]*$")
#: an NGC container's banner: '==========' / '== CUDA ==' / '==========', then its version, copyright and
#: licence lines (and notes, each continued by indented lines) before the tool's own output
_CONTAINER_TITLE = re.compile(r"^== [\w .+/-]{1,40} ==$")
_CONTAINER_TEXT = re.compile(
    r"^(?:={4,80}|[\w .+-]{1,40} Version \S{1,80}|NVIDIA Release .{1,120}|(?:Container image )?Copyright \(c\).{0,200}"
    r"|This container image and its contents are governed by .{0,200}|By pulling and using the container.{0,200}"
    r"|https?://\S{0,200}(?:ngc|license)\S{0,200}|A copy of this license is made available.{0,200}"
    r"|Various files include modifications .{0,200}|All rights reserved\.?|(?P<note>(?:NOTE|WARNING): .{0,300})"
    r")[ \t]*$")
#: a line that continues a banner's note (indented)
_CONTAINER_MORE = re.compile(r"^[ \t]{2,8}\S")


def _terminal_first(line: str) -> bool:
    """Whether a paste's first line of text is a terminal's line before the output (:data:`_NOISE`, a container's
    banner): the paste goes the line-by-line way (:func:`_without_terminal_lines`)."""
    return _noise(line) or _rule_of_equals(line)


def _rule_of_equals(line: str) -> bool:
    """A line of ``=`` only (four at least): a container banner's frame (not ``====NVSMI LOG====``)."""
    bare = line.strip()
    return bare[:4] == "====" and not bare.strip("=")


def _terminal_last(text: str) -> bool:
    """Whether the paste's last line of text is a terminal's line after the output (:data:`_NOISE`)."""
    tail = text[-400:].rstrip()
    return _noise(tail[tail.rfind("\n") + 1:])


def _without_terminal_lines(numbered: list[tuple[int, str]], kind: str) -> list[tuple[int, str]]:
    """``numbered`` without the terminal's lines before the tool's output (from the top, among blank and prompt
    lines: :data:`_NOISE`, docker's pull progress :data:`_PULL_TEXT`, a container's banner) and after it (from
    the bottom, among blank and prompt lines: :data:`_NOISE`)."""
    out = list(numbered)
    i = 0
    while i < len(out):
        ln = out[i][1]
        if not ln.strip() or _command(ln, kind)[0]:
            i += 1
        elif _noise(ln) or _PULL_TEXT.match(ln.strip()):
            del out[i]
        elif _rule_of_equals(ln) and i + 1 < len(out) and _CONTAINER_TITLE.match(out[i + 1][1].strip()):
            out = out[:i] + _without_container_banner(out[i:])
        else:
            break
    i = len(out) - 1
    while i >= 0:
        ln = out[i][1]
        if not ln.strip() or _command(ln, kind)[0]:
            i -= 1
        elif _noise(ln):
            del out[i]
            i -= 1
        else:
            break
    return out


def _without_pull(numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``numbered`` without docker's pull progress (:data:`_PULL_TEXT`), behind a launcher's prefix."""
    return [(n, ln) for n, ln in numbered if not (": " in ln and _PULL_TEXT.match(ln.strip()))]


def _noise(ln: str) -> bool:
    first = ln[:1]
    if first == " " or first == "\t":
        first = ln.lstrip(" \t")[:1]
    return first in _NOISE_FIRST and bool(_NOISE.match(ln))


def _without_container_banner(numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``numbered`` without an NGC container's banner (:data:`_CONTAINER_TITLE` between two lines of
    ``=`` only (:func:`_rule_of_equals`), then the lines of :data:`_CONTAINER_TEXT` and blank ones up to the first
    other line)."""
    for i in range(1, len(numbered) - 1):
        if _CONTAINER_TITLE.match(numbered[i][1].strip()) and _rule_of_equals(numbered[i - 1][1]) \
                and _rule_of_equals(numbered[i + 1][1]):
            end, note = i + 2, False
            while end < len(numbered):
                ln = numbered[end][1]
                if ln.strip():
                    m = _CONTAINER_TEXT.match(ln)
                    if m:
                        note = bool(m.group("note"))
                    elif not (note and _CONTAINER_MORE.match(ln)):
                        break
                else:
                    note = False  # a note's indented lines follow it directly
                end += 1
            return numbered[:i - 1] + numbered[end:]
    return numbered


#: the one-line header of a host's output: ``ansible`` ad-hoc (``node07 | CHANGED | rc=0 >>``) and ``pssh -i``
#: (``[1] 10:21:33 [SUCCESS] node07``, ``[2] 10:21:34 [FAILURE] node08 Exited with error code 1``)
_BANNER = re.compile(r"^[ \t]{0,8}(?:(?P<ansible>[\w.\[\],:-]{1,200})" + _ADHOC_STATUS + r"(?: \| rc=-?\d{1,5})? >>"
                     r"|\[\d{1,6}\] \d\d:\d\d:\d\d \[(?:SUCCESS|FAILURE)\] (?P<pssh>[\w.\[\],:-]{1,200})(?: .{0,200})?)"
                     r"[ \t]*$")
#: dshbak's / ``clush -b``'s header: a line of dashes, the host (a folded list: ``node[1-4] (4)``), dashes
_DASHES = re.compile(r"^[ \t]{0,8}-{8,200}[ \t]*$")
_DASHED_HOST = re.compile(r"^[ \t]{0,8}(?P<h>(?=[\w.\[\],:-]{0,200}[A-Za-z])[\w.\[\],:-]{1,200})"
                          r"(?: \(\d{1,6}\))?[ \t]*$")
_DASHED_BANNER = re.compile(_DASHES.pattern[:-1] + r"\n" + _DASHED_HOST.pattern[1:-1] + r"\n" + _DASHES.pattern[1:],
                            re.MULTILINE)


def _has_banner(text: str) -> bool:
    """Whether a line of ``text`` may be a header :func:`_without_banners` removes (asked of the text's
    needles first: most captures have none)."""
    # each needle asked of one character first (a memchr; a longer needle costs 20-60 us on an 8-GPU -q report)
    if ">" in text and "|" in text and ">>" in text and "| " in text:
        return True
    if "[" in text and ("[SUCCESS]" in text or "[FAILURE]" in text):
        return True
    # dshbak / clush -b: the host's header opens the paste (after a prompt or a title): asked of its head only
    head = text[:800]
    return "--------\n" in head and _DASHED_BANNER.search(head) is not None


def _without_banners(numbered: list[tuple[int, str]]) -> tuple[list[tuple[int, str]], list[str]]:
    """``numbered`` without the header lines of a parallel shell or Ansible (:data:`_BANNER`, a host between
    two lines of dashes), and the hosts they name."""
    drop: set[int] = set()
    hosts: list[str] = []
    for i, (_n, ln) in enumerate(numbered):
        m = _BANNER.match(ln)
        if m:
            drop.add(i)
            hosts.append(m.group("ansible") or m.group("pssh"))
        elif 0 < i < len(numbered) - 1 and _DASHES.match(numbered[i - 1][1]) and _DASHES.match(numbered[i + 1][1]):
            m = _DASHED_HOST.match(ln)
            if m:
                drop.update((i - 1, i, i + 1))
                hosts.append(m.group("h"))
    if not drop:
        return numbered, []
    return [x for i, x in enumerate(numbered) if i not in drop], list(dict.fromkeys(hosts))


#: the report of the shell's ``time`` (``real\t0m0,022s`` / ``user ...`` / ``sys ...``) after a timed command
_TIME_REPORT = re.compile(r"^[ \t]{0,16}(real|user|sys)[ \t]+\d{1,6}m\d{1,4}[.,]\d{1,6}s[ \t]*$")


def _without_time_report(numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``numbered`` without the three lines of each ``time`` report (real, user, sys in that order)."""
    drop: set[int] = set()
    for i in range(len(numbered) - 2):
        trio = [_TIME_REPORT.match(numbered[i + j][1]) for j in range(3)]
        if all(trio) and [m.group(1) for m in trio if m] == ["real", "user", "sys"]:
            drop.update((i, i + 1, i + 2))
    return [x for i, x in enumerate(numbered) if i not in drop] if drop else numbered


def _job_output(text: str) -> bool:
    """Text after a prompt that no command starts with (a capital letter, a banner's ``*``/``-``/``=``, a digit):
    a background job's output printed after the shell's next prompt."""
    c = text[:1]
    return c.isupper() or c.isdigit() or c in "*-=[<"


def _general(text: str, kind: str) -> Cleaned:
    """clean_capture() of any text, line by line."""
    text = _unescaped(text)
    raw, trailing_newline = _lines_of(text)
    numbered = list(enumerate(raw, start=1))
    source: list[tuple[int, str]] = []
    if numbered and numbered[0][1].startswith(("# source:", "#source:")):
        source, numbered = numbered[:1], numbered[1:]
    # a quoted paste ('> ' of a reply) is unquoted first: what it quotes may be fenced, elided, a launcher's
    # output ('> 0: ...') or under a parallel shell's header
    quoted = _unjsoned(_uncommented(strip_quoting([ln for _n, ln in numbered]), kind))
    unquoted = any(old is not new for (_n, old), new in zip(numbered, quoted))
    if unquoted:
        numbered = [(n, ln) for (n, _old), ln in zip(numbered, quoted)]
    hosts: list[str] = []
    if _has_banner(text):
        numbered, hosts = _without_banners(numbered)
    if _fenced(text):
        numbered = [(n, ln) for n, ln in numbered
                    if not _FENCE.match(ln) and not (ln[:1] in "< \t" and _DETAILS.match(ln))]
    elided: list[int] = []
    snipped = _snipped(text)
    if snipped:  # a cut mark is an elision: '...' for the parsers that read one themselves, removed for the others
        numbered = [(n, "..." if _SNIP.match(ln) else ln) for n, ln in numbered]
    if _elided(text, kind) or ((unquoted or snipped) and kind not in ELISION_KINDS
                               and any(_ELISION.match(ln) for _n, ln in numbered)):
        elided = [n for n, ln in numbered if _ELISION.match(ln)]
        numbered = [(n, ln) for n, ln in numbered if not _ELISION.match(ln)]
    # before a launcher's prefix is counted on every line
    numbered = _without_terminal_lines(numbered, kind)
    if kind not in NO_LAUNCHER_KINDS and _any_launcher([ln for _n, ln in numbered[:40]], kind):
        prefixed = False
        for _depth in range(3):  # nested: pdsh running srun -l ('node07: 0: ...'), mpirun under a parallel shell
            before = [ln for _n, ln in numbered]
            bare, named = strip_launcher_prefix(before, kind)
            hosts += [h for h in named if h not in hosts]
            if bare is before:
                break
            prefixed = True
            numbered = [(n, ln) for (n, _old), ln in zip(numbered, bare)]
            # what the launcher's host printed around the tool's output: 'node07: Warning: Permanently added ...',
            # a container's banner, each line prefixed
            if any(_noise(ln) for ln in bare):
                numbered = _without_pull([(n, ln) for n, ln in numbered if not _noise(ln)])
            if any(ln[:3] == "== " for ln in bare):
                numbered = _without_container_banner(numbered)
            if not any(_LAUNCHER.match(ln) for _n, ln in numbered[:40]):
                break
        if prefixed and any(_FENCE.match(ln) for _n, ln in numbered[:3] + numbered[-3:]):
            # a fenced paste whose fence lines carry the launcher's prefix too ('node07: ```')
            numbered = [(n, ln) for n, ln in numbered if not _FENCE.match(ln)]
        if prefixed and kind not in ELISION_KINDS and any(_ELISION.match(ln) for _n, ln in numbered):
            # '0: ...', '[10:21:33] [...]': the elision behind a launcher's prefix or a log's time
            elided += [n for n, ln in numbered if _ELISION.match(ln)]
            numbered = [(n, ln) for n, ln in numbered if not _ELISION.match(ln)]
    stripped = [ln for _n, ln in numbered]
    first = next((ln for ln in stripped if ln.strip()), "")
    if first[:1].isdigit():
        stripped = strip_grep_numbers(stripped)  # grep -n / -b, behind a launcher's prefix too
    for _depth in range(4):  # nested quoting: '>> ' of a reply to a reply
        again = _strip_prefix(stripped)
        if again == stripped:
            break
        stripped = again
    if kind in DEDENT_KINDS:
        stripped = _dedent(stripped)
    elif kind in REPORT_KINDS:
        stripped = _dedent_report(stripped)
    numbered = [(n, ln) for (n, _old), ln in zip(numbered, stripped)]

    if any("real" in ln for _n, ln in numbered):
        numbered = _without_time_report(numbered)

    # segments: (command or None, [(lineno, line)]); a segment starts at a prompt/command line
    segments: list[tuple[str | None, bool, list[tuple[int, str]]]] = [(None, False, [])]
    background = False  # the last command ran in the background ('... &'): the shell's next prompt comes before
    for n, ln in numbered:  # its output, which then goes on after that prompt ('[u@h ~]$ Using sampled CPU ...')
        is_cmd, cmd = _command(ln, kind)
        if is_cmd and background and cmd and _job_output(cmd):
            segments[-1][2].append((n, cmd))
        elif is_cmd:
            segments.append((cmd, True, [(n, ln)]))
            ends = (cmd or "").rstrip()
            background = ends.endswith("&") and not ends.endswith("&&")
        else:
            segments[-1][2].append((n, ln))
    own = KIND_COMMANDS.get(kind, frozenset())
    # the KIND's own commands that printed something: a last bare 'sinfo -p PARTITION' of a wrapper's closing note
    # (or a run whose output was not pasted) has no output to keep, and must not drop the output that was
    mine = [s for s in segments[1:] if s[0] and command_word(s[0]) in own and any(ln.strip() for _n, ln in s[2][1:])]
    keep_cmd = kind in KEEP_COMMAND_KINDS
    out: list[tuple[int, str]] = []
    commands: list[str] = []
    if mine:
        for cmd, _is_cmd, body in mine:
            commands.append(cmd or "")
            if keep_cmd:
                out.append((body[0][0], f"$ {cmd}"))
            out.extend(body[1:])
    else:
        out.extend(segments[0][2])
        for cmd, _is_cmd, body in segments[1:]:
            if cmd:
                commands.append(cmd)
            out.extend(body[1:])
    if len(segments) == 1:  # nothing was a command: keep the text as it was (after the clean-up)
        out = segments[0][2]
    if _tick_opened(out):  # a code span behind a prefix, indentation, a fence or a prompt line
        out = [(n, ln) for (n, _old), ln in zip(out, _inline_ticks_of_lines([ln for _n, ln in out]))]
    if kind in DEDENT_KINDS and len(segments) > 1:
        # the common indentation of the output once the prompt lines (at column 0) are gone
        body_at = [i for i, (_n, ln) in enumerate(out) if not (keep_cmd and ln.startswith("$ "))]
        bare = _dedent([out[i][1] for i in body_at])
        for i, ln in zip(body_at, bare):
            out[i] = (out[i][0], ln)
    out = source + out
    if kind not in DEDENT_KINDS and out:
        # the GPU/NCCL/Slurm parsers report line numbers inside their results (a failed
        # nccl-tests line, a DCGM row): a removed line stays as a blank one, so those numbers
        # are the file's own
        kept = dict(out)
        out = [(n, kept.get(n, "")) for n in range(1, out[-1][0] + 1)]
    result = "\n".join(ln for _n, ln in out)
    if out and trailing_newline:
        result += "\n"
    return Cleaned(result, [n for n, _ln in out], commands, hosts, sorted(elided))


# --- line-level helpers of the GPU/NCCL/Slurm parsers -------------------------------------------
# Those parsers run after clean_capture() and still meet prompt/command lines inside a capture
# (several pasted runs, ``adev0: sinfo`` of the Slurm docs, launchers such as srun/mpirun before
# the tool): lines() numbers the lines as in the file, is_command() tells such a line from output.
#: a shell prompt before a command: ``user@host:~$``, ``[root@n1 dir]#``, ``$``, ``#``, ``>``, ``sh-5.1#``,
#: ``(venv) $``, ``PS C:\>``, ``hii$``
_GPU_PROMPT = re.compile(r"^(?:\([^)]{1,40}\)\s*)?(?:\S{0,80}@\S{0,80}?[$#%>]|\[[^\]]{1,80}\][$#%>]|PS [^>]{0,80}>|"
                         r"[\w.~/:-]{0,40}[$#%>])\s+\S")
#: ``host: command`` (the Slurm docs' ``adev0: sinfo``)
_HOST_GPU_PROMPT = re.compile(r"^[\w.-]{1,64}:\s+(\S+)")
_GPU_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_GPU_LAUNCHERS = {"sudo", "srun", "mpirun", "mpiexec", "kubectl", "docker", "podman", "watch", "timeout", "time",
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
        if _GPU_ENV.match(tok):
            continue
        base = tok.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
        if base in _GPU_LAUNCHERS or base.startswith("-"):
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
    if _GPU_PROMPT.match(s):
        return True
    m = _HOST_GPU_PROMPT.match(s)
    if m and any(m.group(1).lower().startswith(w) for w in words):
        return True
    word = _command_word(s.split()[:12])
    return bool(word and any(word.startswith(w) for w in words))
