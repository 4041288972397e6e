"""Judge GPU state: ``nvidia-smi-q``, ``nvidia-smi-query``, ``nvidia-smi`` (table), ``nvidia-smi-topo``,
``nvidia-smi-nvlink``, ``lspci`` and ``dcgmi-diag``. Subjects are ``host/gpuN`` (the index
nvidia-smi prints) or ``host/<pci slot>`` for lspci.

``nvidia-smi -q`` and ``--query-gpu`` share one normalised shape and one judge
(:func:`judge_gpu_list`), which words a finding the same way whichever of the two it came from,
so a report holding both can drop exact duplicates.

What is judged, per GPU:

- ECC: uncorrectable errors since the last reset (volatile) are critical; uncorrectable errors
  only in the lifetime (aggregate) counters are a warning (the page was retired/remapped, watch
  it); ``SRAM Threshold Exceeded`` and ``Unrepairable Memory`` are critical.
- Row remapping (A100+): a pending remap needs a GPU reset before the row is replaced (critical);
  ``Remapping Failure Occurred`` means the bank ran out of spare rows (critical, RMA).
- Page retirement (pre-A100): pending retirement needs a reset (critical); :data:`RETIRED_PAGES_LIMIT`
  or more retired pages is NVIDIA's RMA criterion (critical); fewer double-bit retirements a warning.
- Clock event (throttle) reasons active: ``hw_slowdown``, ``hw_thermal_slowdown``,
  ``hw_power_brake_slowdown`` critical (hardware protection is cutting clocks); ``sw_thermal_slowdown``
  a warning. ``sw_power_cap``, ``idle`` and application-clock reasons are normal operation.
- PCIe: link width below the maximum is a warning whatever the load (width does not change with
  power state). Link generation below the maximum is judged only when the GPU is busy
  (``utilization.gpu`` > 0): idle GPUs down-clock the link to Gen1 to save power (the L40S
  fixture ``pcie-l40sx8-idle-gen1-not-degraded.txt``, the RTX 4090 ``-q`` fixture GPUs 4/5/7).
- ``Reset Required``/``Drain and Reset Recommended``/``GPU Recovery Action`` (535+/570+): critical/
  warning/warning.
- vGPU guest licence (``-q``'s ``vGPU Software Licensed Product``): ``Unlicensed`` a warning (the driver
  restricts an unlicensed vGPU once its grace period ends).
- NVSwitch fabric (``Fabric`` section of ``-q``, 535+): state Not Started/In Progress, or Completed
  with a status other than Success, critical (fabric manager down: CUDA cannot start); registered, with a
  health (550+: ``Health`` of ``-q``, ``<health>`` of ``-q -x``, ``fabric.health.*`` of ``--query-gpu``) that
  says Unhealthy / Limited Capacity, bandwidth Degraded, route unhealthy or incorrect configuration: warning;
  N/A and Not Supported (PCIe, non-NVSwitch boards) are not judged.
- InfoROM corrupted (``WARNING: infoROM is corrupted at gpu ...``): critical, the ECC and page
  retirement records of that GPU can no longer be trusted.
- GPU count below ``gpus_per_node``: critical. A GPU nvidia-smi cannot reach (``Unable to
  determine the device handle for GPU...``: fallen off the bus): critical, subject ``host/<bus id>``.
- NVLink (``nvidia-smi nvlink -s``): an ``<inactive>`` link is critical; a GPU with all links
  inactive (``NVML: Unable to retrieve NVLink information``) critical when its peers have links or
  ``nvlink_links_per_gpu`` is set, information when no GPU of the node has any; fewer active links than
  ``nvlink_links_per_gpu`` (when set) critical; no NVLink output at all is information unless
  ``nvlink_links_per_gpu`` says links are expected. Without ``nvlink_links_per_gpu``, inactive links
  of a GPU that has its SXM product's own count active (:func:`product_nvlinks`) are unused by design.
- topo -m: a GPU pair below the NVLink count at least 80 % of the pairs share (NVSwitch boards),
  or a GPU with no NIC on its PCIe switch where most GPUs have one: warnings; a GPU (of three or more)
  with no NVLink to any peer while the other pairs share one NV<n> and each other GPU is NVLinked to two
  peers or more (a mesh; PCIe cards' 2-way bridges leave an odd card out by design): critical
  (``gpu_topology.no_nvlink``).
- lspci: GPU link width below ``LnkCap`` a warning (speed is not judged for GPUs: idle down-clock);
  NIC (Mellanox/ConnectX) speed or width below ``LnkCap`` a warning.
- dcgmi diag: every ``Fail`` result critical, ``Warn`` a warning, per GPU; a run whose every test beyond
  the Deployment checks was skipped is inconclusive (``dcgmi_diag.all_skipped``), not a pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clusterctl.analysis.model import NOTHING, CheckResult, Finding, check
from clusterctl.analysis.severity import sev as rule_sev

#: NVIDIA "Dynamic Page Retirement" (DA-08014): a board is RMA-eligible at 60 DBE or 64 total retired pages
RETIRED_PAGES_LIMIT = 64
#: an NVLink error counter of one link (nvlink -e: replay, recovery, CRC since the driver loaded) this high is a
#: marginal link, not history: a healthy link counts none or a few
NVLINK_ERRORS_MANY = 100
#: the values a saturated 16- or 32-bit counter stops at
_COUNTER_MAX = (0xFFFF, 0xFFFFFFFF)
#: share of GPU pairs that must have one NVLink count before the others are judged against it
TOPO_UNIFORM_FRACTION = 0.8
HW_THROTTLE = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown")
SW_THROTTLE = ("sw_thermal_slowdown",)
_THROTTLE = HW_THROTTLE + SW_THROTTLE

DEFAULTS: dict[str, Any] = {
    # NVLink links each GPU should have active; None = not judged (no per-model table: A100 has 12,
    # H100/H200 SXM 18, PCIe cards 0). Set it in the cluster spec to catch a GPU with links down.
    "nvlink_links_per_gpu": None,
    # persistence mode off is a note unless the cluster requires it (DCGM 3 passes it with an Info)
    "gpu_persistence_required": False,
}


def _subject(host: str, gpu: Mapping[str, Any]) -> str:
    idx = gpu.get("index")
    return f"{host}/gpu{idx}" if idx is not None else host


def _bus(gpu: Mapping[str, Any]) -> str:
    return f" ({gpu['bus_id']})" if gpu.get("bus_id") else ""


#: SXM boards of these products carry 1, 2, 4 or 8 GPUs (HGX/DGX baseboards, and the cloud VMs cut from
#: them): 5 to 7 visible is a board with GPUs missing, whatever the inventory says
_SXM8_FAMILIES = ("P100", "V100", "A100", "H100", "H200", "H800", "A800", "H20", "B100", "B200", "B300")


def _sxm(name: str) -> bool:
    """An SXM (baseboard) product: named so, or one :func:`product_nvlinks` knows by its SXM-only name
    (``NVIDIA H100 80GB HBM3``, ``NVIDIA H200``, ``NVIDIA H800``; the table layout's ``NVIDIA H100 80G...``);
    ``NVIDIA H20`` is made for HGX boards only."""
    up = name.upper()
    return "SXM" in up or product_nvlinks(name) is not None or up.rstrip(". ").endswith(("H20", "H100 80G"))


def _board_of(gpus: list[Mapping[str, Any]], found: int) -> int | None:
    """:func:`board_gpus` of the listed GPUs' names, when every one of them is named."""
    names = [str(g.get("name")) for g in gpus if g.get("name")]
    return board_gpus(names, found) if len(names) == len(gpus) else None


def board_gpus(names: list[str], found: int) -> int | None:
    """The GPU count the board implies, when the capture states it: an SXM product of an 8-GPU HGX
    family with 5-7 GPUs visible (a 4-GPU board cannot show more than 4)."""
    if not names or not 4 < found < 8:
        return None
    ok = all(_sxm(n) and any(f in n.upper() for f in _SXM8_FAMILIES) for n in names)
    return 8 if ok else None


_HEALTH_KEYS = ("ecc", "remapped_rows", "retired_pages", "clocks_event_reasons", "reset_required", "fabric_state",
                "vgpu_license")


#: readings of a GPU's live state: each was read and checked for an error token (gpu_field_error), so a
#: GPU that shows them answering has been judged (as the plain table's temperature/power/memory row is)
_READINGS = (("temperature_c", "gpu"), ("power_w", "draw"), ("utilization_pct", "gpu"))


def _has_health(g: Mapping[str, Any]) -> bool:
    """A GPU entry carries at least one field a health check reads (not only names and versions)."""
    if g.get("error_fields"):
        return True
    if any(isinstance(g.get(part), Mapping) and g[part].get(key) is not None for part, key in _READINGS):
        return True
    ecc = g.get("ecc") or {}
    if any(v is not None for part in ("volatile", "aggregate") for v in (ecc.get(part) or {}).values()):
        return True
    pcie = g.get("pcie") or {}
    if any(pcie.get(f"{k}_current") is not None and pcie.get(f"{k}_max") is not None for k in ("width", "gen")):
        return True  # a PCIe link read as current and maximum (_pcie judges width, and gen under load)
    power = g.get("power_w") or {}
    if power.get("default_limit") is not None and (power.get("requested_limit") or power.get("limit")) is not None:
        return True  # a power limit beside the board's default (_power_limit judges a lowered one)
    if str(g.get("recovery_action") or "N/A").strip() not in ("N/A", "[N/A]", "", "Not Supported"):
        return True  # the driver's own answer whether the GPU needs a reset, reboot or drain (570+)
    return any(g.get(k) is not None for k in _HEALTH_KEYS[1:])


def _part_shown(data: Mapping[str, Any]) -> bool:
    """The parse lacks lines the command printed (ccparse.registry: lines left unread, a '| head'/'| tail' pipe):
    a device on such a line is missing from any count of the listing. The engine turns gpu_count findings of such a
    parse into coverage notes (its COUNTING_CHECKS); checks that count under another name ask this."""
    return bool(data.get("unread_lines") or data.get("partial"))


def _report_cut(data: Mapping[str, Any]) -> bool:
    """The report itself is cut (fewer GPU blocks than it announces, lines elided), not only a line left unread by
    the salvage (ccparse.registry adds one ``cut`` sentence for those)."""
    return bool(data.get("blocks_missing")) or len(data.get("cut") or ()) > (1 if data.get("unread_lines") else 0)


def _count_finding(host: str, found: int, exp: Mapping[str, Any], kind: str,
                   board: int | None = None) -> list[Finding]:
    want = exp.get("gpus_per_node")
    if want is None:
        if board is not None and found < board:
            return [Finding(host, "gpu_count", rule_sev("gpu_count.below_expected"), host,
                            f"{found} GPU(s) visible to nvidia-smi on a {board}-GPU HGX board (an SXM product; "
                            "no gpus_per_node given): GPU(s) missing")]
        return []
    want = int(want)
    if found < want:
        return [Finding(host, "gpu_count", rule_sev("gpu_count.below_expected"),
                        host, f"{found} GPU(s) visible to nvidia-smi, {want} expected "
                        f"(gpus_per_node)")]
    if found > want:
        return [Finding(host, "gpu_count", rule_sev("gpu_count.above_expected"),
                        host, f"{found} GPUs visible, only {want} expected "
                        "(gpus_per_node)")]
    return []


def _ecc(host: str, g: Mapping[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    ecc = g.get("ecc") or {}
    vol = (ecc.get("volatile") or {}).get("uncorrectable")
    agg = (ecc.get("aggregate") or {}).get("uncorrectable")
    if vol:
        detail = _ecc_detail(ecc.get("volatile") or {})
        out.append(Finding(host, "gpu_ecc", rule_sev("gpu_ecc.volatile_uncorrectable"), _subject(host, g),
                           f"{vol} uncorrectable ECC error(s) since the last reset{detail}{_bus(g)}"))
    elif agg:
        detail = _ecc_detail(ecc.get("aggregate") or {})
        handled = _handled_by_hardware(g)
        rule = "gpu_ecc.aggregate_handled" if handled else "gpu_ecc.aggregate_uncorrectable"
        out.append(Finding(host, "gpu_ecc", rule_sev(rule), _subject(host, g),
                           f"{agg} uncorrectable ECC error(s) in the lifetime counters{detail}, none since the last "
                           f"reset{handled}{_bus(g)}"))
    if ecc.get("sram_threshold_exceeded"):
        out.append(Finding(host, "gpu_ecc", rule_sev("gpu_ecc.sram_threshold"),
                           _subject(host, g), f"SRAM ECC error threshold exceeded{_bus(g)}"))
    if ecc.get("unrepairable_memory"):
        out.append(Finding(host, "gpu_ecc", rule_sev("gpu_ecc.unrepairable_memory"),
                           _subject(host, g), f"unrepairable memory reported{_bus(g)}"))
    for key, what in (("channel_repair_pending", "memory channel repair"), ("tpc_repair_pending", "TPC repair")):
        if ecc.get(key):
            out.append(Finding(host, "gpu_ecc", rule_sev("gpu_ecc.repair_pending"),
                               _subject(host, g), f"{what} pending: reset the GPU{_bus(g)}"))
    return out


def _handled_by_hardware(g: Mapping[str, Any]) -> str:
    """Why a lifetime uncorrectable count is history, not an active fault ('' when it is not): the
    row was remapped (Remapped Rows Uncorrectable > 0, nothing pending, no failure) or the page retired
    (double-bit retirements below the RMA limit, nothing pending)."""
    rr = g.get("remapped_rows")
    if isinstance(rr, Mapping) and (rr.get("uncorrectable") or 0) > 0 and rr.get("pending") is False \
            and not rr.get("failure"):
        return f" (handled: {rr['uncorrectable']} row(s) remapped, none pending, no remapping failure)"
    rp = g.get("retired_pages")
    if isinstance(rp, Mapping) and (rp.get("double_bit") or 0) > 0 and rp.get("pending") is False \
            and (rp.get("single_bit") or 0) + (rp.get("double_bit") or 0) < RETIRED_PAGES_LIMIT:
        return f" (handled: {rp['double_bit']} page(s) retired, none pending, below the RMA limit)"
    return ""


def _ecc_detail(counts: Mapping[str, Any]) -> str:
    parts = [f"{k.split('_')[0].upper()} {counts[k]}" for k in ("sram_uncorrectable", "dram_uncorrectable")
             if counts.get(k)]
    return f" ({', '.join(parts)})" if parts else ""


def _memory_repair(host: str, g: Mapping[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    rr = g.get("remapped_rows")
    if type(rr) is dict or isinstance(rr, Mapping):  # a dict first: the ABC's test is a Python call
        if rr.get("failure"):
            out.append(Finding(host, "gpu_row_remap", rule_sev("gpu_row_remap.failure"), _subject(host, g),
                               f"row remapping failure occurred: no spare rows left in a bank{_bus(g)}"))
        if rr.get("pending"):
            out.append(Finding(host, "gpu_row_remap", rule_sev("gpu_row_remap.pending"), _subject(host, g),
                               f"row remap pending: reset the GPU to apply it{_bus(g)}"))
    rp = g.get("retired_pages")
    if type(rp) is dict or isinstance(rp, Mapping):
        sbe, dbe = rp.get("single_bit") or 0, rp.get("double_bit") or 0
        if rp.get("pending"):
            out.append(Finding(host, "gpu_retired_pages", rule_sev("gpu_retired_pages.pending"), _subject(host, g),
                               f"page retirement pending: reset the GPU ({sbe} single-bit, {dbe} double-bit retired)"
                               f"{_bus(g)}"))
        elif sbe + dbe >= RETIRED_PAGES_LIMIT:
            out.append(Finding(host, "gpu_retired_pages", rule_sev("gpu_retired_pages.rma_limit"), _subject(host, g),
                               f"{sbe + dbe} retired pages, at or over NVIDIA's RMA limit of {RETIRED_PAGES_LIMIT}"
                               f"{_bus(g)}"))
        elif dbe:
            out.append(Finding(host, "gpu_retired_pages", rule_sev("gpu_retired_pages.below_limit"), _subject(host, g),
                               f"{dbe} page(s) retired for double-bit ECC errors, below the RMA limit: handled by "
                               f"the driver{_bus(g)}"))
    return out


#: degrees C under 'GPU Max Operating Temp' at which a GPU is held at that limit (the driver regulates its clocks
#: around it; severity.yml gpu_throttle.at_operating_limit)
AT_OPERATING_LIMIT_C = 2.0


def _at_operating_limit(host: str, g: Mapping[str, Any]) -> list[Finding]:
    temps = g.get("temperature_c") or {}
    temp, limit = temps.get("gpu"), temps.get("max_operating")
    if isinstance(temp, int | float) and isinstance(limit, int | float) and limit > 0:
        if temp < limit - AT_OPERATING_LIMIT_C:
            return []
        what = f"GPU at {temp:g} C, at its maximum operating temperature ({limit:g} C)"
    else:
        # 535+ drivers: 'GPU T.Limit Temp' is the headroom below the GPU's T.Limit, 'GPU Max Operating T.Limit Temp'
        # the operating limit on the same scale (0: at T.Limit; negative: above it)
        room, op = temps.get("tlimit_headroom"), temps.get("max_operating_tlimit")
        op = op if isinstance(op, int | float) else 0.0
        if not isinstance(room, int | float) or room > op + AT_OPERATING_LIMIT_C:
            return []
        what = f"GPU {room:g} C from its T.Limit, at its maximum operating temperature (T.Limit {op:+g} C)"
    return [Finding(host, "gpu_throttle", rule_sev("gpu_throttle.at_operating_limit"), _subject(host, g),
                    f"{what}: clocks are held down to stay inside it; check cooling and airflow{_bus(g)}")]


def _throttle(host: str, g: Mapping[str, Any]) -> list[Finding]:
    reasons = g.get("clocks_event_reasons")
    if not (type(reasons) is dict or isinstance(reasons, Mapping)) or not any(map(reasons.get, _THROTTLE)):
        return _at_operating_limit(host, g)
    hw = [r for r in HW_THROTTLE if reasons.get(r)]
    sw = [r for r in SW_THROTTLE if reasons.get(r)]
    if not hw and not sw:
        return _at_operating_limit(host, g)
    subj = _subject(host, g)
    out: list[Finding] = []
    temp = (g.get("temperature_c") or {}).get("gpu")
    t = f", GPU at {temp:g} C" if isinstance(temp, int | float) else ""
    if hw:
        out.append(Finding(host, "gpu_throttle", rule_sev("gpu_throttle.hw_slowdown"), subj,
                           f"hardware clock slowdown active: {', '.join(hw)}{t}{_bus(g)}"))
    if sw:
        out.append(Finding(host, "gpu_throttle", rule_sev("gpu_throttle.sw_thermal"), subj,
                           f"software thermal slowdown active: {', '.join(sw)}{t}{_bus(g)}"))
    return out


#: performance states a GPU drops to when it has no work (P0 is full performance, P2 compute; P8 and deeper idle): the
#: driver lowers the PCIe link's generation with them
_IDLE_PSTATES = frozenset(f"P{n}" for n in range(5, 16))


def _idle(g: Mapping[str, Any]) -> bool:
    """The GPU says it is idle: its clock event reason 'GPU idle' is active or its performance state is P5 or deeper.
    A lower PCIe generation is then the driver's power saving, whatever a sampled utilisation reads."""
    reasons = g.get("clocks_event_reasons")
    if isinstance(reasons, Mapping) and reasons.get("idle") is True:
        return True
    return str(g.get("performance_state") or "").strip().upper() in _IDLE_PSTATES


def _pcie(host: str, g: Mapping[str, Any]) -> list[Finding]:
    p = g.get("pcie") or {}
    out: list[Finding] = []
    wc, wm = p.get("width_current"), p.get("width_max")
    if wc is not None and wm is not None and wc < wm:
        out.append(Finding(host, "gpu_pcie", rule_sev("gpu_pcie.width_reduced"),
                           _subject(host, g), f"PCIe link width x{wc}, device maximum x{wm}{_bus(g)}"))
    gc, gm = p.get("gen_current"), p.get("gen_max")
    util = (g.get("utilization_pct") or {}).get("gpu")
    if gc is not None and gm is not None and gc < gm and util is not None and util > 0 and not _idle(g):
        out.append(Finding(host, "gpu_pcie", rule_sev("gpu_pcie.gen_reduced_under_load"), _subject(host, g),
                           f"PCIe Gen{gc} under load ({util:g}% busy), device maximum Gen{gm}{_bus(g)}"))
    return out


#: share of its default power limit below which a GPU's enforced limit is lowered (a cap, not rounding)
POWER_LIMIT_SHARE = 0.9


def _power_limit(host: str, g: Mapping[str, Any]) -> list[Finding]:
    """A power limit set well below the board's default: the GPU runs, slower under load (its SW power cap
    engages at the lowered limit). The limit an operator requested is judged where the capture shows it: the
    enforced one may sit lower by design where a module shares its power (GH200: 700 W enforced of 900 W
    requested, the module's 1000 W budget split with the CPU)."""
    power = g.get("power_w") or {}
    limit, default = power.get("requested_limit"), power.get("default_limit")
    if limit is None:
        limit = power.get("limit")
    if not (isinstance(limit, int | float) and isinstance(default, int | float)) or default <= 0:
        return []
    if limit >= POWER_LIMIT_SHARE * default:
        return []
    return [Finding(host, "gpu_power", rule_sev("gpu_power.limit_lowered"), _subject(host, g),
                    f"power limit {limit:g} W is below the board's default {default:g} W: the GPU runs slower "
                    f"under load (nvidia-smi -pl {default:g} restores it){_bus(g)}")]


#: products whose GPU shares one module power limit with a CPU: their enforced limit sits below the requested one by
#: design (the Grace CPU's share)
_SHARED_MODULE = ("GH200", "GB200", "GB300", "Grace")


def _power_held(host: str, g: Mapping[str, Any]) -> list[Finding]:
    """The enforced (current) power limit well below the one requested, on a GPU that shares no module power: a cap
    from outside nvidia-smi holds it (the BMC's or chassis' power policy, a power supply lost): it runs slower under
    load and ``nvidia-smi -pl`` cannot lift it (severity.yml gpu_power.limit_held)."""
    power = g.get("power_w") or {}
    enforced, requested = power.get("limit"), power.get("requested_limit")
    if not (isinstance(enforced, int | float) and isinstance(requested, int | float)) or requested <= 0:
        return []
    if enforced >= POWER_LIMIT_SHARE * requested or g.get("module_power") or any(
            p in str(g.get("name") or "") for p in _SHARED_MODULE):
        return []
    return [Finding(host, "gpu_power", rule_sev("gpu_power.limit_held"), _subject(host, g),
                    f"enforced power limit {enforced:g} W is below the {requested:g} W requested: a cap from outside "
                    f"nvidia-smi holds the GPU (the BMC's or chassis' power policy, a lost power supply), it runs "
                    f"slower under load{_bus(g)}")]


#: words of fields that are settings (limits, defaults), not readings of the GPU's state: an error
#: token there (Windows drivers print '[Unknown Error]' for power.default_limit) is a note; so is the PCIe link
#: generation the host's port allows ('Host Max': the upstream port's capability, read off the host, not the GPU)
_SETTING_WORDS = ("limit", "default", "application", "compute_mode", "compute mode", "accounting", "vbios",
                  "inforom", "serial", "board_id", "persistence", "host max", "host_max")


#: the readings WSL 2's driver does not expose, as the table's column names them
_WSL_UNREAD = {("utilization.gpu", "ERR!"): "GPU-Util", ("fan.speed", "ERR!"): "Fan"}


def _under_wsl(data: Mapping[str, Any]) -> str:
    """The table's banner under WSL 2: Linux's nvidia-smi reports the Windows host's driver, whose version is not
    its own ('NVIDIA-SMI 470.28  Driver Version: 470.76'); a Linux host prints one version twice. "" elsewhere."""
    smi, drv = data.get("smi_version"), data.get("driver_version")
    return f"NVIDIA-SMI {smi} under the Windows driver {drv}" if smi and drv and smi != drv else ""


def _error_fields(host: str, g: Mapping[str, Any], wsl: str = "") -> list[Finding]:
    out: list[Finding] = []
    errs = list(g.get("error_fields") or [])
    # WSL 2's paravirtualised drivers expose neither the utilization counter nor the fan: 'ERR!' in GPU-Util or Fan
    # on a GPU that answers
    unread = [_WSL_UNREAD[tuple(e)] for e in errs if tuple(e) in _WSL_UNREAD] if wsl else []
    if unread:
        errs = [e for e in errs if tuple(e) not in _WSL_UNREAD]
        shown = " and ".join(unread)
        out.append(Finding(host, "gpu_field_error", rule_sev("gpu_field_error.wsl_reading"), _subject(host, g),
                           f"nvidia-smi shows {shown} 'ERR!' under WSL 2 ({wsl}): WSL's driver does not "
                           f"report it, the GPU's other readings answer{_bus(g)}"))
    if not errs:
        return out
    setting = [e for e in errs if any(w in e[0].lower() for w in _SETTING_WORDS)]
    state = [e for e in errs if e not in setting]
    for rule, group, what in (("gpu_field_error.error_token", state, "cannot read the GPU"),
                              ("gpu_field_error.setting_unreadable", setting, "cannot read a setting")):
        if group:
            shown = ", ".join(f"{path} '{val}'" for path, val in group[:6]) + (
                f" and {len(group) - 6} more" if len(group) > 6 else "")
            out.append(Finding(host, "gpu_field_error", rule_sev(rule), _subject(host, g),
                               f"nvidia-smi {what}: {shown}{_bus(g)}"))
    return out


def _reset(host: str, g: Mapping[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    if g.get("reset_required"):
        out.append(Finding(host, "gpu_reset", rule_sev("gpu_reset.required"),
                           _subject(host, g), f"driver reports GPU reset required{_bus(g)}"))
    elif g.get("drain_and_reset_recommended"):
        out.append(Finding(host, "gpu_reset", rule_sev("gpu_reset.recommended"),
                           _subject(host, g), f"driver recommends drain and reset{_bus(g)}"))
    action = g.get("recovery_action")
    if isinstance(action, str) and action not in ("None", "N/A", ""):
        word = action.strip().lower()
        rule = ("gpu_reset.recovery_reboot" if word in ("reboot", "system reboot", "node reboot") else
                "gpu_reset.recovery_reset" if word in ("reset", "bus reset", "gpu reset") else
                "gpu_reset.recovery_action")
        out.append(Finding(host, "gpu_reset", rule_sev(rule),
                           _subject(host, g), f"GPU recovery action requested: {action}{_bus(g)}"))
    return out


def _fabric(host: str, g: Mapping[str, Any]) -> list[Finding]:
    """NVSwitch fabric registration (H100/H200 HGX, 535+): ``State`` Not Started/In Progress means
    nvidia-fabricmanager has not set the GPU up and CUDA fails with "system not yet initialized";
    Completed with a Status other than Success means registration failed."""
    state, status = g.get("fabric_state"), g.get("fabric_status")
    if not isinstance(state, str) or state in ("N/A", "Not Supported", ""):
        return []
    if state in ("Not Started", "In Progress"):
        return [Finding(host, "gpu_fabric", rule_sev("gpu_fabric.not_ready"), _subject(host, g),
                        f"NVSwitch fabric state {state}: nvidia-fabricmanager has not initialised this GPU "
                        f"(CUDA reports 'system not yet initialized'){_bus(g)}")]
    if state == "Completed" and isinstance(status, str) and status not in ("Success", "N/A", ""):
        return [Finding(host, "gpu_fabric", rule_sev("gpu_fabric.registration_failed"), _subject(host, g),
                        f"NVSwitch fabric registration failed: status {status}{_bus(g)}")]
    health = g.get("fabric_health") or {}
    bad = [f"{k} {v}" for k, v in health.items() if (k, str(v)) in _FABRIC_UNHEALTHY]  # query: True as a bool
    if bad:
        return [Finding(host, "gpu_fabric", rule_sev("gpu_fabric.unhealthy"), _subject(host, g),
                        f"NVSwitch fabric registered but its health says {', '.join(bad)}: multi-node NVLink runs "
                        f"degraded or not at all{_bus(g)}")]
    return []


#: the fabric health readings (NVML's nvmlGpuFabricHealthMask / summary) that say the fabric is not as built
_FABRIC_UNHEALTHY = frozenset({("Summary", "Unhealthy"), ("Summary", "Limited Capacity"), ("Bandwidth", "Degraded"),
                               ("Route Unhealthy", "True"), ("Incorrect Configuration", "True"),
                               ("Route Recovery in progress", "True"), ("Access Timeout Recovery", "True")})


#: product names of desktop/workstation boards, where persistence mode off is the normal setting
_DESKTOP = ("geforce", "titan", "quadro")
_DESKTOP_NAME = re.compile("|".join(map(re.escape, _DESKTOP)))


def _persistence(host: str, g: Mapping[str, Any], exp: Mapping[str, Any]) -> list[Finding]:
    """Persistence mode off on a data-center GPU (``Off`` in the table, ``Disabled`` in ``-q`` and
    ``--query-gpu``): the driver tears the GPU down whenever no client holds it, so every job start
    re-initialises it. DCGM 3 reports it as Info under a passing 'Persistence Mode' check, so it is
    a note by default and a warning when the spec sets ``gpu_persistence_required: true``.
    Desktop boards are not judged; ``N/A`` (Windows driver models) is not a state."""
    mode = g.get("persistence_mode")
    if mode not in ("Off", "Disabled"):
        return []
    if _DESKTOP_NAME.search(str(g.get("name") or "").lower()):  # any(d in name for d in _DESKTOP)
        return []
    sev = rule_sev("gpu_persistence.off_required" if exp.get("gpu_persistence_required") else "gpu_persistence.off")
    return [Finding(host, "gpu_persistence", sev, _subject(host, g),
                    f"persistence mode {mode}: enable it (nvidia-persistenced, or nvidia-smi -pm 1){_bus(g)}")]


def _vgpu_license(host: str, g: Mapping[str, Any]) -> list[Finding]:
    """A vGPU guest without its licence ('License Status : Unlicensed (Restricted)', or '(Unrestricted)' in the grace
    period): the vGPU driver restricts an unlicensed vGPU's performance (severity.yml gpu_vgpu.unlicensed)."""
    lic = g.get("vgpu_license") or {}
    status = str(lic.get("status") or "")
    if not status.lower().startswith("unlicensed"):
        return []
    product = lic.get("product")
    return [Finding(host, "gpu_vgpu", rule_sev("gpu_vgpu.unlicensed"), _subject(host, g),
                    f"vGPU licence status {status!r}{f' for {product}' if product else ''}: the driver restricts an "
                    f"unlicensed vGPU (check the licence server / client token){_bus(g)}")]


def _inforom(host: str, warnings: list[str], gpus: list[Mapping[str, Any]]) -> list[Finding]:
    from ccparse.nvidia_smi_table import norm_bus_id

    out: list[Finding] = []
    for w in warnings:
        if "inforom" not in w.lower() or "corrupt" not in w.lower():
            continue
        bus = w.rsplit(" ", 1)[-1]
        try:
            norm = norm_bus_id(bus)
        except ValueError:
            norm = bus
        gpu = next((g for g in gpus if g.get("bus_id") and norm_bus_id(str(g["bus_id"])) == norm), None)
        subj = _subject(host, gpu) if gpu else host
        out.append(Finding(host, "gpu_inforom", rule_sev("gpu_inforom.corrupted"), subj,
                           f"InfoROM corrupted ({norm}): ECC/page-retirement records unreliable, reflash or RMA"))
    return out


def _lost(host: str, data: Mapping[str, Any]) -> list[Finding]:
    return [Finding(host, "gpu_lost", rule_sev("gpu_lost.device_handle_error"), f"{host}/{g['bus_id']}",
                    f"GPU {g['bus_id']} unreachable: nvidia-smi cannot get its device handle ({g.get('error')}); "
                    "fallen off the bus? look for Xid 79 in the kernel log, then reset or reseat")
            for g in data.get("lost_gpus") or []]


def _unreachable(host: str, data: Mapping[str, Any]) -> list[Finding]:
    """nvidia-smi's failure to reach the driver, in whichever mode it ran."""
    if not data.get("driver_unreachable"):
        return []
    return [Finding(host, "gpu_driver", rule_sev("gpu_driver.unreachable"), host,
                    f"nvidia-smi cannot reach the NVIDIA driver: {data['driver_unreachable']!r}; "
                    "no GPU of this node is usable (driver not loaded, or a library/module version "
                    "mismatch after an upgrade: reboot or reload the driver)")]


def judge_gpu_list(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    """Shared judge of ``nvidia-smi -q`` and ``--query-gpu`` parses."""
    res = CheckResult()
    res.findings += _unreachable(host, data)
    gpus = list(data.get("gpus") or [])
    if not data.get("excerpt"):
        attached = data.get("attached_gpus")
        found = int(attached) if attached is not None else len(gpus) + len(data.get("lost_gpus") or [])
        board = _board_of(gpus, found)
        res.findings += _count_finding(host, found, exp, "", board)
        # the count is judged when the capture states it ('Attached GPUs', severity.yml gpu_count.cannot_judge)
        if exp.get("gpus_per_node") is None and board is None and attached is None and gpus \
                and not any(map(_has_health, gpus)) and not data.get("lost_gpus"):
            res.findings.append(Finding(host, "gpu_count", rule_sev("gpu_count.cannot_judge"), host,
                                        f"cannot judge: needs gpus_per_node ({found} GPU(s) listed; the capture "
                                        "holds no health field and states no expected count)"))
        elif (_report_cut(data) or (attached is not None and exp.get("gpus_per_node") is None)) and gpus \
                and not any(map(_has_health, gpus)) and not data.get("lost_gpus") and not res.findings:
            # a report cut inside the GPUs' identity fields (or before the blocks its 'Attached GPUs' count
            # announces), or the head of one whose own count is met with no inventory count to hold it to: no GPU
            # shown carries a reading or health field, nothing says they are healthy (severity.yml
            # coverage.nothing_judgeable); with gpus_per_node set, the count is judged against it
            res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                        f"{NOTHING}{len(gpus)} GPU(s) listed with their identity only: no reading "
                                        "(temperature, power, ECC, PCIe link, ...) and no health field"))
    elif gpus and not data.get("lost_gpus") and not any(map(_has_health, gpus)):
        # an excerpt states no count, so gpus_per_node would not help either: every field it holds is an
        # identity or reads N/A (a vGPU guest, a cut before the readings), nothing a check judges
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}nvidia-smi -q/--query-gpu excerpt of {len(gpus)} GPU(s) without "
                                    "a reading or health field (every one N/A or cut)"))
    per_gpu = res.findings
    for g in gpus:
        per_gpu += _ecc(host, g)
        per_gpu += _memory_repair(host, g)
        per_gpu += _throttle(host, g)
        per_gpu += _pcie(host, g)
        per_gpu += _reset(host, g)
        per_gpu += _fabric(host, g)
        # a lowered requested limit explains a low enforced one; without it (or without a default shown) the
        # enforced limit is judged against the requested one
        per_gpu += _power_limit(host, g) or _power_held(host, g)
        per_gpu += _persistence(host, g, exp)
        per_gpu += _vgpu_license(host, g)
        per_gpu += _error_fields(host, g)
    res.findings += _inforom(host, list(data.get("warnings") or []), gpus)
    res.findings += _lost(host, data)
    return res


@check("nvidia-smi-q")
def judge_nvidia_smi_q(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    return judge_gpu_list(host, data, exp)


@check("nvidia-smi-q-xml")
def judge_nvidia_smi_q_xml(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    return judge_gpu_list(host, data, exp)


@check("nvidia-smi-query")
def judge_nvidia_smi_query(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    return judge_gpu_list(host, data, exp)


@check("nvidia-smi")
def judge_nvidia_smi_table(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    gpus = list(data.get("gpus") or [])
    listed = list(data.get("listed") or []) if not gpus else []
    if listed:
        # nvidia-smi -L: the count is stated, nothing else; without gpus_per_node, or with part of the listing
        # left out (a line not read, '| head'), there is nothing to judge; a later run that cannot reach the driver
        # (a loop's output, a container that lost its device nodes) says no GPU is usable now
        if data.get("driver_unreachable"):
            res.findings += _unreachable(host, data)
            return res
        if _part_shown(data):
            why = "only part of the listing is read (see the coverage note): its count is not judged"
        else:
            res.findings += _count_finding(host, len(listed), exp, "nvidia-smi")
            why = "their count needs gpus_per_node" if exp.get("gpus_per_node") is None else ""
        if why and not data.get("lost_gpus"):
            res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                        f"{NOTHING}nvidia-smi -L lists {len(listed)} GPU(s) by name and UUID, no "
                                        f"reading or health field: {why}"))
        res.findings += _lost(host, data)
        return res
    if not data.get("excerpt"):  # a MIG devices box pasted alone states no GPU count
        # the board's count only where the table runs to its processes box (a paste cut after GPU 4 lists 5)
        board = _board_of(gpus, len(gpus)) if data.get("whole_table") else None
        res.findings += _count_finding(host, len(gpus), exp, "nvidia-smi", board)
    if gpus and exp.get("gpus_per_node") is None and not data.get("lost_gpus") and all(
            g.get("cut_after_first_row") and g.get("ecc_uncorrected_volatile") is None for g in gpus):
        # each GPU's first row only (the paster's trim, or a cut): names and bus ids, no reading; as with
        # nvidia-smi -L, their count is all there is, and it needs gpus_per_node
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}nvidia-smi lists {len(gpus)} GPU(s) by their first table row only "
                                    "(name, bus id; no reading or health field): their count needs gpus_per_node"))
    for m in data.get("mig_devices") or []:
        n = m.get("ecc_uncorrected_volatile")
        if n:
            res.findings.append(Finding(host, "gpu_ecc", rule_sev("gpu_ecc.volatile_uncorrectable"),
                                        f"{host}/gpu{m.get('gpu')}",
                                        f"{n} uncorrectable ECC error(s) since the last reset in MIG instance "
                                        f"GI {m.get('gi')} CI {m.get('ci')} (MIG dev {m.get('mig_dev')})"))
    res.findings += _unreachable(host, data)
    if data.get("processes_only"):
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}nvidia-smi: {data['processes_only']} row(s) of the processes box only, "
                                    "no GPU row: no reading or health field"))
    if data.get("cut_before_rows"):
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}nvidia-smi: the capture holds the banner but no GPU row"))
    if data.get("no_devices") and not exp.get("gpus_per_node"):
        res.findings.append(Finding(host, "gpu_count", rule_sev("gpu_count.none_expected"),
                                    host, "nvidia-smi: no devices found (none expected)"))
    for g in gpus:
        n = g.get("ecc_uncorrected_volatile")
        if n:
            res.findings.append(Finding(host, "gpu_ecc", rule_sev("gpu_ecc.volatile_uncorrectable"), _subject(host, g),
                                        f"{n} uncorrectable ECC error(s) since the last reset{_bus(g)}"))
        res.findings += _persistence(host, g, exp) + _error_fields(host, g, _under_wsl(data))
    res.findings += _inforom(host, list(data.get("warnings") or []), gpus)
    res.findings += _lost(host, data)
    return res


