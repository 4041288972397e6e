"""Judge a folder of captured evidence: ``EVIDENCE_DIR/<host>/<KIND>.txt``.

Layout (what ``playbooks/verify.yml`` writes, and what a user can build by other means):

``<host>/<KIND>.txt``
    the tool's stdout; KIND as listed by ``clusterctl parse --help`` (ccparse registry).
``<host>/<KIND>@<peer>.txt``
    a pair test run with ``peer`` (ib_write_bw, 2-node nccl-tests); its metrics feed the pairwise
    blame (:mod:`clusterctl.analysis.schedule`) instead of the per-host straggler statistics.
``<host>/<KIND>#<instance>.txt``
    one more capture of KIND on the host (e.g. ``mlnx_qos#eth2.txt``, one per interface).
``<host>/_collect.json`` (optional)
    ``{KIND: {"status": "ok|tool_missing|device_absent|error|skipped", "rc": int, "stderr": str}}``
    from the ``fabric_evidence`` module, so a missing tool is told apart from a missing device.
``<host>/_collect#<KIND>@<peer>.json`` (optional)
    ``{instance: {"status": ...}}`` of one pair test with ``peer`` (``fabric_pairtest``: one entry
    per RDMA device, ``_`` when no device test started), judged like ``_collect.json``.
``<host>/_parsed.json``, ``<host>/_parsed#<KIND>@<peer>.json`` (optional)
    the collectors' parse of the same files on the node (:mod:`ccparse.preparsed` envelopes keyed
    like the two files above); an envelope is used instead of parsing the ``.txt`` only when its
    schema, parser source hash and raw-text hash match, otherwise the ``.txt`` is parsed.

Only what lies inside the folder is read, and only regular files: a symlink that leaves the folder
(host folder or file), a fifo, a device node or a folder named like ``<KIND>.txt`` is refused
without being opened (so nothing blocks) and named in a warning of its host, or in
:attr:`Report.refused` for a host folder. A host folder with nothing to judge has the status
``no evidence``, never ``healthy``.

Every file is parsed with :func:`ccparse.registry.parse` and judged by the checks registered for
its KIND (:data:`clusterctl.analysis.model.CHECKS`). A parse error becomes a ``parse`` finding
naming file, tool and line; a file of unknown KIND a warning; a crashing check a warning naming
the check (one broken input never stops the analysis of the other hosts). Then the cross-host
analysis runs: stragglers over the per-host metrics and blame over the pair results.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ccparse import preparsed, registry
from ccparse.common import PARSERS, ParseError
from ccparse.detect import detect, why_unknown

from clusterctl.analysis import checks, schedule, stragglers
from clusterctl.analysis.expectations import PORT_RATE_KINDS, ib_line_rate_from_ports
from clusterctl.analysis.model import CHECKS, NEEDS, NOTHING, CheckResult, Finding, Metric, Severity, host_status
from clusterctl.analysis.severity import sev as rule_sev
from clusterctl.parse_capture import MAX_CAPTURE_BYTES
from clusterctl.paths import NotRegular, read_regular

COLLECT_FILE = "_collect.json"
#: file suffixes read as evidence: ``<KIND>.txt``, and captures named otherwise (``dmesg.log``,
#: ``gpu.out``, a support bundle's ``.csv``) whose KIND is recognised from their content
EVIDENCE_SUFFIXES = frozenset({".txt", ".log", ".out", ".csv", ".json", ".xml", ""})
#: compressed files of a support bundle (``nvidia-bug-report.log.gz``): listed as not read
COMPRESSED_SUFFIXES = frozenset({".gz", ".xz", ".bz2", ".zst", ".lz4", ".zip", ".tgz", ".tar", ".7z"})
#: the collectors' pre-parsed evidence of a host (ccparse.preparsed); see _preparsed_docs
PARSED_FILE = "_parsed.json"
#: KINDs whose "device absent" contradicts ``rdma_devices_per_node > 0`` / ``gpus_per_node > 0``.
RDMA_KINDS = frozenset({"ibstat", "ibstatus", "ibv_devinfo", "ibdev2netdev", "sysfs-ib", "show_gids", "mlnx_qos"})
GPU_KINDS = frozenset({"nvidia-smi-q", "nvidia-smi-q-xml", "nvidia-smi-query", "nvidia-smi-topo", "nvidia-smi-nvlink",
                       "dcgmi-diag", "gemm"})
_SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}
#: status of a host folder that held nothing to judge (not "healthy": nothing was seen)
NO_EVIDENCE = "no evidence"
#: status of a host verify could not reach (or never got to): named, with why, never left out (issue 28)
UNREACHABLE = "unreachable"
#: status of a host whose evidence was there but could not be judged: none of it could be read, or
#: every check that read it needed an expectation neither the capture nor the inventory gave
CANNOT_JUDGE = "cannot judge"
#: every status a judged host can have: the verdict words of every report, JSON document and export
VERDICTS = ("healthy", "degraded", "failed", NO_EVIDENCE, CANNOT_JUDGE, UNREACHABLE)
#: checks whose findings say what was not read, never a verdict (severity info)
COVERAGE = "coverage"
#: KINDs whose "ok" status means the node has GPUs (nvidia-smi found at least one)
GPU_DISCOVERY_KINDS = ("nvidia-smi-query", "nvidia-smi-q", "nvidia-smi-q-xml", "nvidia-smi-topo", "nvidia-smi-nvlink")
#: The GPU tools of ``verify --level full`` (their entry in _collect.json means the level asked for
#: them): without them a node with GPUs would pass untested. What to install, per tool.
FULL_LEVEL_GPU_TOOLS = {
    "dcgmi-diag": "install NVIDIA DCGM (package datacenter-gpu-manager-4-core plus datacenter-gpu-manager-4-cuda<N> "
                  "for the CUDA major version, or datacenter-gpu-manager for DCGM 3, from NVIDIA's CUDA repository; "
                  "the nvidia-dcgm service must run)",
    "nccl-tests": "build nccl-tests (github.com/NVIDIA/nccl-tests, `make MPI=0 CUDA_HOME=...` against the packages "
                  "libnccl2 and libnccl-dev, or libnccl and libnccl-devel on RHEL, and the CUDA toolkit "
                  "cuda-toolkit-<ver>) into /opt/nccl-tests/build, or point clusterctl_verify_nccl_tests_binary at "
                  "its all_reduce_perf",
    "gemm": "install clusterctl-gemm (the gpu_tools role, gpu_tools_gemm) with an interpreter that imports PyTorch "
            "built with CUDA (gpu_tools_gemm_python), or point clusterctl_verify_gemm_program at it: the burn-in "
            "gate's compute floor",
}


@dataclass(frozen=True)
class PairResult:
    """One metric of a pair test between ``a`` (the host whose folder holds it) and ``b``."""

    a: str
    b: str
    metric: str
    subject: str
    value: float
    unit: str = ""
    #: the pair's own check found it below expectation (e.g. ib_write_bw under the line-rate fraction)
    flagged: bool = False


@dataclass
class HostReport:
    host: str
    findings: list[Finding] = field(default_factory=list)  # critical and warning
    notes: list[Finding] = field(default_factory=list)  # info
    metrics: list[Metric] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    pair_findings: list[tuple[Finding, str]] = field(default_factory=list)  # (finding of a pair file, peer)

    #: captures read and judged / captures that could not be read (parse failure) / inventory keys a
    #: check needed to judge what was read (issue 29: "cannot judge: needs <key>")
    judged: int = 0
    unreadable: int = 0
    needs: list[str] = field(default_factory=list)
    #: why captures that were read held nothing judgeable (severity.yml coverage.nothing_judgeable)
    nothing: list[str] = field(default_factory=list)
    #: why the collection did not reach this host ("" when it did); what it left is still judged
    unreachable: str = ""
    #: files whose KIND is not their name: file name -> {"kind": KIND or None (not read), "why": ...}
    read_as: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def status(self) -> str:
        s = host_status(self.findings)
        if s == "failed":
            return s
        if self.unreachable:
            return UNREACHABLE
        if s != "healthy":
            return s
        if not self.kinds and not self.metrics:
            return NO_EVIDENCE
        if self.judged == 0 and (self.unreadable or self.needs or self.nothing):
            return CANNOT_JUDGE
        return s

    @property
    def cannot_judge_reason(self) -> str:
        if self.needs:
            return "needs " + ", ".join(dict.fromkeys(self.needs))
        if self.unreadable:
            return "no evidence could be read"
        return "nothing judgeable read: " + "; ".join(dict.fromkeys(self.nothing)) if self.nothing else ""

    def add(self, f: Finding) -> None:
        """Record ``f`` once: two captures of one fact (``-q`` and ``--query-gpu``) give one finding."""
        target = self.notes if f.severity == "info" else self.findings
        # ``f not in target``, the dataclass __eq__ (a Python call) asked only of a finding with the same
        # message: a host's findings differ in it almost always (the subject is worded in it)
        msg = f.message
        for g in target:
            if g.message == msg and g == f:
                return
        target.append(f)

    def top(self) -> Finding | None:
        return min(self.findings, key=lambda f: _SEVERITY_ORDER[f.severity], default=None)

    def counts(self) -> dict[str, int]:
        c = {"critical": 0, "warning": 0}
        for f in self.findings:
            c[f.severity] = c.get(f.severity, 0) + 1
        return c


@dataclass
class Report:
    hosts: dict[str, HostReport]
    stragglers: list[stragglers.Straggler] = field(default_factory=list)
    pairs: list[PairResult] = field(default_factory=list)
    pair_verdicts: schedule.Verdicts = field(default_factory=schedule.Verdicts)
    bad_pairs: list[tuple[str, str]] = field(default_factory=list)
    expectations: Mapping[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    #: what was refused outside the host folders (a host folder that is a symlink leaving the folder)
    refused: list[str] = field(default_factory=list)

    def status_counts(self) -> dict[str, int]:
        c = dict.fromkeys(VERDICTS, 0)
        for h in self.hosts.values():
            c[h.status] += 1
        return c

    @property
    def no_evidence(self) -> list[str]:
        return [h for h, r in self.hosts.items() if r.status == NO_EVIDENCE]

    @property
    def unreachable(self) -> list[str]:
        return [h for h, r in self.hosts.items() if r.status == UNREACHABLE]

    @property
    def cannot_judge(self) -> list[str]:
        return [h for h, r in self.hosts.items() if r.status == CANNOT_JUDGE]

    @property
    def failed(self) -> list[str]:
        return [h for h, r in self.hosts.items() if r.status == "failed"]

    def thresholds(self) -> dict[str, Any]:
        """The numeric expectations the report shows (no free-form spec values)."""
        keep = ("_gbps", "_GBps", "_Gbps", "_floor", "_fraction", "_per_node", "straggler_")
        return {k: v for k, v in sorted(self.expectations.items())
                if isinstance(v, int | float) and not isinstance(v, bool) and any(s in k for s in keep)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "hosts": {h: {"status": r.status, "findings": [f.to_dict() for f in r.findings],
                          **({"cannot_judge": r.cannot_judge_reason} if r.status == CANNOT_JUDGE else {}),
                          **({"unreachable": r.unreachable} if r.unreachable else {}),
                          **({"read_as": r.read_as} if r.read_as else {})}
                      for h, r in self.hosts.items()},
            "stragglers": [s.to_dict() for s in self.stragglers],
            "pairs": [
                {"a": p.a, "b": p.b, "metric": p.metric, "subject": p.subject, "value": p.value, "unit": p.unit,
                 "ok": (p.a, p.b) not in self.bad_pairs}
                for p in self.pairs
            ],
            "pair_verdicts": {
                "bad": {h: sorted(set(p)) for h, p in sorted(self.pair_verdicts.bad.items())},
                "suspect": sorted(self.pair_verdicts.suspect),
                "path_anomalies": [list(p) for p in self.pair_verdicts.path_anomalies],
            },
            "notes": [{"host": f.host, **f.to_dict()} for r in self.hosts.values() for f in r.notes],
            "metrics": {h: [{"name": m.name, "subject": m.subject, "value": m.value, "unit": m.unit,
                             **({"floor": m.floor, "floor_source": m.floor_source} if m.floor is not None else {})}
                            for m in r.metrics] for h, r in self.hosts.items() if r.metrics},
            "thresholds": self.thresholds(),
            "refused": list(self.refused),
            "summary": {"hosts": len(self.hosts), **{k.replace(" ", "_"): v for k, v in self.status_counts().items()},
                        "seconds": round(self.seconds, 3)},
        }


def _as_result(out: CheckResult | Iterable[Finding] | None) -> CheckResult:
    if out is None:
        return CheckResult()
    if isinstance(out, CheckResult):
        return out
    return CheckResult(findings=list(out))


def _status_entries(name: str, status: Any) -> dict[str, Any]:
    """The KIND -> status entries of ``_collect.json`` or of a pair test's ``_collect#KIND@peer.json``.

    A pair file maps the test's instances (RDMA devices; ``_`` when no device test started) to
    their status; its entries are keyed ``KIND#<instance>@<peer>`` (``KIND@<peer>`` for ``_``),
    the names the pair's evidence files carry.
    """
    if not isinstance(status, dict):
        return {}
    stem = name[: -len(".json")]
    if stem == COLLECT_FILE[: -len(".json")]:
        return status
    kind, _, peer = stem.partition("#")[2].partition("@")
    return {(f"{kind}@{peer}" if inst == "_" else f"{kind}#{inst}@{peer}"): st for inst, st in status.items()}


def _collect_findings(host: str, status: Mapping[str, Any], exp: Mapping[str, Any]) -> list[Finding]:
    """Judge the collector's per-KIND status: tool missing vs device absent vs error."""
    out: list[Finding] = []
    gpus_expected = int(exp.get("gpus_per_node") or 0)
    gpus_found = [k for k in GPU_DISCOVERY_KINDS
                  if isinstance(status.get(k), Mapping) and status[k].get("status", "ok") == "ok"]
    nvsmi_missing = False
    for kind, st in sorted(status.items()):
        if not isinstance(st, Mapping):
            continue
        s = st.get("status", "ok")
        if s == "ok":
            continue
        detail = str(st.get("stderr") or st.get("msg") or "").strip().splitlines()
        why = f": {detail[0][:200]}" if detail else ""
        base = kind.partition("@")[0].partition("#")[0]
        if s == "device_absent":
            want_rdma = base in RDMA_KINDS and int(exp.get("rdma_devices_per_node") or 0) > 0
            want_gpu = base in GPU_KINDS and int(exp.get("gpus_per_node") or 0) > 0
            if want_rdma or want_gpu:
                n = exp["rdma_devices_per_node"] if want_rdma else exp["gpus_per_node"]
                what = "RDMA devices" if want_rdma else "GPUs"
                out.append(Finding(host, "collect", rule_sev("collect.device_absent"), host,
                                   f"{kind}: no {what} found on the node, {n} expected{why}"))
            else:
                out.append(Finding(host, "collect", rule_sev("collect.none_expected"),
                                   host, f"{kind}: device absent (none expected)"))
        elif s == "tool_missing" and base in FULL_LEVEL_GPU_TOOLS and kind == base and (gpus_expected or gpus_found):
            why_gpu = (f"gpus_per_node is {gpus_expected}" if gpus_expected
                       else f"nvidia-smi found GPUs ({gpus_found[0]} ok)")
            out.append(Finding(host, "collect", rule_sev("collect.gpu_tool_missing"), host,
                               f"{kind}: not installed on a node with GPUs ({why_gpu}), so --level full could not "
                               f"test them{why}; {FULL_LEVEL_GPU_TOOLS[base]}. The project's nvidia_gpu role "
                               "installs them"))
        elif s == "tool_missing" and base in GPU_DISCOVERY_KINDS and kind == base and gpus_expected:
            if nvsmi_missing:  # one finding for nvidia-smi, not one per KIND it would have captured
                continue
            nvsmi_missing = True
            out.append(Finding(host, "collect", rule_sev("collect.gpu_tool_missing"), host,
                               f"{kind}: nvidia-smi not installed although gpus_per_node is {gpus_expected}{why}: "
                               "install the NVIDIA driver (packages cuda-drivers or nvidia-driver-<branch>; "
                               "the project's nvidia_gpu role installs it)"))
        elif s == "tool_missing":
            out.append(Finding(host, "collect", rule_sev("collect.not_installed"),
                               host, f"{kind}: tool not installed, not judged{why}"))
        elif s == "skipped":
            out.append(Finding(host, "collect", rule_sev("collect.not_run"), host, f"{kind}: not run{why}"))
        else:
            out.append(Finding(host, "collect", rule_sev("collect.tool_failed"), host,
                               f"{kind}: collector failed (status {s}, rc {st.get('rc')}){why}"))
    return out


