"""Parser for ``NCCL_DEBUG=INFO`` logs: which NCCL ran, over which transport, with or without GDR.

Reads the ``<host>:<pid>:<tid> [<dev>] NCCL INFO|WARN ...`` lines (NCCL 2.0-2.2: without the ``NCCL`` word;
also behind another tool's prefix:
a log collector's time stamps), the aws-ofi-nccl plugin tests' ``WARN: Function: f Line: n: NET/OFI ...``
lines, PyTorch's ProcessGroupNCCL watchdog lines (``[rank5]:[E901 ... ProcessGroupNCCL.cpp:684] ...``, also
behind a ``[pid] `` prefix: ``pg_errors``, and the collectives it timed out: ``pg_timeouts``), NCCL's net transport
error quoted alone (``NET/IBP:Got completion from peer ... with status=12
...``, a warning) and NCCL's fatal result codes as an application prints them (``ncclRemoteError: ...``,
``ncclSystemError``, PyTorch's one-line ``NCCL error: ... Last error: ...``; warnings) (other lines are
ignored, so a log with application output or nccl-tests tables interleaved parses)::

    {"version": "2.28.9", "cuda": "13.0", "network": "Socket"|"IB"|None,
     "transport": "IB"|"RoCE"|"Socket"|"P2P"|"SHM"|None,
     "net_devices": [{"index": 0, "name": "mlx5_0", "port": 1, "link_layer": "IB"|"RoCE"}],
     "ib_devices": ["mlx5_0"], "socket_interfaces": ["eth0"], "ib_no_device": True,
     "socket_addresses": {"eth0": "10.0.0.7", "ib0": "fe80::ba59:9f03:fc:765c%ib0"},  # Bootstrap / NET/Socket lines
     "channel_transports": ["NET/IB", "P2P/IPC", "SHM"],      # from "via ..." channel lines
     "gdr": True|False|None, "gdr_hcas": {"mlx5_0": True}, "gdr_gpus": {"18000": False},
     "n_ranks": 16, "n_nodes": 2, "hosts": ["vm"], "warnings": ["..."], "lines": 312,
     "networks": ["Socket", "IB"],                             # every 'Using network X' seen
     "error_returns": [{"at": "init.cc:695", "code": 2, "line": 9}],
     "pg_errors": [{"rank": 5, "line": 40, "msg": "..."}],    # PyTorch's watchdog lines
     "pg_timeouts": [{"rank": 5, "seq": 7, "op": "ALLREDUCE", ...}],
     "app_errors": ["RuntimeError: NCCL error in: ..., unhandled system error ..."],  # the application's result
     "bus_errors": ["[host:378934:0:382579] Caught signal 7 (Bus error: ...)"],       # a process killed by SIGBUS
     "connect_retries": [{"error": "Connection timed out", "line": 14}],   # 'Call to connect returned ..., retrying'
     "socket_channel_devices": [1],                            # the N of channels' 'via NET/Socket/N'
     "p2p_not_enabled": [["1a000", "1b000"]],                  # 'Could not enable P2P between dev 1(=1b000) ...'
     "settings_lines": 2}                                      # 'NCCL_SOCKET_IFNAME set by environment to eth0'

``warnings`` holds NCCL's WARN lines and the error lines of the job read beside them; ``app_errors`` and
``bus_errors`` are those of them that are an application's NCCL result line and a SIGBUS line.

``error_returns`` is NCCL's own trace of an error result returned up its call stack (``bootstrap.cc:100 -> 2``: the
call at that line returned ncclSystemError): an NCCL call failed there (the first 50 such lines).

``transport`` is the inter-node path: ``IB``/``RoCE`` when the IB plugin carried traffic (RoCE
when its devices are listed ``/RoCE``), ``Socket`` when NCCL fell back to (or chose) sockets,
else the intra-node transport for single-node runs. ``gdr`` is True when any channel ran
``.../GDRDMA`` or NCCL said ``GPU Direct RDMA Enabled``, False when it said ``Disabled`` or its channels over
``NET/IB`` carry no ``/GDRDMA`` (and no GDRDMA channel was seen), None when the log does not say.
"""