#: NVLink links per GPU of SXM products (NVIDIA datasheets: V100 SXM2 6, A100 SXM4 12, A800/H800 8,
#: H100/H200/B200/B300 SXM 18); PCIe and NVL bridge cards are not in the table
_PRODUCT_NVLINKS = (("A800", 8), ("H800", 8), ("A100-SXM", 12), ("A100 SXM", 12), ("V100-SXM2", 6), ("V100-SXM3", 6),
                    ("H100 80GB HBM3", 18), ("H100-SXM", 18), ("H100 SXM", 18), ("H200", 18), ("B200", 18),
                    ("B300", 18))


def product_nvlinks(name: str) -> int | None:
    """NVLink links per GPU of the product ``name`` (None: not an SXM product in the table)."""
    up = name.upper()
    if "PCIE" in up or " NVL" in up:
        return None
    return next((n for key, n in _PRODUCT_NVLINKS if key.upper() in up), None)


#: NVLink links a PCIe card's bridges connect (NVIDIA H100 PCIe / H100 NVL product briefs: three NVLink bridges,
#: 600 GB/s, 12 of the GPU's 18 links; nvidia-smi lists the other six as <inactive>)
_BRIDGE_NVLINKS = (("H100 PCIE", 12), ("H100 NVL", 12))