class Refused(Exception):
    """An evidence path that is not read: why, in words."""


def inside(path: Path, root: Path, parent_real: Path | None = None) -> Path:
    """``path`` resolved; :class:`Refused` when it (through a symlink) lies outside ``root``.

    ``parent_real``: ``path.parent`` already resolved and checked (a host folder): a ``path`` that
    is no symlink is then that folder's entry, without resolving every component again."""
    if parent_real is not None and not os.path.islink(path):
        return parent_real / path.name
    real = path.resolve()
    if real != root and root not in real.parents:
        raise Refused(f"symlink to {real}, outside the evidence folder: refused")
    return real


def read_evidence(path: Path, root: Path, parent_real: Path | None = None) -> str:
    """Text of a regular file inside ``root``; :class:`Refused` for anything else, never blocking.

    The file is opened non-blocking and without following a last symlink (a symlink inside the
    folder is resolved first and checked to stay inside), then fstat'd: a fifo, a socket, a device
    or a folder is refused before a byte is read. ``parent_real``: see :func:`inside`.
    """
    return _read_real(inside(path, root, parent_real)).decode("utf-8", errors="replace")


def _read_real(real: Path | str) -> bytes:
    """The bytes of ``real`` (resolved and checked to lie inside the evidence folder, or an entry of
    a checked host folder that the listing says is no symlink); :class:`Refused` for anything but a
    regular file. ``O_NOFOLLOW``: an entry that became a symlink since the listing is not followed."""
    try:
        return read_regular(real, MAX_CAPTURE_BYTES, nofollow=True)
    except IsADirectoryError:
        raise Refused("a folder, not a regular file: refused") from None
    except NotRegular as exc:
        raise Refused(str(exc)) from None
    except OSError as exc:
        raise Refused(f"cannot open: {exc.strerror}") from None


