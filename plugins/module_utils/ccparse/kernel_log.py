"""The kernel log (``journalctl -k`` / ``dmesg``) as GPU and fabric evidence. KIND ``kernel-log``.

Read from each line (with or without a syslog / ISO 8601 / dmesg ``[sec.usec]`` / ``dmesg --decode``
(``kern  :info  :``) / ``dmesg --time-format iso`` / OpenWrt ``logread`` / raw ``/dev/kmsg`` prefix, since
operators paste ``grep Xid`` output too):

``xids``
    NVIDIA driver Xid events, ``NVRM: Xid (PCI:0000:2b:00): 79, pid=..., name=..., <text>``:
    the GPU's PCI bus id as the driver prints it (domain:bus:device), the Xid code, pid and
    process name when given, and the rest of the message.
``fallen_off_bus``
    ``NVRM: GPU at 0000:01:00.0 has fallen off the bus`` and the multi-line form drivers 570+ print
    without an Xid (``The NVIDIA GPU 0000:b3:00.0`` ... ``fallen off the bus``): the bus id is
    taken from that line or the two before it.
``nvlink_errors``
    other ``NVRM:`` lines about NVLink that report a failure or error (e.g.
    ``knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's postRxDetLinkMask failed!``).
``aer_fatal``
    PCIe AER uncorrected fatal errors (``AER: Uncorrected (Fatal) error received: <dev>``,
    ``severity=Uncorrected (Fatal)``), with or without any Xid, and the device (``pci``) when named; a
    Downstream Port Containment of an ``ERR_FATAL`` (``DPC: containment event, status:0x200d, ERR_FATAL received from
    0015:01:00.0``; before 5.19 ``DPC: ERR_FATAL detected`` after the event's ``source:0x3400``) is one too, its
    ``ERR_NONFATAL`` an ``aer_nonfatal`` (the port took the link down; its AER lines may not be printed), as is a root
    port's ``DPC: RP PIO error detected`` (a CPU access below the port failed; the port contained it).
``aer_corrected``, ``aer_nonfatal``
    PCIe AER corrected errors (``severity=Corrected``/``Correctable``, ``Corrected error received:
    <dev>``, ``Correctable error message received from <dev>``) and uncorrected non-fatal ones, with
    the device (``pci``): the source the root port names, else the line's own device.
``edac``
    EDAC memory-controller reports (``EDAC MC0: 4 CE error on ...``): ``mc``, ``kind`` (CE corrected,
    UE uncorrected), ``count``, ``where``; also a firmware (GHES) record of a memory error (``event severity: fatal``,
    ``section_type: memory error``, ``DIMM location: CPU 1 DIMM 8`` as ``mc``).
``storage_errors``
    a local disk's errors: ``lost`` (``nvme nvme0: controller is down; will reset``, ``Removing after probe failure``,
    ``ata1.00: disable device``), ``timeout`` (``nvme nvme0: I/O 0 QID 2 timeout, aborting``, an ATA exception that
    froze the port, ``qc timeout``), ``io_error`` (``I/O error, dev nvme0n1, sector ...``; not of a CD, floppy or loop
    device), ``medium`` (``Sense Key : Medium Error``, ``error: { UNC }``: an unreadable sector): ``dev``, ``kind``.
``ecc_disabled``
    memory running without error correction (``EDAC amd64: Node 0: DRAM ECC disabled.``, ``ECC is disabled``):
    ``node`` (or None).
``pcie_limited``
    the kernel's ``available PCIe bandwidth, limited by ... x8 link at ... (capable of ... x16 link)``:
    a device trained below its capability (``pci``, ``link``, ``capable``); also ixgbe's own ``This is not sufficient
    for optimal performance of this card``, and i40e/ice's ``PCI-Express bandwidth available for this device may be
    insufficient`` where the same log shows that function's port up faster than the link carries.
``init_failed``
    a driver's probe of a device that failed (``probe of 0000:01:00.0 failed with error -22``; kernel 6.x:
    ``nvidia 0000:2c:00.0: probe with driver nvidia failed with error -1``):
    ``pci``, ``error``; the device is not usable. Also mlx5's ``mlx5_init_one failed with error code -19`` and
    nouveau's ``unknown chipset (ffffffff)`` (the chip id read as all ones: the device does not answer, ``what``), and a
    register BAR (0-5) the PCI core could not assign (``pci 0000:53:00.0: BAR 0: failed to assign [mem ...]``, 6.x
    ``BAR 0 [mem ...]: can't assign; no space``) that no later ``BAR 0: assigned`` placed (``what``).
``eeh_lost``
    POWER's EEH giving a device up (``EEH: Unable to recover from failure from PHB#30-PE#1fb``; the device from the
    ``EEH: of node=0030:0d:00.0`` line after it, else None): ``pci``.
``peermem_failed``
    the GPU peer-memory module that cannot load against the running RDMA core (``nv_peer_mem: Unknown symbol
    ib_register_peer_memory_client (err 0)``, ``nvidia_peermem: disagrees about version of symbol ...``):
    ``module``, ``what``; GPUDirect RDMA is unavailable.
``gpu_fatal``
    NVIDIA driver messages of a GPU lost or not initialised without an Xid (``RmInitAdapter failed``,
    GSP ``Heartbeat timed out``/``GSP Timeout``, ``Memory Subsystem Error``): ``gpu`` (bus id, or the
    driver's index ``GPU6``), ``what``; and amdgpu's failed reset of a hung GPU (``GPU reset(2) failed``), whose
    event also carries ``driver``: ``amdgpu`` (an NVIDIA event has no ``driver`` key).
``slot_power``
    ``Detected insufficient power on the PCIe slot`` (mlx5): ``pci``.
``aer_injected``
    the devices the kernel's AER error injector wrote an error into (``aer_inject: Injecting errors
    00000000/00040000 into device 0000:ed:01.0``): a test, so the AER lines of those devices are left out of
    ``aer_fatal``, ``aer_nonfatal`` and ``aer_corrected``.
``aer_unrecovered``
    the devices an AER recovery gave up on (``nvidia 0000:03:00.0: AER: can't recover (no
    error_detected callback)``): ``pci``, ``driver``: who is lost behind a port's error.
``link_not_active``
    the ports whose link did not train in time (``Data Link Layer Link Active not set in 1000 msec``): the devices
    behind them are lost, not unplugged.

``oops``
    a crash in kernel code (``BUG: unable to handle page fault``, ``BUG: kernel NULL pointer dereference``,
    ``Oops: 0000 [#1]``, ``general protection fault``, ``kernel BUG at``; one report's several lines are one event):
    ``module`` (the first module its call trace names, or None), ``pci`` (the function that module's driver last
    named before it, or None).

``pci_inaccessible``
    a device the PCI core could not bring to D0 (``can't change power state from D3cold to D0 (config space
    inaccessible)``, newer ``Unable to change power state from D3hot to D0, device inaccessible``): ``pci``,
    ``driver``, ``state`` (``D3cold``, ``D3hot``, ``unknown``: the state it was to leave).

``pcie_link_down``
    the PCIe hotplug driver's ``Slot(6): Link Down`` (``pcieport 0000:00:03.0: pciehp: Slot(2): Link Down``, older
    ``pciehp 0000:02:05.0:pcie24: slot(6): Link Down event``): ``port`` (the downstream port), ``slot``, ``up``
    (a ``Link Up`` of the slot after it), ``device`` (the ``domain:bus:dev`` pciehp unconfigured, if logged).
``bond_no_active``
    the bonding driver's ``bond1: now running without any active interface!``: ``bond``, ``up`` (an ``making
    interface X the new active one`` / ``first active interface up`` of that bond after it).

``nic_tx_hang``
    a network adapter whose transmit queue stopped: the driver's own words (e1000e ``Detected Hardware Unit
    Hang``, igb/ixgbe/e1000 ``Detected Tx Unit Hang``, mlx5/bnxt ``TX timeout detected``/``TX timeout on queue``,
    i40e/ice ``tx_timeout: VSI...``, IPoIB ``ib1: transmit timeout: latency 1120 msecs``) and the kernel's ``NETDEV
    WATCHDOG: eth0 (e1000e): transmit queue 0 timed out`` (6.x: ``<drv> <pci> <netdev>: NETDEV WATCHDOG: CPU: 2:
    transmit queue 3 timed out 5232 ms``):
    ``pci`` and ``netdev`` where the line names them.

``nic_firmware``
    an mlx5 adapter whose firmware stopped answering the driver: ``device's health compromised - reached miss
    count``, ``irisc not responding``, ``Fatal error N detected``, ``mlx5_enter_error_state``, a command that
    timed out (``CREATE_DCT(0x710) timeout. Will cause a leak of a command resource``, ``... No done
    completion``): ``pci``.

``nic_health``
    an mlx5 adapter's health buffer report of a firmware event (``Health issue observed, firmware internal error,
    severity(3) ERROR``, the ``synd 0x1: firmware internal error`` line of print_health_info): ``pci``, ``what``.

``nic_overheat``
    an mlx5 adapter's temperature warning (``mlx5_core 0000:41:00.0: temp_warn:170:(pid 0): High temperature on sensors
    with bit set 0 1``): ``pci``.

``roce_gid_failed``
    a RoCE GID the kernel could not program into the port (``infiniband mlx5_2: add_roce_gid GID add failed port=1
    index=0``, ``__ib_cache_gid_add: unable to add gid fe80:...:b31b error=-22``; the firmware's refusal, mlx5's
    ``SET_ROCE_ADDRESS(0x761) ... failed`` line, names the adapter): ``ibdev`` (or None), ``port``, ``index``,
    ``pci`` (the adapter whose SET_ROCE_ADDRESS failed just before, or None); RoCE over that address fails.
``rdma_wc_errors``
    an RDMA driver's work completion in error for a kernel consumer (NVMe-oF, iSER, NFS over RDMA, IPoIB):
    ``infiniband mlx5_0: mlx5_handle_error_cqe:332:(pid 0): WC error: 4, Message: local protection error``:
    ``ibdev``, ``status``, ``what``; status 5 (work request flushed: the queue pair was torn down) is not kept.

``hung_tasks``
    the hung-task watchdog's ``INFO: task node:1646922 blocked for more than 122 seconds.``: ``task``, ``pid``,
    ``seconds``, ``gpu_driver`` (the NVIDIA module its call trace waits in, ``nvidia_uvm``, else None).
``soft_lockups``
    the soft-lockup watchdog's ``watchdog: BUG: soft lockup - CPU#40 stuck for 26s! [python3:510]`` (older kernels:
    ``BUG: soft lockup - CPU#0 stuck for 67s! [swapper:0]``): ``cpu``, ``seconds``, ``task``, ``pid``.
``rcu_stalls``
    the RCU stall detector's ``INFO: rcu_sched detected stalls on CPUs/tasks: { 12 13} (detected by 17, t=60002
    jiffies)`` (5.x: ``rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:``; ``self-detected stall on CPU``):
    ``cpus`` (those the line names, or none).
``panics``
    ``Kernel panic - not syncing: <why>`` (the kernel stopped): ``why``.
``machine_checks``
    x86's machine check report of one bank (``mce: [Hardware Error]: CPU 1: Machine Check Exception: 4 Bank 4:
    f60c200100000813``; ``Exception`` when the check was raised, not polled): ``cpu``, ``bank``, ``status`` (the bank's
    MCi_STATUS), ``uncorrected`` (its UC bit, 61), ``context_corrupt`` (its PCC bit, 57).
``hypervisor``
    the hypervisor a virtual machine's kernel names at boot (``Hypervisor detected: KVM``), else None.
``nic_removed``
    a NIC driver that read all ones from its device and gave it up (``ixgbe 0000:05:00.0: Adapter removed``; igb, igc
    and e1000e's ``PCIe link lost, device now detached``):
    ``pci``, ``driver``.
``nic_module``
    mlx5's ``Port module event[error]: module 0, Cable error, Power budget exceeded``: the port's cable or
    transceiver is in error and its link cannot come up: ``pci``, ``module``, ``what`` (the driver's words after the
    module number). The plain ``Port module event: module 0, Cable plugged`` / ``unplugged`` is not an error.
``sxids``
    an NVSwitch's ``nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up``: ``pci`` (the
    switch), ``sxid``, ``fatal`` (True for ``Fatal``, False for ``Non-fatal``); the ``Severity N Engine instance`` and
    ``Data {...}`` lines that follow one are part of it and not events of their own. The fabric manager's journal
    line of the same error (``nv-fabricmanager[5183]: detected NVSwitch non-fatal error 22013 on NodeId 0 on NVSwitch
    pci bus id 00000000:08:00.0 physical id 3 port 60``) is one too.

AMD's decoded northbridge machine check of a DRAM ECC error (``[Hardware Error]: MC4 Error (node 3): DRAM ECC
error detected on the NB.`` and its ``MC4_STATUS[...|CE|...]``) is an ``edac`` event of ``MC4 node 3``.

``gpu_fatal`` also holds the driver's ``Reset required [NV_ERR_RESET_REQUIRED]`` (``what``: ``Reset
required``): the GPU takes no work until it is reset.
``api_mismatch``
    ``NVRM: API mismatch: the client has the version X, but this kernel module has the version Y`` (also the
    ``client 'kwin_wayland' (pid 1005) has the version X`` and ``client version X, kernel module version Y``
    forms): the driver's user-space libraries (the client) and the loaded kernel module differ, so no GPU is
    usable by CUDA or NVML until they match. ``client_version`` and ``module_version`` as the message names them,
    read across its continuation ``NVRM:`` lines (the driver wraps it; syslog's ``#012`` joins), None when the
    capture does not show one; ``line``/``time``/``text`` of its first line.

Timestamps read: syslog/journalctl (``Apr 19 13:16:41 host kernel:``, month names of any locale:
``июл 01 22:08:37``), ISO 8601, dmesg ``[  12.345678]``, ``dmesg -T`` ``[Sun Jan 11 09:52:01 2026]``,
``dmesg -H``/``--reltime`` (``[Jan11 09:52]``, ``[  +0.000844]``), ``dmesg -d`` (``[ 12.345 < 0.001>]``).
``link_flaps``
    the per-interface link down/up counts of :mod:`ccparse.syslog_linkflap` (the same parser,
    the same counting), or None when the lines carry no log prefix that parser reads (then
    ``link_flaps_note`` says why: flaps are not judged, not "zero flaps").

Output::

    {"xids": [{"line": 3, "time": "May 18 19:02:39", "pci": "0000:2b:00", "xid": 79, "pid": None,
               "process": None, "text": "GPU has fallen off the bus."}],
     "fallen_off_bus": [...], "nvlink_errors": [...], "link_flaps": {...} | None,
     "link_flaps_note": None, "lines": 3}

An empty log is valid (no event). A line without a log prefix still counts as a kernel line when it
starts as the kernel's device messages do (``<driver> <pci bus id>:``, ``EDAC MCn:``, ``mce:``,
``NVRM:``: dmesg pasted without its timestamps). Text in which no line looks like a kernel log line is
a ParseError naming the first line.
"""