def bridge_nvlinks(name: str) -> int | None:
    """NVLink links the bridges of the PCIe product ``name`` connect (None: not in the table)."""
    up = name.upper()
    return next((n for key, n in _BRIDGE_NVLINKS if key in up), None)


@check("nvidia-smi-nvlink")
def judge_nvlink(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    want = exp.get("nvlink_links_per_gpu")
    gpus = list(data.get("gpus") or [])
    if not gpus:
        if want:
            res.findings.append(Finding(host, "gpu_nvlink", rule_sev("gpu_nvlink.none_expected_some"), host,
                                        f"nvidia-smi nvlink -s printed no links, {want} per GPU expected"))
        else:
            res.findings.append(Finding(host, "gpu_nvlink", rule_sev("gpu_nvlink.no_nvlink"), host,
                                        "nvidia-smi nvlink -s printed no links: no NVLink on this node"))
        return res
    if all(g.get("capabilities") and not g.get("links") and not g.get("all_links_inactive")
           and not g.get("error_counts") and not g.get("traffic_kib") for g in gpus):
        # nvlink -c alone: what each link can do, not whether it is trained (severity.yml coverage.nothing_judgeable)
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}nvidia-smi nvlink -c lists the links' capabilities of {len(gpus)} "
                                    "GPU(s), not their state or speed (nvlink -s)"))
        return res
    peers_with_links = any(g.get("active_links") for g in gpus)
    dark = [g for g in gpus if g.get("all_links_inactive")]
    # an SXM product's NVLinks are on the board: all inactive is a fault, not "no NVLink here"
    built_in = {id(g) for g in dark if product_nvlinks(str(g.get("name") or ""))}
    if dark and not want and not peers_with_links and len(built_in) < len(dark):
        res.findings.append(Finding(host, "gpu_nvlink", rule_sev("gpu_nvlink.no_nvlink"), host,
                                    f"no active NVLink on any of the {len(gpus)} GPU(s) (NVML: all links are "
                                    "inactive): PCIe cards or no NVLink bridge; set nvlink_links_per_gpu if "
                                    "links are expected"))
    for g in gpus:
        subj = _subject(host, g)
        counted = {k: v for k, v in (g.get("error_counts") or {}).items() if v}
        many = sorted((link, k, v) for link, row in (g.get("link_errors") or {}).items() for k, v in row.items()
                      if v >= NVLINK_ERRORS_MANY)
        if many:
            res.findings.append(Finding(host, "gpu_nvlink", rule_sev("gpu_nvlink.errors_many"), subj,
                                        f"GPU {g.get('index')}: NVLink "
                                        + ", ".join(f"link {link} {k} errors {v}"
                                                    + (" (the counter is saturated: at least that many)"
                                                       if v in _COUNTER_MAX else "") for link, k, v in many)
                                        + " since the driver loaded: a marginal link (board trace, connector, "
                                        "bridge); its traffic is replayed and slowed; reseat or swap to locate it"))
        elif counted:
            # nvlink -e: counters since the driver loaded, with no rate or threshold in the output
            res.findings.append(Finding(host, "gpu_nvlink", rule_sev("gpu_nvlink.errors_counted"), subj,
                                        f"GPU {g.get('index')}: NVLink error counters "
                                        + ", ".join(f"{k} {v}" for k, v in sorted(counted.items()))
                                        + " since the driver loaded: trend them (a rising CRC or recovery count is a "
                                        "marginal link)"))
        if (g.get("error_counts") or g.get("traffic_kib")) and not g.get("links") and not g.get("all_links_inactive"):
            continue  # the counters alone (nvlink -e, -gt d): no link state shown
        name = str(g.get("name") or "")
        product = (product_nvlinks(name) or bridge_nvlinks(name)) if not want else None
        if product is not None and g.get("inactive_links") and g.get("active_links", 0) >= product:
            continue  # judged with the product's topology: links beyond its count are unused by design
        if g.get("all_links_inactive"):
            if want or peers_with_links or id(g) in built_in:
                why = (f"{want} per GPU expected" if want else "other GPUs of the node have active links"
                       if peers_with_links else f"the {g.get('name')} has {product} NVLinks on its board")
                which = f"GPU {g['index']}" if g.get("index") is not None else "the GPU shown"
                res.findings.append(Finding(host, "gpu_nvlink", rule_sev("gpu_nvlink.inactive"), subj,
                                            f"{which}: all NVLink links inactive (NVML reports "
                                            f"none active; {why})"))
        elif g.get("inactive_links"):
            links = ", ".join(str(x) for x in g["inactive_links"])
            res.findings.append(Finding(host, "gpu_nvlink", rule_sev("gpu_nvlink.inactive"), subj,
                                        f"NVLink link(s) {links} inactive ({g['active_links']} of "
                                        f"{len(g['links'])} active)"))
        elif want and g.get("active_links", 0) < int(want):
            res.findings.append(Finding(host, "gpu_nvlink", rule_sev("gpu_nvlink.below_expected"), subj,
                                        f"{g['active_links']} NVLink links active, {want} expected"))
    n_exp = exp.get("gpus_per_node")
    if n_exp and len(gpus) < int(n_exp) and not _part_shown(data):
        res.findings.append(Finding(host, "gpu_nvlink", rule_sev("gpu_nvlink.gpu_count_below"), host,
                                    f"nvidia-smi nvlink -s lists {len(gpus)} GPU(s), {n_exp} expected"))
    return res