from __future__ import annotations

import re
from typing import Any

from . import capture
from .common import ParseError, parser, to_int, unwrap_log

TOOL = "nccl-log"

#: ``host:pid:tid [dev] [file.cc:123 ]NCCL INFO msg``; the prefix is optional (grep'd lines pasted as
#: ``NCCL INFO NET/IB : Using ...``), and may follow an mpirun rank tag (``[1,0]<stdout>:``, ``[0] ``)
_LINE = re.compile(r"^(?:\[[\d,]+\](?:<\w+>)?:?\s*)?"
                   r"(?:(?P<host>[^\s:]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>[^\]]*)\] )?"
                   # NCCL 2.0-2.2 printed no 'NCCL' word ('h:1:2 [3] include/socket.h:194 WARN Call to recv ...',
                   # 'h:1:2 [3] INFO init.cu:422 -> 2'): optional only behind the host:pid:tid [dev] prefix
                   r"(?:[\w./-]+:\d+ )?(?(host)(?:NCCL )?|NCCL )(?P<lvl>INFO|WARN|TRACE) (?P<msg>.*)$"
                   # the aws-ofi-nccl plugin's own tests: 'WARN: Function: main Line: 66: NET/OFI ...'
                   r"|^(?P<lvl2>INFO|WARN|TRACE): Function: \w+ Line: \d+: (?P<msg2>NET/OFI .*)$"
                   # NCCL's net transport error quoted alone, without prefix or level (a WARN):
                   # 'NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 ...'
                   r"|^(?P<msg3>NET/\w+\s*:\s*Got completion from peer .*)$")
#: the same NCCL line after a prefix of another tool (a log collector's time stamps, a container runtime's
#: tag: '2025-11-09 15:39:31.043 +08:00 [2025-11-09 07:39:30] h100-28:238:1313 [0] ... NCCL WARN ...'):
#: searched only in lines that hold 'NCCL ' and that :data:`_LINE` did not match
_LINE_INSIDE = re.compile(r"(?:(?<![\w.:-])(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>[^\]]*)\] )?"
                          r"(?:[\w./-]+:\d+ )?NCCL (?P<lvl>INFO|WARN|TRACE) (?P<msg>.*)$")
#: NCCL's fatal result codes as the application prints them ('ncclRemoteError: A call failed possibly due to a
#: network error ...', PyTorch's one-line 'NCCL error: ... ncclRemoteError: ... Last error: NET/IB : ...'):
#: the communicator failed, a warning line (the check reads which)
_RESULT = re.compile(r"\bnccl(?:System|Remote|Internal|InvalidUsage|InvalidArgument|UnhandledCuda)Error\b|"
                     r"\bNCCL error in: .{0,300}?"
                     r"(?:internal error|unhandled (?:system|cuda) error|invalid (?:usage|argument))|"
                     # XLA's: 'NCCL operation ncclAllReduce(...) failed: invalid argument (run with NCCL_DEBUG=...'
                     r"\bNCCL operation nccl\w{1,40}\(.{0,400}?\) failed: (?:internal error|unhandled (?:system|cuda) "
                     r"error|invalid (?:usage|argument)|Unable to load NCCL library)|"
                     # ncclGetErrorString's own words as an application prints them ('CUDA error: unhandled cuda
                     # error (run with NCCL_DEBUG=INFO for details)', llama.cpp's report of a failed ncclGroupEnd)
                     r"\b(?:internal error|unhandled (?:system|cuda) error|invalid (?:usage|argument)) "
                     r"\(run with NCCL_DEBUG=|"
                     # PyTorch's 'RuntimeError: NCCL Error 2: unhandled system error (run with ...': its code first
                     r"\bNCCL Error \d: (?:internal error|unhandled (?:system|cuda) error|invalid (?:usage|argument))|"
                     # vLLM's pynccl: 'ncclCommInitRank failed with error: NCCL error: internal error - please report
                     # this issue to the NCCL developers' (ncclGetErrorString after its own 'NCCL error: ')
                     r"\bNCCL error: (?:internal error|unhandled (?:system|cuda) error|invalid (?:usage|argument))\b")