from __future__ import annotations

import re
from typing import Any

from .common import ParseError, need_int, parser, strip_source_line, to_float, to_int, unwrap_log
from .syslog_linkflap import DMESG_CLOCK, DMESG_TIME, parse_syslog_linkflap

TOOL = "kernel log"

#: a month name as syslog/journalctl print it in any locale ('Apr', 'июл', 'Mär', 'juil.')
_MONTH = r"[^\W\d_]{3,4}\.?"
_PREFIXES = (
    re.compile(r"^(?P<time>" + _MONTH + r"\s+\d{1,2}\s+\d{2}:\d{2}:\d{2})\s+(?:\S+\s+)?kernel:\s*(?P<msg>.*)$"),
    re.compile(r"^(?P<time>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\s+"
               r"(?:\S+\s+)?kernel:\s*(?P<msg>.*)$"),
    re.compile(r"^(?P<time>" + _MONTH + r"\s+\d{1,2}\s+\d{2}:\d{2}:\d{2})\s+\S+\s+(?P<msg>.*)$"),
    # (CONFIG_PRINTK_CALLER's thread or CPU after it: '[ 1484.742859][ T2808] ...', '[193378.949952][   C10] ...')
    re.compile(r"^\[\s*(?P<time>" + DMESG_TIME + r")\](?:\[\s*[TC]\d{1,7}\])?\s*(?P<msg>.*)$"),
    re.compile(r"^\[(?P<time>" + DMESG_CLOCK + r")\]\s*(?P<msg>.*)$"),
    # OpenWrt logread: 'Wed Aug 12 17:30:58 2026 kern.info kernel: [    3.027370] ...'
    re.compile(r"^(?P<time>" + DMESG_CLOCK + r")\s+\S+\s+kernel:\s*"
               r"(?P<msg>.*)$"),
    # dmesg --time-format iso: '2025-01-17T15:36:15,345059+00:00 pci 0000:80:00.0: ...' (no 'kernel:')
    re.compile(r"^(?P<time>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[,.]\d+(?:Z|[+-]\d{2}:?\d{2})?)\s+(?P<msg>.*)$"),
    # a raw /dev/kmsg record: 'level,seq,usec,flags;message'
    re.compile(r"^\d{1,3},\d{1,20},(?P<time>\d{1,20}),[-+c][^;]{0,40};(?P<msg>.*)$"),
    # a console server's bracketed wall clock, the kernel's stamp after it or not ('[2023-06-22 21:55:31.352446]
    # [5975153.869131] EDAC MC0: ...', glued or spaced; its firmware's '[2023-06-24 00:40:54.482177]ERROR: ...')
    re.compile(r"^\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\] ?\[\s*(?P<time>" + DMESG_TIME
               + r")\]\s*(?P<msg>.*)$"),
    re.compile(r"^\[(?P<time>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?)\]\s*(?P<msg>.*)$"),
)
#: a journal line's tag before a dmesg line it holds (a script that logged dmesg's output: 'healthcheck.sh[4242]: [
#: +0.006184] BUG: ...'): the tag goes, the dmesg stamp is read
_TAG_BEFORE_STAMP = re.compile(r"^[\w.@/-]{1,64}(?:\[\d{1,9}\])?: (?=\[\s*[+\d]|\[[A-Z][a-z]{2})")
#: the journal's host and 'kernel:' after a dmesg-style time (journalctl -o short-monotonic: '[  146.010113]
#: talos.danny.cz kernel: nvme ...')
_HOST_KERNEL = re.compile(r"^[\w.-]{1,64} kernel: ")
#: dmesg --decode (-x): 'kern  :info  : ' before the time (or the message)
_DECODE = re.compile(r"^(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local\d)\s{0,4}:"
                     r"\s{0,4}(?:emerg|alert|crit|err|warn|notice|info|debug)\s{0,4}:\s?")
_DMESG_IN_MSG = re.compile(r"^\[\s*(?P<time>" + DMESG_TIME + "|" + DMESG_CLOCK + r")\](?:\[\s*[TC]\d{1,7}\])?\s*")
_PCI = r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?"
_XID = re.compile(r"NVRM: Xid \((?:PCI:)?(?P<pci>" + _PCI + r"|\.{3}|\u2026)\):\s*(?P<code>\d{1,4})\b,?\s*"
                  r"(?P<rest>.*)$")
_PID = re.compile(r"\bpid=(?P<pid>\d+|'<unknown>'|<unknown>)")
_NAME = re.compile(r"\bname=(?P<name>[^,]*)")
_FALLEN = re.compile(r"fallen off the bus", re.IGNORECASE)
_GPU_PCI = re.compile(r"GPU (?:at )?(?:PCI:)?(?P<pci>" + _PCI + r")")
_NVLINK = re.compile(r"nvlink", re.IGNORECASE)
#: PCIe AER uncorrected fatal errors: 'AER: Uncorrected (Fatal) error received: 0000:01:00.0',
#: 'PCIe Bus Error: severity=Uncorrected (Fatal), type=...' (device named by the line's own prefix)
_AER_FATAL = re.compile(r"Uncorrect(?:ed|able) \(Fatal\)")
#: the kernel's link report of a device trained below its capability (pcie_print_link_status):
#: '63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:3a:00.0 (capable of
#: 126.016 Gb/s with 8.0 GT/s PCIe x16 link)'
_LIMITED = re.compile(r"PCIe bandwidth, limited by (?P<at>.{0,80}?link at \S+) \(capable of (?P<cap>[^)]{0,80})\)")
#: ixgbe's own report of a slot that cannot carry the card ('This is not sufficient for optimal performance of this
#: card.', after the link it found, '(Speed:5.0GT/s, Width: x4, Encoding Loss:20%)', and before the bandwidth the card's
#: ports need, 'at least 20GT/s of bandwidth is required'); i40e/ice's 'may be insufficient' is printed for any link
#: below Gen3 x8 whatever the ports need: it is read only where the log shows that function's port up at a rate above
#: what its PCIe link carries (:data:`_MAY_BE_INSUFFICIENT`, :func:`_pcie_gbps`)
_NOT_SUFFICIENT = re.compile(r"not sufficient for optimal performance")
_MAY_BE_INSUFFICIENT = re.compile(r"bandwidth available for this device may be insufficient")
#: an Intel NIC port's link as its driver reports it ('i40e 0000:04:00.0 eth10: NIC Link is Up, 40 Gbps Full Duplex',
#: ice: 'NIC Link is up 100 Gbps Full Duplex')
_NIC_LINK_UP = re.compile(r"(?P<pci>" + _PCI + r") [\w.-]{1,32}: NIC Link is [Uu]p,? (?P<rate>\d{1,4}(?:\.\d{1,3})?) "
                          r"?(?P<unit>Gbps|Mbps)")