def _run_checks(host: str, kind: str, data: Any, exp: Mapping[str, Any]) -> CheckResult:
    total = CheckResult()
    for fn in CHECKS.get(kind, []):
        name = getattr(fn, "__name__", repr(fn))
        try:
            res = _as_result(fn(host, data, exp))
        except Exception as exc:  # a broken check must not stop the other hosts
            total.findings.append(Finding(host, name, "warning", host,
                                          f"{kind}: check {name} crashed: {type(exc).__name__}: {exc}"))
            continue
        total.findings.extend(f if f.host == host else replace(f, host=host) for f in res.findings)
        total.metrics.extend(m if m.host == host else replace(m, host=host) for m in res.metrics)
    return total


def analyze_host(host: str, host_dir: Path, exp: Mapping[str, Any],
                 root: Path | None = None) -> tuple[HostReport, list[PairResult]]:
    """Parse and judge one host's folder; nothing outside ``root`` (default: its parent) is read."""
    root = (root or host_dir.parent).resolve()
    try:
        host_real: Path | None = inside(host_dir, root)
    except Refused:
        host_real = None  # each file is then resolved and refused on its own
    return _analyze_host(host, host_dir, exp, root, host_real)


def _glob_names(names: Sequence[str], head: str, tail: str) -> list[str]:
    """The names ``head*tail`` (what ``Path.glob`` matches) of a sorted listing, in its order."""
    return [n for n in names if n.startswith(head) and n.endswith(tail) and len(n) >= len(head) + len(tail)]