#: topo -m cells of a NIC on the GPU's own PCIe switch (GPUDirect RDMA without crossing the CPU)
_NEAR_NIC = ("PIX", "PXB")


def _p2p(host: str, gpus: list[Mapping[str, Any]]) -> CheckResult:
    """``nvidia-smi topo -p2p``: a GPU pair whose peer-to-peer capability is not OK (CNS, GNS, TNS, NS, U)
    moves intra-node traffic through host memory."""
    res = CheckResult()
    for g in gpus:
        refused = sorted(f"{peer} {v}" for peer, v in (g.get("links") or {}).items()
                         if peer.startswith("GPU") and v not in ("OK", "X"))
        if refused:
            res.findings.append(Finding(host, "gpu_topology", rule_sev("gpu_topology.p2p_unsupported"),
                                        f"{host}/{g['name']}", f"{g['name']}: peer-to-peer not available to "
                                        f"{', '.join(refused)}: intra-node traffic goes through host memory"))
    return res


@check("nvidia-smi-topo")
def judge_topo(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    """Departures from the node's own pattern, so boards of any design are judged against themselves:
    a GPU pair below the NVLink count most pairs have (judged only when at least
    :data:`TOPO_UNIFORM_FRACTION` of the pairs share one NV<n>, as on NVSwitch boards; hybrid
    meshes such as DGX-1 are not judged), and a GPU with no NIC on its PCIe switch when most GPUs
    have one (rail-optimised nodes). Both warnings."""
    from collections import Counter

    from ccparse.nvidia_smi_topo import nvlinks

    res = CheckResult()
    gpus = [g for g in data.get("gpus") or [] if g.get("index") is not None]
    if not gpus:
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}nvidia-smi topo -m: the capture holds the header but no GPU row"))
        return res
    if data.get("p2p"):
        return _p2p(host, gpus)
    if len(gpus) == 1 and not data.get("nics"):
        # one GPU and no NIC: no pair and no NIC path, nothing a topology check can judge
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}nvidia-smi topo -m of a single GPU ({gpus[0]['name']}) and no NIC: "
                                    "no link between devices to judge"))
        return res
    names = {g["name"] for g in gpus}
    pairs = {(a["name"], b): nvlinks(cell) for a in gpus for b, cell in (a.get("links") or {}).items()
             if b in names and b != a["name"]}
    # a GPU with no NVLink to any peer while the other pairs share one NV<n>: all its links are down
    cut_off = {g["name"] for g in gpus if len(gpus) > 2 and not any(
        nvlinks(v) for k, v in (g.get("links") or {}).items() if k.startswith("GPU"))}
    rest = Counter(v for (a, b), v in pairs.items() if a not in cut_off and b not in cut_off)
    # ... of a mesh (each other GPU NVLinked to two peers or more: SXM boards, NVSwitch); PCIe cards' 2-way
    # bridges pair GPUs one to one, and a card without a bridge partner is the build, not a lost link
    peers = Counter(a for (a, b), v in pairs.items() if v > 0 and a not in cut_off and b not in cut_off)
    if cut_off and rest and min(peers.values(), default=0) >= 2:
        mode, n = rest.most_common(1)[0]
        if mode > 0 and n >= TOPO_UNIFORM_FRACTION * sum(rest.values()):
            for g in gpus:
                if g["name"] in cut_off:
                    res.findings.append(Finding(
                        host, "gpu_topology", rule_sev("gpu_topology.no_nvlink"), _subject(host, g),
                        f"{g['name']} has no NVLink to any GPU (nvidia-smi topo -m) while the other GPU pairs are "
                        f"NV{mode}: its NVLinks are down; drain, reset the GPU, check its NVLink/NVSwitch "
                        "(nvidia-smi nvlink -s, fabric manager)"))
            pairs = {k: v for k, v in pairs.items() if k[0] not in cut_off and k[1] not in cut_off}
        else:
            cut_off = set()
    if pairs:
        mode, n = Counter(pairs.values()).most_common(1)[0]
        if mode > 0 and n >= TOPO_UNIFORM_FRACTION * len(pairs) and n < len(pairs):
            for g in gpus:
                low = sorted(b for (a, b), v in pairs.items() if a == g["name"] and v < mode)
                if low:
                    cells = ", ".join(f"{b} {g['links'][b]}" for b in low)
                    res.findings.append(Finding(host, "gpu_topology", rule_sev("gpu_topology.nvlink_count"),
                                                _subject(host, g),
                                                f"NVLink to {cells}, other GPU pairs of the node are NV{mode} "
                                                "(nvidia-smi topo -m)"))
    if data.get("nics") and gpus:
        near = {g["name"]: any(v in _NEAR_NIC for k, v in (g.get("links") or {}).items() if k.startswith("NIC"))
                for g in gpus}
        if sum(near.values()) > len(gpus) / 2:
            for g in gpus:
                if not near[g["name"]]:
                    res.findings.append(Finding(host, "gpu_topology", rule_sev("gpu_topology.nic_not_near"),
                                                _subject(host, g),
                                                f"{g['name']} has no NIC on its PCIe switch (PIX/PXB) while "
                                                f"{sum(near.values())} of {len(gpus)} GPUs do: its GPUDirect RDMA "
                                                "traffic crosses the CPU"))
    return res