#: each lane's payload of a PCIe rate (GT/s): 8b/10b encoding up to 5 GT/s, 128b/130b from 8 GT/s
_LANE_GBPS = {2.5: 2.0, 5.0: 4.0, 8.0: 8.0 * 128 / 130, 16.0: 16.0 * 128 / 130, 32.0: 32.0 * 128 / 130}
_NIC_LINK = re.compile(r"Speed:?\s*(?P<speed>[\d.]{1,5}\s?GT/s),?\s+Width:?\s*(?P<width>x\d{1,2})")
_DEV_PREFIX = re.compile(r"^(?:[\w.-]{1,40} )?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):")


def _pcie_gbps(speed: str, width: str) -> float | None:
    """The payload bandwidth (Gb/s) of a PCIe link ('5.0GT/s', 'x8' -> 32.0), or None for a rate not in the table."""
    lane = _LANE_GBPS.get(to_float(speed.replace("GT/s", "").strip()) or 0.0)
    lanes = to_int(width.lstrip("x"))
    return lane * lanes if lane is not None and lanes else None


_AER_SOURCE = re.compile(r"received: (" + _PCI + ")")
#: the kernel's AER error injector at work (a test, not a fault): 'pcieport 0000:ed:00.4: aer_inject: Injecting errors
#: 00000000/00040000 into device 0000:ed:01.0'
_AER_INJECT = re.compile(r"aer_inject: Injecting errors [0-9a-fA-F]{1,8}/[0-9a-fA-F]{1,8} into device (" + _PCI + ")")
#: PCIe AER corrected errors: a device's own 'PCIe Bus Error: severity=Corrected' line, or the root
#: port's 'AER: [Multiple ]Corrected error received: <dev>' / 'Correctable error message received
#: from <dev>' (kernel 6.x wording)
_AER_CORRECTED = re.compile(r"severity=Correct(?:ed|able)\b|Correct(?:ed|able) error (?:message )?received")
_AER_FROM = re.compile(r"received(?::| from) (" + _PCI + ")")
#: Downstream Port Containment: the port took the link down on an uncorrectable error, whose AER lines it may not print
#: ('pcieport 0015:00:00.0: DPC: containment event, status:0x200d, ERR_FATAL received from 0015:01:00.0'; before 5.19
#: 'DPC: containment event, status:0x0005 source:0x3400' then 'DPC: ERR_FATAL detected', the source as bus/devfn; a root
#: port's 'DPC: RP PIO error detected', a CPU access below it that failed, contained as a non-fatal error is)
_DPC = re.compile(r"DPC: (?:containment event, status:0x[0-9a-fA-F]{1,4}(?:, (?P<sev>ERR_FATAL|ERR_NONFATAL) received "
                  r"from (?P<src>" + _PCI + r")| source:0x(?P<bdf>[0-9a-fA-F]{4}))"
                  r"|(?P<sev2>ERR_FATAL|ERR_NONFATAL|RP PIO error) detected)")
#: firmware-first AER (GHES, the kernel's cper_print_aer): '<drv> <pci>: AER: aer_status: 0x00000001, aer_mask: ...'
#: then the status's bits, '<drv> <pci>:    [ 0] RxErr   (First)'; no 'severity=' line of the kernel's own: the bit's
#: name says the register (these are the correctable error status register's, PCIe r6.0 7.8.4.5)
_AER_STATUS = re.compile(r"^(?:[\w.-]{1,40} )?(?P<pci>" + _PCI + r"): AER: aer_status: 0x[0-9a-fA-F]{1,8}")
_AER_BIT = re.compile(r"^(?:[\w.-]{1,40} )?(?P<pci>" + _PCI + r"):\s+\[\s?\d{1,2}\] (?P<name>\w{2,20})")
_CORRECTABLE_BITS = frozenset({"RxErr", "BadTLP", "BadDLLP", "Rollover", "Timeout", "NonFatalErr", "CorrIntErr",
                               "HeaderOF"})
#: a second log head inside a line's message (a journal or dmesg line under a CI runner's or a service's own time, or
#: a service's journal head or a reply's quote before it: 'May 27 15:47:47 manet kernel: BUG: ...', 'check.sh[42]:
#: [ 316.8] pci ...', '> [ 2.06] igb ...'):
#: the kernel's own words follow it
_INNER_HEAD = re.compile(r"(?:> ?){0,3}(?:[\w.@-]{1,64}\[\d{1,10}\]: (?:> ?){0,3})?"
                         r"(?:[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S{1,64} kernel: "
                         r"|\[\s{0,12}\d{1,10}\.\d{1,9}\](?:\[\s{0,6}[TC]\d{1,7}\])? |\[" + DMESG_CLOCK + r"\] )?")
#: the kernel's own report of a crash in kernel code (an oops): the page fault or NULL dereference it hit, the
#: 'Oops: 0000 [#1]' line, a general protection fault, a BUG() assertion; x86's die() names its trap ('invalid opcode:
#: 0000 [#1] SMP' is a BUG()'s ud2, 'stack segment: 0000 [#1]', 'divide error: 0000 [#1]'); arm64's 'Internal error:
#: Oops: 0000000096000004 [#1] PREEMPT SMP' and 'Unable to handle kernel NULL pointer dereference at virtual address
#: ...'. (Not 'BUG: soft lockup', not WARNING.)
_OOPS = re.compile(r"^(?:BUG: unable to handle|BUG: kernel NULL pointer dereference|"
                   r"(?:Internal error: )?Oops(?::| -) .{0,60}?\[#\d{1,4}\]|"
                   r"[a-z][a-z ]{2,30}: [0-9a-f]{4} \[#\d{1,4}\]|"
                   r"general protection fault|kernel BUG at "
                   r"|Unable to handle kernel (?:NULL pointer|paging request))")
#: a call trace frame of a module's code: ' mlx5_irq_alloc+0x22f/0x3d0 [mlx5_core 1122...]'
_FRAME_MODULE = re.compile(r"\+0x[0-9a-f]{1,8}/0x[0-9a-f]{1,8} \[(?P<mod>[A-Za-z0-9_]{1,40})"
                           r"(?: [0-9a-f]{20,64})?\]\s*$")
#: lines of an oops report after its first (registers, modules, the trace) that may name the module
_OOPS_LINES = 80
_AER_NONFATAL = re.compile(r"Uncorrect(?:ed|able) \(Non-Fatal\)")
#: EDAC memory controller reports: 'EDAC MC0: 4 CE error on ...' (corrected), '... UE ...' (uncorrected)
_EDAC = re.compile(r"EDAC (?P<mc>MC\d{1,3}|\w{1,32}):\s*(?:(?P<count>\d{1,9}) )?(?P<kind>CE|UE)\b\s*(?P<rest>.{0,200})")
#: the count of the older form, which names it after the location: 'EDAC MC1: CE row 1, channel 0, label "...":
#: 1 Unknown error(s): memory scrubbing ...' (sb_edac, i7core_edac)
_EDAC_OLD_COUNT = re.compile(r":\s*(\d{1,9}) [\w ]{0,40}?error\(s\)")
#: pciehp's link events of a slot: 'pcieport 0000:00:03.0: pciehp: Slot(2): Link Down' (kernel 5+),
#: 'pciehp 0000:02:05.0:pcie24: slot(6): Link Down event' (older)
_PCIEHP_LINK = re.compile(r"(?:(?P<port>" + _PCI + r")(?::pcie\d{1,4})?: (?:pciehp: )?|^pciehp: )"
                          r"[Ss]lot\((?P<slot>[^)]{1,24})\): Link (?P<state>Down|Up)\b")
_PCIEHP_UNCONFIGURE = re.compile(r"pciehp_unconfigure_device: domain:bus:dev = (?P<dev>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:"
                                 r"[0-9a-fA-F]{2})")
#: the bonding driver: 'bond1: now running without any active interface!' and what brings a member back
_BOND_NONE = re.compile(r"(?P<bond>(?<![\w.-])[A-Za-z][\w.-]{0,31}): now running without any active interface")
_BOND_BACK = re.compile(r"(?P<bond>(?<![\w.-])[A-Za-z][\w.-]{0,31}): (?:making interface \S+ the new active one|"
                        r"first active interface up)")
#: a transmit queue that stopped: the driver's hang detection or the kernel's watchdog (see the module doc)
_TX_HANG = re.compile(r"Detected (?:Hardware|Tx) Unit Hang|TX timeout (?:detected|on queue)|\btx_timeout: VSI"
                      r"|NETDEV WATCHDOG: (?:(?P<wif>[\w.@-]{1,32}) \([^)]{1,40}\): )?(?:CPU: \d{1,5}: )?"
                      r"transmit queue \d{1,5} timed out"
                      # IPoIB's own watchdog handler (ipoib_timeout): 'ib1: transmit timeout: latency 1120 msecs'
                      r"|(?:^|\s)(?P<ipif>[\w.@-]{1,32}): transmit timeout: latency \d{1,9} msecs")
#: the kernel of a virtual machine names its hypervisor at boot ('Hypervisor detected: KVM', 'Booting paravirtualized
#: kernel on KVM'; bare metal prints 'on bare hardware')
_HYPERVISOR = re.compile(r"Hypervisor detected: (?P<hv>[\w -]{1,32}?)\s*$|Booting paravirtualized kernel on "
                         r"(?!bare hardware)(?P<pv>[\w -]{1,32}?)\s*$")
#: the hung-task watchdog: 'INFO: task node:1646922 blocked for more than 122 seconds.'
_HUNG_TASK = re.compile(r"INFO: task (?P<task>\S{1,64}):(?P<pid>\d{1,10}) blocked for more than "
                        r"(?P<secs>\d{1,7}) seconds")