def _analyze_host(host: str, host_dir: Path, exp: Mapping[str, Any], root: Path,
                  host_real: Path | None) -> tuple[HostReport, list[PairResult]]:
    """:func:`analyze_host` with ``root`` resolved and the host folder's checked real path (None:
    it was refused, each file is resolved and refused on its own); the folder is listed once."""
    rep = HostReport(host)
    pairs: list[PairResult] = []
    known = _known_kinds()
    # one listing; its entries say which names are symlinks (d_type: no lstat per file). A plain
    # entry of the checked host folder is read as host_real/name, only a symlink is resolved
    with os.scandir(host_dir) as it:
        links = {e.name: e.is_symlink() for e in it}
    names = sorted(links)
    real_dir = str(host_real) if host_real is not None else ""

    def refuse(name: str, why: object) -> None:
        rep.add(Finding(host, "evidence", "warning", host, f"{host}/{name}: {why}"))

    for status_file in [host_dir / n for n in _glob_names(names, COLLECT_FILE[:-5], ".json")]:
        try:
            status = _status_entries(status_file.name, json.loads(read_evidence(status_file, root, host_real)))
            for f in _collect_findings(host, status, exp):
                rep.add(f)
        except Refused as exc:
            refuse(status_file.name, exc)
        except (ValueError, OSError) as exc:
            rep.add(Finding(host, "collect", "warning", host, f"{status_file.name}: unreadable: {exc}"))
    docs = _preparsed_docs(host_dir, names)
    port_evidence: list[tuple[str, Mapping[str, Any]]] = []
    deferred: list[tuple[str, Mapping[str, Any], str, str]] = []

    def judge(kind: str, data: Any, rel: str, peer: str, exp: Mapping[str, Any]) -> None:
        _judge_into(rep, pairs, host, kind, data, rel, peer, exp)

    for name in names:
        if name.startswith((".", "_")):
            continue
        dot = name.rfind(".")  # Path.suffix and Path.stem, without a Path per name
        suffix, stem = (name[dot:], name[:dot]) if 0 < dot < len(name) - 1 else ("", name)
        kind, _, peer = stem.partition("@")
        kind = kind.partition("#")[0]
        rel = f"{host}/{name}"
        if suffix not in EVIDENCE_SUFFIXES:
            # a support bundle's other files (sosreport's 'nvidia-smi_--query-gpu_..._temperature.gpu_...'):
            # read by content like any capture not named <KIND>.txt; compressed ones are listed, not read
            kind = ""
            if suffix.lower() in COMPRESSED_SUFFIXES:
                _not_read(rep, host, name, f"{rel}: compressed, not read (decompress it to have it judged)")
                continue
        try:
            raw = (_read_real(f"{real_dir}/{name}") if real_dir and not links[name]
                   else _read_real(inside(host_dir / name, root, host_real)))
        except Refused as exc:
            if kind not in known and not links[name] and (host_dir / name).is_dir():
                # a bundle's subfolder (sos_commands/): not evidence of this layout, and no fault of the host
                _not_read(rep, host, name, f"{rel}/: a subfolder, not read (analyze reads the files directly "
                                           f"in {host}/; copy a capture there to have it judged)")
                continue
            refuse(name, exc)
            continue
        doc = docs.get(stem)
        data: Any = preparsed.MISSING
        if doc is not None and suffix == ".txt" and kind in known:
            # a capture of a named KIND with an envelope: its check is taken of the bytes (a match says
            # they are the envelope's text: valid UTF-8, not blank), and the text is decoded only where
            # the envelope cannot be used (preparsed.load, text None; the same answers as below)
            try:
                data = preparsed.load(doc, kind, None, raw=raw)
            except Exception:  # the path below meets the same error and reports it
                data = preparsed.MISSING
        if data is not preparsed.MISSING:
            rep.kinds.append(stem)
        else:
            try:
                text = raw.decode("utf-8")
                strict = True
            except UnicodeDecodeError:
                text, strict = raw.decode("utf-8", errors="replace"), False
            if not text or text.isspace():  # not text.strip(), without a copy of the text
                rep.add(Finding(host, COVERAGE, "info", host, f"{rel}: empty file, nothing to judge"))
                continue
            if kind not in known or suffix != ".txt":
                found = detect(text)
                if found is None:
                    _not_read(rep, host, name, f"{rel}: unknown KIND: {why_unknown(text)}, "
                                               "file not judged (name it <KIND>.txt to choose)")
                    continue
                rep.add(Finding(host, "evidence", "info", host,
                                f"{rel}: read as KIND {found.kind} (recognised from its content: {found}; "
                                "name the file <KIND>.txt to choose)"))
                rep.read_as[name] = {"kind": found.kind, "why": str(found)}
                kind, peer = found.kind, ""
            rep.kinds.append(stem)
            try:
                data = (preparsed.load(doc, kind, text, raw=raw if strict else None)
                        if doc is not None else preparsed.MISSING)
                if data is preparsed.MISSING:
                    data = registry.parse(kind, text, salvage=True)
            except ParseError as exc:
                # a parse failure never decides a verdict alone: it is coverage (issue 29)
                where = f" line {exc.line}" if exc.line is not None else ""
                total = text.count("\n") + (not text.endswith("\n"))
                rep.unreadable += 1
                rep.add(Finding(host, COVERAGE, "info", host,
                                f"{rel}: not read ({total} lines): {exc.tool}{where}: {exc.reason}"))
                continue
            except Exception as exc:  # parser bug: report it, keep going
                rep.unreadable += 1
                rep.add(Finding(host, "parse", "warning", host,
                                f"{rel}: {kind} parser crashed: {type(exc).__name__}: {exc}"))
                continue
        if isinstance(data, Mapping) and (said := data.get("tool_missing") or data.get("tool_refused")):
            # the capture is the shell saying the tool is not installed, or the tool saying it ran without the access
            # it needs (dmesg_restrict, NVML's device files): nothing it would show was shown
            why = (f"{rel}: tool missing, not judged: {said!r}" if data.get("tool_missing") else
                   f"{rel}: the tool was refused access, not judged (run it as root or with the access it needs): "
                   f"{said!r}")
            rep.add(Finding(host, COVERAGE, "info", host, why))
            rep.nothing.append(why)
            continue
        if kind in PORT_RATE_KINDS and isinstance(data, Mapping):
            port_evidence.append((rel, data))
        if kind == "ib_write_bw" and exp.get("ib_rate_gbps") is None and isinstance(data, Mapping):
            deferred.append((kind, data, rel, peer))  # judged once the folder's port rates are known
            continue
        judge(kind, data, rel, peer, exp)
    for kind, data, rel, peer in deferred:
        judge(kind, data, rel, peer, ib_line_rate_from_ports(exp, data, port_evidence))
    if not rep.kinds and not rep.findings:
        rep.add(Finding(host, "evidence", "info", host,
                        f"{host}/: no evidence: no readable <KIND>.txt capture in the folder, nothing was judged"))
    return rep, pairs


