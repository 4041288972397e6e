"""The node check: Slurm's HealthCheckProgram (issue 25), judged by the same code as ``clusterctl verify``.

It runs on each compute node every few minutes, from a zip the node_health role installs
(:mod:`clusterctl.lifecycle.bundle`: the ccparse parsers, the analysis checks, the one severity table
and this module; the standard library only). Each run:

1. collects, each tool cut at ``tool_timeout`` and the whole run at ``budget`` seconds:
   - ``kernel-log``: the kernel log lines **since the last run** (a cursor file: the journal's cursor, or
     inode and offset of a log file; the first run only sets the cursor), parsed by the ``kernel-log``
     parser: Xid events judged by the severity table through the Xid catalog, GPUs fallen off the bus,
     fatal AER, link flaps;
   - ``nvidia-smi-q`` (when GPUs are expected): reset required, pending/failed row remaps, ECC, the count;
   - ``sysfs-ib`` (when RDMA devices are expected or present): port state, phys state and rate, HCA count;
   - ``systemctl-show`` of nvidia-fabricmanager and nvidia-persistenced on NVSwitch nodes;
   - ``proc-mounts`` (when the node should have shared mounts): each of them mounted;
2. judges them with the registered checks of :mod:`clusterctl.analysis` against the expectations built
   from the inventory's cluster spec (``build(spec)``, as verify does);
3. writes the captures and ``verdict.json`` to ``<state>/runs/<UTC time>/`` (the last ``keep`` runs kept),
   and, with ``textfile_dir`` set, the verdict for node_exporter's textfile collector
   (``<textfile_dir>/clusterctl.prom``, rendered by :mod:`clusterctl.report.prom` as verify's ``--prom``);
4. healthy (no ``failed`` finding): exit 0, quiet. Failed: prints the reason, drains the node with
   ``clusterctl: node-check: <check> <subject> evidence=<run folder>: <message>`` unless ``--no-drain``,
   the settings say not to, or the node is already out of service (any drain stays as it is), exit 1.
   A tool that hangs is cut and judged as not run (``collect``), never blocking the node.

Settings: a JSON file (``--config``, default /etc/clusterctl/node-check.json), written by the role.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CONFIG = "/etc/clusterctl/node-check.json"
DEFAULTS: dict[str, Any] = {
    "spec": {},  # the cluster spec keys the checks read (gpus_per_node, ib_rate_gbps, storage_mounts, ...)
    "gpus": 0,  # GPUs nvidia-smi must show; 0: no GPU check
    "rdma_devices": 0,  # RDMA devices expected; 0: judge the ones present, if any
    "sysfs_root": "/sys",
    "proc_root": "/proc",
    "dev_root": "/dev",
    "kernel_log": "journal",  # or dmesg (the ring buffer), or a file path (a log file the kernel writes to)
    "state_dir": "/var/lib/clusterctl/node-check",
    "keep": 20,
    "tool_timeout": 15.0,
    "budget": 45.0,
    "drain": True,
    "nodename": "",
    "tool_dirs": [],  # searched before PATH for nvidia-smi, journalctl, systemctl, scontrol
    "mounts": [],  # mount points the node must have (the spec's storage_mounts, as the checks read them)
    "textfile_dir": "",  # node_exporter's textfile folder: the verdict as clusterctl.prom there; "": none
}
REASON_MAX = 200
_DMESG_TS = re.compile(r"^\[\s*(\d+\.\d+)\]")
NVSWITCH_UNITS = ("nvidia-fabricmanager.service", "nvidia-persistenced.service")


class Budget:
    def __init__(self, seconds: float, per_tool: float) -> None:
        self.end = time.monotonic() + seconds
        self.per_tool = per_tool

    def timeout(self) -> float:
        return max(0.0, min(self.per_tool, self.end - time.monotonic()))


def _tool(conf: Mapping[str, Any], name: str) -> str | None:
    for d in conf.get("tool_dirs") or ():
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    return shutil.which(name)


def _run(conf: Mapping[str, Any], budget: Budget, argv: list[str]) -> dict[str, Any]:
    """{status: ok|tool_missing|timeout|error, rc, stdout, stderr} of a tool, cut at the budget (its
    whole process group: a wrapper's children holding the output pipe open are killed too)."""
    from ccparse.node import entry

    exe = _tool(conf, argv[0])
    if exe is None:
        return entry("tool_missing", cmd=argv, stderr=f"{argv[0]} not found")
    t = budget.timeout()
    if t <= 0:
        return entry("timeout", cmd=argv, stderr="the node check's time budget is spent")
    try:
        rc, out, err = _communicate([exe, *argv[1:]], t)
    except OSError as exc:
        return entry("error", cmd=argv, stderr=str(exc))
    if rc is None:
        return entry("timeout", cmd=argv, stdout=out, stderr=f"{argv[0]} cut after {t:.0f}s")
    return entry("ok" if rc == 0 else "error", rc, out, err, argv)


def _communicate(cmd: list[str], timeout: float) -> tuple[int | None, str, str]:
    from ccparse.node import ENV

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                            env=dict(os.environ, **ENV), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err
    return proc.returncode, out, err


# ---- the kernel log since the last run -------------------------------------------------------

def _kernel_log(conf: Mapping[str, Any], budget: Budget, state: Path) -> tuple[str | None, str, str | None]:
    """(new text or None on the first run, why not read ('' when read), the new cursor)."""
    cursor_file = state / "kernel-log.cursor"
    old = cursor_file.read_text().strip() if cursor_file.exists() else ""
    src = str(conf.get("kernel_log") or "journal")
    if src == "journal":
        argv = ["journalctl", "-k", "-o", "short", "--no-pager", "--show-cursor", "-q"]
        argv += [f"--after-cursor={old}"] if old.startswith("s=") else ["-n", "1"]
        r = _run(conf, budget, argv)
        if r["status"] != "ok" and old.startswith("s="):  # a cursor of a journal that is gone: this boot
            r = _run(conf, budget, ["journalctl", "-k", "-b", "-o", "short", "--no-pager", "--show-cursor", "-q"])
        if r["status"] != "ok":
            return None, f"journalctl: {r['status']}: {(r['stderr'] or '').strip()[:200]}", None
        lines = r["stdout"].splitlines()
        new_cursor = next((ln.split(":", 1)[1].strip() for ln in reversed(lines) if ln.startswith("-- cursor:")),
                          old or None)
        text = "\n".join(ln for ln in lines if not ln.startswith("-- "))
        return (text if old.startswith("s=") else None), "", new_cursor
    if src == "dmesg":  # the kernel ring buffer (no journald, e.g. a microVM): lines after the last timestamp
        r = _run(conf, budget, ["dmesg"])
        if r["status"] != "ok":
            return None, f"dmesg: {r['status']}: {(r['stderr'] or '').strip()[:200]}", None
        last = old.partition(":")[2] if old.startswith("dmesg:") else ""
        new, keep, seen = [], False, ""
        for ln in r["stdout"].splitlines():
            m = _DMESG_TS.match(ln)
            if m:  # a message; the lines after it without a stamp are its continuation
                seen = m.group(1)
                keep = not last or float(seen) > float(last)
            if keep:
                new.append(ln)
        cursor = f"dmesg:{seen}" if seen else (old or "dmesg:0")
        return (None if not last else "\n".join(new) + ("\n" if new else "")), "", cursor
    try:
        st = os.stat(src)
        with open(src, "rb") as fh:
            ino_s, _, off_s = old.partition(":")
            first = not old
            start = int(off_s) if ino_s == str(st.st_ino) and off_s.isdigit() and int(off_s) <= st.st_size else 0
            if first:
                start = st.st_size
            fh.seek(start)
            data = fh.read(16 * 1024 * 1024)
    except OSError as exc:
        return None, f"{src}: {exc.strerror or exc}", None
    return (None if first else data.decode("utf-8", "replace")), "", f"{st.st_ino}:{start + len(data)}"


# ---- NVSwitch, mounts -------------------------------------------------------------------------

def has_nvswitch(conf: Mapping[str, Any]) -> bool:
    """NVSwitch devices the driver created (/dev/nvidia-nvswitch<N>), or NVIDIA PCI bridges of the
    NVSwitch class (0x0680) in sysfs."""
    dev = Path(str(conf.get("dev_root") or "/dev"))
    if any(dev.glob("nvidia-nvswitch[0-9]*")):
        return True
    pci = Path(str(conf.get("sysfs_root") or "/sys")) / "bus" / "pci" / "devices"
    for d in pci.glob("*") if pci.is_dir() else ():
        with contextlib.suppress(OSError):
            if (d / "vendor").read_text().strip() == "0x10de" and (d / "class").read_text().strip().startswith(
                    "0x0680"):
                return True
    return False


# ---- one run ----------------------------------------------------------------------------------

def collect(conf: Mapping[str, Any], state: Path, budget: Budget) -> tuple[dict[str, Any], dict[str, str],
                                                                            dict[str, str], str | None]:
    """(KIND -> parsed data, KIND -> raw capture text, KIND -> why it could not be judged, new cursor)."""
    from ccparse import registry
    from ccparse.common import ParseError
    from ccparse.sysfs_ib import read_sysfs_root

    parsed: dict[str, Any] = {}
    raw: dict[str, str] = {}
    problems: dict[str, str] = {}

    def parse(kind: str, text: str) -> None:
        raw[kind] = text
        try:
            parsed[kind] = registry.parse(kind, text)
        except ParseError as exc:
            problems[kind] = str(exc)

    text, why, cursor = _kernel_log(conf, budget, state)
    if why:
        problems["kernel-log"] = why
    elif text is not None and text.strip():
        parse("kernel-log", text)
    if int(conf.get("gpus") or 0) > 0:
        r = _run(conf, budget, ["nvidia-smi", "-q"])
        if r["status"] == "ok":
            parse("nvidia-smi-q", r["stdout"])
        else:
            raw["nvidia-smi-q"] = r["stdout"] + r["stderr"]
            problems["nvidia-smi-q"] = f"nvidia-smi -q: {r['status']}: {(r['stderr'] or '').strip()[:200]}"
    sysfs = str(conf.get("sysfs_root") or "/sys")
    if int(conf.get("rdma_devices") or 0) > 0 or os.path.isdir(os.path.join(sysfs, "class", "infiniband")):
        try:
            parsed["sysfs-ib"] = read_sysfs_root(sysfs)
            raw["sysfs-ib"] = json.dumps(parsed["sysfs-ib"], indent=1)
        except (OSError, ParseError) as exc:
            problems["sysfs-ib"] = f"{sysfs}/class/infiniband: {exc}"
    if has_nvswitch(conf):
        r = _run(conf, budget, ["systemctl", "show", "--property=Id,LoadState,ActiveState,SubState",
                                *NVSWITCH_UNITS])
        if r["status"] == "ok":
            parse("systemctl-show", r["stdout"])
        else:
            problems["systemctl-show"] = f"systemctl show: {r['status']}: {(r['stderr'] or '').strip()[:200]}"
    if (conf.get("spec") or {}).get("storage_mounts"):
        try:
            parse("proc-mounts", (Path(str(conf.get("proc_root") or "/proc")) / "mounts").read_text())
        except OSError as exc:
            problems["proc-mounts"] = f"/proc/mounts: {exc.strerror or exc}"
    return parsed, raw, problems, cursor


def judge(host: str, parsed: Mapping[str, Any], problems: Mapping[str, str],
          spec: Mapping[str, Any]) -> list[dict[str, str]]:
    """The findings of the registered checks (as verify's engine runs them), plus ``collect``
    findings for what could not be read (GPUs expected and nvidia-smi missing is ``failed``)."""
    from clusterctl.analysis.checks import load_all
    from clusterctl.analysis.expectations import build
    from clusterctl.analysis.model import CHECKS, CheckResult
    from clusterctl.analysis.severity import sev

    load_all()
    exp = build(spec)
    out: list[dict[str, str]] = []
    for kind, data in parsed.items():
        for fn in CHECKS.get(kind, []):
            res = fn(host, data, exp)
            findings = res.findings if isinstance(res, CheckResult) else list(res)
            out += [{**f.to_dict(), "kind": kind} for f in findings]
    for kind, why in problems.items():
        missing = kind == "nvidia-smi-q" and "tool_missing" in why
        rule = "collect.gpu_tool_missing" if missing else "collect.tool_failed"
        out.append({"check": "collect", "severity": sev(rule), "subject": host, "message": why, "kind": kind})
    return out


def reason(finding: Mapping[str, str], evidence: Path) -> str:
    text = f"clusterctl: node-check: {finding['check']} {finding['subject']} evidence={evidence}: {finding['message']}"
    return re.sub(r"\s+", " ", re.sub(r"[\"'{}%#]", "", text)).strip()[:REASON_MAX]


def _out_of_service(conf: Mapping[str, Any], budget: Budget, node: str) -> str | None:
    """The node's state and reason when Slurm already has it drained or down, else None (also when
    scontrol cannot say: then the drain is tried)."""
    from ccparse import registry
    from ccparse.common import ParseError

    r = _run(conf, budget, ["scontrol", "show", "node", node])
    if r["status"] != "ok":
        return None
    try:
        nodes = registry.parse("scontrol-node", r["stdout"])["nodes"]
    except ParseError:
        return None
    for n in nodes:
        state = str(n.get("state") or "").upper()
        if n.get("drain") or "DOWN" in state or "FAIL" in state:
            return f"{n.get('state')}: {n.get('reason') or ''}".strip()
    return None


def write_textfile(conf: Mapping[str, Any], verdict: Mapping[str, Any]) -> str:
    """The verdict as node_exporter's textfile ``<textfile_dir>/clusterctl.prom`` (verify's rendering,
    :mod:`clusterctl.report.prom`), written atomically; "" or why it could not be written (never fatal:
    the check's verdict stands)."""
    folder = str(conf.get("textfile_dir") or "")
    if not folder:
        return ""
    from clusterctl.paths import write_atomic
    from clusterctl.report import prom

    path = Path(folder) / prom.TEXTFILE
    try:
        write_atomic(path, prom.render_verdict(verdict))
    except OSError as exc:
        return f"textfile not written: {path}: {exc.strerror or exc}"
    return ""


def run(conf: Mapping[str, Any], *, drain: bool | None = None, host: str | None = None) -> tuple[int, str, Path]:
    """One run: (exit status, the line printed, the run's evidence folder)."""
    budget = Budget(float(conf.get("budget") or 45), float(conf.get("tool_timeout") or 15))
    state = Path(str(conf.get("state_dir")))
    (state / "runs").mkdir(parents=True, exist_ok=True)
    node = host or str(conf.get("nodename") or "") or os.uname().nodename.split(".")[0]
    lock = os.open(state / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        while True:  # slurmd's run and the loop's re-verify: one at a time, never past the budget
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if budget.timeout() <= 0:
                    return 0, "clusterctl-node-check: another run holds the lock; not judged", state
                time.sleep(0.2)
        parsed, raw, problems, cursor = collect(conf, state, budget)
        findings = judge(node, parsed, problems, conf.get("spec") or {})
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        run_dir = state / "runs" / stamp
        n = 1
        while run_dir.exists():
            n += 1
            run_dir = state / "runs" / f"{stamp}-{n}"
        run_dir.mkdir()
        for kind, text in raw.items():
            (run_dir / f"{kind}.txt").write_text(text)
        failed = [f for f in findings if f["severity"] == "critical"]
        verdict = {"host": node, "status": "failed" if failed else "healthy", "findings": findings,
                   "not_judged": problems}
        (run_dir / "verdict.json").write_text(json.dumps(verdict, indent=1))
        textfile_error = write_textfile(conf, verdict)
        if cursor:
            tmp = state / "kernel-log.cursor.tmp"
            tmp.write_text(cursor + "\n")
            os.replace(tmp, state / "kernel-log.cursor")
        for old in sorted((state / "runs").iterdir())[:-max(1, int(conf.get("keep") or 20))]:
            shutil.rmtree(old, ignore_errors=True)
        if not failed:
            if textfile_error:
                print(textfile_error, file=sys.stderr)
            return 0, "", run_dir
        line = reason(failed[0], run_dir)
        if textfile_error:
            line += f"; {textfile_error}"
        if len(failed) > 1:
            line += f" (+{len(failed) - 1} more in verdict.json)"
        do_drain = bool(conf.get("drain", True)) if drain is None else drain
        if do_drain:
            held = _out_of_service(conf, budget, node)
            if held is not None:
                line += f"; not drained: already out of service ({held})"
            else:
                r = _run(conf, budget, ["scontrol", "update", f"NodeName={node}", "State=DRAIN",
                                        f"Reason={reason(failed[0], run_dir)}"])
                if r["status"] != "ok":
                    line += f"; drain failed: {r['status']} {(r['stderr'] or '').strip()[:120]}"
        return 1, line, run_dir
    finally:
        os.close(lock)


def identity(conf: Mapping[str, Any]) -> dict[str, Any]:
    """The node's hardware identity for the burn-in gate: GPU UUIDs and serials (nvidia-smi -q), RDMA node
    GUIDs (sysfs), kernel release, NVIDIA driver version (clusterctl/lifecycle/burnin.py)."""
    from ccparse import registry
    from ccparse.common import ParseError
    from ccparse.sysfs_ib import read_sysfs_root

    budget = Budget(float(conf.get("budget") or 45), float(conf.get("tool_timeout") or 15))
    out: dict[str, Any] = {"gpus": [], "nics": [], "kernel": os.uname().release, "driver": "", "errors": []}
    if int(conf.get("gpus") or 0) > 0:
        r = _run(conf, budget, ["nvidia-smi", "-q"])
        try:
            data = registry.parse("nvidia-smi-q", r["stdout"]) if r["status"] == "ok" else None
        except ParseError as exc:
            data, r["stderr"] = None, str(exc)
        if data is None:
            out["errors"].append(f"nvidia-smi -q: {r['status']}: {(r['stderr'] or '').strip()[:200]}")
        else:
            out["driver"] = str(data.get("driver_version") or "")
            out["gpus"] = sorted(f"{g.get('uuid') or '?'}/{g.get('serial') or '?'}" for g in data.get("gpus", []))
    sysfs = str(conf.get("sysfs_root") or "/sys")
    if os.path.isdir(os.path.join(sysfs, "class", "infiniband")):
        with contextlib.suppress(OSError, ParseError):
            out["nics"] = sorted(str(d.get("node_guid")) for d in read_sysfs_root(sysfs)["devices"]
                                 if d.get("node_guid"))
    return out


def load_config(path: str) -> dict[str, Any]:
    conf = dict(DEFAULTS)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: not a JSON object")
        conf.update(data)
    spec = dict(conf.get("spec") or {})
    if conf.get("mounts") and not spec.get("storage_mounts"):
        spec["storage_mounts"] = [{"mountpoint": str(m)} for m in conf["mounts"]]
    conf["spec"] = spec
    return conf


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="clusterctl-node-check", description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=CONFIG)
    ap.add_argument("--no-drain", action="store_true", help="judge and print, never drain")
    ap.add_argument("--json", action="store_true", help="print the verdict as JSON")
    ap.add_argument("--identity", action="store_true", help="print the node's hardware identity (JSON) and exit")
    args = ap.parse_args(argv)
    try:
        conf = load_config(args.config)
    except (OSError, ValueError) as exc:
        print(f"clusterctl-node-check: {args.config}: {exc}", file=sys.stderr)
        return 2
    if args.identity:
        print(json.dumps(identity(conf), sort_keys=True))
        return 0
    rc, line, run_dir = run(conf, drain=False if args.no_drain else None)
    if args.json:
        print((run_dir / "verdict.json").read_text() if (run_dir / "verdict.json").exists() else "{}")
    elif line:
        print(line)
    return rc


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