#: the soft-lockup watchdog: a CPU kept in kernel mode ('watchdog: BUG: soft lockup - CPU#40 stuck for 26s!
#: [python3:510]')
_SOFT_LOCKUP = re.compile(r"BUG: soft lockup - CPU#(?P<cpu>\d{1,5}) stuck for (?P<secs>\d{1,7})s!"
                          r"(?: \[(?P<task>.{1,64}):(?P<pid>\d{1,10})\])?")
#: the RCU stall detector: CPUs that did not pass a quiescent state for rcu_cpu_stall_timeout (21-60 s): 'INFO:
#: rcu_sched detected stalls on CPUs/tasks: { 12 13} (detected by 17, t=60002 jiffies)', 5.x 'rcu: INFO: rcu_preempt
#: detected stalls on CPUs/tasks:' (the CPUs on the lines after it), 'INFO: rcu_sched self-detected stall on CPU { 3}'
_RCU_STALL = re.compile(r"INFO: rcu_\w{1,16} (?:self-)?detected stalls? on CPUs?(?:/tasks)?:?\s*"
                        r"(?:\{\s*(?P<cpus>[\d ]{1,200}?)\s*\})?")
#: the kernel's last words before it stops: 'Kernel panic - not syncing: Out of memory: system-wide panic_on_oom is
#: enabled', 'Kernel panic - not syncing: Fatal exception' (after an oops), '... Hard LOCKUP'
_PANIC = re.compile(r"Kernel panic - not syncing:?\s*(?P<why>.{0,160})")
#: x86's machine check of one bank (arch/x86/kernel/cpu/mce/core.c __print_mce): 'CPU 1: Machine Check Exception: 4
#: Bank 4: f60c200100000813' (Exception: MCIP, the check was raised), 'CPU 0: Machine Check: 0 Bank 5: be00...'
_MCE = re.compile(r"CPU (?P<cpu>\d{1,5}): Machine Check(?: Exception| Event)?: (?:0x)?[0-9a-fA-F]{1,16} "
                  r"Bank (?P<bank>\d{1,3}): (?:0x)?(?P<status>[0-9a-fA-F]{16})\b")
#: a firmware-first (APEI GHES, cper_print) error record: its 'event severity: fatal', a 'section_type: memory error'
#: and the 'DIMM location: CPU 1 DIMM 8' it names
_GHES = re.compile(r"\[Hardware Error\]:\s+(?:event severity: (?P<sev>fatal|recoverable|corrected)\b"
                   r"|section_type: (?P<mem>memory error)|DIMM location: (?P<dimm>[^\n]{1,80}))")
#: the ``where`` of an ``edac`` event read off a GHES record (the record's DIMM line names it when it comes)
_GHES_WHERE = "firmware error record (GHES)"
#: a local disk's errors (see ``storage_errors``): the device, then what befell it
_STORAGE = re.compile(
    r"nvme (?P<nvme>nvme\d{1,3}): (?:(?P<lost>controller is down|Removing after probe failure|Device not ready; "
    r"aborting|Disabling device after reset failure)|(?P<nto>I/O \d+ (?:\([^)]{0,20}\) )?QID \d+ timeout))"
    r"|(?P<ata>ata\d{1,3}(?:\.\d{1,2})?): (?:(?P<alost>disabled?(?: device)?\s*$)|(?P<ato>exception Emask .*\bfrozen|"
    r"qc timeout)|error: \{ (?P<unc>UNC) \})"
    r"|I/O error, dev (?P<blk>nvme\d{1,3}n\d{1,3}|[sv]d[a-z]{1,3}|xvd[a-z]{1,3}|hd[a-z])\b"
    r"|\[(?P<sd>sd[a-z]{1,3})\] (?:tag#\d+ )?Sense Key : (?P<med>Medium Error)")


def _storage_kind(se: re.Match[str]) -> str:
    """What a disk's error line says befell it (``storage_errors``' ``kind``)."""
    if se.group("lost") or se.group("alost"):
        return "lost"
    if se.group("nto") or se.group("ato"):
        return "timeout"
    return "medium" if se.group("unc") or se.group("med") else "io_error"


#: memory without error correction: amd64_edac's 'Node 0: DRAM ECC disabled.', sb_edac/skx's 'ECC is disabled'
_ECC_OFF = re.compile(r"EDAC [\w.-]{1,32}: (?:Node (?P<node>\d{1,3}): DRAM ECC disabled|ECC is disabled)")
#: AMD's decoded northbridge machine check of a DRAM ECC error ('[Hardware Error]: MC4 Error (node 3): DRAM ECC error
#: detected on the NB.'), then its status with the error's kind ('MC4_STATUS[Over|CE|MiscV|-|AddrV|CECC]: 0x...')
_AMD_DRAM = re.compile(r"MC4 Error \(node (?P<node>\d{1,3})\): DRAM ECC error")
_AMD_STATUS = re.compile(r"MC4_STATUS\[(?P<flags>[^\]]{0,80})\]")
#: a NIC driver that read all ones from its device and gave it up ('ixgbe 0000:05:00.0: Adapter removed')
_ADAPTER_REMOVED = re.compile(r"(?<![\w.-])(?P<drv>[\w.-]{1,40}) (?P<pci>" + _PCI + r"):? (?:\S{1,32}: )?"
                              r"(?:Adapter removed|PCIe link lost)")
#: mlx5's port module (cable/transceiver) in error ('Port module event[error]: module 0, Cable error, High Temperature')
_MODULE_ERROR = re.compile(r"Port module event\[error\]: module (?P<mod>\d{1,3}), (?P<what>.{1,120}?)\s*$")
#: an NVSwitch error ('nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up')
_SXID = re.compile(r"SXid \(PCI:(?P<pci>" + _PCI + r")\): (?P<sxid>\d{1,6}), (?P<sev>Fatal|Non-fatal),"
                   r"\s*(?P<what>.{0,160})")
#: the fabric manager's journal line of an NVSwitch error
_FM_SXID = re.compile(r"detected NVSwitch (?P<sev>fatal|non-fatal) error (?P<sxid>\d{1,6}) on .{0,60}?pci bus id "
                      r"(?P<pci>" + _PCI + r")(?P<what>.{0,80})")
#: an mlx5 adapter's health buffer (print_health_info): 'Health issue observed, firmware internal error, severity(3)
#: ERROR:' (5.16+), and the syndrome line every version prints with it, 'synd 0x1: firmware internal error'
_NIC_HEALTH = re.compile(r"Health issue observed, (?P<what>[^,]{1,80})|print_health_info:\d{1,5}:\(pid \d{1,9}\): "
                         r"synd 0x[0-9a-fA-F]{1,4}: (?P<synd>.{1,80})")
#: an mlx5 adapter's firmware that stopped answering (see the module doc)
_NIC_FW = re.compile(r"health compromised|irisc not responding|Fatal error \d{1,4} detected|mlx5_enter_error_state"
                     r"|Driver is in error state"
                     r"|failed to allocate command entry|health recovery flow aborted"
                     r"|\(0x[0-9a-fA-F]{1,4}\) timeout\. Will cause a leak|\(0x[0-9a-fA-F]{1,4}\) No done completion"
                     # a command the firmware did not complete in time (the driver recovered its completion late)
                     r"|mlx5_cmd_eq_recover|wait_func_handle_exec_timeout")
#: a driver's auxiliary device whose probe failed ('mlx5_core.eth: probe of mlx5_core.eth.2 failed with error -22'): the
#: PCI function it belongs to is the one the driver's lines just before it name (a command the firmware refused there,
#: 'CREATE_TIS(0x912) op_mod(0x0) failed, status bad parameter(0x3)', is then the cause; alone such a line may answer a
#: bad request of an application and is not judged)
_MLX5_DEV = re.compile(r"mlx5_core (?P<pci>" + _PCI + r"):")
_AUX_PROBE_FAILED = re.compile(r"probe of (?P<aux>[a-z]\w{0,20}\.\w{1,20}\.\d{1,4}) failed with error (?P<err>-?\d+)")
#: a Broadcom RoCE device whose firmware failed the driver's commands ('bnxt_en 0000:82:00.0 bnxt_re0: Failed to
#: create HW CQ', 'infiniband bnxt_re0: Failed to allocate HW AH', 'infiniband bnxt_re0: Couldn't open port 1';
#: 'QPLIB: cmdq[0x4b9]=0x15 status 0x5' is the failed command itself, named on the lines after it)
#: (after 'infiniband ' the RDMA core names any device: HiSilicon's 'infiniband hns_2: Couldn't open port 1')
_RDMA_DEV_FAILED = re.compile(r"(?:infiniband (?=[a-z]\w{0,20}\d: )|\s(?=bnxt_re|mlx5_|irdma|qedr|hns_))"
                              r"(?P<ibdev>[a-z]\w{0,20}?\d{1,3}): "
                              r"(?P<what>(?:Failed to|Couldn't|Could not) (?:create|allocate|register|modify|"
                              r"query|open|init\w*) [\w -]{1,40})")


#: a driver that cannot claim its device's registers ('vfio-pci 0000:b3:00.0: BAR 1: can't reserve [mem 0xe0000000-
#: 0xefffffff 64bit pref]', pci_request_region: a framebuffer or another driver holds the range); the PCI core's own
#: boot-time 'no space for' / 'failed to assign' lines of bridge windows are not this
_BAR_UNCLAIMED = re.compile(r"(?P<drv>[\w.-]{1,40}) (?P<pci>" + _PCI + r"): BAR (?P<bar>\d{1,2}): "
                            r"can[\u2019']t reserve ")
#: the PCI core's assignment of a device's BAR: 'pci 0000:53:00.0: BAR 0: failed to assign [mem ...]' (after 'no space
#: for'), 6.x 'pci 0000:53:00.0: BAR 0 [mem size 0x02000000 64bit pref]: can't assign; no space', and 'BAR 0: assigned
#: [mem ...]' when a later pass found room; a register BAR (0-5) left unassigned leaves the device without registers
_BAR_ASSIGN = re.compile(r"(?P<pci>" + _PCI + r"): BAR (?P<bar>[0-5])(?::| \[[^\]]{1,80}\]:) "
                         r"(?P<what>failed to assign|can[\u2019']t assign|assigned)")
#: the RDMA core failing to add a RoCE GID ('infiniband mlx5_2: add_roce_gid GID add failed port=1 index=0'; the cache's
#: '__ib_cache_gid_add: unable to add gid fe80:0000:...:b31b error=-22')
_GID_ADD_FAILED = re.compile(r"(?:infiniband (?P<ibdev>[\w.-]{1,40}): )?add_roce_gid GID add failed "
                             r"port=(?P<port>\d{1,3}) index=(?P<index>\d{1,5})|__ib_cache_gid_add: unable to add gid")