def _not_read(rep: HostReport, host: str, name: str, message: str) -> None:
    """A file of the host folder that is not judged: a coverage note, and ``read_as`` says why."""
    rep.add(Finding(host, COVERAGE, "info", host, message))
    rep.read_as[name] = {"kind": None, "why": message.split(": ", 1)[1]}


_LOADED = False


def _known_kinds() -> Mapping[str, Any]:
    """The registry's KINDs (its live parser table, every parser module imported once)."""
    global _LOADED
    if not _LOADED:
        registry.kinds()
        _LOADED = True
    return PARSERS


#: checks that count what a capture lists (GPUs against gpus_per_node or the board): with lines of the capture left
#: unread (ccparse.registry's salvage) or cut by the command itself ('| head'), a device on such a line would be
#: missing from the count, so it is not judged
COUNTING_CHECKS = frozenset({"gpu_count"})


def _uncounted(host: str, rel: str, data: Mapping[str, Any], res: CheckResult) -> CheckResult:
    """``res`` with each count finding of COUNTING_CHECKS turned into a coverage note (lines were left unread)."""
    counted = [f for f in res.findings if f.check in COUNTING_CHECKS and f.severity != "info"]
    if not counted:
        return res
    n = len(data.get("unread_lines") or ())
    why = (f"{n} line(s) of the capture were not read and may hold what it counts" if n else
           "the command showed only part of its output (" + "; ".join(data.get("cut") or ["head/tail"]) + ")")
    kept = [f for f in res.findings if f not in counted]
    kept += [Finding(host, COVERAGE, "info", f.subject, f"{rel}: count not judged, {why}: {f.message}")
             for f in counted]
    return CheckResult(findings=kept, metrics=res.metrics)