@check("lspci")
def judge_lspci(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    """GPU, fast NIC and NVMe disk (:func:`_fast_device`; and any device of a grep'd excerpt: the one the user
    selected) link against its LnkCap: width below it ``pcie_link.width_reduced``; width below it while trained at
    Gen1, or a quarter of it or less, ``pcie_link.training_failed`` (speed alone is not judged for GPUs: idle
    down-clock)."""
    res = CheckResult()
    if not data.get("devices"):
        # an excerpt inside one device's section (VPD, capabilities): no device and no link state read
        # (severity.yml coverage.nothing_judgeable)
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}lspci -vv: no device header and no LnkCap/LnkSta in the excerpt"))
        return res
    lost: dict[str, list[str]] = {}
    for d in data.get("devices") or []:
        if d.get("config_all_ones"):  # one finding per device, its functions listed
            lost.setdefault(str(d["slot"]).rsplit(".", 1)[0], []).append(str(d["slot"]))
    want = int(exp.get("gpus_per_node") or 0)
    devices = data.get("devices") or []
    if want and any(d.get("class") == "Host bridge" for d in devices):
        # a listing of the whole bus (it starts at the host bridge): every GPU the node still has is in it
        on_bus = sorted({str(d["slot"]) for d in devices if d.get("is_gpu")})
        if len(on_bus) < want:
            res.findings.append(Finding(host, "gpu_count", rule_sev("gpu_count.below_expected"), host,
                                        f"lspci lists {len(on_bus)} NVIDIA GPU(s) on the PCI bus, {want} expected "
                                        "(gpus_per_node): the others are not on the bus (fallen off, not powered, not "
                                        "passed through)"))
    for d in devices:
        if d.get("flash_recovery"):
            res.findings.append(Finding(host, "pcie_device", rule_sev("pcie_device.flash_recovery"),
                                        f"{host}/{d['slot']}",
                                        f"PCI device {d['slot']} enumerates as its flash-recovery identity "
                                        f"({d.get('description')}): the adapter runs no firmware, no driver binds and "
                                        "it carries no traffic; burn its firmware (mstflint/flint in recovery mode), "
                                        "then power-cycle"))
    for dev, slots in lost.items():
        res.findings.append(Finding(host, "pcie_device", rule_sev("pcie_device.not_responding"), f"{host}/{dev}",
                                    f"PCI device {dev} (function(s) {', '.join(slots)}) reads 'rev ff': its config "
                                    "space returns all ones, the device has fallen off the bus; drain, reboot, reseat"))
    judged = 0
    for d in data.get("devices") or []:
        cap, sta = d.get("lnkcap"), d.get("lnksta")
        if not cap or not sta or not (d.get("is_gpu") or d.get("excerpt") or _fast_device(d, cap)):
            continue
        judged += 1
        subj = f"{host}/{d['slot']}"
        what = "NIC" if d.get("is_nic") else "GPU" if d.get("is_gpu") else "device"
        desc = f" ({d.get('description', '')[:60]})" if d.get("description") else ""
        if sta.get("width") and cap.get("width") and sta["width"] < cap["width"]:
            gen1 = sta.get("speed_gts") == 2.5 and (cap.get("speed_gts") or 0) > 2.5
            broken = gen1 or sta["width"] * 4 <= cap["width"]
            rule = "pcie_link.training_failed" if broken else "pcie_link.width_reduced"
            speed = f" at {sta['speed_gts']:g} GT/s" if sta.get("speed_gts") else ""
            why = ": the link failed to train (slot, riser or card)" if broken else ""
            res.findings.append(Finding(host, "pcie_link", rule_sev(rule), subj,
                                        f"{what} PCIe link x{sta['width']}{speed}, capable of x{cap['width']}"
                                        f"{why}{desc}"))
        elif (what == "NIC" and sta.get("speed_gts") and cap.get("speed_gts")
                and sta["speed_gts"] < cap["speed_gts"]):
            res.findings.append(Finding(host, "pcie_link", rule_sev("pcie_link.nic_speed_reduced"), subj,
                                        f"NIC PCIe link {sta['speed_gts']:g} GT/s (Gen{sta.get('gen')}), capable of "
                                        f"{cap['speed_gts']:g} GT/s (Gen{cap.get('gen')})"))
    if not judged and not res.findings:
        unread = _no_link_read(devices)
        if unread:
            res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                        f"{NOTHING}lspci: {unread}"))
    return res