#: an RDMA driver's completion in error ('infiniband mlx5_0: mlx5_handle_error_cqe:332:(pid 0): WC error: 4, Message:
#: local protection error'); ibv_wc_status 5, IBV_WC_WR_FLUSH_ERR, is the flush of a queue pair being torn down
_WC_ERROR = re.compile(r"infiniband (?P<ibdev>[a-z]\w{0,20}?\d{1,3}): .{0,80}?WC error: (?P<status>\d{1,3}), "
                       r"Message: (?P<what>[\w -]{1,60})")
_WC_FLUSHED = "5"


def _rdma_dev_pci(lines: list[str], end: int, ibdev: str) -> str:
    """The bus id the driver's line (``lines[end - 1]`` or one of the 399 before it) gives RDMA device ``ibdev``
    (``hns3 0000:bd:00.2 hns_2: ...``, ``bnxt_en 0000:82:00.0 bnxt_re0: ...``), else ``ibdev`` itself."""
    named = re.compile(r"(" + _PCI + r") " + re.escape(ibdev) + ":")
    for ln in reversed(lines[max(0, end - 400):end]):
        if ibdev in ln and (m := named.search(ln)):
            return m.group(1).lower()
    return ibdev


#: the device a driver's netdev message names: '<drv> <pci> <netdev>: ...' (or '<drv> <pci>: <netdev>: ...'),
#: e1000's older '<drv>: <netdev>: ...'
_NIC_DEV = re.compile(r"^(?:[\w.-]{1,40} )?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?::? "
                      r"(?P<netdev>[\w.@-]{1,32}):)?|^[\w.-]{1,40}: (?P<oldif>[\w.@-]{1,32}): ")
#: a line of dmesg pasted without its timestamp: '<driver> <pci bus id>: ...' (a NIC's netdev after it: 'bnxt_en
#: 0000:04:00.0 eth0: ...'), 'EDAC ...', 'mce: ...', powerpc's 'EEH: ...', a panic's or a machine check's console line
_BARE_KERNEL = re.compile(r"^(?:[\w.-]{1,40} " + _PCI + r"(?: [\w.@-]{1,20})?:|EDAC \w{1,32}:|mce: |"
                          r"\[Hardware Error\]: |EEH: |"
                          r"mlx5_core (?:[\w.-]{1,20}: )?|"
                          r"INFO: task \S{1,64}:\d{1,10} blocked for more than |Kernel panic - not syncing: |"
                          r"CPU \d{1,5}: Machine Check(?: Exception| Event)?: |"
                          r"nvme nvme\d{1,3}: |ata\d{1,3}(?:\.\d{1,2})?: |"
                          r"(?:blk_update_request: |print_req_error: )?I/O error, dev )")
#: a driver that failed to bring a device up: 'mlx5_core: probe of 0000:01:00.0 failed with error -22'
#: (the driver core of kernel 6.x words it 'nvidia 0000:2c:00.0: probe with driver nvidia failed with error -1')
_PROBE_FAILED = re.compile(r"(?:probe of (?P<pci>" + _PCI + r")|(?P<dev>" + _PCI + r"): probe with driver \S{1,64}) "
                           r"failed with error (?P<err>-?\d+)")
#: the driver's refusal of a GPU it does not support, over the continuation lines it wraps it onto (read joined)
_NOT_SUPPORTED = re.compile(r"NVRM: The NVIDIA GPU (?P<pci>" + _PCI + r") \(PCI ID: [^)]{1,32}\).{0,120}?"
                            r"is not supported by")
#: NVIDIA driver messages of a GPU the driver lost or could not initialise, without an Xid: the GPU is
#: named by bus id ('NVRM: GPU 0000:01:00.0: RmInitAdapter failed!') or by the driver's index ('NVRM:
#: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out', GSP RPC timeouts, memory subsystem errors; the open module's
#: 'RmInitAdapter: Cannot initialize GSP firmware RM' after 'kgspInitRm_IMPL: Max GSP-RM boot attempts exceeded: 4/4')
#: (drivers before 400 name no GPU: 'NVRM: RmInitAdapter failed! (0x26:0xffff:1127)', 'NVRM: rm_init_adapter failed for
#: device bearing minor number 0'; the driver's refusal of a GPU whose BAR the firmware left unassigned: 'NVRM: BAR1 is
#: 0M @ 0x0 (PCI:0000:01:00.0)' under 'This PCI I/O region assigned to your NVIDIA device is invalid'; Hopper's security
#: processor refusing the boot: 'NVRM kfspSendBootCommands_GH100: FSP boot cmds failed. RM cannot boot.', the colon
#: after NVRM left out by the driver's early messages)
_GPU_FATAL = re.compile(r"NVRM:? (?:(?:GPU (?:at )?(?:PCI:)?(?P<pci>" + _PCI + r")|(?P<idx>GPU\d{1,3})\b).*?"
                        r"|\w{1,48}: (?:Max )?)?"
                        r"(?P<what>RmInitAdapter failed|rm_init_adapter failed|Heartbeat timed out|GSP Timeout"
                        r"|Cannot initialize GSP firmware RM|GSP-RM boot attempts exceeded|FSP boot cmds failed"
                        r"|Memory Subsystem Error|BAR\d is 0M @ 0x0 \(PCI:(?P<bar_pci>" + _PCI + r")\)"
                        # the GSP's RPCs failing with NV_ERR_GPU_IS_LOST (0x0f): the GPU no longer answers
                        r"|rpcSendMessage failed with status 0x0000000f|GPU lost from the bus \[NV_ERR_GPU_IS_LOST\]"
                        # NV_ERR_INSUFFICIENT_POWER: the board's auxiliary power is not plugged (the driver stops there)
                        r"|GPU does not have the necessary power cables connected)",
                        re.IGNORECASE)
#: amdgpu's recovery of a hung GPU that failed ('amdgpu 0000:0b:00.0: GPU reset(2) failed'): no ring takes work
_AMD_RESET_FAILED = re.compile(r"^amdgpu (?P<pci>" + _PCI + r"): GPU reset(?:\(\d{1,6}\))? failed")
#: 'minor number 0' of an old driver's rm_init_adapter line: the GPU's /dev/nvidia<N>
_MINOR = re.compile(r"minor number (\d{1,3})")
_GPU_FATAL_WORDS = ("RmInitAdapter failed", "rm_init_adapter failed", "Heartbeat timed out", "GSP Timeout",
                    "Memory Subsystem Error", "Cannot initialize GSP firmware RM", "GSP-RM boot attempts exceeded",
                    "FSP boot cmds failed")
_GPU_FATAL_WHAT = {w.lower(): w for w in _GPU_FATAL_WORDS} | {
    "rpcsendmessage failed with status 0x0000000f": "GSP RPC failed: GPU lost (NV_ERR_GPU_IS_LOST)",
    "gpu lost from the bus [nv_err_gpu_is_lost]": "GPU lost from the bus (NV_ERR_GPU_IS_LOST)",
    "gpu does not have the necessary power cables connected": "its power cables are not connected "
                                                              "(NV_ERR_INSUFFICIENT_POWER)"}
#: mlx5's report of a slot that cannot power the card ('Detected insufficient power on the PCIe slot (27W)')
_SLOT_POWER = re.compile(r"insufficient power on the PCIe slot", re.IGNORECASE)
#: the driver's 'the GPU must be reset' status ('Reset required [NV_ERR_RESET_REQUIRED] (0x00000062)')
_RESET_REQUIRED = "NV_ERR_RESET_REQUIRED"
#: the GPU a non-NVRM driver line names: 'nvidia-modeset: ERROR: GPU:0: ...'
_GPU_INDEX = re.compile(r"\bGPU:?(?P<idx>\d{1,3})\b")
#: an AER recovery that gave up on a device: 'nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)'
#: the PCI core cannot wake a device ('pci 0000:01:00.0: can't change power state from D3cold to D0 (config space
#: inaccessible)'; 5.x: 'Unable to change power state from D3cold to D0, device inaccessible'): it does not answer
_NO_WAKE = re.compile(r"^(?P<drv>[\w.-]{1,40}) (?P<pci>" + _PCI + r"): (?:can't|Unable to) change power state "
                      r"from (?P<from>D3cold|D3hot|unknown)\b")
#: a port whose link did not come up in time ('pcieport 0000:00:01.0: Data Link Layer Link Active not set in 1000
#: msec'): the devices behind it are lost, not unplugged
_DLL_NOT_ACTIVE = re.compile(r"^[\w.-]{1,40} (?P<pci>" + _PCI + r"): Data Link Layer Link Active not set")
_CANT_RECOVER = re.compile(r"^(?P<drv>[\w.-]{1,40}) (?P<pci>" + _PCI + r"): AER: can't recover")
#: nouveau read the GPU's chip id as all ones ('nouveau 0000:01:00.0: unknown chipset (ffffffff)'): the device does
#: not answer reads of its registers (as lspci's 'rev ff')
_ALL_ONES_CHIP = re.compile(r"^nouveau (?P<pci>" + _PCI + r"): unknown chipset \(ffffffff\)")
#: the GPU peer-memory module (GPUDirect RDMA) that cannot load against the running RDMA core: 'nv_peer_mem: Unknown
#: symbol ib_register_peer_memory_client (err 0)', 'nvidia_peermem: disagrees about version of symbol ib_...'
_PEERMEM_FAILED = re.compile(r"^(?P<mod>nv_peer_mem|nvidia_peermem): (?P<what>Unknown symbol \S{1,80}|disagrees about "
                             r"version of symbol \S{1,80})")
#: POWER's EEH giving a device up ('EEH: Unable to recover from failure from PHB#30-PE#1fb.', after 'has failed 6 times
#: in the last hour and has been permanently disabled'), then the device in its log: 'EEH: of node=0030:0d:00.0'
_EEH_GAVE_UP = "EEH: Unable to recover from failure"
_EEH_NODE = re.compile(r"EEH: of node=(?P<pci>" + _PCI + r")")
#: lines after EEH gives up within which it names the device
_EEH_LINES = 6
#: mlx5's own failure to initialise a function ('mlx5_core 0000:00:08.0: probe_one:1959:(pid 1283): mlx5_init_one
#: failed with error code -19'): the driver does not bind it
_MLX5_INIT_FAILED = re.compile(r"^mlx5_core (?P<pci>" + _PCI + r"): .{0,60}mlx5_init_one failed with error code "
                               r"(?P<err>-?\d+)")