def _judge_into(rep: HostReport, pairs: list[PairResult], host: str, kind: str, data: Any, rel: str, peer: str,
                exp: Mapping[str, Any]) -> None:
    """Run the checks of one parsed file and record what they found in ``rep`` (pair results in ``pairs``)."""
    res = _run_checks(host, kind, data, exp)
    if type(data) is dict and (data.get("unread_lines") or data.get("partial")):
        res = _uncounted(host, rel, data, res)
    named = data.get("named_host") if type(data) is dict else None
    if named and named["host"] != host:
        # a pasted capture whose shell prompt (or launcher prefix) names the node it ran on: each finding says which
        said = f" [{named['host']}: the host the capture's {named['by']} names]"
        # (only findings of the host itself or its devices: a Slurm view's nodes are named by their own subjects)
        res = CheckResult(findings=[replace(f, message=f.message + said)
                                    if f.severity != "info" and (f.subject == host or f.subject.startswith(f"{host}/"))
                                    else f for f in res.findings], metrics=res.metrics)
    if peer and kind == "nccl-tests" and isinstance(data, Mapping) and len(set(data.get("hosts") or [])) == 1:
        # a "pair" nccl-tests report whose ranks all ran on one host: two independent jobs (MPI=0
        # under srun -N2), not a run across the pair; its busbw says nothing of the link
        res = CheckResult(findings=[Finding(
            host, "nccl_pair", rule_sev("nccl_pair.one_host"), host,
            f"{rel}: the report's ranks all ran on {', '.join(sorted(set(data.get('hosts') or [])))}, "
            f"not on {host} and {peer}: not one MPI job across the pair (nccl-tests built MPI=0?); "
            "bandwidth not judged")])
    needs = [f.message[len(NEEDS):].split(" ", 1)[0].rstrip(":,;") for f in res.findings
             if f.severity == "info" and f.message.startswith(NEEDS)]
    nothing = [f.message[len(NOTHING):] for f in res.findings if f.severity == "info" and f.message.startswith(NOTHING)]
    if (needs or nothing) and not any(f.severity != "info" for f in res.findings):
        rep.needs += needs
        rep.nothing += nothing
    else:
        rep.judged += 1
    # a parse is a dict almost always: ``isinstance(data, Mapping)`` alone asks the ABC (a Python call)
    is_map = type(data) is dict or isinstance(data, Mapping)
    if is_map and data.get("cut"):
        rep.add(Finding(host, COVERAGE, "info", host,
                        f"{rel}: {'; '.join(str(c) for c in data['cut'])}: judged what is there"))
    if is_map and data.get("blocks_missing"):
        rep.add(Finding(host, COVERAGE, "info", host,
                        f"{rel}: read {len(data.get('gpus') or [])} of {data.get('attached_gpus')} GPU blocks "
                        "(a -i subset or a cut paste): judged what is there"))
    if peer:
        # a pair result: blame is decided across hosts; per-host findings are capped at warning
        for f in res.findings:
            sev: Severity = "warning" if f.severity == "critical" else f.severity
            pf = replace(f, severity=sev, message=f"pair test with {peer}: {f.message}")
            rep.add(pf)
            rep.pair_findings.append((pf, peer))
        flagged = bool(res.findings)
        pairs.extend(PairResult(host, peer, m.name, m.subject, m.value, m.unit, flagged) for m in res.metrics)
    else:
        for f in res.findings:
            rep.add(f)
        rep.metrics.extend(res.metrics)


def _optional_orjson() -> Any:
    """orjson where it is installed (optional: ``pip install clusterctl[fast]``; about 2.7x faster than
    ``json`` on the 22 kB envelope files), else None: the standard library's decoder."""
    import importlib

    try:
        return importlib.import_module("orjson")
    except ImportError:
        return None


_orjson = _optional_orjson()

#: every digit to "0": a run of 19 zeros after the translation is a number of 19 or more digits
_DIGITS_TO_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)


def _loads_envelope(raw: bytes) -> Any:
    """``json.loads(raw)``, by orjson where it is installed and certainly gives the same: orjson reads an
    integer beyond 64 bits as a float (json: an int; below -2**63 already at 19 digits), so a text holding
    a run of 19 or more digits (in a string too: what cannot be told apart cheaply) and anything orjson
    refuses (NaN, a BOM, a lone surrogate, a number out of range) is read by ``json``."""
    if _orjson is not None and b"0" * 19 not in raw.translate(_DIGITS_TO_ZERO):
        try:
            return _orjson.loads(raw)
        except ValueError:
            pass
    return json.loads(raw)