#: the result an application's NCCL error line names, as ncclResult_t (nccl.h); ncclRemoteError (6: a peer's
#: process exited or the network failed) names no fault of this rank's and is not one of them
_APP_RESULTS = (("UnhandledCuda", 1), ("unhandled cuda", 1), ("System", 2), ("unhandled system", 2),
                ("Unable to load NCCL library", 2),
                ("Internal", 3), ("internal error", 3), ("InvalidArgument", 4), ("invalid argument", 4),
                ("InvalidUsage", 5), ("invalid usage", 5))
#: PyTorch's ProcessGroupNCCL lines (glog form, month unpadded: 'E321' is 21 March; the rank's tag first, a launcher's
#: '[pid] ' before it):
#: '[rank5]:[E901 05:20:03.445217639 ProcessGroupNCCL.cpp:684] [Rank 5] Watchdog caught collective ...'; torch
#: before 2.3 prints the level alone: '[rank2]:[E ProcessGroupNCCL.cpp:754] [Rank 2] Watchdog caught ...'
#: older PyTorch (1.x, 2.0) prints no '[rankN]:' head: '[E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught ...'
#: (the rank, if any, in the message; 'Some NCCL operations have failed or timed out' names none)
_PG_LINE = re.compile(r"^(?:\[\d+\]\s*)?(?:\[rank(?P<rank>\d+)\]:)?\[(?P<lvl>[EWIF])(?:\d{3,4} [\d:.]+)?\s+"
                      r"ProcessGroupNCCL\.cpp:\d+\]\s*(?=(?:\[Rank (?P<rank2>\d+)\])?)(?P<msg>.*)$")
#: the watchdog's timeout of one collective: 'WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, ... Timeout(ms)=600000)'
_PG_TIMEOUT = re.compile(r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+), "
                         r"OpType=(?P<op>\w+)(?:.*?Timeout\(ms\)=(?P<ms>\d+))?")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:\+cuda(\S+))?")
_NET_USING = re.compile(r"^NET/(IB|Socket)\s*: Using (.*)$")
#: NCCL 2.3 and older: 'NET : Using interface eth0:10.0.0.7<0>' (one line per interface)
_NET_IFACE_OLD = re.compile(r"^NET : Using interface ([\w.-]+):")
_IB_DEV = re.compile(r"\[(\d+)\]([\w.-]+):(\d+)/(IB|RoCE)")
_SOCK_DEV = re.compile(r"\[(\d+)\]([\w.-]+):")
#: an interface and its address in a 'Bootstrap : Using' / 'NET/Socket : Using' line ('[0]eno1:172.18.40.41<0>',
#: 'ib0:fe80::ba59:9f03:fc:765c%ib0<0>')
_SOCK_ADDR = re.compile(r"(?:^|\s|\])([\w.-]{1,64}):([0-9A-Fa-f.:]{2,45}(?:%[\w.-]{1,64})?)<\d+>")
_VIA = re.compile(r"via ((?:NET/[\w]+(?:/[\w()]+)*)|P2P/[\w]+|SHM(?:/[\w]+)*|COLLNET\S*|NVLS\S*)")
#: (the HCA's name may be cut off by a wrap: 'for HCA 0' then the HCA's index names it)
_GDR_HCA = re.compile(r"GPU Direct RDMA (Enabled|Disabled) for HCA (\d+)(?: '([^']+)')?")
#: NCCL 2.4-2.6's decision per GPU and HCA ('GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 5 > 4)'): the
#: GPU's PCI bus number in hex; Enabled with any HCA is GPUDirect RDMA for that GPU
_GDR_GPU = re.compile(r"GPU Direct RDMA (Enabled|Disabled) for GPU ([0-9A-Fa-f]{1,8}) / HCA (\d+)")
_RANKS = re.compile(r"\bnRanks (\d+)(?: nNodes (\d+))?")
#: NCCL's trace of an error result climbing its call stack ('init.cc:695 -> 2', 'bootstrap.cu:45 -> 2 [Net]',
#: 'group.cc:64 -> 1 [Async thread]'): an ncclResult_t other than ncclSuccess returned by the call at that line
_RETURN = re.compile(r"^(?P<at>[\w./-]{1,80}\.(?:cc|cu|h|c|cpp):\d{1,6}) -> (?P<code>[1-9])\b")
_RANKS_INIT = re.compile(r"\bnranks (\d+)\b")
#: NCCL's socket connect retried after an error ('Call to connect returned Connection timed out, retrying'; NCCL
#: 2.7-2.11 include/socket.h, later misc/socket.cc): INFO lines, the WARN comes only when the retries run out
#: NCCL's P2P transport refused between two GPUs of a node ('Could not enable P2P between dev 1(=1b000) and dev
#: 0(=1a000)'): their traffic goes through host shared memory instead
_P2P_NOT_ENABLED = re.compile(r"^Could not enable P2P between dev \d{1,3}\(=([0-9A-Fa-f]{1,8})\) and dev \d{1,3}"
                              r"\(=([0-9A-Fa-f]{1,8})\)")