#: lanes below which a NIC or disk is not a data path a training job waits on (a 1 GbE LOM is x1, a BMC's x1-x2)
_FAST_NIC_LANES = 8
_FAST_DISK_LANES = 4


def _fast_device(d: Mapping[str, Any], cap: Mapping[str, Any]) -> bool:
    """A device whose link width a job's speed depends on besides GPUs: a Mellanox adapter, another NIC built for
    :data:`_FAST_NIC_LANES` lanes or more (Broadcom, Intel, AMD Pensando RoCE NICs), an NVMe disk of
    :data:`_FAST_DISK_LANES` (data loading, checkpoints)."""
    if d.get("is_nic"):
        return d.get("vendor") == "mellanox" or (cap.get("width") or 0) >= _FAST_NIC_LANES
    return d.get("class") == "Non-Volatile memory controller" and (cap.get("width") or 0) >= _FAST_DISK_LANES


def _no_link_read(devices: list[Mapping[str, Any]]) -> str | None:
    """Why an lspci -vv capture holds no link to judge where one was asked for, or None (a plain listing of GPUs or
    NICs, each answering its config space)."""
    if not any(d.get("is_gpu") or d.get("is_nic") or d.get("excerpt") or d.get("lnksta") for d in devices):
        # bridges, controllers, a grep's 'NVIDIA' matching only a Grace CPU's root ports: no device a check judges
        return (f"{len(devices)} device(s) listed, none of them a GPU or a NIC "
                f"({', '.join(sorted({str(d.get('class') or '?') for d in devices})[:3])}): nothing to judge")
    if any(d.get("access_denied") for d in devices) and not any(d.get("lnksta") for d in devices):
        return "capabilities '<access denied>' (lspci run without root): no LnkCap/LnkSta read"
    if all(d.get("excerpt") and not d.get("class") for d in devices) and not any(d.get("lnkcap") for d in devices) \
            and any((d.get("lnksta") or {}).get(k) for d in devices for k in ("speed_downgraded", "width_downgraded")):
        return ("LnkSta lines marked downgraded without their device's header or LnkCap: no device or capability to "
                "judge them by")
    return None