def _preparsed_docs(host_dir: Path, names: Sequence[str] | None = None) -> dict[str, Any]:
    """Evidence stem -> the collectors' pre-parsed envelope (ccparse.preparsed), from the host's
    ``_parsed.json`` (``{KIND or KIND#instance: envelope}``, fabric_evidence) and
    ``_parsed#KIND@<peer>.json`` (``{instance: envelope}``, a pair test, keyed like its
    ``_collect#KIND@<peer>.json``). An unreadable file is ignored: the raw text is parsed.
    ``names``: the folder's sorted listing, when the caller has it."""
    docs: dict[str, Any] = {}
    if names is None:
        names = sorted(os.listdir(host_dir))
    for name in _glob_names(names, PARSED_FILE[:-5], ".json"):
        try:  # a regular file only (a fifo named like the envelope would block the read)
            doc = _loads_envelope(read_regular(f"{host_dir}/{name}", MAX_CAPTURE_BYTES))
        except (OSError, ValueError):
            continue
        docs.update(_status_entries(COLLECT_FILE[:-5] + name[len(PARSED_FILE) - 5:], doc))
    return docs


#: one chunk of host folders: ``([(host, folder, its checked real path), ...], expectations, root)``
_Chunk = tuple[list[tuple[str, Path, Path]], dict[str, Any], Path]
_ChunkResult = list[tuple[HostReport, list[PairResult]]]


def _analyze_chunk(args: _Chunk) -> _ChunkResult:
    items, exp, root = args
    checks.load_all()
    return [_analyze_host(h, d, exp, root, real) for h, d, real in items]


def _claim(lock: Any, bounds: Any, front: bool) -> int:
    """The index of the next unjudged chunk, from the front (a worker) or the back (the parent), or -1
    when none is left; ``bounds``: ``[first unclaimed, one past the last unclaimed]``."""
    with lock:
        lo, hi = bounds[0], bounds[1]
        if lo >= hi:
            return -1
        if front:
            bounds[0] = lo + 1
            return int(lo)
        bounds[1] = hi - 1
        return int(hi - 1)


def _chunk_worker(chunks: Sequence[_Chunk], lock: Any, bounds: Any, conn: Any) -> None:
    """A worker process of :func:`_run_chunks`: claims chunks from the front until none is left, each
    one's result pickled as soon as it is judged (while the parent still works), then sends them all
    at once. A chunk that raises ends the worker there: it is left to the parent, which judges it and
    raises the same error as one process would."""
    import pickle

    checks.load_all()
    done: list[tuple[int, bytes]] = []
    try:
        while (i := _claim(lock, bounds, True)) >= 0:
            done.append((i, pickle.dumps(_analyze_chunk(chunks[i]), protocol=pickle.HIGHEST_PROTOCOL)))
    except Exception:  # chunk i stays unreturned: the parent judges it and raises
        pass
    finally:
        conn.send(done)
        conn.close()


def _run_chunks(chunks: Sequence[_Chunk], jobs: int) -> list[_ChunkResult]:
    """Each chunk's :func:`_analyze_chunk` result, in order, judged by ``jobs`` processes: the parent
    and ``jobs - 1`` worker processes (the default start method: forked on Linux).

    The workers take the chunks from the front and the parent from the back, each claiming its next
    one itself under a shared lock, until they meet: no process waits on another to be handed work
    (a pool's call queue is fed by threads of the parent, which wait for the GIL its own judging
    holds: about 5 ms a turn, and a worker of short pre-parsed chunks sat idle for them), the
    parent's share is never pickled, and a worker's results come back in one message at the end.
    A chunk no worker returned (a worker that died or raised) is judged by the parent."""
    import multiprocessing
    import pickle

    ctx = multiprocessing.get_context()
    lock = ctx.Lock()
    bounds = ctx.RawArray("q", [0, len(chunks)])
    results: list[_ChunkResult | None] = [None] * len(chunks)
    procs = []
    conns = []
    read = False
    # the parent's objects to the permanent generation: the workers' collections then leave their
    # (forked, shared) pages alone instead of copying them
    gc.freeze()
    try:
        for _ in range(jobs - 1):
            recv, send = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_chunk_worker, args=(chunks, lock, bounds, send), daemon=True)
            p.start()
            send.close()
            procs.append(p)
            conns.append(recv)
        while (i := _claim(lock, bounds, False)) >= 0:
            results[i] = _analyze_chunk(chunks[i])
        for conn in conns:
            try:
                for i, payload in conn.recv():
                    results[i] = pickle.loads(payload)
            except (EOFError, OSError):  # a worker that died: its chunks are judged below
                pass
        read = True
    finally:
        gc.unfreeze()
        for conn in conns:
            conn.close()
        for p in procs:
            if not read:  # the parent failed: a worker may wait for it to read
                p.terminate()
            p.join()
    return [r if r is not None else _analyze_chunk(chunks[i]) for i, r in enumerate(results)]


def judge_pairs(pairs: Sequence[PairResult], bad_fraction: float) -> tuple[list[tuple[str, str]], schedule.Verdicts]:
    """Bad pairs and verdicts.

    A pair is bad when any of its metrics is below ``bad_fraction`` x that metric's median over all
    pairs, or when its own check flagged it (below the expected line-rate fraction): the absolute
    judgement still holds where the bad node's pairs are the majority (3 nodes, 2 of the 3 pairs).
    """
    from statistics import median

    by_metric: dict[tuple[str, str], list[PairResult]] = {}
    for p in pairs:
        by_metric.setdefault((p.metric, p.subject), []).append(p)
    ok: dict[tuple[str, str], bool] = {}
    for group in by_metric.values():
        med = median(p.value for p in group)
        for p in group:
            good = p.value >= bad_fraction * med and not p.flagged
            ok[(p.a, p.b)] = ok.get((p.a, p.b), True) and good
    bad = [k for k, v in ok.items() if not v]
    return bad, schedule.judge(ok)