_CONNECT_RETRY = re.compile(r"^Call to connect returned (.{1,80}?), retrying")
#: a channel over NCCL's socket transport and the index of the socket device it uses ('via NET/Socket/1')
_SOCKET_CHANNEL = re.compile(r"via NET/Socket/(\d{1,3})\b")


#: libmlx5's report of a completion in error ('mlx5: host_unknown: got completion with error:', its CQE dump follows)
_PROVIDER_CQE = re.compile(r"\bmlx[45]: [\w.-]{1,64}: got completion with error\b")
#: a libfabric provider's completion-queue error under the OFI plugin ('libfabric:451707:1708520807::efa:cq:
#: efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address ...'): the transfer failed in the provider
_FABRIC_CQ_ERROR = re.compile(r"libfabric:\d{1,10}:\d{1,12}::\w{1,20}:cq:\w{1,80}\(\):\d{1,6}<warn> err: [1-9]\d{0,4}, "
                              r"message: ")
#: a process of the job killed by SIGBUS: UCX's handler ('[host:378934:0:382579] Caught signal 7 (Bus error:
#: nonexistent physical address)'), PyTorch's DataLoader ('ERROR: Unexpected bus error encountered in worker. This might
#: be caused by insufficient shared memory (shm)')
_BUS_ERROR = re.compile(r"Caught signal 7 \(Bus error|Unexpected bus error encountered in worker")
#: NCCL 1.x's lines ('INFO rank 0 using device 0 (0000:06:00.0)', 'WARN src/reduce.cu:126 Cuda failure ...'), under
#: its 'NCCL version 1.3.4 compiled with CUDA 8.0' banner: no host:pid head and no 'NCCL ' before the level
_NCCL1_LINE = re.compile(r"^(INFO|WARN) ")
_NCCL1_BANNER = re.compile(r"^NCCL version 1\.\d")

#: where a paste whose line breaks were lost (a quoted reply, a form field) joins the next NCCL line to the one before:
#: the blank before '[0] NCCL INFO' or 'host:pid:tid [0] NCCL WARN'
_JOINED = re.compile(r"\s+(?=(?:[^\s:\[\]]+:\d+:\d+ )?\[\d{1,4}\] NCCL (?:INFO|WARN|TRACE) )")


def _bus_error(text: str) -> bool:
    """A line of a process of the job killed by SIGBUS (:data:`_BUS_ERROR`), the cheap test first."""
    return ("Bus error" in text or "bus error" in text) and bool(_BUS_ERROR.search(text))


def _unflattened(text: str) -> list[str]:
    """One pasted line as the NCCL lines it holds: two or more joined by blanks are split again."""
    if text.count(" NCCL ") < 2 or len(_JOINED.findall(text)) < 1:
        return [text]
    return _JOINED.split(text)


