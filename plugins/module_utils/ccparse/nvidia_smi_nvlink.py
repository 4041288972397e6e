"""Parser for ``nvidia-smi nvlink -s`` (per-GPU, per-link NVLink speed)::

    {"gpus": [{"index": 3, "name": "Tesla V100-SXM2-32GB", "uuid": "GPU-50b1...",
               "links": [{"link": 0, "active": True, "speed_GBps": 25.781}, {"link": 3, "active": False,
                          "speed_GBps": None}, ...],
               "active_links": 4, "inactive_links": [3, 5], "all_links_inactive": False, "line": 19}],
     "no_nvlink": False, "note": None}

Speeds are GB/s as nvidia-smi prints them (per direction). ``nvidia-smi nvlink -e``'s counters ('Link 0: Replay
Errors: 0') are summed per GPU and counter into ``error_counts`` (``{"Replay": 0, "Recovery": 0, "CRC": 0}``), and
the non-zero ones kept per link in ``link_errors`` (``{0: {"CRC": 65535}}``); its lines are no links.
``nvidia-smi nvlink -c``'s capability lines ('Link 0, P2P is supported: true') go to ``capabilities``
(``{link: {capability: bool}}``): what a link can do, not its state. ``nvlink -gt d``'s counters
('Link 0: Data Tx: 19241022 KiB') go to ``traffic_kib`` (``{link: {"data_tx": 19241022, ...}}``). A GPU followed by
``NVML: Unable to retrieve NVLink information as all links are inActive`` (drivers 550+) has ``links: []`` and
``all_links_inactive: True`` (printed alone, as for one GPU selected with ``-i``, it is one GPU of unknown index,
``"index": None``); whether that is a fault (an SXM GPU whose peers have links) or
normal (PCIe cards) is the check's call. A GPU without NVLink prints nothing
(the live H200 capture is empty): that gives ``gpus: []``, ``no_nvlink: True`` and a ``note`` saying so, an explicit
answer the checks report as information, not a silent empty result. Any other text raises
:class:`ParseError`.
"""

from __future__ import annotations

import re
from typing import Any

from . import capture
from .common import ParseError, gpu_selection, need_float, need_int, parser

TOOL = "nvidia-smi nvlink -s"

_GPU = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: (\S+?)\))?$")
_ALL_INACTIVE = re.compile(r"^(?:NVML:\s*)?Unable to retrieve NVLink information as all links are inactive",
                           re.IGNORECASE)
_LINK = re.compile(r"^Link (\d+): (?:(\d+(?:\.\d+)?) GB/s|<inactive>|(.+))$")
#: ``nvidia-smi nvlink -e``: a link's error counter since the driver loaded ('Link 0: Replay Errors: 0')
_COUNTER = re.compile(r"^Link (\d+): ([A-Za-z][A-Za-z ]{0,30}?) Errors: (\d{1,20})$")
#: ``nvidia-smi nvlink -gt d`` / ``-gt r``: the data a link carried since the driver loaded ('Link 0: Data Tx: 19241022
#: KiB'; older drivers' ``-g 0``: 'Link 0: Rx0: 512 KBytes, Tx0: 1024 KBytes' is not read)
_TRAFFIC = re.compile(r"^Link (\d+): (Data|Raw) (Tx|Rx): (\d{1,20}) KiB$")
#: ``nvidia-smi nvlink -c``: what a link is able to do ('Link 0, P2P is supported: true'), not its state
_CAPABILITY = re.compile(r"^Link (\d+), ([A-Za-z][\w ]{0,60}?): (true|false)$", re.IGNORECASE)


@parser("nvidia-smi-nvlink", commands=gpu_selection)
def parse_nvidia_smi_nvlink(text: str) -> dict[str, Any]:
    gpus: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    elided = False
    for lineno, raw in capture.lines(text):
        s = raw.strip()
        if not s:
            continue
        if re.fullmatch(r"\.{3,}|\[\.{3}\]|…", s):
            elided = True  # GPUs or links the paster cut out
            continue
        if capture.is_command(s, ("nvidia-smi",)):
            continue
        g = _GPU.match(s)
        if g:
            cur = {"index": need_int(g.group(1), TOOL, lineno, "GPU index"),
                   "name": g.group(2).strip(), "uuid": g.group(3), "links": [],
                   "all_links_inactive": False, "line": lineno}
            gpus.append(cur)
            continue
        if _ALL_INACTIVE.match(s):
            if cur is None:  # one GPU selected (nvlink -s -i 0): NVML's answer without a 'GPU n:' line above it
                cur = {"index": None, "name": "", "uuid": None, "links": [], "line": lineno}
                gpus.append(cur)
            cur["all_links_inactive"] = True
            continue
        c = _COUNTER.match(s)
        if c and cur is not None:
            counts = cur.setdefault("error_counts", {})
            counts[c.group(2)] = counts.get(c.group(2), 0) + int(c.group(3))
            if int(c.group(3)):
                cur.setdefault("link_errors", {}).setdefault(int(c.group(1)), {})[c.group(2)] = int(c.group(3))
            continue
        t = _TRAFFIC.match(s)
        if t and cur is not None:
            traffic = cur.setdefault("traffic_kib", {}).setdefault(int(t.group(1)), {})
            traffic[f"{t.group(2).lower()}_{t.group(3).lower()}"] = int(t.group(4))
            continue
        cap = _CAPABILITY.match(s)
        if cap and cur is not None:
            caps = cur.setdefault("capabilities", {}).setdefault(int(cap.group(1)), {})
            caps[cap.group(2)] = cap.group(3).lower() == "true"
            continue
        m = _LINK.match(s)
        if m and cur is not None:
            if m.group(3) is not None:
                raise ParseError(TOOL, f"GPU {cur['index']} link {m.group(1)}: unknown state {m.group(3)!r}", lineno)
            speed = need_float(m.group(2), TOOL, lineno, "link speed") if m.group(2) else None
            cur["links"].append({"link": need_int(m.group(1), TOOL, lineno, "link number"),
                                 "active": speed is not None, "speed_GBps": speed})
            continue
        raise ParseError(TOOL, f"not a 'GPU n:' or 'Link n:' line: {s[:80]!r}", lineno)
    for gpu in gpus:
        gpu["active_links"] = sum(1 for lk in gpu["links"] if lk["active"])
        gpu["inactive_links"] = [lk["link"] for lk in gpu["links"] if not lk["active"]]
    note = None if gpus else "nvidia-smi nvlink -s printed nothing: no NVLink on this node (single GPU or PCIe cards)"
    return {"gpus": gpus, "no_nvlink": not gpus, "note": note, "excerpt": elided}