@check("dcgmi-diag")
def judge_dcgmi_diag(host: str, data: Mapping[str, Any], exp: Mapping[str, Any]) -> CheckResult:
    res = CheckResult()
    if not data.get("results") and not data.get("tests"):
        # a table cut after its header: 'Successfully ran diagnostic' only says it executed (severity.yml
        # coverage.nothing_judgeable)
        why = (f"the diagnostic did not run: {data['not_run']}" if data.get("not_run")
               else "the result table holds no test row")
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}dcgmi diag: {why}"))
        return res
    for r in data.get("results") or []:
        st = r.get("status")
        if st not in ("Fail", "Warn"):
            continue
        sev = rule_sev("dcgmi_diag.fail" if st == "Fail" else "dcgmi_diag.warn")
        subj = f"{host}/gpu{r['gpu']}" if r.get("gpu") is not None else host
        msg = "; ".join(m for m in r.get("messages") or [] if m)[:300]
        text = f"dcgmi diag {r.get('category')}/{r.get('test')}: {st}" + (f": {msg}" if msg else "")
        res.findings.append(Finding(host, "dcgmi_diag", sev, subj, text))
    # a test DCGM failed as a whole while every GPU row passed (DCGM 4 prints 'pcie | Fail' with an
    # internal error and 'GPU0: Pass' ...): still a failed diagnostic, of the node
    judged = {(r.get("category"), r.get("test"), r.get("status")) for r in data.get("results") or []}
    for t in data.get("tests") or []:
        st = t.get("status")
        if st in ("Fail", "Warn") and (t.get("category"), t.get("test"), st) not in judged:
            sev = rule_sev("dcgmi_diag.fail" if st == "Fail" else "dcgmi_diag.warn")
            res.findings.append(Finding(host, "dcgmi_diag", sev, host,
                                        f"dcgmi diag {t.get('category')}/{t.get('test')}: {st} (test result; "
                                        "no GPU row failed)"))
    # an inconclusive run is not a pass (DCGM diag semantics: Skip = not run): every test beyond the
    # Deployment (software) checks skipped on every GPU
    beyond = [t for t in (data.get("tests") or data.get("results") or [])
              if str(t.get("category") or "").lower() not in ("deployment", "metadata", "")]
    if not beyond and data.get("open_end") and not res.findings:
        # only the Deployment (software) rows, and the table cut after them: the hardware, integration and stress
        # results of a level 2+ run are not in the capture (a level 1 run's table ends with its border)
        res.findings.append(Finding(host, "coverage", rule_sev("coverage.nothing_judgeable"), host,
                                    f"{NOTHING}dcgmi diag: the capture holds only the Deployment (software) rows and "
                                    "its table is cut after them: no hardware test result is shown"))
    if beyond and all(t.get("status") == "Skip" for t in beyond):
        names = ", ".join(dict.fromkeys(str(t.get("test")) for t in beyond))
        res.findings.append(Finding(host, "dcgmi_diag", rule_sev("dcgmi_diag.all_skipped"), host,
                                    f"dcgmi diag inconclusive: every hardware/integration/stress test was skipped "
                                    f"({names}); only the software checks ran. Re-run with the GPUs visible to DCGM"))
    return res