def summarize(lines: list[tuple[int, str]]) -> dict[str, Any]:
    """Summarise ``(lineno, text)`` NCCL lines (also used by the nccl-tests parser)."""
    out: dict[str, Any] = {"version": None, "cuda": None, "network": None, "transport": None, "net_devices": [],
                           "ib_devices": [], "socket_interfaces": [], "ib_no_device": False, "socket_addresses": {},
                           "channel_transports": [], "gdr": None, "gdr_hcas": {}, "gdr_gpus": {}, "n_ranks": None,
                           "n_nodes": None, "hosts": [], "warnings": [], "lines": 0, "networks": [],
                           "pg_errors": [], "pg_timeouts": [], "error_returns": [], "bus_errors": [],
                           "connect_retries": [], "socket_channel_devices": [], "app_errors": [],
                           "p2p_not_enabled": [], "settings_lines": 0}
    via: set[str] = set()
    gdr_channel = False
    hosts: list[str] = []
    lines = [(n, part) for n, text in lines for part in _unflattened(text)]
    for _lineno, text in lines:
        m = _LINE.match(text.strip())
        if not m:
            if "NCCL " in text and (m := _LINE_INSIDE.search(capture.unlinked(text))):
                pass
            elif ("Error" in text or "NCCL error" in text or "NCCL operation" in text or "NCCL_DEBUG=" in text) and \
                    (res := _RESULT.search(text)):
                out["lines"] += 1
                out["warnings"].append(text.strip())
                out["app_errors"].append(text.strip())  # the application's line, not NCCL's own WARN
                code = next((c for name, c in _APP_RESULTS if name in res.group(0)), None)
                if code is not None and len(out["error_returns"]) < 50:
                    # the NCCL call the application made returned this error: it failed there
                    out["error_returns"].append({"at": "application", "code": code, "line": _lineno})
                continue
            elif "completion with error" in text and _PROVIDER_CQE.search(text):
                # the verbs provider's own line of a work completion in error (libmlx5: 'mlx5: host: got completion
                # with error:'), the failure NCCL's NET/IB WARN names: a transport error line
                out["lines"] += 1
                out["warnings"].append(text.strip())
                continue
            elif _bus_error(text):
                # a process of the job killed by SIGBUS (UCX's signal handler, PyTorch's DataLoader): an error line of
                # the job, and its own key (judged in checks/nccl.py)
                out["lines"] += 1
                out["warnings"].append(text.strip())
                out["bus_errors"].append(text.strip())
                continue
            elif "<warn> err:" in text and _FABRIC_CQ_ERROR.search(text):
                out["lines"] += 1
                out["warnings"].append(text.strip())  # judged as a completion in error (checks/nccl.py _FATAL)
                continue
            elif "ProcessGroupNCCL" in text and (pg := _PG_LINE.match(text.strip())):
                _pg_line(out, pg, _lineno)
                continue
            else:
                continue
        out["lines"] += 1
        groups = m.groupdict()
        if groups.get("host") and groups["host"] not in hosts:
            hosts.append(groups["host"])
        msg = (groups.get("msg") or groups.get("msg2") or groups.get("msg3") or "").strip()
        if (groups.get("lvl") or groups.get("lvl2")) == "WARN" or groups.get("msg3"):
            out["warnings"].append(msg)
            if _bus_error(msg):
                out["bus_errors"].append(msg)
            continue
        if msg.startswith("Call to connect returned") and (cr := _CONNECT_RETRY.match(msg)):
            if len(out["connect_retries"]) < 50:
                out["connect_retries"].append({"error": cr.group(1), "line": _lineno})
            continue
        if " -> " in msg and (ret := _RETURN.match(msg)):
            if len(out["error_returns"]) < 50:
                out["error_returns"].append({"at": ret.group("at"), "code": int(ret.group("code")), "line": _lineno})
            continue
        v = _VERSION.search(msg)
        if v and out["version"] is None:
            out["version"], out["cuda"] = v.group(1), v.group(2)
            continue
        if msg.startswith("Using network "):
            out["network"] = msg.split()[-1]
            if out["network"] not in out["networks"]:
                out["networks"].append(out["network"])
            continue
        if msg.startswith(("Bootstrap", "NET/Socket")) and "Using" in msg:
            # the interfaces and addresses of NCCL's sockets ('Bootstrap : Using ib0:fe80::ba59:9f03:fc:765c%ib0<0>')
            for name, addr in _SOCK_ADDR.findall(msg):
                out["socket_addresses"].setdefault(name, addr)
        if msg.startswith("NET/IB") and "No device found" in msg:
            out["ib_no_device"] = True
        u = _NET_USING.match(msg)
        if u:
            kind, rest = u.groups()
            if kind == "IB":
                for idx, name, port, ll in _IB_DEV.findall(rest):
                    dev = {"index": to_int(idx), "name": name, "port": to_int(port), "link_layer": ll}
                    if dev not in out["net_devices"]:
                        out["net_devices"].append(dev)
                    if name not in out["ib_devices"]:
                        out["ib_devices"].append(name)
            else:
                for _idx, name in _SOCK_DEV.findall(rest.split(";")[0]):
                    if name not in out["socket_interfaces"]:
                        out["socket_interfaces"].append(name)
            continue
        if msg.startswith("NET : Using interface") and (old := _NET_IFACE_OLD.match(msg)):
            if old.group(1) not in out["socket_interfaces"]:
                out["socket_interfaces"].append(old.group(1))
            continue
        if " set by environment to " in msg:
            out["settings_lines"] += 1  # 'NCCL_SOCKET_IFNAME set by environment to eth0': a setting, no evidence
            continue
        if msg.startswith("Could not enable P2P") and (pp := _P2P_NOT_ENABLED.match(msg)):
            pair = sorted((pp.group(1).lower(), pp.group(2).lower()))
            if pair not in out["p2p_not_enabled"] and len(out["p2p_not_enabled"]) < 64:
                out["p2p_not_enabled"].append(pair)
            continue
        if "for GPU" in msg and (gg := _GDR_GPU.search(msg)):
            gpu = gg.group(2).lower()
            out["gdr_gpus"][gpu] = out["gdr_gpus"].get(gpu, False) or gg.group(1) == "Enabled"
            continue
        g = _GDR_HCA.search(msg)
        if g:
            out["gdr_hcas"][g.group(3) or f"HCA {g.group(2)}"] = g.group(1) == "Enabled"
            continue
        if "NET/Socket/" in msg:
            for dev in _SOCKET_CHANNEL.findall(msg):
                if int(dev) not in out["socket_channel_devices"]:
                    out["socket_channel_devices"].append(int(dev))
        for path in _VIA.findall(msg):
            if "GDRDMA" in path:
                gdr_channel = True
            parts = path.split("/")
            via.add("/".join(parts[:2]) if parts[0] in ("NET", "P2P") else parts[0])
        r = _RANKS.search(msg)
        if r:
            n = to_int(r.group(1))
            if n is not None:
                out["n_ranks"] = max(out["n_ranks"] or 0, n)
            nodes = to_int(r.group(2))
            if nodes is not None:
                out["n_nodes"] = max(out["n_nodes"] or 0, nodes)
            continue
        r2 = _RANKS_INIT.search(msg)
        if r2 and "Init" in msg:
            n = to_int(r2.group(1))
            if n is not None:
                out["n_ranks"] = max(out["n_ranks"] or 0, n)
    out["hosts"] = hosts
    out["channel_transports"] = sorted(via)
    if out["network"] is None and any(t.startswith("NET/") for t in via):
        out["network"] = "IB" if "NET/IB" in via else "Socket" if "NET/Socket" in via else None
    if out["network"] is None and out["socket_interfaces"] and not out["ib_devices"] and not via:
        # 'NET/Socket : Using [0]bond0:...' alone: NCCL sets up its socket network only when no network before it
        # (the IB plugin) found a device, so that is the network it uses
        out["network"] = "Socket"
    if "NET/IB" in via or (out["network"] == "IB" and out["net_devices"]):
        lls = {d["link_layer"] for d in out["net_devices"]}
        out["transport"] = "RoCE" if lls == {"RoCE"} else "IB"
    elif "NET/Socket" in via or out["network"] == "Socket":
        out["transport"] = "Socket"
    elif out["network"] == "IB":
        out["transport"] = "IB"
    elif any(t.startswith("P2P") for t in via):
        out["transport"] = "P2P"
    elif "SHM" in via:
        out["transport"] = "SHM"
    if gdr_channel or any(out["gdr_hcas"].values()) or any(out["gdr_gpus"].values()):
        out["gdr"] = True
    elif out["gdr_hcas"] or out["gdr_gpus"] or "NET/IB" in via:
        # NCCL names a channel over the IB transport '.../GDRDMA' when it uses GPUDirect RDMA: none did
        out["gdr"] = False
    return out


