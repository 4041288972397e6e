"""Recognise a capture's KIND from its content (issue 29): ``analyze`` uses it for a file whose
name is not a KIND (``dmesg.txt``, ``gpu.log``, a support bundle's files).

:func:`detect` looks at the first :data:`SNIFF_CHARS` characters only, in two tiers:

1. **Structure**: a tool's banner, header row or characteristic line shape (``CA 'mlx5_0'``,
   ``NVIDIA-SMI 550.90 ... Driver Version``, a ``size count type`` header, an ``lspci`` device line). The
   signature seen *first in the text* wins (a paste of ``ibstat`` then ``nvidia-smi topo -m`` is an
   ibstat capture); at one position the earlier entry of :data:`_STRUCTURE`.
2. **Lines**: message lines that other text can also quote (kernel log lines, NCCL log lines, the
   one-line errors of ``nvidia-smi``, headerless ``sinfo -h`` rows). A KIND is claimed only where such
   lines are at least a share of the non-blank lines that are no prompt or comment (:data:`_LINES`; the
   KIND with the most such lines): a README or a design note that quotes a ``NVRM: Xid`` line is no
   capture.
3. **Command**: a paste of at most :data:`COMMAND_TIER_LINES` lines whose output shows none of the
   above (``[Not Supported]``, an ``mpirun`` error) is read as the KIND of the command it names
   (``nvidia-smi --query-gpu=...``, ``.../all_reduce_perf``).

A program, template or test (:data:`PROGRAM_SHARE` of its lines are code: source code quotes every
signature) is no capture, nor is an ``nvidia-bug-report.log`` (many tools in one file); :func:`why_unknown`
says which. A text whose lines all carry a quoting prefix (``> ``, `` * ``) or a launcher's (pdsh ``host: ``,
``[rank3]: ``, Open MPI tags), or that sits in Markdown fences, is read without them first, as its
parser will read it. Returns None when nothing matches: the file is then not
judged, and said so. The answer names the signature and the line that showed it, so the report can
say why it chose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .capture import strip_grep_numbers, strip_launcher_prefix, strip_quoting
from .ibdev2netdev import RDMA_LINK_HEAD
from .ip_link import BRIEF_HEAD

#: how much of a file is looked at
SNIFF_CHARS = 65536


@dataclass(frozen=True)
class Detection:
    """A KIND recognised from content: which, by what signature, on which line of the file."""

    kind: str
    why: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.why} on line {self.line}: {self.text[:80]!r}"


#: quoted replies, C comments, indentation before a tool's line
_LEAD = r"^[ \t]*(?:[>*][ \t]*)*"

_STRUCTURE: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (k, why, re.compile(p, re.MULTILINE)) for k, why, p in (
        ("nvidia-smi-q-xml", "the <nvidia_smi_log> XML root", r"<nvidia_smi_log>"),
        ("nvidia-smi-q-xml", "nvidia-smi -q -x's GPU elements (a paste from inside the report)",
         r"^\s*</?(?:fb_memory_usage|pci_bridge_chip|replay_counter|retired_pages|remapped_rows|gpu_temp|"
         r"clocks_(?:throttle|event)_reasons|performance_state|power_readings|gpu_power_readings|ecc_errors|"
         r"product_name|minor_number|pci_gpu_link_info)>"),
        ("gemm", "the clusterctl-gemm header", r"^#\s*clusterctl-gemm \d|^gemm\tindex=\d"),
        ("dcgmi-diag", "dcgmi diag's JSON keys",
         r'"(?:DCGM (?:GPU )?Diagnostic|test_categories)"\s*:|"entity_group"\s*:\s*"GPU"'),
        ("dcgmi-diag", "dcgmi diag's table",
         r"^[ \t]*#[ \t]*\|\s*Diagnostic\s+\|\s*Result|"  # quoted in a script's '# ' comment block
         + _LEAD + r"\|\s*Diagnostic\s+\|\s*Result|" + _LEAD + r"\|\s*DCGM Version\s+\||"
         + _LEAD + r"[+|]-{3,}\s+(?:Metadata|Deployment|Integration|Hardware|Stress)\s+-{3,}[+|]|"
         + _LEAD + r"\|[\w /-]{2,40}\|\s*(?:Pass|Fail|Skip|Warn)\s+-\s+(?:All|GPUs?:)|"
         + _LEAD + r"\|\s*(?:Warning|Info|Error)\s+\|\s*GPU ?\d"),
        ("nvidia-smi-q", "nvidia-smi -q's header or sections",
         r"=+\s*NVSMI LOG\s*=+|^Attached GPUs\s+:|"
         r"^\s*(?:Clocks (?:Throttle|Event) Reasons|GPU Reset Status|ECC Errors|Remapped Rows|"
         r"Retired Pages)\s*$|"
         # the NVSwitch fabric block: 'Fabric' then its 'State : ...' ('CliqueId'/'ClusterUUID' follow)
         r"^\s*Fabric\s*\n\s+State\s+: (?:Completed|In Progress|Not Started|N/A)|^\s*(?:CliqueId|ClusterUUID)\s+: |"
         # a section excerpt: 'Clocks' / 'Max Clocks' then '    Graphics   : 2025 MHz'
         r"^\s*(?:Max |Default Applications |Applications )?Clocks\s*\n\s+Graphics\s+: \d+ MHz|"
         r"^\s*(?:Product Name|GPU UUID|Reset Required)\s+: |"
         r"^\s*(?:Enforced Power Limit|Current Power Limit|Performance State|Persistence Mode|VBIOS Version|"
         r"GPU Current Temp|Minor Number|Power Draw|Bus Id)\s+: "),
        ("nvidia-smi-nvlink", "nvidia-smi nvlink -s link lines",
         r"^\s*Link \d+: (?:\d+(?:\.\d+)? GB/s|<inactive>)|^\s*(?:NVML:\s*)?Unable to retrieve NVLink information|"
         # nvlink -gt d / -gt r: each link's traffic counters
         r"^\s*Link \d+: (?:Data|Raw) (?:Tx|Rx): \d+ KiB|"
         # nvlink -e: each link's error counters
         r"^\s*Link \d+: (?:Replay|Recovery|CRC|Data CRC|Flit CRC) Errors: \d+"),
        ("nvidia-smi", "the nvidia-smi table",
         r"NVIDIA-SMI \d+\.\d+.{0,80}(?:Driver|KMD) Version|"
         r"^\|\s*GPU\s+Name\s+(?:Persistence-M|Driver-Model|TCC/WDDM)|^\|\s*MIG devices:|"
         r"^\|\s*GPU\s+GI\s+CI\s+MIG|"
         r"^\|\s+\d{1,2}\s+\S.{0,40}?\s(?:On|Off|WDDM|TCC)\s+\|\s+[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d|"
         r"^\|\s*(?:N/A|\d{1,3}%)\s+\d{1,3}C\s+P\d{1,2}\s"),
        ("nvidia-smi-topo", "the nvidia-smi topo -m matrix",
         r"^\s*GPU0\s.{0,400}CPU Affinity|^Legend:\s*$|"
         r"^\s*GPU\d+\s+(?:X|NV\d+|SYS|NODE|PHB|PXB|PIX)\s+(?:X|NV\d+|SYS|NODE|PHB|PXB|PIX)\s"),
        ("nccl-tests", "nccl-tests' -J JSON keys", r'"(?:nccl_version|average_bus_bandwid\w*)"\s*:\s*\d'),
        ("nccl-tests", "the nccl-tests banner or header",
         r"^\s*#?\s*size\s+count\s+type|# Avg bus bandwidth|^\s*#?\s*nThread \d+ nGpus \d+|"
         r"nccl-tests version \d|Collective test starting:|^\s*#\s*Using devices\s*$|"
         r"Test (?:CUDA|NCCL) failure \S{0,200}?common\.cu(?:\.cpp)?:\d+|"
         r"^\s*(?:\[\d+\]\s*)?\d+\s+\d+\s+(?:float|double|half|bfloat16|int8|uint8|int32|uint32|int64|uint64)"
         r"\s+(?:sum|prod|max|min|avg|none)\s+-?\d+(?:\[\d+\])?\s+[\d.]+\s"),
        ("ib_write_bw", "perftest's banner or header",
         r"#bytes\s+#iterations\s+BW peak|^\s*#bytes\s+#iterations|"
         + _LEAD + r"(?:RDMA_(?:Write|Read)|Send|Atomic)(?: Bidirectional)? BW Test\s*$|"
         r"^\s*local address: LID|^\s*Couldn't connect to \S+:\d+|"
         # a run that failed: a completion in error, an RDMA CM connection that was never set up
         r"^\s*Completion with error at (?:client|server)|^\s*Failed to complete run_iter_\w+ function|"
         r"^\s*RDMA CM event error|"
         # perftest's own set-up failures: a port down, a QP or its resources it could not create
         + _LEAD + r"Port number \d+ state is \w+|" + _LEAD + r"Couldn't set the link layer|"
         r"^\s*Couldn't create IB resources|"
         r"^\s*\* Waiting for client to connect\.\.\. \*"),
        ("ibv_devinfo", "ibv_devinfo's hca_id/port lines",  # a web page's copy may drop the tab after the colon
         r"^\s*hca_id:[ \t]*\S|^\s*(?:phys_port_cnt|max_mr_size|vendor_part_id|sys_image_guid):[ \t]*\S|"
         # a port block without its device lines above it (a paste cut there): its state as only ibv_devinfo words it
         r"^\s*state:[ \t]+PORT_(?:ACTIVE|DOWN|INIT|ARMED|ACTIVE_DEFER) \(\d\)"),
        ("ibstatus", "ibstatus' device header", r"^\s*Infiniband device '|"
         r"^\s*Fatal error:\s+device '\*': sys files not found"),
        ("ibstat", "ibstat's CA header", r"^\s*CA '[^']+'(?:[ \t]|$)"),  # a note the paster wrote after it too
        ("ibdev2netdev", "ibdev2netdev lines",
         r"^\s*\S+\s+port\s+\d+\s+==>\s+\S+\s+\((?:Up|Down)\)|"
         r"^(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] \S+ \(MT\d+"),
        ("show_gids", "show_gids' header", _LEAD + r"DEV\s+PORT\s+INDEX\s+GID"),
        ("mlnx_qos", "mlnx_qos' sections", _LEAD + r"(?:DCBX mode:|Priority trust state:|PFC configuration:)"),
        ("dcb", "dcb's pfc/ets/app lines", r"\bpfc-cap \d+ prio-pfc |^\s*prio-tc (?:\d:\d ?)+|^\s*dscp-prio "),
        ("lspci", "lspci's capability lines",
         r"^\s*Lnk(?:Cap|Sta):\s|\t(?:Capabilities: \[[0-9a-f]{2,3}(?: v\d)?\]|Kernel driver in use: )"),
        ("sdiag", "sdiag's sections", r"^sdiag output at |^Main schedule statistics \(microseconds\):|"
                                      r"^Remote Procedure Call statistics by message type"),
        ("scontrol-node", "scontrol show node's NodeName=", r"^\s*NodeName=\S+"),
        ("sinfo", "a sinfo header",
         r"^\s*PARTITION\s+AVAIL\s|^(?=[^\n]*\bSTATE\b)(?=[^\n]*\b(?:NODELIST|PARTITION|HOSTNAMES|NODES)\b)"
         r"[ \t]*[A-Z][A-Z_:()|/ \t]+$|"
         r"^\s*REASON\s+(?:USER\s+)?(?:TIMESTAMP\s+)?(?:STATE\s+)?NODELIST\s*$|"
         # a summary's counts (sinfo -s, %F, %C), also behind an agent transcript's result marker
         r"^[^\n]{0,8}?\bPARTITION\b[^\n]*\b(?:NODES|CPUS)\(A/I/O/T\)"),
        ("proc-limits", "/proc/<pid>/limits' rows or a shell's 'ulimit -a'",
         r"^Max locked memory\s|^[ \t>]*max locked memory\s+\(kbytes, -l\)|^\s*-l: locked-in-memory size \(k"),
        ("nvidia-smi-query", "nvidia-smi --query-gpu CSV",
         r"^(?:index|name|pci\.bus_id|uuid|driver_version|timestamp)\s*,\s*[a-z_.]+|"
         r"^\d{1,3},\s*[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7],|"
         # a noheader row: the board's name, then readings with their units ('GeForce GTX 1080 Ti, 53 %, 84, 123.00 W')
         r"^(?:NVIDIA |GeForce |Tesla |Quadro )[\w -]{2,40}(?:, [^,\n]{1,30}){0,8}, "
         r"\d+(?:\.\d+)? (?:W|%|MHz|MiB)(?:,|$)"),
        ("ip-link", "ip link's interface lines", r"^\s*(?:\d+: )?[^\s:]+(?:@\S+)?: <[A-Z_,-]*> mtu \d+"),
        ("ip-link", "ip -j link/addr JSON", r'^\s*\[?\s*\{\s*"ifindex":\s*\d+,\s*"ifname":'),
        ("lspci", "lspci's device lines",
         r"^[ \t]*(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] [A-Za-z][\w /,.-]*?(?: \[[0-9a-f]{4}\])?: \S"),
        ("kernel-log", "a kernel log's raw or decoded form",
         r"^\d+,\d+,\d+,[-c];|^(?:kern|user|daemon|syslog)\s*:\s*(?:emerg|alert|crit|err|warn|notice|info|debug)\s*: |"
         r"^-- (?:Logs begin at|Journal begins at) "),
    ))

#: the one-line errors nvidia-smi prints instead of its output
_SMI_ERROR = (r"Unable to determine the device handle for (?i:gpu)|NVIDIA-SMI has failed because|"
              r"Failed to initialize NVML|NVIDIA-SMI couldn't find libnvidia-ml|"
              r"nvidia-smi: error while loading shared libraries: libnvidia-ml|"
              r"No devices were found\s*$|Unable to (?:determine|detect) the device")
_STATES = (r"(?:idle|mix(?:ed)?|alloc(?:ated)?|drain(?:ed|ing)?|drng|down|fail(?:ing)?|maint|comp(?:leting)?|resv|"
           r"reserved|plnd|planned|unk(?:nown)?|inval|futr|future|pow(?:er)?_?(?:dn|down|up)|npc|boot)[*~#!%$@^+-]?")

#: (KIND, why, line pattern, least share of the non-blank lines): of those that reach their share, the
#: KIND with the most lines wins (a tie: the earlier entry)
_LINES: tuple[tuple[str, str, re.Pattern[str], float], ...] = tuple(
    (k, why, re.compile(p, re.MULTILINE), share) for k, why, p, share in (
        ("nvidia-smi", "an nvidia-smi error line", r"^.*(?:" + _SMI_ERROR + r").*$", 0.2),
        # nvidia-smi -L (nvlink -s prints such a line above each GPU's Link lines: they are most of its lines)
        ("nvidia-smi", "nvidia-smi -L lines", r"^[ \t]*GPU \d{1,3}: [^\n]{1,120}\(UUID: ?GPU-[^\n]*$", 0.6),
        ("nccl-log", "NCCL log lines",
         r"^.*(?:\bNCCL (?:INFO|WARN)\b|ProcessGroupNCCL|\bnccl(?:Remote|System|Internal|UnhandledCuda)Error\b|"
         r"\bNCCL error\b|\bNET/(?:IB|IBP|OFI|Socket)\b|NCCL failure|\bNCCL operation nccl\w{1,40}\(|"
         # NCCL 2.0-2.2: no 'NCCL' word after the host:pid:tid [dev] prefix
         r"^\S+:\d+:\d+ \[\d+\] (?:[\w./-]+:\d+ )?(?:INFO|WARN) ).*$", 0.1),
        ("ib_write_bw", "perftest command lines", r"^.*\bib_(?:write|read|send)_bw\s.*$", 0.2),
        ("kernel-log", "kernel log lines",
         r"^.*(?:NVRM: |\bXid\b|^[\s>*]*\[\s*\d+\.\d+\](?:\[\s*[TC]\d{1,7}\])? |\bkernel: |mlx5_core|pcieport|pciehp |"
         # a NIC's hang, the hung-task watchdog, a decoded machine check: the kernel's own words
         r"Detected (?:Tx|Hardware) Unit Hang|NETDEV WATCHDOG: |blocked for more than \d+ seconds|"
         r"\[Hardware Error\]: |: Adapter removed|"
         # a panic's and a machine check's console lines, EDAC's reports, e1000e's hang dump ('TDH <37>')
         r"Kernel panic - not syncing|CPU \d{1,5}: Machine Check(?: Exception| Event)?: |"
         r"^\s*EDAC (?:\w{1,16} )?MC\d{1,3}: |"
         # a call trace's frames ('__schedule+0x78f/0x7db', ' ? mutex_lock+0x1f/0x2f [nvidia_uvm]'), a local disk's
         # driver ('nvme nvme0: I/O 0 QID 2 timeout', 'ata1.00: failed command'), the block layer's I/O errors
         r"^\s*(?:\? )?[\w.]{2,80}\+0x[0-9a-f]{1,8}/0x[0-9a-f]{1,8}(?: \[\w{1,40}\])?\s*$|"
         r"nvme nvme\d{1,3}: |^[\s>*]*ata\d{1,3}(?:\.\d{1,2})?: |I/O error, dev |"
         r"^\s*(?:TDH|TDT|next_to_use|next_to_clean|next_to_watch(?:\.status)?|time_stamp|jiffies|MAC Status|"
         r"PHY (?:1000BASE-T |Extended )?Status|PCI Status) <[0-9a-f]{1,16}>\s*$|"
         # syslogd's console broadcast of a kernel line ('Message from syslogd@spinoza at May  4 22:28:15 ...',
         # then ' kernel:invalid opcode: ...'); dmesg -H's relative and first times ('[  +0.000009] ', '[Feb 1 21:56] ')
         r"^\s*kernel:\S|^Message from syslogd(?:@|_at_)\S+ at |^\[\s*\+\d+[.,]\d+\] |"
         r"^\[[A-Z][a-z]{2} ?[ \d]\d \d\d:\d\d\] |"
         # dmesg -T in any locale: '[Sun Jan 11 09:52:01 2026] ', '[Ter Set 19 06:01:41 2017] '
         r"^[\s>*]*\[\w{2,4}\.? \w{3,4}\.?\s{1,2}\d{1,2} \d\d:\d\d:\d\d \d{4}\] |"
         r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w.()/-]+(?:\[\d+\])?: |"
         # a syslog time then the kernel's own, no host ('Sep  3 10:05:39  [193378.949952][   C10] ...')
         r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d\s+\[\s*\d+\.\d+\]|"
         r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d\S* \S+ [\w.()/-]+(?:\[\d+\])?: |"
         # dmesg without its times: a driver's line naming its PCI function ('hns3 0000:bd:00.2: ...')
         r"^\s*[a-z][\w-]{1,30} [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7][: ]).*$", 0.2),
        ("ibstat", "ibstat's own failure line", r"^.*\bibpanic: \[\d+\] .*$", 0.2),
        # a GPU's device line alone ('3b:00.0 3D controller: NVIDIA ...': a class the structure tier's letter-first
        # pattern leaves out, so that a table after such a line is read as the table)
        ("lspci", "lspci's 3D controller lines",
         r"^[ \t]*(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] 3D controller(?: \[[0-9a-f]{4}\])?: \S.*$", 0.5),
        # the row heads of the parsers themselves (ibdev2netdev.RDMA_LINK_HEAD, ip_link.BRIEF_HEAD)
        ("ibdev2netdev", "rdma link's port lines",
         r"^[ \t]*" + RDMA_LINK_HEAD + r"(?:subnet_prefix \S+ lid \d+ .*)?state [A-Z_]+ physical_state .*$", 0.5),
        ("ip-link", "ip -br link/addr rows (a netdev and its state)",
         r"^" + BRIEF_HEAD + r"(?:[ \t]+\S.*)?[ \t]*$", 0.6),
        ("sinfo", "sinfo -h rows (a node or count and a Slurm state)",
         r"^[ \t]*[\w.\-\[\],]+(?:[ \t|,]+[^ \t|,\n]+){0,12}?[ \t|,]+" + _STATES + r"(?=[ \t|,]|$).*$", 0.6),
    ))


#: once a signature is found at position p, the others are looked for only up to p + this (a match
#: starting before p is one line, or a few): the common capture shows its KIND in its first lines
_REACH = 4096


def _structure(head: str) -> Detection | None:
    best: tuple[int, int, str, str] | None = None
    end = len(head)
    for order, (kind, why, pattern) in enumerate(_STRUCTURE):
        m = pattern.search(head, 0, end)
        if m and (best is None or (m.start(), order) < best[:2]):
            best = (m.start(), order, kind, why)
            end = min(len(head), m.start() + _REACH)
    if best is None:
        return None
    return _at(head, best[0], best[2], best[3])


def _at(head: str, pos: int, kind: str, why: str) -> Detection:
    while pos < len(head) - 1 and head[pos] in " \t\r\n":  # a match's leading blanks and blank lines
        pos += 1
    start = head.rfind("\n", 0, pos) + 1
    end = head.find("\n", pos)
    return Detection(kind, why, head.count("\n", 0, pos) + 1, head[start:end if end >= 0 else None].strip())


#: lines that are no tool's output: shell prompts and commands, comments, quoted-reply markers alone
_NOISE = re.compile(r"^\s*(?:```|~~~|#|>+\s*$|\(\w+\)\s|\S+@\S+?[:\s]\S*\s*[$#%]|\$\s|\[\S+@[^\]]*\][$#])")


def _lines(head: str) -> Detection | None:
    nonblank = sum(1 for ln in head.splitlines() if ln.strip() and not _NOISE.match(ln))
    if not nonblank:
        return None
    best: tuple[int, str, str, re.Pattern[str]] | None = None
    for kind, why, pattern, share in _LINES:
        hits = len(pattern.findall(head))
        if hits and hits >= share * nonblank and (best is None or hits > best[0]):
            best = (hits, kind, why, pattern)
    if best is None:
        return None
    hits, kind, why, pattern = best
    m = pattern.search(head)
    if m is None:  # the pattern counted hits in head: it matches there
        raise AssertionError(kind)
    return _at(head, m.start(), kind, f"{why} ({hits} of {nonblank} lines)")


#: (KIND, the command that printed it): the third tier, for a short paste whose output shows no signature
#: a command line's start: an optional prompt, variables, wrappers and a path before the command word
_CMD_LEAD = (r"^[ \t>]*(?:\S*[$#%>][ \t]*|\(\w+\)[ \t]+\S*[$#%][ \t]*|\[[^\]\n]{1,160}\][$#%][ \t]*)?"
             r"(?:\w+=\S*[ \t]+)*"
             r"(?:(?:sudo|time|taskset[ \t]+-c[ \t]+\S+|numactl[^\n]*?|mpirun[^\n]*?|mpiexec[^\n]*?|srun[^\n]*?)"
             r"[ \t]+)*(?:[\w./~-]*/)?")
_COMMANDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((k, re.compile(_CMD_LEAD + p, re.MULTILINE)) for k, p in (
    ("nvidia-smi-query", r"nvidia-smi(?:\.exe)?\s[^\n]*--query-gpu"),
    ("nvidia-smi-q-xml", r"\bnvidia-smi\s+(?:-q\s+-x|-x\s+-q|-qx|-xq)\b"),
    ("nvidia-smi-q", r"\bnvidia-smi\s+(?:-q|-a|--query)\b"),
    ("nvidia-smi-topo", r"\bnvidia-smi\s+topo\b"),
    ("nvidia-smi-nvlink", r"\bnvidia-smi\s+nvlink\b"),
    ("nccl-tests", r"\b(?:all_reduce|all_gather|reduce_scatter|alltoall|broadcast|reduce|sendrecv|scatter|gather|"
                   r"hypercube)_perf\b"),
    ("ib_write_bw", r"\bib_(?:write|read|send)_bw\b"),
    ("dcgmi-diag", r"\bdcgmi\s+diag\b"),
    ("ibv_devinfo", r"\bibv_devinfo\b"),
    ("ibstatus", r"\bibstatus\b"),
    ("ibstat", r"\bibstat\b"),
    ("ibdev2netdev", r"\bibdev2netdev\b"),
    ("show_gids", r"\bshow_gids\b"),
    ("mlnx_qos", r"\bmlnx_qos\b"),
    ("sinfo", r"\bsinfo\b"),
    ("scontrol-node", r"\bscontrol\s+show\s+node"),
    ("proc-limits", r"\bulimit(?:\s+-[HS])?\s+-H?[aS]*[al]\b|/proc/(?:\d+|self|\$\w+|\$\(\w+[^\n]*?\))/limits\b"),
    ("sdiag", r"\bsdiag\b"),
    ("lspci", r"\blspci\b"),
    ("kernel-log", r"\b(?:dmesg|journalctl)\b"),
    ("nvidia-smi", r"\bnvidia-smi\b"),
))
#: the command tier reads only pastes this short (a README names every tool and is no capture)
COMMAND_TIER_LINES = 40


def _command(head: str) -> Detection | None:
    lines = [ln for ln in head.splitlines() if ln.strip()]
    if not lines or len(lines) > COMMAND_TIER_LINES:
        return None
    for kind, pattern in _COMMANDS:
        m = pattern.search(head)
        if m:
            return _at(head, m.start(), kind, "the command it names (a short paste with no output signature)")
    return None


#: lines of a program, a template or a test (source code quotes every signature above, and is no capture)
_PROGRAM = re.compile(r"^\s*(?:def |class |import |from [\w.]+ import |return\b|assert |raise |elif |except\b|try:|"
                      r"#include|int main|printf\(|print\(|\{%|@pytest|@dataclass|if .*:\s*$|for .* in .*:\s*$|"
                      r"#!/|fi$|then$|done$|esac$|export \w+=|\S.*\{\{ .* \}\})",
                      re.MULTILINE)
#: the share of such lines that makes a text a program
PROGRAM_SHARE = 0.1


#: a report of many tools in one file (each section its own KIND): not one capture
_MANY_TOOLS = re.compile(r"^Start of NVIDIA bug report log file", re.MULTILINE)


def _program(head: str) -> bool:
    return len(_PROGRAM.findall(head)) >= PROGRAM_SHARE * max(1, sum(1 for ln in head.splitlines() if ln.strip()))


def why_unknown(text: str) -> str:
    """Why :func:`detect` recognised no KIND in ``text``, in words for the report."""
    head = text[:SNIFF_CHARS]
    if _MANY_TOOLS.search(head):
        return ("an nvidia-bug-report log: many tools' output in one file (copy a section, e.g. its "
                "nvidia-smi -q part, into <KIND>.txt)")
    if _program(head):
        return "program text (source code, a template or a test), not a capture"
    return "not recognised from its name or content"


def detect(text: str) -> Detection | None:
    """The KIND ``text`` shows (see the module docstring), or None."""
    head = text[:SNIFF_CHARS]
    if _MANY_TOOLS.search(head) or _program(head):
        return None
    lines = head.splitlines()
    # the reading layer's view first (what the KIND's parser will read): fences blanked, quoting and
    # launcher prefixes (two, as srun's inside pdsh's) off
    bare = [ln if not ln.lstrip().startswith(("```", "~~~")) else "" for ln in lines]
    bare = strip_quoting(bare)
    # each depth is a view, the barest first: a syslog line's head behind pdsh's is the log's own
    # ('node07: Aug 17 06:18:01 vm-0 systemd-networkd[5398]: ib6: lost carrier')
    depths = [bare]
    for _depth in range(2):
        depths.append(strip_launcher_prefix(depths[-1])[0])
    stripped = [strip_grep_numbers(view) for view in reversed(depths)]
    views = [*dict.fromkeys("\n".join(view) for view in stripped if view != lines), head]
    for view in views:
        found = _structure(view) or _lines(view)
        if found is not None:
            return found
    return next((found for view in views if (found := _command(view)) is not None), None)


def detect_kind(text: str) -> str | None:
    """The KIND whose signature ``text`` shows, or None."""
    found = detect(text)
    return found.kind if found else None
