"""Judge the kernel log (KIND ``kernel-log``): NVIDIA Xid events, GPUs fallen off the bus, NVLink
driver errors and link flaps.

Xid codes (the table: ``xid_catalog.yml`` beside this file): meaning and what to do from NVIDIA's
Xid catalog ("Analyzing Xid Errors with the Xid Catalog",
https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html, description and resolution
bucket columns; the page retirement Xids 48/63/64 from
https://docs.nvidia.com/deploy/dynamic-page-retirement/visibility.html). Each code names its rule in
``severity.yml`` (``xid.reset_or_service`` failed, ``xid.trend`` degraded, ``xid.application`` note):

- critical: the GPU (or its NVLink, memory, firmware) needs a reset, reboot or service before jobs
  can trust it: uncorrectable ECC (48, 95, 140), failed page retirement / row remap (64),
  micro-controller halt (61, 62), NVLink (74; 144-150 unless the driver says ``Nonfatal``),
  fallen off the bus (79), GSP timeouts and errors (119, 120), init failure (143), recovery
  action (154).
- warning: worth a reset at the next drain and a trend (63 row remap pending, 92 high single-bit
  ECC rate, 94 contained ECC, the ``Nonfatal`` NVLink 144-150), or a fault NVIDIA does not tie to
  the application (8, 32, 38, 68, 69, 109, 121) and any code not in the table.
- info: application faults with a healthy GPU (13, 31, 43) and the cleanup after an earlier error
  (45): reported so the Xid that caused them is seen in context, not held against the node.

One finding per GPU (PCI bus id, as the driver prints it) and Xid code, with how many times and
when. Expectations: ``xid_ignore`` (list of codes not judged, default none).

A fatal AER finding names the devices the recovery gave up on.

GPUs the driver lost or could not initialise without an Xid (``RmInitAdapter failed``, GSP heartbeat
and RPC timeouts, memory subsystem errors, ``Reset required [NV_ERR_RESET_REQUIRED]``) are critical
(``kernel_gpu.driver_lost``), as is a driver's
failed probe of a device (``kernel_device.probe_failed``); insufficient PCIe slot power is a warning.
A ``fallen off the bus`` line without an Xid 79 for that GPU is critical too (drivers 570+ print
the multi-line form without an Xid). Other ``NVRM:`` NVLink failures are warnings. Link flaps are
judged by :func:`clusterctl.analysis.checks.linkflap.judge_link_flaps` (the same thresholds as KIND
``syslog-linkflap``); when the log's lines carry no prefix the flap counter reads, that is a note.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from clusterctl.analysis.checks.linkflap import judge_link_flaps
from clusterctl.analysis.model import CheckResult, Finding, Severity, check
from clusterctl.analysis.severity import load_data, rules
from clusterctl.analysis.severity import sev as rule_sev


def load_catalog(path: Path) -> dict[int, tuple[str, Severity, str]]:
    """Xid code -> (meaning, severity, what to do) from the catalog file (xid_catalog.yml: NVIDIA's
    meanings, its source on its first lines). Each entry names its ``rule`` (``xid.<class>``) in the
    severity table, which decides the severity; a malformed entry is an error naming the code."""
    import yaml

    return catalog_from(yaml.safe_load(path.read_text(encoding="utf-8")), path)


def catalog_from(data: Any, path: Any) -> dict[int, tuple[str, Severity, str]]:
    """:func:`load_catalog` of the catalog's data (YAML, or its JSON rendering whose codes are strings)."""
    out: dict[int, tuple[str, Severity, str]] = {}
    known = sorted(r for r in rules() if r.startswith("xid."))
    for code, entry in ((int(k) if isinstance(k, str) and k.isdigit() else k, v) for k, v in data.items()):
        rule = entry.get("rule") if isinstance(entry, dict) else None
        if not isinstance(code, int) or rule not in known or not all(
                isinstance(entry.get(k), str) and entry[k] for k in ("meaning", "todo")):
            raise ValueError(f"{path}: Xid {code!r}: expected meaning, rule (one of {', '.join(known)}) "
                             f"and todo, got {entry!r}")
        out[code] = (entry["meaning"], rule_sev(rule), entry["todo"])
    return out


#: Xid code -> (meaning, severity, what to do); meanings from NVIDIA's Xid catalog (module docstring)
XID_CATALOG = catalog_from(load_data(__package__ or "clusterctl.analysis.checks", "xid_catalog"), "xid_catalog.yml")
#: the NVLink Xids whose message says whether the event was fatal
NVLINK_SUBCODED = frozenset(range(144, 151))