def _pg_line(out: dict[str, Any], pg: re.Match[str], lineno: int) -> None:
    """Record one PyTorch ProcessGroupNCCL line (an error or warning of the watchdog, no NCCL line of its own)."""
    out["lines"] += 1
    rank = int(pg.group("rank") or pg.group("rank2")) if pg.group("rank") or pg.group("rank2") else None
    msg = pg.group("msg").strip()
    if pg.group("lvl") in ("E", "F"):
        out["pg_errors"].append({"rank": rank, "line": lineno, "msg": msg})
    t = _PG_TIMEOUT.search(msg)
    if t:
        ms = t.group("ms")
        out["pg_timeouts"].append({"rank": rank, "seq": int(t.group("seq")), "op": t.group("op"),
                                   "timeout_ms": int(ms) if ms else None, "line": lineno})


#: an NCCL line's ``host:pid:tid [dev] `` head alone (a wrap may cut the line before its level: '... NCCL' / 'WARN ...')
_HEAD = re.compile(r"^(?:\[[\d,]+\](?:<\w+>)?:?\s*)?[^\s:]+:\d+:\d+ \[[^\]]*\] ")
#: UCX's ``[host:pid:thread-index:tid]`` head ('[cf0b62962198:378934:0:382579] Caught signal 7 (Bus error: ...')
_UCX_HEAD = re.compile(r"^\[[\w.-]{1,64}:\d{1,10}:\d{1,6}:\d{1,10}\] ")


