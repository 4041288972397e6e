"""Recognise a capture's KIND from its content (issue 29): ``analyze`` uses it for a file whose
name is not a KIND (``dmesg.txt``, ``gpu.log``, a support bundle's files).

:func:`detect_kind` looks at the first :data:`SNIFF_CHARS` characters only, with one compiled
pattern per KIND, tried from the most specific signature to the least (nccl-tests before nccl-log:
a nccl-tests run holds NCCL INFO lines; the kernel log last: dmesg quotes every driver). Returns
None when no signature matches: the file is then not judged, and said so.
"""

from __future__ import annotations

import re

#: how much of a file is looked at
SNIFF_CHARS = 65536

_SIGNATURES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((k, re.compile(p, re.MULTILINE)) for k, p in (
    ("nvidia-smi-q-xml", r"<nvidia_smi_log>"),
    ("gemm", r"^#\s*clusterctl-gemm \d|^gemm\tindex=\d"),
    ("nvidia-smi-q", r"=+\s*NVSMI LOG\s*=+|^Attached GPUs\s+:|"
                     r"^\s*(?:Clocks (?:Throttle|Event) Reasons|GPU Reset Status|ECC Errors|Remapped Rows|"
                     r"Retired Pages)\s*$|"
                     r"^\s*(?:Product Name|GPU UUID|Reset Required)\s+: "),
    ("nvidia-smi", r"NVIDIA-SMI \d+\.\d+.{0,80}Driver Version"),
    ("dcgmi-diag", r"^\|\s*Diagnostic\s+\|\s*Result|^\|\s*DCGM Version\s+\|"),
    ("nvidia-smi-topo", r"^\s*GPU0\s.{0,400}CPU Affinity|^Legend:\s*$"),
    ("nccl-tests", r"#\s+size\s+count\s+type|# Avg bus bandwidth"),
    ("nccl-log", r"NCCL (?:INFO|WARN) "),
    ("ib_write_bw", r"#bytes\s+#iterations\s+BW peak"),
    ("ibv_devinfo", r"^hca_id:\s"),
    ("ibstatus", r"^Infiniband device '"),
    ("ibstat", r"^CA '[^']+'\s*$"),
    ("ibdev2netdev", r"^\S+ port \d+ ==> \S+ \((?:Up|Down)\)"),
    ("show_gids", r"^DEV\s+PORT\s+INDEX\s+GID"),
    ("mlnx_qos", r"^(?:DCBX mode:|Priority trust state:|PFC configuration:)"),
    ("lspci", r"^\s*Lnk(?:Cap|Sta):\s"),
    ("sdiag", r"^sdiag output at |^Main schedule statistics \(microseconds\):|"
              r"^Remote Procedure Call statistics by message type"),
    ("scontrol-node", r"^\s*NodeName=\S+"),
    ("sinfo", r"^PARTITION\s+AVAIL\s"),
    ("proc-limits", r"^Max locked memory\s"),
    ("nvidia-smi-query", r"^(?:index|name|pci\.bus_id|uuid|driver_version)\s*,\s*[a-z_.]+|"
                         r"^\d{1,3},\s*[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7],"),
    ("ip-link", r"^\d+: [^\s:]+(?:@\S+)?: <[A-Z_,-]*>"),
    ("kernel-log", r"NVRM: |\bXid\b|\[\s*\d+\.\d+\] |\bkernel: |mlx5_core|pcieport"),
))


def detect_kind(text: str) -> str | None:
    """The KIND whose signature ``text`` shows first, or None."""
    head = text[:SNIFF_CHARS]
    for kind, pattern in _SIGNATURES:
        if pattern.search(head):
            return kind
    return None