def describe(code: int) -> tuple[str, Severity, str]:
    return XID_CATALOG.get(code, ("not in this project's table", rule_sev("xid.unknown"),
                                  "look it up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors)"))


def _when(events: list[Mapping[str, Any]]) -> str:
    times = [e.get("time") for e in events if e.get("time")]
    if not times:
        return f"log line {events[0]['line']}"
    return f"at {times[0]}" if len(set(times)) == 1 else f"between {times[0]} and {times[-1]}"


#: application-class Xids whose catalog advice is to suspect the GPU when they recur across jobs, and the
#: number of distinct processes on one GPU from which they count as recurring (severity.yml
#: xid.application_recurring)
RECUR_ACROSS_JOBS = frozenset({13, 31})
XID_APP_RECURRING = 3
#: corrected AER errors on one device from which the link counts as at risk (a single one is noted)
AER_CORRECTED_REPEATED = 2
#: corrected memory errors of one memory controller from which the DIMM counts as at risk
EDAC_CE_REPEATED = 2
#: the DIMM an EDAC report names ('memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0', 'on DIMM_A1')
_DIMM = re.compile(r"\bon ([\w#.-]{0,60}DIMM[\w#.-]{0,20})")

def _grouped(events: Any, key: str) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """``events`` by their ``key`` field ('' where an event has none), in key order: one finding per device."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for ev in events or ():
        groups.setdefault(str(ev.get(key) or ""), []).append(ev)
    return sorted(groups.items())


Events = list[Mapping[str, Any]]


def _per_device(res: CheckResult, host: str, events: Any, key: str, check: str, rule: str,
                say: Callable[[str, Events], str]) -> None:
    """One finding of ``rule`` per device (the events' ``key``): ``say(device, its events)``, then the last line."""
    for dev, evs in _grouped(events, key):
        res.findings.append(Finding(host, check, rule_sev(rule), f"{host}/{dev}" if dev else host,
                                    f"{say(dev, evs)}. {_last(evs)}"))


#: the speed and width of a 'limited by' line's link and of its capability ('2.5 GT/s PCIe x4 link at 0000:00:1b.4',
#: '252.048 Gb/s with 16.0 GT/s PCIe x16 link')
_GTS_WIDTH = re.compile(r"(?P<gts>\d{1,3}(?:\.\d{1,3})?) GT/s PCIe x(?P<width>\d{1,2})\b")


def _gen1_narrowed(link: str, capable: str) -> bool:
    """Whether a 'limited by' link trained at Gen1 (2.5 GT/s) on a faster device and below the device's width: the
    link failed to train (as lspci's pcie_link.training_failed), not a slot wired narrower or slower."""
    got, cap = _GTS_WIDTH.search(link), _GTS_WIDTH.search(capable)
    if got is None or cap is None:
        return False
    return float(got.group("gts")) == 2.5 < float(cap.group("gts")) and \
        int(got.group("width")) < int(cap.group("width"))


def _on_host(res: CheckResult, host: str, events: Any, check: str, rule: str, say: Callable[[Events], str]) -> None:
    """One finding of ``rule`` for the whole host where there are events (tasks, CPUs, the kernel itself)."""
    if evs := list(events or ()):
        res.findings.append(Finding(host, check, rule_sev(rule), host, say(evs)))


def _last(evs: Events) -> str:
    return f"Last: {str(evs[-1]['text'])[:160]!r}"


def _tasks(evs: Events) -> str:
    """The tasks the events name ('comm:pid'), once each."""
    return ", ".join(dict.fromkeys(f"{e.get('task')}:{e.get('pid')}" for e in evs if e.get("task")))


def _say_hung(evs: Events) -> str:
    return (f"{len(evs)} task(s) blocked in uninterruptible sleep for more than "
            f"{min(int(e.get('seconds') or 0) for e in evs)} s ({_tasks(evs)}) {_when(evs)}: I/O (a file system, "
            f"storage or its network) stalls the jobs on this node; the call trace says which. {_last(evs)}")


def _say_hung_gpu(evs: Events) -> str:
    modules = ", ".join(dict.fromkeys(str(e.get("gpu_driver")) for e in evs))
    return (f"{len(evs)} task(s) blocked for more than {min(int(e.get('seconds') or 0) for e in evs)} s inside the GPU "
            f"driver ({modules}; {_tasks(evs)}) {_when(evs)}: the driver no longer serves the GPUs (a lock it waits on "
            f"is held by a stuck GPU operation); drain, reset the GPUs or reboot. {_last(evs)}")


def _say_lockups(evs: Events) -> str:
    cpus = ", ".join(dict.fromkeys(f"CPU#{e.get('cpu')}" for e in evs))
    tasks = _tasks(evs)
    return (f"{len(evs)} soft lockup(s): {cpus} kept in kernel mode for up to "
            f"{max(int(e.get('seconds') or 0) for e in evs)} s{f' ({tasks})' if tasks else ''} {_when(evs)}: "
            "a driver or the kernel spins with the CPU held (the RIP and call trace below it say which); the jobs on "
            f"those CPUs stall. {_last(evs)}")


def _whats(evs: Events) -> str:
    return ", ".join(dict.fromkeys(str(e.get("what")) for e in evs))


def _say_ecc_off(evs: Events) -> str:
    nodes = ", ".join(dict.fromkeys(str(e["node"]) for e in evs if e.get("node") is not None))
    return (f"memory runs without ECC ({'node(s) ' + nodes if nodes else 'as EDAC says'}; {_when(evs)}): memory "
            f"errors are neither corrected nor reported; enable ECC in the firmware (or fit ECC DIMMs). {_last(evs)}")


#: a disk's timeouts from this many lines on are a device that stalls its I/O, not one slow command
STORAGE_TIMEOUTS_REPEATED = 3

#: the disk errors' rules and what each says, by the worst kind a device's lines show
_STORAGE_SAY = {
    "kernel_storage.device_lost": "the kernel gave the disk up (its controller is down, removed or disabled): what "
                                  "lives on it (scratch, containers, the OS) is gone until it is replaced or reseated",
    "kernel_storage.io_error": "I/O to the disk failed: jobs reading or writing it fail; check its SMART/NVMe log "
                               "and cabling, replace it",
    "kernel_storage.timeouts_repeated": "the disk stops answering commands (timeouts, aborts, resets): jobs stall "
                                        "on its I/O; check its firmware, SMART/NVMe log and slot",
    "kernel_storage.timeout": "a disk command timed out and was recovered: watch it",
    "kernel_storage.medium_error": "an unreadable sector (medium error): the disk is wearing; watch its reallocated "
                                   "count, plan its replacement",
}


def _storage(res: CheckResult, host: str, events: Events) -> None:
    """One finding per disk by the worst its lines show; I/O errors explained by medium errors alone are a worn
    sector, not a failed disk."""
    kinds_all = {e.get("kind") for e in events}
    worn = "medium" in kinds_all and not kinds_all & {"lost", "timeout"}
    for dev, evs in _grouped(events, "dev"):
        kinds = [e.get("kind") for e in evs]
        timeouts = kinds.count("timeout")
        rule = ("kernel_storage.device_lost" if "lost" in kinds else
                ("kernel_storage.medium_error" if worn else "kernel_storage.io_error") if "io_error" in kinds else
                ("kernel_storage.timeouts_repeated" if timeouts >= STORAGE_TIMEOUTS_REPEATED else
                 "kernel_storage.timeout") if timeouts else "kernel_storage.medium_error")
        res.findings.append(Finding(host, "kernel_storage", rule_sev(rule), f"{host}/{dev}" if dev else host,
                                    f"disk {dev or '(not named)'}: {len(evs)} error line(s) {_when(evs)}: "
                                    f"{_STORAGE_SAY[rule]}. {_last(evs)}"))


def _cpus(evs: Events) -> str:
    return ", ".join(dict.fromkeys(f"CPU {e.get('cpu')}" for e in evs))


def _sxid_codes(evs: Events) -> str:
    return "SXid " + ", ".join(dict.fromkeys(str(e.get("sxid")) for e in evs))


def _function0(pci: str) -> str:
    """The GPU an Xid line names by bus and device only ('PCI:0000:03:00'): its function 0, as nvidia-smi and
    lspci write it (0000:03:00.0); any other address as written."""
    return f"{pci}.0" if _BUS_DEVICE.match(pci) else pci


_BUS_DEVICE = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}$")