_FAILURE = re.compile(r"\b(?:fail(?:ed|ure)?|error|fatal|timeout|timed out)\b", re.IGNORECASE)


def _split(line: str) -> tuple[str | None, str, bool]:
    """(time, message, looks like a log line)."""
    if line[:1] in "kumdsalncf" and (dec := _DECODE.match(line)):
        time, msg = _split(line[dec.end():])[:2]
        return time, msg, True
    for rx in _PREFIXES:
        m = rx.match(line)
        if m:
            msg = m.group("msg")
            if msg[:1] != "[" and (tag := _TAG_BEFORE_STAMP.match(msg)):
                msg = msg[tag.end():]  # a service's journal line holding dmesg's ('healthcheck.sh[4242]: [ +0.01] ...')
            d = _DMESG_IN_MSG.match(msg) or _HOST_KERNEL.match(msg)
            return m.group("time"), msg[d.end():] if d else msg, True
    if line.startswith("kernel:"):
        return None, line[len("kernel:"):].strip(), True
    if _BARE_KERNEL.match(line):  # dmesg without its timestamp column (dmesg -t, or cut by the paster)
        return None, line, True
    return None, line, False


def _log_line(line: str) -> bool:
    """A kernel log's line (its time or head, or the driver's ``NVRM:``): what a wrapped rest lacks."""
    return _split(line.strip())[2] or "NVRM:" in line


#: the driver's note on an Xid 43/45 that an earlier Xid caused: '..., Ch 00000001 caused by previous Xid 149'
_CAUSED_BY = re.compile(r"\bcaused by previous Xid (\d{1,4})\b")


def _event(lineno: int, time: str | None, msg: str, **extra: Any) -> dict[str, Any]:
    return {"line": lineno, "time": time, **extra, "text": msg}


#: the two versions of an ``NVRM: API mismatch`` message (its lines joined, ``NVRM:`` and syslog's ``#012`` out)
_API_CLIENT = re.compile(r"\bclient(?: '[^']{0,80}')?(?: \(pid \d{1,10}\))? (?:has the )?version "
                         r"(?P<v>\d[\w.-]{0,40}?)[.,]?(?= |$)")
_API_MODULE = re.compile(r"\bkernel module (?:has the )?version (?P<v>\d[\w.-]{0,40}?)[.,]?(?= |$)")
#: continuation lines an API mismatch message may take after its first (the driver wraps it at 5)
_API_LINES = 5


def _api_versions(event: dict[str, Any], text: str) -> None:
    """Fill ``event``'s missing ``client_version``/``module_version`` from ``text`` (the message so far)."""
    flat = " ".join(text.replace("#012", " ").replace("NVRM:", " ").split())[:600]
    for key, pattern in (("client_version", _API_CLIENT), ("module_version", _API_MODULE)):
        if event[key] is None and (m := pattern.search(flat)):
            event[key] = m.group("v")


def _own(msg: str) -> str:
    """A line's message without a second log head inside it (:data:`_INNER_HEAD`): the kernel's own words."""
    return msg[_INNER_HEAD.match(msg).end():]  # type: ignore[union-attr]  # every part optional: always matches


def _oops_module(ev: dict[str, Any], module: str, lines: list[str]) -> None:
    """The first module in an oops' call trace (the innermost one's code crashed), and the PCI function that
    module's driver last named before the crash (``mlx5_core 0000:81:00.0: ...``), looked up in the log's
    ``lines`` before the oops' own (index ``at``) only when a trace names a module."""
    ev["module"] = module
    head = module + " "
    for raw in reversed(lines[:ev["at"]]):
        prev = _own(_split(raw.strip())[1])
        if prev.startswith(head) and (dev := _DEV_PREFIX.match(prev)):
            ev["pci"] = dev.group("pci").lower()
            return