def host_dirs(evidence_dir: Path, refused: list[str] | None = None) -> list[tuple[str, Path]]:
    """``(host, folder)`` of every host folder; a symlink leaving ``evidence_dir`` is refused (named
    in ``refused``), one staying inside is followed."""
    return [(h, p) for h, p, _real in _host_dirs(evidence_dir, refused)]


def _host_dirs(evidence_dir: Path, refused: list[str] | None = None) -> list[tuple[str, Path, Path]]:
    """:func:`host_dirs` with each folder's checked real path."""
    root = evidence_dir.resolve()
    out = []
    with os.scandir(evidence_dir) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        if e.name.startswith((".", "_")):
            continue
        p = evidence_dir / e.name
        if not e.is_symlink():  # an entry of the resolved folder: no resolve (a syscall per component)
            if e.is_dir(follow_symlinks=False):
                out.append((e.name, p, root / e.name))
            continue
        try:
            real = inside(p, root)
        except Refused as exc:
            if refused is not None:
                refused.append(f"{p.name}/: {exc}")
            continue
        if real.is_dir():
            out.append((e.name, p, real))
    return out


def analyze_dir(evidence_dir: Path | str, expectations: Mapping[str, Any] | None = None, *,
                jobs: int | None = None) -> Report:
    """Judge every ``<host>/`` folder of ``evidence_dir``; ``jobs`` > 1 parses in that many processes
    (None: :func:`default_jobs`, the cores that are free now)."""
    from clusterctl.analysis.expectations import build

    t0 = time.perf_counter()
    exp = build(expectations)
    checks.load_all()
    evidence_dir = Path(evidence_dir)
    if not evidence_dir.is_dir():
        raise FileNotFoundError(f"evidence folder {evidence_dir} does not exist")
    refused: list[str] = []
    items = _host_dirs(evidence_dir, refused)
    root = evidence_dir.resolve()
    results: list[tuple[HostReport, list[PairResult]]] = []
    jobs = default_jobs(len(items)) if jobs is None else jobs
    jobs = max(1, min(jobs, len(items) // 64 or 1))
    if jobs == 1:
        results = [_analyze_host(h, d, exp, root, real) for h, d, real in items]
    else:
        # small chunks: where the parent meets the workers it waits for at most the chunk each one
        # holds (no call queue any more: a worker claims its next chunk itself)
        size = max(4, -(-len(items) // (jobs * 128)))
        chunks = [(items[i:i + size], dict(exp), root)
                  for i in range(0, len(items), size)]
        for part in _run_chunks(chunks, jobs):
            results.extend(part)
    report = Report(hosts={r.host: r for r, _ in results}, expectations=exp, refused=refused)
    report.pairs = [p for _, ps in results for p in ps]
    _cross_host(report, exp)
    report.seconds = time.perf_counter() - t0
    return report


def _cross_host(report: Report, exp: Mapping[str, Any]) -> None:
    sev: Severity = exp.get("straggler_severity") or rule_sev("straggler.slow")
    metrics = [m for r in report.hosts.values() for m in r.metrics]
    report.stragglers = stragglers.find_stragglers(
        metrics, threshold=float(exp["straggler_threshold"]), z_min=float(exp["straggler_z_min"]),
        min_peers=int(exp["straggler_min_peers"]))
    for s in report.stragglers:
        subj = f"{s.host}/{s.subject}" if s.subject else s.host
        report.hosts[s.host].add(Finding(s.host, "straggler", sev, subj, s.message()))
    if not report.pairs:
        return
    report.bad_pairs, v = judge_pairs(report.pairs, float(exp["pair_bad_fraction"]))
    report.pair_verdicts = v
    # a node that passed with another partner is not to blame for a low pair: its pair file's
    # finding becomes a note naming whom the pass blamed (the peer, or the path between them)
    for rep in report.hosts.values():
        for f, peer in rep.pair_findings:
            if rep.host in v.good and f in rep.findings:
                rep.findings.remove(f)
                why = "blamed on the peer" if peer in v.bad else "both pass elsewhere: path/link"
                rep.add(replace(f, severity="info", message=f"{f.message} ({why})"))
    for host, partners in v.bad.items():
        good = sorted(set(partners))
        confirmed = len(good) >= 2
        if host not in report.hosts:
            report.hosts[host] = HostReport(host)
        report.hosts[host].add(Finding(
            host, "pairwise", rule_sev("pairwise.bad_pair" if confirmed else "pairwise.unconfirmed"), host,
            f"pair tests below {exp['pair_bad_fraction']:.0%} of the median with good partner(s) "
            f"{', '.join(good)}" + ("" if confirmed else "; pair with a second good node to confirm")))
    for a, b in v.path_anomalies:
        for h, other in ((a, b), (b, a)):
            report.hosts[h].add(Finding(h, "pairwise", rule_sev("pairwise.path"), h,
                                        f"pair test with {other} low although both pass elsewhere: path/link"))
    for h in sorted(v.suspect):
        if h in report.hosts:
            report.hosts[h].add(Finding(h, "pairwise", rule_sev("pairwise.suspect"), h,
                                        "pair tests low with partners that are not known good; "
                                        "retest with a good node"))


#: below this many host folders one process is faster than starting a pool (bench/bench_analysis.py)
PARALLEL_MIN_HOSTS = 256


def default_jobs(hosts: int | None = None) -> int:
    """Parser processes when none is asked for: the cores free now (cores minus the 1-minute load
    average, rounded), at most 4; 1 for fewer than :data:`PARALLEL_MIN_HOSTS` host folders."""
    if hosts is not None and hosts < PARALLEL_MIN_HOSTS:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    free = cores - int(os.getloadavg()[0] + 0.5) if hasattr(os, "getloadavg") else cores
    return max(1, min(4, free))