@check("kernel-log")
def judge_kernel_log(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    ignore = {int(c) for c in (exp.get("xid_ignore") or ())}
    groups: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for x in data.get("xids") or ():
        if int(x["xid"]) not in ignore:
            groups.setdefault((str(x["pci"] or ""), int(x["xid"])), []).append(x)
    for x in data.get("xids") or ():
        cause = x.get("cause_xid")
        if cause is not None and int(cause) not in ignore and (str(x["pci"] or ""), int(cause)) not in groups:
            # 'Xid 45 ... caused by previous Xid 149': the driver names the Xid that tore the channel down; its
            # own line may be outside the capture, so the GPU is judged by that cause too
            groups[(str(x["pci"] or ""), int(cause))] = [{**x, "text": f"named as the cause of Xid {x['xid']}: "
                                                           f"{x.get('text') or ''}"}]
    for (pci, code), events in sorted(groups.items()):
        meaning, sev, todo = describe(code)
        if code in NVLINK_SUBCODED and all("nonfatal" in str(e.get("text", "")).lower() for e in events):
            sev, todo = rule_sev("xid.nvlink_nonfatal"), "non-fatal NVLink event: trend it; " + todo
        pids = {e["pid"] for e in events if e.get("pid") is not None}
        names = {str(e["process"]) for e in events if e.get("process")}
        if code in RECUR_ACROSS_JOBS and sev == rule_sev("xid.application") and len(pids) >= XID_APP_RECURRING \
                and len(names) != 1:
            # the catalog's own advice for 13/31: suspect the GPU when the fault recurs across jobs (distinct
            # processes, one GPU; one program named by every line is that program's fault, restarted)
            sev = rule_sev("xid.application_recurring")
            todo = (f"the same fault from {len(pids)} different processes on this one GPU: suspect the GPU or its "
                    f"driver (dcgmi diag -r 3, swap the job to another GPU); " + todo)
        who = f" (process {', '.join(sorted(names))})" if names else ""
        sample = str(events[-1].get("text") or "")[:160]
        res.findings.append(Finding(
            host, "xid", sev, f"{host}/{_function0(pci)}" if pci else host,
            f"Xid {code} ({meaning}) on GPU PCI:{pci or '(address not shown)'}{who}: {len(events)} time(s) "
            f"{_when(events)}; {todo}. "
            f"Last: {sample!r}"))
    xid79 = [pci for pci, code in groups if code == 79]
    for ev in data.get("fallen_off_bus") or ():
        pci = str(ev.get("pci") or "")
        if pci and any(pci.startswith(p) for p in xid79):
            continue  # the Xid 79 finding names it already
        subject = f"{host}/{pci}" if pci else host
        res.findings.append(Finding(
            host, "xid", rule_sev("xid.fallen_off_bus"), subject,
            f"GPU {pci or '(bus id not in the log)'} has fallen off the bus (kernel log {_when([ev])}, no Xid 79 "
            "logged for it): drain; reboot the node, then check PCIe seating, power and temperature"))
    for ev in data.get("oops") or ():
        mod, pci = ev.get("module"), ev.get("pci")
        res.findings.append(Finding(
            host, "kernel_oops", rule_sev("kernel_oops.crash"), f"{host}/{pci or mod}" if (pci or mod) else host,
            f"the kernel crashed in kernel code {_when([ev])}" + (f" in {mod}" if mod else "")
            + (f" (its device {pci})" if pci else "") + f": {str(ev['text'])[:120]!r}; the driver's state is lost: "
            "drain and reboot the node"))
    gone = data.get("pci_inaccessible") or ()
    # bridges gone with it: a subtree unplugged at once (a dock or Thunderbolt chain removed in suspend), not a device
    # lost on its slot
    # (not where a port's link did not train: 'Data Link Layer Link Active not set', the devices behind it are lost)
    subtree = sorted({str(e.get("pci")) for e in gone if e.get("driver") == "pcieport"}) \
        if not data.get("link_not_active") else []
    for pci, events in _grouped([e for e in gone if e.get("state") == "D3cold"], "pci"):
        rule = "kernel_pcie.subtree_inaccessible" if subtree else "kernel_pcie.device_inaccessible"
        res.findings.append(Finding(
            host, "kernel_pcie", rule_sev(rule), f"{host}/{pci}",
            f"PCI device {pci} did not wake from D3cold: its config space does not answer ({len(events)} time(s) "
            f"{_when(events)}); " + (f"PCIe bridges of the same log ({', '.join(subtree[:4])}) do not answer "
                                     "either: a hot-plugged subtree removed (a dock, a Thunderbolt chain)" if subtree
                                     else "it is off the bus until the node is power-cycled")))
    lost = ", ".join(dict.fromkeys(f"{e.get('pci')} ({e.get('driver')})" for e in data.get("aer_unrecovered") or ()))
    for pci, events in _grouped(data.get("aer_fatal"), "pci"):
        res.findings.append(Finding(
            host, "kernel_pcie", rule_sev("kernel_pcie.aer_fatal"), f"{host}/{pci}" if pci else host,
            f"PCIe AER uncorrected fatal error on {pci or 'a device'}: {len(events)} time(s) {_when(events)} (no Xid "
            f"needed: the link is lost until a reset)" + (f"; recovery gave up on {lost}" if lost else "")
            + f"; drain, reboot, reseat. Last: {str(events[-1]['text'])[:160]!r}"))
    # (behind a fatal error the finding above names them; after a non-fatal one they are the finding)
    for pci, events in _grouped([] if data.get("aer_fatal") else data.get("aer_unrecovered"), "pci"):
        # an uncorrectable error the AER recovery gave up on (its driver has no error handler): the device stays in
        # error until a reboot, whatever the error's severity
        res.findings.append(Finding(
            host, "kernel_pcie", rule_sev("kernel_pcie.aer_unrecovered"), f"{host}/{pci}",
            f"PCIe AER recovery gave up on {pci} ({events[-1].get('driver')}) {_when(events)}: the device stays in "
            f"error until the node is rebooted. Line: {str(events[-1]['text'])[:160]!r}"))
    for pci in data.get("aer_injected") or ():
        res.findings.append(Finding(
            host, "kernel_pcie", rule_sev("kernel_pcie.aer_injected"), f"{host}/{pci}",
            f"the kernel's AER error injector (aer_inject) wrote errors into {pci}: its AER lines are the test's, not "
            "judged"))
    for key, rule, what in (("aer_nonfatal", "kernel_pcie.aer_nonfatal", "uncorrected non-fatal"),
                            ("aer_corrected", "kernel_pcie.aer_corrected", "corrected")):
        for pci, events in _grouped(data.get(key), "pci"):
            # one corrected error is the link doing its job; repeated ones (or 'Multiple') are a
            # link at risk: retrains, replays and lost bandwidth
            # one error is reported twice, by the root port ('Corrected error received: <dev>') and by
            # the device itself ('PCIe Bus Error: severity=Corrected'): count the larger of the two
            relayed = sum(1 for e in events if "received" in str(e["text"]))
            n_errors = max(relayed, len(events) - relayed)
            repeated = n_errors >= AER_CORRECTED_REPEATED or any("Multiple" in str(e["text"]) for e in events)
            sev = rule_sev(rule) if key == "aer_nonfatal" or repeated else rule_sev("kernel_pcie.aer_corrected_once")
            res.findings.append(Finding(
                host, "kernel_pcie", sev, f"{host}/{pci}" if pci else host,
                f"PCIe AER {what} error(s) on {pci or 'a device'}: {len(events)} line(s) {_when(events)}; check the "
                f"link (lspci -vv LnkSta, reseat, riser/cable). Last: {str(events[-1]['text'])[:160]!r}"))
    mem: dict[tuple[str, str], int] = {}
    dimms: dict[tuple[str, str], list[str]] = {}
    for ev in data.get("edac") or ():
        k = (str(ev.get("mc")), str(ev.get("kind")))
        mem[k] = mem.get(k, 0) + int(ev.get("count") or 1)
        if (dimm := _DIMM.search(str(ev.get("where") or ""))) and dimm.group(1) not in dimms.setdefault(k, []):
            dimms[k].append(dimm.group(1))
    for (mc, kind), count in sorted(mem.items()):
        rule = "kernel_memory.edac_ue" if kind == "UE" else (
            "kernel_memory.edac_ce" if count >= EDAC_CE_REPEATED else "kernel_memory.edac_ce_once")
        on = dimms.get((mc, kind))
        res.findings.append(Finding(
            host, "kernel_memory", rule_sev(rule), f"{host}/{mc}",
            f"EDAC {mc}: {count} {'uncorrected' if kind == 'UE' else 'corrected'} memory error(s) in the kernel log"
            + (f" on {', '.join(on[:3])}" if on else "")
            + ("; the DIMM named there is failing: replace it" if kind == "UE" else
               "; a DIMM at risk: watch the rate, plan its replacement")))
    _on_host(res, host, data.get("ecc_disabled"), "kernel_memory", "kernel_memory.ecc_disabled", _say_ecc_off)
    _storage(res, host, data.get("storage_errors") or [])
    seen_lim: set[str] = set()
    for ev in data.get("pcie_limited") or ():
        pci = str(ev.get("pci") or "")
        if pci in seen_lim:
            continue
        seen_lim.add(pci)
        if data.get("hypervisor"):
            # in a guest the link the kernel sees is the emulated root port's, not the card's physical one
            res.findings.append(Finding(
                host, "kernel_pcie", rule_sev("kernel_pcie.below_capability_guest"), f"{host}/{pci}" if pci else host,
                f"{pci or 'a device'} limited by {ev.get('link')} (capable of {ev.get('capable')}) in a "
                f"{data['hypervisor']} virtual machine: the link is the emulated port's; judge the host's lspci"))
            continue
        failed = _gen1_narrowed(str(ev.get("link") or ""), str(ev.get("capable") or ""))
        res.findings.append(Finding(
            host, "kernel_pcie", rule_sev("kernel_pcie.training_failed" if failed else "kernel_pcie.below_capability"),
            f"{host}/{pci}" if pci else host,
            f"{pci or 'a device'} runs below its PCIe capability: limited by {ev.get('link')} (capable of "
            f"{ev.get('capable')})" + (": trained at Gen1 and below its width, the link failed to train (slot, "
                                       "riser or card)" if failed else "; reseat or check the slot/riser")))
    mismatch = list(data.get("api_mismatch") or ())
    if mismatch:  # the module and the libraries differ: no GPU is usable, none is at fault
        res.findings.append(Finding(
            host, "kernel_gpu", rule_sev("kernel_gpu.driver_lost"), host,
            f"NVIDIA kernel module and driver libraries differ (API mismatch): no GPU is usable by CUDA or NVML: "
            f"{len(mismatch)} line(s) {_when(mismatch)}; drain, reboot into the matching module. "
            f"Last: {str(mismatch[-1]['text'])[:160]!r}"))
    _per_device(res, host, data.get("gpu_fatal"), "gpu", "kernel_gpu", "kernel_gpu.driver_lost", lambda gpu, evs: (
        f"{evs[-1].get('driver') or 'NVIDIA'} driver lost or could not initialise "
        f"GPU {gpu or '(not named)'} ({_whats(evs)}; no Xid needed): "
        f"{len(evs)} line(s) {_when(evs)}; drain, reboot; if it repeats, service the GPU"))
    _per_device(res, host, data.get("init_failed"), "pci", "kernel_device", "kernel_device.probe_failed",
                lambda pci, evs: (f"the driver failed to bring up {pci} ("
                                  + (evs[-1].get("what") or f"probe failed with error {evs[-1].get('error')}")
                                  + f") {_when(evs)}: the device is not usable; check firmware/driver versions "
                                  "and the card"))
    _per_device(res, host, data.get("eeh_lost"), "pci", "kernel_pcie", "kernel_pcie.eeh_permanent",
                lambda pci, evs: (f"EEH could not recover {pci or 'a device (not named)'} and disabled it "
                                  f"{_when(evs)}: the device is off the bus for this boot; drain, then reseat or "
                                  "replace it (or look for a kernel regression)"))
    peermem = list(data.get("peermem_failed") or ())
    if peermem:  # GPUs and HCAs work; GPU memory cannot be registered with the HCA
        mods = ", ".join(dict.fromkeys(str(e.get("module")) for e in peermem))
        res.findings.append(Finding(
            host, "kernel_gdr", rule_sev("kernel_gdr.peermem_unloadable"), host,
            f"the GPU peer-memory module ({mods}) cannot load against the running RDMA stack ({peermem[-1]['what']}; "
            f"{len(peermem)} line(s) {_when(peermem)}): GPUDirect RDMA is unavailable, GPU traffic between nodes is "
            "staged through host memory; rebuild it against the installed RDMA stack (OFED)"))
    devs = [pci for pci, _evs in _grouped(data.get("slot_power"), "pci")]
    if devs:
        res.findings.append(Finding(
            host, "kernel_pcie", rule_sev("kernel_pcie.slot_power"), f"{host}/{devs[0]}" if len(devs) == 1 else host,
            f"insufficient PCIe slot power reported for {len(devs)} device(s) ({', '.join(d or '?' for d in devs)}): "
            "the card may throttle or fail under load; check the slot's power budget / riser"))
    for ev in data.get("pcie_link_down") or ():
        # pciehp names the device as domain:bus:dev (every function below it went): its function 0 is the subject
        device = f"{ev['device']}.0" if ev.get("device") else None
        below = f" (the kernel removed {ev['device']}, every function of it)" if device else ""
        rule = "kernel_pcie.link_down_back" if ev.get("up") else "kernel_pcie.link_down"
        res.findings.append(Finding(
            host, "kernel_pcie", rule_sev(rule), f"{host}/{device or ev.get('port') or 'slot ' + str(ev.get('slot'))}",
            f"PCIe slot {ev.get('slot')} below port {ev.get('port')}: link down {_when([ev])}{below}"
            + ("; it came back up: a link that drops may drop again, check the card and riser" if ev.get("up") else
               "; the device below it is gone from the host until the link is restored (reseat or replace)")
            + f". Line: {str(ev.get('text'))[:160]!r}"))
    for ev in data.get("bond_no_active") or ():
        rule = "kernel_net.bond_no_active_back" if ev.get("up") else "kernel_net.bond_no_active"
        res.findings.append(Finding(
            host, "kernel_net", rule_sev(rule), f"{host}/{ev.get('bond')}",
            f"bond {ev.get('bond')} ran without any active interface {_when([ev])}: every member lost its link"
            + ("; a member came back later" if ev.get("up") else ", the host has lost that network")
            + f". Line: {str(ev.get('text'))[:160]!r}"))
    hung = list(data.get("nic_tx_hang") or ())
    pci_of = {e["netdev"]: e["pci"] for e in hung if e.get("netdev") and e.get("pci")}
    # the watchdog names the netdev, the driver its PCI function: one adapter, keyed by the function where known
    hung = [{**e, "nic": e.get("pci") or pci_of.get(e.get("netdev")) or e.get("netdev")} for e in hung]
    def aliases(nic: str, evs: Events) -> str:
        names = sorted({str(e["netdev"]) for e in evs if e.get("netdev")} - {nic})
        return f" ({', '.join(names)})" if names else ""

    _per_device(res, host, hung, "nic", "kernel_net", "kernel_net.tx_hang", lambda nic, evs: (
        f"network adapter {nic or '(not named)'}{aliases(nic, evs)} stopped transmitting: {len(evs)} hang/timeout "
        f"line(s) {_when(evs)}; the driver resets it, cutting every connection over it; drain it if it repeats "
        "(firmware, driver, card or cable)"))
    _per_device(res, host, data.get("nic_firmware"), "pci", "kernel_net", "kernel_net.nic_firmware", lambda nic, evs: (
        f"RDMA adapter {nic or '(not named)'}: its firmware stopped answering the driver or failed its commands "
        f"({_whats(evs)}): "
        f"{len(evs)} line(s) {_when(evs)}; queues and connections over it fail until it is reset; check the firmware "
        "version (mlxfwreset/reboot, update)"))
    # a health buffer report of a device whose firmware also stopped answering is that finding's, not one of its own
    answering_not = {ev.get("pci") for ev in data.get("nic_firmware") or ()}
    health = [ev for ev in data.get("nic_health") or () if ev.get("pci") not in answering_not]
    _per_device(res, host, health, "pci", "kernel_net", "kernel_net.nic_health_issue", lambda nic, evs: (
                    f"RDMA adapter {nic or '(not named)'}: its firmware reported a health event ({_whats(evs)}) "
                    f"{_when(evs)}; the device runs on, but an assert in its firmware is a fault to watch: if it "
                    "repeats, or the driver reports the health compromised, reset it and check the firmware version"))
    _per_device(res, host, data.get("nic_overheat"), "pci", "kernel_net", "kernel_net.nic_overheat", lambda nic, evs: (
        f"network adapter {nic}: its temperature sensors read above the warning threshold ({len(evs)} line(s) "
        f"{_when(evs)}); it runs, but its firmware shuts the port down at the critical one: check airflow and fans"))
    _per_device(res, host, data.get("rdma_wc_errors"), "ibdev", "kernel_net", "kernel_net.rdma_completion_error",
                lambda dev, evs: (
                    f"RDMA device {dev}: the driver's work completions came back in error ({_whats(evs)}): "
                    f"{len(evs)} line(s) {_when(evs)}; the kernel's RDMA consumers over it (NVMe-oF, NFS/iSER, IPoIB) "
                    "lose their connections; check the port, the IOMMU and the firmware before the next job"))
    gid = [{**e, "dev": " ".join(x for x in (e.get("ibdev"), e.get("pci")) if x)} for e in data.get("roce_gid_failed")
           or []]
    _per_device(res, host, gid, "dev", "kernel_net", "kernel_net.roce_gid_failed", lambda dev, evs: (
        f"RoCE adapter {dev or '(not named)'}: the kernel could not add a RoCE GID (GID index "
        f"{', '.join(dict.fromkeys(str(e.get('index')) for e in evs if e.get('index') is not None)) or 'not said'}; "
        f"{len(evs)} line(s) {_when(evs)}): "
        "RoCE connections over those addresses cannot be set up; check the firmware's answer above it and the port's "
        "GID table (show_gids)"))
    _per_device(res, host, data.get("nic_removed"), "pci", "kernel_net", "kernel_net.adapter_removed",
                lambda pci, evs: (f"the {evs[-1].get('driver')} driver gave up network adapter {pci} (it read all "
                                  f"ones: the device left the bus) {_when(evs)}; the port is gone until the card is "
                                  "back (reseat, slot, firmware)"))
    hung = list(data.get("hung_tasks") or ())
    _on_host(res, host, [e for e in hung if e.get("gpu_driver")], "kernel_task", "kernel_task.hung_in_gpu_driver",
             _say_hung_gpu)
    _on_host(res, host, [e for e in hung if not e.get("gpu_driver")], "kernel_task", "kernel_task.hung", _say_hung)
    _on_host(res, host, data.get("soft_lockups"), "kernel_task", "kernel_task.soft_lockup", _say_lockups)
    _on_host(res, host, data.get("rcu_stalls"), "kernel_task", "kernel_task.rcu_stall", lambda evs: (
        f"{len(evs)} RCU stall report(s) "
        f"({', '.join(dict.fromkeys(f'CPU {c}' for e in evs for c in e.get('cpus') or ())) or 'CPUs not named'}) "
        f"{_when(evs)}: a CPU kept in kernel code without a quiescent state (a driver or the kernel spinning with "
        f"preemption or interrupts off); the jobs on it stall. {_last(evs)}"))
    _on_host(res, host, data.get("panics"), "kernel_task", "kernel_task.panic", lambda evs: (
        f"the kernel panicked ({evs[-1].get('why') or 'no reason shown'}) {_when(evs)}: the node went down; "
        "reboot it and read the crash (the lines before the panic, kdump) before it takes a job"))
    mces = list(data.get("machine_checks") or ())
    _per_device(res, host, [dict(e, unit=f"CPU {e.get('cpu')} bank {e.get('bank')}") for e in mces
                            if e.get("uncorrected") or e.get("context_corrupt")],
                "unit", "kernel_mce", "kernel_mce.uncorrected", lambda unit, evs: (
                    f"machine check on {unit}: status {evs[-1].get('status')} not corrected by the hardware "
                    f"({len(evs)} line(s) {_when(evs)}): the CPU, its memory or the bus that bank covers lost data; "
                    "decode the status (mcelog, rasdaemon) and fix the part before the node takes a job"))
    # corrected ones land on whichever CPU polled or took the interrupt: one finding per bank
    _per_device(res, host, [dict(e, unit=f"bank {e.get('bank')}") for e in mces
                            if not (e.get("uncorrected") or e.get("context_corrupt"))],
                "unit", "kernel_mce", "kernel_mce.corrected", lambda unit, evs: (
                    f"{len(evs)} machine check(s) on {unit} corrected by the hardware "
                    f"({_cpus(evs)}; "
                    f"{_when(evs)}): watch the part that bank covers (mcelog, rasdaemon count them)"))
    _per_device(res, host, data.get("nic_module"), "pci", "kernel_net", "kernel_net.module_error",
                lambda pci, evs: (f"network adapter {pci or '(not named)'}: its port's cable or transceiver is in "
                                  f"error ({_whats(evs)}) {_when(evs)}; that port cannot bring its link up until the "
                                  "module is replaced or reseated"))
    sxids = list(data.get("sxids") or ())
    _per_device(res, host, [e for e in sxids if e.get("fatal")], "pci", "kernel_nvswitch",
                "kernel_nvswitch.sxid_fatal", lambda pci, evs: (
                    f"NVSwitch {pci}: {len(evs)} fatal SXid line(s) ({_sxid_codes(evs)}) {_when(evs)}; the NVLink "
                    "fabric through it is down for the GPUs it serves: drain, reset the GPUs and switches (or reboot), "
                    "then check nvidia-smi nvlink -s and fabric manager"))
    _per_device(res, host, [e for e in sxids if not e.get("fatal")], "pci", "kernel_nvswitch",
                "kernel_nvswitch.sxid_nonfatal", lambda pci, evs: (
                    f"NVSwitch {pci}: {len(evs)} non-fatal SXid line(s) ({_sxid_codes(evs)}) {_when(evs)}; the "
                    "fabric keeps running, but that switch port is the first suspect if NVLink collectives slow or "
                    "hang (nvidia-smi nvlink -e, dcgmi diag)"))
    _on_host(res, host, data.get("nvlink_errors"), "kernel_nvlink", "kernel_nvlink.error", lambda evs: (
        f"{len(evs)} NVLink driver error line(s) in the kernel log {_when(evs)}: {str(evs[-1]['text'])[:160]!r}; "
        "compare nvidia-smi nvlink -s and run dcgmi diag"))
    flaps = data.get("link_flaps")
    if flaps is None:
        if data.get("link_flaps_note"):
            res.findings.append(Finding(host, "link_flap", rule_sev("link_flap.not_judged"),
                                        host, f"kernel log: {data['link_flaps_note']}"))
    else:
        out = judge_link_flaps(host, {"interfaces": flaps}, exp)
        res.findings.extend(out.findings if isinstance(out, CheckResult) else out)
    return res