@parser("kernel-log")
def parse_kernel_log(text: str) -> dict[str, Any]:
    offset = 1 if text.startswith(("# source:", "#source:")) else 0
    body = strip_source_line(text)
    xids: list[dict[str, Any]] = []
    fallen: list[dict[str, Any]] = []
    nvlink: list[dict[str, Any]] = []
    aer: list[dict[str, Any]] = []
    injected: list[str] = []  # devices aer_inject wrote an error into
    aer_corrected: list[dict[str, Any]] = []
    aer_nonfatal: list[dict[str, Any]] = []
    dpc_source: str | None = None  # the device a DPC containment event named (before 5.19: its 'source:' bus/devfn)
    edac: list[dict[str, Any]] = []
    limited: list[dict[str, Any]] = []
    init_failed: list[dict[str, Any]] = []
    bar_unassigned: dict[tuple[str, str], dict[str, Any]] = {}
    peermem: list[dict[str, Any]] = []
    eeh_lost: list[dict[str, Any]] = []
    gpu_fatal: list[dict[str, Any]] = []
    api_mismatch: list[dict[str, Any]] = []
    api_text = ""  # the open API mismatch message (api_mismatch[-1]) while its continuation lines may follow
    slot_power: list[dict[str, Any]] = []
    unrecovered: list[dict[str, Any]] = []
    inaccessible: list[dict[str, Any]] = []
    status_of: set[str] = set()  # devices whose firmware-first 'aer_status:' line awaits its first bit
    slot_down: list[dict[str, Any]] = []
    bond_none: list[dict[str, Any]] = []
    tx_hang: list[dict[str, Any]] = []
    nic_fw: list[dict[str, Any]] = []
    nic_health: list[dict[str, Any]] = []
    overheat: list[dict[str, Any]] = []
    rcu_stalls: list[dict[str, Any]] = []
    link_not_active: list[str] = []
    panics: list[dict[str, Any]] = []
    mces: list[dict[str, Any]] = []
    ecc_off: list[dict[str, Any]] = []
    storage: list[dict[str, Any]] = []
    ghes_severity: str | None = None  # the severity of the firmware (GHES) error record being read
    wc_errors: list[dict[str, Any]] = []
    gid_failed: list[dict[str, Any]] = []
    roce_address_pci: str | None = None  # the adapter whose firmware refused a RoCE address just before
    io_region: list[dict[str, Any]] = []
    last_mlx5: str | None = None  # the mlx5 PCI function the driver's last line named
    hung_tasks: list[dict[str, Any]] = []
    lockups: list[dict[str, Any]] = []
    removed: list[dict[str, Any]] = []
    modules: list[dict[str, Any]] = []
    sxids: list[dict[str, Any]] = []
    amd_node: str | None = None  # the node of the last AMD DRAM ECC report, until its status line
    hypervisor: str | None = None
    maybe_limited: list[tuple[str, re.Match[str], dict[str, Any]]] = []  # i40e/ice's 'may be insufficient'
    port_gbps: dict[str, float] = {}  # an Intel NIC function's port rate, from its 'NIC Link is Up' line
    recent: list[str] = []  # the last lines, for the bus id of a multi-line "fallen off the bus"
    oopses: list[dict[str, Any]] = []
    total = recognised = 0
    first_bad: int | None = None
    last_time: str | None = None
    stamped: list[str] = []  # the lines with a log prefix, others blank: what the flap counter reads
    unwrapped = unwrap_log(body.splitlines(), _log_line)
    for lineno, raw in enumerate(unwrapped, start=1 + offset):
        line = raw.strip()
        stamped.append("")
        if not line or (line.startswith("-- ") and line.endswith(" --")):
            continue
        total += 1
        time, msg, is_log = _split(line)
        if time is not None:
            stamped[-1] = raw
        if time is not None:
            last_time = time
        elif not is_log and msg.startswith("NVRM:"):
            time = last_time  # a continuation line of the message before it
        if is_log or "NVRM:" in msg:
            recognised += 1
        elif first_bad is None:
            first_bad = lineno
        recent = [*recent[-2:], msg]
        own = _own(msg)
        oops_open = oopses and oopses[-1]["module"] is None and lineno - oopses[-1]["line"] <= _OOPS_LINES
        hung_open = hung_tasks and hung_tasks[-1]["gpu_driver"] is None and \
            lineno - hung_tasks[-1]["line"] <= _OOPS_LINES
        if (oops_open or hung_open) and msg.endswith("]") and (fm := _FRAME_MODULE.search(msg)):
            if oops_open:
                _oops_module(oopses[-1], fm.group("mod"), unwrapped)
            if hung_open and fm.group("mod").startswith("nvidia"):
                hung_tasks[-1]["gpu_driver"] = fm.group("mod")  # its call trace waits inside the GPU driver
        if _OOPS.match(own):
            if not (oopses and lineno - oopses[-1]["line"] <= _OOPS_LINES):  # one crash prints several of these
                oopses.append(_event(lineno, time, msg, module=None, pci=None, at=lineno - 1 - offset))
            continue
        if api_text:  # a line after an API mismatch message's first: its continuation, or the message ended
            ev = api_mismatch[-1]
            if msg.startswith("NVRM:") and "API mismatch" not in msg and lineno - ev["line"] <= _API_LINES:
                api_text += " " + msg
                _api_versions(ev, api_text)
                api_text = "" if ev["module_version"] is not None else api_text
            else:
                api_text = ""
        x = _XID.search(msg)
        if x:
            rest = x.group("rest").strip()
            pid = _PID.search(rest)
            name = _NAME.search(rest)
            pid_v = to_int(pid.group("pid")) if pid else None
            cause = _CAUSED_BY.search(rest)
            bus = x.group("pci")  # '...' where the paster redacted the address: the GPU is not named
            xids.append(_event(lineno, time, rest, pci=None if bus in ("...", "\u2026") else bus.lower(),
                               xid=need_int(x.group("code"), TOOL, lineno, "Xid"),
                               pid=pid_v, process=name.group("name").strip() if name else None,
                               cause_xid=to_int(cause.group(1)) if cause else None))
            continue
        if "NVRM" in msg and _FALLEN.search(msg):
            pci = None
            for prev in reversed(recent):
                g = _GPU_PCI.search(prev)
                if g:
                    pci = g.group("pci").lower()
                    break
            fallen.append(_event(lineno, time, msg, pci=pci))
            continue
        if "NVRM" in msg and (g := _GPU_FATAL.search(msg)):
            minor = _MINOR.search(msg)
            gpu = (g.group("pci") or g.group("bar_pci") or "").lower() or g.group("idx") or (
                f"GPU{minor.group(1)}" if minor else None)
            what = "invalid PCI I/O region (" + g.group("what").split(" @")[0] + ")" if g.group("bar_pci") else \
                _GPU_FATAL_WHAT.get(g.group("what").lower(), g.group("what"))
            gpu_fatal.append(_event(lineno, time, msg, gpu=gpu, what=what))
            continue
        if "GPU reset" in msg and (ar := _AMD_RESET_FAILED.match(own)):
            gpu_fatal.append(_event(lineno, time, msg, gpu=ar.group("pci").lower(), what="GPU reset failed",
                                    driver="amdgpu"))
            continue
        if "NVRM" in msg and "I/O region assigned to your NVIDIA device is invalid" in msg:
            # the driver refuses a GPU whose BARs the firmware left unassigned; the line after it names the BAR and
            # the GPU ('NVRM: BAR1 is 0M @ 0x0 (PCI:0000:01:00.0)', above): kept for a paste that left that line out
            io_region.append(_event(lineno, time, msg, gpu=None, what="invalid PCI I/O region"))
            continue
        if "NVRM" in msg and "API mismatch" in msg:  # no GPU named: every GPU of the node (module vs libraries)
            api_mismatch.append(_event(lineno, time, msg, client_version=None, module_version=None))
            _api_versions(api_mismatch[-1], msg)
            api_text = msg if api_mismatch[-1]["module_version"] is None else ""
            continue
        if _RESET_REQUIRED in msg:
            g = _GPU_PCI.search(msg) or _GPU_INDEX.search(msg)
            gpu = (g.group("pci").lower() if "pci" in g.groupdict() else f"GPU{g.group('idx')}") if g else None
            gpu_fatal.append(_event(lineno, time, msg, gpu=gpu, what="Reset required"))
            continue
        if "change power state from " in msg and (nw := _NO_WAKE.match(own)):
            inaccessible.append(_event(lineno, time, msg, pci=nw.group("pci").lower(), driver=nw.group("drv"),
                                       state=nw.group("from")))
            continue
        if "Link Active not set" in msg and (dl := _DLL_NOT_ACTIVE.match(msg)):
            link_not_active.append(dl.group("pci").lower())
            continue
        if "can't recover" in msg and (cr := _CANT_RECOVER.match(own)):
            unrecovered.append(_event(lineno, time, msg, pci=cr.group("pci").lower(), driver=cr.group("drv")))
            continue
        if "not supported by" in msg and (ns := _NOT_SUPPORTED.search(" ".join(recent[-3:]))):
            # the driver refuses the GPU ('NVRM: The NVIDIA GPU 000a:00:00.0 (PCI ID: 10de:2330) installed in this
            # system / is not supported by the NVIDIA 580.126.09 driver release.'): it does not bind it
            init_failed.append(_event(lineno, time, msg, pci=ns.group("pci").lower(), error=None,
                                      what="the driver release does not support the GPU"))
            continue
        if _EEH_GAVE_UP in msg:
            eeh_lost.append(_event(lineno, time, msg, pci=None))
            continue
        if "of node=" in msg and eeh_lost and eeh_lost[-1]["pci"] is None \
                and lineno - eeh_lost[-1]["line"] <= _EEH_LINES and (en := _EEH_NODE.search(msg)):
            eeh_lost[-1]["pci"] = en.group("pci").lower()
            continue
        if "mlx5_init_one failed" in msg and (mi := _MLX5_INIT_FAILED.match(own)):
            init_failed.append(_event(lineno, time, msg, pci=mi.group("pci").lower(), error=to_int(mi.group("err"))))
            continue
        if "unknown chipset" in msg and (ao := _ALL_ONES_CHIP.match(own)):
            init_failed.append(_event(lineno, time, msg, pci=ao.group("pci").lower(), error=None,
                                      what="its chip id reads all ones: the device does not answer"))
            continue
        if "peer" in msg and (pm := _PEERMEM_FAILED.match(own)):
            peermem.append(_event(lineno, time, msg, module=pm.group("mod"), what=pm.group("what")))
            continue
        if "assign" in msg and (ba := _BAR_ASSIGN.search(msg)):
            key = (ba.group("pci").lower(), ba.group("bar"))
            if ba.group("what") == "assigned":
                bar_unassigned.pop(key, None)  # a later pass found room for it
            else:
                bar_unassigned[key] = _event(lineno, time, msg, pci=key[0], error=None,
                                             what=f"BAR {key[1]} left unassigned (no address space for it): its "
                                                  "driver cannot map the device's registers")
            continue
        if "t reserve" in msg and (br := _BAR_UNCLAIMED.search(msg)):
            init_failed.append(_event(lineno, time, msg, pci=br.group("pci").lower(), error=None,
                                      what=f"its driver {br.group('drv')} cannot claim BAR {br.group('bar')}: "
                                           "another driver holds the range"))
            continue
        if "probe " in msg and (pf := _PROBE_FAILED.search(msg)):
            init_failed.append(_event(lineno, time, msg, pci=(pf.group("pci") or pf.group("dev")).lower(),
                                      error=to_int(pf.group("err"))))
            continue
        if "insufficient power" in msg and _SLOT_POWER.search(msg):
            dev = _DEV_PREFIX.match(msg)
            slot_power.append(_event(lineno, time, msg, pci=dev.group("pci") if dev else None))
            continue
        if "Link " in msg and (hp := _PCIEHP_LINK.search(msg)):
            # the port is not named where a wrap left 'pciehp: Slot(14): Link Down' on a line of its own
            port, slot = (hp.group("port") or "").lower() or None, hp.group("slot")
            if hp.group("state") == "Down":
                slot_down.append(_event(lineno, time, msg, port=port, slot=slot, up=False, device=None))
            else:
                for ev in slot_down:
                    if (ev["port"], ev["slot"]) == (port, slot):
                        ev["up"] = True
            continue
        if "unconfigure" in msg and slot_down and (uc := _PCIEHP_UNCONFIGURE.search(msg)):
            slot_down[-1]["device"] = slot_down[-1]["device"] or uc.group("dev").lower()
            continue
        if hypervisor is None and ("Hypervisor" in msg or "paravirtualized" in msg) and (hv := _HYPERVISOR.search(msg)):
            hypervisor = (hv.group("hv") or hv.group("pv")).strip()
            continue
        if "blocked for more than" in msg and (ht := _HUNG_TASK.search(msg)):
            hung_tasks.append(_event(lineno, time, msg, task=ht.group("task"), pid=to_int(ht.group("pid")),
                                     seconds=to_int(ht.group("secs")), gpu_driver=None))
            continue
        if "detected stall" in msg and (rs := _RCU_STALL.search(msg)):
            rcu_stalls.append(_event(lineno, time, msg, cpus=(rs.group("cpus") or "").split()))
            continue
        if "Kernel panic" in msg and (kp := _PANIC.search(msg)):
            panics.append(_event(lineno, time, msg, why=kp.group("why").strip()))
            continue
        if "[Hardware Error]" in msg and (gh := _GHES.search(msg)):
            if gh.group("sev"):
                ghes_severity = gh.group("sev").lower()
            elif gh.group("mem") and ghes_severity:
                edac.append(_event(lineno, time, msg, mc="a DIMM not named", kind="CE" if ghes_severity ==
                                   "corrected" else "UE", count=1, where=_GHES_WHERE))
            elif gh.group("dimm") and edac and edac[-1].get("where") == _GHES_WHERE:
                edac[-1]["mc"] = gh.group("dimm").strip()
            continue
        if "ECC" in msg and (eo := _ECC_OFF.search(msg)):
            ecc_off.append(_event(lineno, time, msg, node=eo.group("node")))
            continue
        if (own.startswith("ata") or "nvme nvme" in msg or "I/O error, dev" in msg or "Medium Error" in msg) \
                and (se := _STORAGE.search(msg)):
            storage.append(_event(lineno, time, msg, dev=se.group("nvme") or se.group("ata") or se.group("blk")
                                  or se.group("sd"), kind=_storage_kind(se)))
            continue
        if "Machine Check" in msg and (mc := _MCE.search(msg)):
            status = int(mc.group("status"), 16)
            mces.append(_event(lineno, time, msg, cpu=to_int(mc.group("cpu")), bank=to_int(mc.group("bank")),
                               status=mc.group("status").lower(), uncorrected=bool(status >> 61 & 1),
                               context_corrupt=bool(status >> 57 & 1)))
            continue
        if "soft lockup" in msg and (sl := _SOFT_LOCKUP.search(msg)):
            lockups.append(_event(lineno, time, msg, cpu=to_int(sl.group("cpu")), seconds=to_int(sl.group("secs")),
                                  task=sl.group("task"), pid=to_int(sl.group("pid")) if sl.group("pid") else None))
            continue
        if "MC4" in msg:
            if ad := _AMD_DRAM.search(msg):
                amd_node = ad.group("node")
                continue
            if amd_node is not None and (st := _AMD_STATUS.search(msg)):
                flags = st.group("flags").split("|")
                kind = "UE" if "UE" in flags else "CE" if "CE" in flags else None
                if kind:
                    edac.append(_event(lineno, time, msg, mc=f"MC4 node {amd_node}", kind=kind, count=1,
                                       where=f"DRAM ECC (AMD northbridge, node {amd_node})"))
                amd_node = None
                continue
        if ("Adapter removed" in msg or "PCIe link lost" in msg) and (ar := _ADAPTER_REMOVED.search(msg)):
            removed.append(_event(lineno, time, msg, pci=ar.group("pci").lower(), driver=ar.group("drv")))
            continue
        if "module event[error]" in msg and (me := _MODULE_ERROR.search(msg)):
            dev = _DEV_PREFIX.match(msg) or _MLX5_DEV.search(msg)
            modules.append(_event(lineno, time, msg, pci=dev.group("pci").lower() if dev else None,
                                  module=to_int(me.group("mod")), what=me.group("what")))
            continue
        if ("SXid" in msg or "NVSwitch" in msg) and (sx := _SXID.search(msg) or _FM_SXID.search(msg)):
            sxids.append(_event(lineno, time, msg, pci=sx.group("pci").lower(), sxid=to_int(sx.group("sxid")),
                                fatal=sx.group("sev").lower() == "fatal", what=sx.group("what").strip()))
            continue
        if "mlx5_core " in msg and (m5 := _MLX5_DEV.search(msg)):
            last_mlx5 = m5.group("pci").lower()
        if "probe of " in msg and last_mlx5 and (aux := _AUX_PROBE_FAILED.search(msg)):
            init_failed.append(_event(lineno, time, msg, pci=last_mlx5, error=to_int(aux.group("err"))))
            continue
        if "High temperature on sensors" in msg and (dev := _DEV_PREFIX.match(msg)):
            overheat.append(_event(lineno, time, msg, pci=dev.group("pci").lower()))  # mlx5's temperature warning
            continue
        if "mlx5" in msg and ("Health issue observed" in msg or "print_health_info" in msg) and \
                (hi := _NIC_HEALTH.search(msg)):
            dev = _DEV_PREFIX.match(msg)
            nic_health.append(_event(lineno, time, msg, pci=dev.group("pci").lower() if dev else None,
                                     what=(hi.group("what") or hi.group("synd")).strip(" ,:")))
            continue
        if ("mlx5" in msg or "wait_func" in msg) and (fw := _NIC_FW.search(msg)):
            dev = _DEV_PREFIX.match(msg)
            nic_fw.append(_event(lineno, time, msg, pci=dev.group("pci").lower() if dev else None, what=fw.group(0)))
            continue
        if "SET_ROCE_ADDRESS" in msg and "failed" in msg and (dev := _DEV_PREFIX.match(msg)):
            roce_address_pci = dev.group("pci").lower()
            continue
        if ("GID add failed" in msg or "unable to add gid" in msg) and (gf := _GID_ADD_FAILED.search(msg)):
            if gf.group("port") is None and gid_failed and gid_failed[-1]["line"] >= lineno - 3:
                continue  # the cache's own line of the failure add_roce_gid just reported
            gid_failed.append(_event(lineno, time, msg, ibdev=gf.group("ibdev"), port=to_int(gf.group("port")),
                                     index=to_int(gf.group("index")), pci=roce_address_pci))
            continue
        if "WC error" in msg and (wc := _WC_ERROR.search(msg)) and wc.group("status") != _WC_FLUSHED:
            wc_errors.append(_event(lineno, time, msg, ibdev=wc.group("ibdev"), status=to_int(wc.group("status")),
                                    what=wc.group("what").strip()))
            continue
        if ("Failed to" in msg or "Couldn't" in msg or "Could not" in msg) and (rd := _RDMA_DEV_FAILED.search(msg)):
            dev = _DEV_PREFIX.match(msg)
            nic_fw.append(_event(lineno, time, msg, pci=dev.group("pci").lower() if dev else
                                 _rdma_dev_pci(unwrapped, lineno - offset, rd.group("ibdev")),
                                 what=f"{rd.group('ibdev')}: {rd.group('what').strip()}"))
            continue
        if ("Hang" in msg or "imeout" in msg or "timed out" in msg) and (th := _TX_HANG.search(msg)):
            nd = _NIC_DEV.match(msg)
            netdev = th.group("wif") or th.group("ipif") or (nd and (nd.group("netdev") or nd.group("oldif")))
            tx_hang.append(_event(lineno, time, msg, pci=nd.group("pci").lower() if nd and nd.group("pci") else None,
                                  netdev=netdev or None))
            continue
        if "active interface" in msg or "new active one" in msg:
            if bn := _BOND_NONE.search(msg):
                bond_none.append(_event(lineno, time, msg, bond=bn.group("bond"), up=False))
                continue
            if bb := _BOND_BACK.search(msg):
                for ev in bond_none:
                    if ev["bond"] == bb.group("bond"):
                        ev["up"] = True
        if "NVRM" in msg and _NVLINK.search(msg) and _FAILURE.search(msg):
            nvlink.append(_event(lineno, time, msg))
        elif "aer_inject" in msg and (inj := _AER_INJECT.search(msg)):
            injected.append(inj.group(1).lower())
        elif "DPC: " in msg and (dpc := _DPC.search(msg)):
            port = _DEV_PREFIX.match(msg)
            if dpc.group("bdf") is not None:
                bdf = int(dpc.group("bdf"), 16)
                dpc_source = (f"{port.group('pci')[:4]}:{bdf >> 8:02x}:{(bdf >> 3) & 0x1f:02x}.{bdf & 7}".lower()
                              if port and bdf else port.group("pci").lower() if port else None)
            elif sev := dpc.group("sev") or dpc.group("sev2"):
                pci = dpc.group("src") or dpc_source or (port.group("pci") if port else None)
                (aer if sev == "ERR_FATAL" else aer_nonfatal).append(_event(lineno, time, msg, pci=pci))
        elif "(Fatal)" in msg and _AER_FATAL.search(msg):
            dev = _DEV_PREFIX.match(msg)
            src = _AER_SOURCE.search(msg)
            aer.append(_event(lineno, time, msg, pci=(src.group(1) if src else dev.group("pci") if dev else None)))
        elif "Non-Fatal" in msg and _AER_NONFATAL.search(msg):
            dev = _DEV_PREFIX.match(msg)
            src = _AER_FROM.search(msg)
            aer_nonfatal.append(_event(lineno, time, msg,
                                       pci=(src.group(1) if src else dev.group("pci") if dev else None)))
        elif "aer_status:" in msg and (st := _AER_STATUS.match(own)):
            status_of.add(st.group("pci").lower())
        elif status_of and (bit := _AER_BIT.match(own)) and bit.group("pci").lower() in status_of:
            status_of.discard(bit.group("pci").lower())  # one error per status line, its first bit names the register
            if bit.group("name") in _CORRECTABLE_BITS:
                aer_corrected.append(_event(lineno, time, msg, pci=bit.group("pci").lower()))
        elif "orrect" in msg and _AER_CORRECTED.search(msg):
            dev = _DEV_PREFIX.match(msg)
            src = _AER_FROM.search(msg)
            aer_corrected.append(_event(lineno, time, msg,
                                        pci=(src.group(1) if src else dev.group("pci") if dev else None)))
        elif "EDAC" in msg and (ed := _EDAC.search(msg)):
            old_count = _EDAC_OLD_COUNT.search(ed.group("rest")) if ed.group("count") is None else None
            edac.append(_event(lineno, time, msg, mc=ed.group("mc"), kind=ed.group("kind"),
                               count=to_int(ed.group("count") or (old_count.group(1) if old_count else "1")) or 1,
                               where=ed.group("rest").strip()[:120]))
        elif "optimal performance" in msg and _NOT_SUFFICIENT.search(msg):
            dev = _DEV_PREFIX.match(own)
            nl = next((m for prev in reversed(recent[:-1]) if (m := _NIC_LINK.search(prev))), None)
            limited.append(_event(lineno, time, msg, pci=dev.group("pci") if dev else None,
                                  link=f"{nl.group('speed')} {nl.group('width')} link" if nl else "its slot's link",
                                  capable="more, in the driver's words: not sufficient for optimal performance"))
        elif "may be insufficient" in msg and _MAY_BE_INSUFFICIENT.search(msg) and (dev := _DEV_PREFIX.match(own)):
            nl = next((m for prev in reversed(recent[:-1]) if (m := _NIC_LINK.search(prev))), None)
            if nl:
                maybe_limited.append((dev.group("pci").lower(), nl, _event(lineno, time, msg)))
        elif "NIC Link is" in msg and (up := _NIC_LINK_UP.search(msg)):
            rate = to_float(up.group("rate")) or 0.0
            port_gbps[up.group("pci").lower()] = rate / 1000 if up.group("unit") == "Mbps" else rate
        elif "limited by" in msg and (lim := _LIMITED.search(msg)):
            dev = _DEV_PREFIX.match(msg)
            limited.append(_event(lineno, time, msg, pci=dev.group("pci") if dev else None,
                                  link=lim.group("at"), capable=lim.group("cap")))
    init_failed += sorted(bar_unassigned.values(), key=lambda ev: int(ev["line"]))
    for pci, nl, ev in maybe_limited:
        # i40e/ice: the warning counts only where this function's port runs faster than its PCIe link can carry
        link_gbps = _pcie_gbps(nl.group("speed"), nl.group("width"))
        if link_gbps is not None and port_gbps.get(pci, 0.0) > link_gbps:
            link = f"{nl.group('speed')} {nl.group('width')} link, {link_gbps:g} Gb/s"
            limited.append({**ev, "pci": pci, "link": link,
                            "capable": f"more: its port runs at {port_gbps[pci]:g} Gb/s"})
    if total and not recognised:
        raise ParseError(TOOL, "no line looks like a kernel log line (journalctl -k, dmesg or syslog prefix, "
                               "or an NVRM: message)", first_bad)
    flaps: dict[str, Any] | None = None
    note: str | None = None
    if total:
        try:
            # only the timestamped lines: a prompt or a note pasted among them is not a log line
            flaps = parse_syslog_linkflap(("# source:\n" if offset else "") + "\n".join(stamped))["interfaces"]
        except ParseError as exc:
            note = f"link flaps not counted: {exc.reason}"
    if injected:
        # the errors aer_inject wrote are the test's: the device's and its root port's lines of them are not judged
        # (a line whose device was not read off its head names it in its text)
        def _test(e: dict[str, Any]) -> bool:
            pci = str(e.get("pci") or "").lower()
            return pci in injected if pci else any(d in str(e.get("text") or "").lower() for d in injected)

        aer, aer_nonfatal, aer_corrected = ([e for e in events if not _test(e)]
                                            for events in (aer, aer_nonfatal, aer_corrected))
    if io_region and not any(str(e.get("what", "")).startswith("invalid PCI I/O region (") for e in gpu_fatal):
        gpu_fatal.append(io_region[0])  # the BAR line that names the GPU is not in the paste
    return {"xids": xids, "fallen_off_bus": fallen, "nvlink_errors": nvlink, "aer_fatal": aer,
            "aer_nonfatal": aer_nonfatal, "aer_corrected": aer_corrected, "edac": edac,
            "pcie_limited": limited, "init_failed": init_failed, "gpu_fatal": gpu_fatal,
            "api_mismatch": api_mismatch, "slot_power": slot_power, "aer_unrecovered": unrecovered,
            "aer_injected": list(dict.fromkeys(injected)),
            "oops": [{k: v for k, v in ev.items() if k != "at"} for ev in oopses],
            "pci_inaccessible": inaccessible,
            "pcie_link_down": slot_down, "bond_no_active": bond_none,
            "nic_tx_hang": tx_hang, "nic_firmware": nic_fw, "nic_health": nic_health, "nic_overheat": overheat,
            "rdma_wc_errors": wc_errors,
            "roce_gid_failed": gid_failed,
            "hung_tasks": hung_tasks,
            "soft_lockups": lockups, "rcu_stalls": rcu_stalls, "panics": panics,
            "machine_checks": mces, "ecc_disabled": ecc_off, "storage_errors": storage,
            "link_not_active": link_not_active, "nic_removed": removed,
            "nic_module": modules, "sxids": sxids,
            "hypervisor": hypervisor, "peermem_failed": peermem, "eeh_lost": eeh_lost,
            "link_flaps": flaps, "link_flaps_note": note, "lines": total}