def _log_line(line: str) -> bool:
    """An NCCL line (its ``host:pid:tid [dev]`` head, or ``NCCL INFO`` / ``NCCL WARN``) or a line of UCX beside it
    (its ``[host:pid:n:tid]`` head): what a wrapped rest lacks."""
    bare = line.strip()
    return bool(_LINE.match(bare) or _HEAD.match(bare) or ("NCCL " in line and _LINE_INSIDE.search(line))
                or (bare.startswith("[") and _UCX_HEAD.match(bare)))


@parser("nccl-log")
def parse_nccl_log(text: str) -> dict[str, Any]:
    numbered = capture.lines(text)
    lines = list(zip([n for n, _s in numbered], unwrap_log([s for _n, s in numbered], _log_line)))
    out = summarize(lines)
    if out["lines"] == 0 and any(_NCCL1_BANNER.match(t.strip()) for _n, t in lines):
        # NCCL 1.x: its level words begin the line; read as the later 'NCCL INFO' / 'NCCL WARN' lines
        out = summarize([(n, f"NCCL {t.strip()}" if _NCCL1_LINE.match(t.strip()) else t) for n, t in lines])
    if out["lines"] == 0:
        first = next(((n, s) for n, s in lines if s.strip()), None)
        raise ParseError(TOOL, "no 'NCCL INFO' or 'NCCL WARN' lines (was NCCL_DEBUG=INFO set?)"
                         + (f"; first line {first[1].strip()[:60]!r}" if first else ""),
                         first[0] if first else None)
    return out
