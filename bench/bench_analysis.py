#!/usr/bin/env python3
"""Analysis and pairwise-schedule benchmark for N simulated nodes (issue 10).

For each N the script writes an evidence folder (``<host>/<KIND>.txt``) built from the real
captures in ``tests/fixtures``: every node gets the same healthy base captures (nccl-tests
bandwidths with +-2 % seeded noise), and a few nodes get injected faults:

* ``port_rate``: one HCA port of ``ibstat`` at 200 of 400 Gb/s,
* ``row_remap``: one GPU of ``nvidia-smi -q`` with ``Remapped Rows / Pending: Yes``,
* ``slow``: every nccl-tests bandwidth of the node at 70 % (times at 1/0.7).

Then it runs :func:`clusterctl.analysis.engine.analyze_dir` on the folder in a fresh process
(so the peak RSS is that N's), and scores the report: an injected fault is *found* when its host
has a finding naming the faulty part (the device, the GPU, or a straggler); precision counts
every host reported degraded/failed without an injected fault as invented. It also prints the
pairwise schedule (rounds and tests) against naive all-pairs, and checks the blame logic on a
simulated pair run with bad nodes.

    .venv/bin/python bench/bench_analysis.py                 # N = 8 64 512 4096
    .venv/bin/python bench/bench_analysis.py -n 8 -n 64 --jobs 2

Each N's folder is judged four times in the same process, one after the other: from the raw text
with 1 process and with ``--jobs`` processes, then with the collectors' pre-parsed JSON
in every host folder (``_parsed.json``, ccparse.preparsed, what playbooks/verify.yml writes) with 1 and ``--jobs``
processes; the four reports must be identical.

``--ref NAME=COMMIT`` (repeatable) times the code of a frozen commit beside today's in the same
run: its ``clusterctl``, ``plugins`` and ``bench`` folders are taken out of git (``git archive``) into
a temporary tree, and for every N the frozen bench (its own ``--one``, on its own generated folder)
and today's run one after the other; the speed table then has one row per code and N, and a ratio
table ``frozen / today`` (above 1: today is faster).

    .venv/bin/python bench/bench_analysis.py -n 4096 --ref issue29-start=4040015

Beside them, the ``nvidia-smi -q`` text path and the ``nvidia-smi -q -x`` XML path are timed on
the same GPUs: two more folders whose ``nvidia-smi-q.txt`` is the H200 report of
tests/fixtures/h200-xml-pair (text and XML of one GPU, captured one after the other) with its GPU
repeated 8 times (bus ids 00000000:10:00.0 upwards, ``Attached GPUs`` 8), the same faults
injected (Pending Yes / ``<remapped_row_pending>Yes`` for GPU 3), judged raw with 1 and ``--jobs``
processes; the text and XML reports must be identical too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for p in (REPO, REPO / "plugins" / "module_utils"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

FIXTURES = REPO / "tests" / "fixtures"

#: KIND -> fixture of the healthy base node (8x A100 with 8x 400G HCAs + an Ethernet bond)
BASE = {
    "ibstat": "ibstat/h100-all-active-2.txt",
    "nvidia-smi-q": "nvidia-smi-q/a100x8-460.32.03-full.txt",
    "nccl-tests": "nccl-tests/a100x8-single-node-all-reduce-gcm.txt",
}
#: what the simulated cluster is expected to be (the cluster spec of its inventory)
EXPECTATIONS: dict[str, Any] = {
    "fabric": "infiniband",
    "rdma_devices_per_node": 8,
    "ib_rate_gbps": 400,
    "frontend_nics": ["mlx5_bond_0"],
    "gpus_per_node": 8,
}
FAULTY_PORT_DEVICE = "mlx5_4"
FAULTY_GPU = 3  # index in nvidia-smi -q order
SLOW_FACTOR = 0.70
NOISE = 0.02


@dataclass(frozen=True)
class Fault:
    host: str
    kind: str  # port_rate | row_remap | slow
    part: str  # what a finding must name: device, gpu index, metric


def read_fixture(rel: str) -> str:
    return (FIXTURES / rel).read_text()


def set_port_rate(text: str, device: str, rate: int) -> str:
    """``ibstat`` text with the first port of ``device`` at ``rate`` Gb/s."""
    start = text.index(f"CA '{device}'")
    m = re.compile(r"(Rate:\s*)(\d+)").search(text, start)
    if m is None:
        raise ValueError(f"no Rate line after CA '{device}'")
    return text[: m.start(2)] + str(rate) + text[m.end(2):]


PAIR = REPO / "tests" / "fixtures" / "h200-xml-pair"


def _drop_source(text: str) -> str:
    return text.split("\n", 1)[1] if text.startswith("# source:") else text


def h200x8(fmt: str) -> str:
    """The H200 report of tests/fixtures/h200-xml-pair (``fmt`` text or xml) with its GPU repeated
    8 times under distinct bus ids and ``Attached GPUs`` 8 (the same 8 GPUs in both formats)."""
    if fmt == "xml":
        text = _drop_source((PAIR / "nvidia-smi-q-x.txt").read_text())
        a, b = text.index("\t<gpu id="), text.index("</gpu>") + len("</gpu>\n")
        gpus = "".join(text[a:b].replace("00000000:00:06.0", f"00000000:{0x10 + i:02X}:00.0") for i in range(8))
        return text[:a].replace("<attached_gpus>1<", "<attached_gpus>8<") + gpus + text[b:]
    text = _drop_source((PAIR / "nvidia-smi-q.txt").read_text())
    a = text.index("GPU 00000000:00:06.0")
    head = re.sub(r"(Attached GPUs\s*:\s*)1", r"\g<1>8", text[:a])
    return head + "".join(text[a:].replace("00000000:00:06.0", f"00000000:{0x10 + i:02X}:00.0") for i in range(8))


def set_remap_pending_xml(text: str, gpu: int) -> str:
    """``nvidia-smi -q -x`` XML with GPU number ``gpu`` (0-based) showing a pending row remap."""
    start = [m.start() for m in re.finditer(r"<gpu id=", text)][gpu]
    i = text.index("<remapped_row_pending>No<", start)
    return text[:i] + "<remapped_row_pending>Yes<" + text[i + len("<remapped_row_pending>No<"):]


def set_remap_pending(text: str, gpu: int) -> str:
    """``nvidia-smi -q`` text with GPU number ``gpu`` (0-based, file order) showing a pending row remap."""
    starts = [m.start() for m in re.finditer(r"^GPU [0-9A-Fa-f]{8}:", text, re.M)]
    block = text.index("Remapped Rows", starts[gpu])
    m = re.compile(r"(Pending\s*:\s*)No").search(text, block)
    if m is None:
        raise ValueError(f"no Remapped Rows / Pending line for GPU {gpu}")
    return text[: m.start()] + m.group(1) + "Yes" + text[m.end():]


_ROW = re.compile(r"^(\s+\d+\s+\d+\s+\S+\s+\S+\s+-?\d+)((?:\s+\S+){8})\s*$")


def scale_nccl(text: str, factor: float) -> str:
    """nccl-tests table with algbw/busbw times ``factor`` and times divided by it (and the average)."""
    out = []
    for line in text.splitlines(keepends=True):
        m = _ROW.match(line.rstrip("\n"))
        if m:
            f = m.group(2).split()
            vals = [f"{float(f[0]) / factor:.1f}", f"{float(f[1]) * factor:.2f}", f"{float(f[2]) * factor:.2f}", f[3],
                    f"{float(f[4]) / factor:.1f}", f"{float(f[5]) * factor:.2f}", f"{float(f[6]) * factor:.2f}", f[7]]
            line = m.group(1) + "".join(f"{v:>9}" for v in vals) + "\n"
        elif line.startswith("# Avg bus bandwidth"):
            v = float(line.split(":")[1])
            line = f"# Avg bus bandwidth    : {v * factor:.2f}\n"
        out.append(line)
    return "".join(out)


def plan_faults(n: int) -> list[Fault]:
    """Hosts getting each fault: spread over the cluster, one of each (more for large N)."""
    hosts = host_names(n)
    per_kind = max(1, n // 512)
    faults: list[Fault] = []
    kinds = [("port_rate", FAULTY_PORT_DEVICE), ("row_remap", f"gpu{FAULTY_GPU}"), ("slow", "nccl_busbw_GBps")]
    for k, (kind, part) in enumerate(kinds):
        for j in range(per_kind):
            idx = (k * n // 3 + j * 97 + 1) % n
            faults.append(Fault(hosts[idx], kind, part))
    return faults


def host_names(n: int) -> list[str]:
    width = max(3, len(str(n)))
    return [f"node{i:0{width}d}" for i in range(1, n + 1)]


#: fault -> the KIND it is injected in
FAULT_KIND = {"port_rate": "ibstat", "row_remap": "nvidia-smi-q", "slow": "nccl-tests"}


def judged_kinds() -> set[str]:
    """KINDs with both a parser and at least one check registered (the others cannot be scored)."""
    from ccparse import registry

    from clusterctl.analysis import checks
    from clusterctl.analysis.model import CHECKS

    checks.load_all()
    return {k for k in registry.kinds() if CHECKS.get(k)}


def generate(n: int, dest: Path, seed: int = 7, kinds: set[str] | None = None, gpu_format: str = "") -> list[Fault]:
    """Write the evidence folder for ``n`` nodes under ``dest``; return the injected faults.

    Only KINDs in ``kinds`` (default: every KIND with a parser and a check) are written, so the
    benchmark scores what the analysis can judge today; the others are listed as skipped.
    ``gpu_format`` ``text`` or ``xml`` replaces the A100 ``nvidia-smi -q`` base by :func:`h200x8`.
    """
    rng = random.Random(seed)
    kinds = judged_kinds() if kinds is None else kinds
    base = {kind: read_fixture(rel) for kind, rel in BASE.items() if kind in kinds}
    if gpu_format and "nvidia-smi-q" in base:
        base["nvidia-smi-q"] = h200x8(gpu_format)
    faults = [f for f in plan_faults(n) if FAULT_KIND[f.kind] in kinds]
    by_host: dict[str, list[Fault]] = {}
    for f in faults:
        by_host.setdefault(f.host, []).append(f)
    port_bad = set_port_rate(base["ibstat"], FAULTY_PORT_DEVICE, 200) if "ibstat" in base else ""
    remap = set_remap_pending_xml if gpu_format == "xml" else set_remap_pending
    gpu_bad = remap(base["nvidia-smi-q"], FAULTY_GPU) if "nvidia-smi-q" in base else ""
    for host in host_names(n):
        d = dest / host
        d.mkdir(parents=True)
        mine = {f.kind for f in by_host.get(host, [])}
        if "ibstat" in base:
            (d / "ibstat.txt").write_text(port_bad if "port_rate" in mine else base["ibstat"])
        if "nvidia-smi-q" in base:
            (d / "nvidia-smi-q.txt").write_text(gpu_bad if "row_remap" in mine else base["nvidia-smi-q"])
        noise = 1.0 + rng.uniform(-NOISE, NOISE)
        if "nccl-tests" in base:
            factor = SLOW_FACTOR if "slow" in mine else noise
            (d / "nccl-tests.txt").write_text(scale_nccl(base["nccl-tests"], factor))
    return faults


def score(report: Any, faults: list[Fault]) -> dict[str, Any]:
    """Precision/recall of the injected faults against the report."""
    found: list[Fault] = []
    missed: list[Fault] = []
    for f in faults:
        hr = report.hosts.get(f.host)
        texts = [] if hr is None else [f"{x.check} {x.subject} {x.message}".lower() for x in hr.findings]
        if f.kind == "slow":
            ok = any(s.host == f.host for s in report.stragglers)
        elif f.kind == "row_remap":
            ok = any(f.part in t and ("remap" in t or "row" in t) for t in texts)
        else:
            ok = any(f.part in t for t in texts)
        (found if ok else missed).append(f)
    faulty = {f.host for f in faults}
    flagged = {h for h, r in report.hosts.items() if r.status != "healthy"}
    invented = sorted(flagged - faulty)
    tp = len(flagged & faulty)
    return {
        "faults": len(faults), "found": len(found), "missed": [asdict(f) for f in missed],
        "flagged_hosts": len(flagged), "invented_hosts": invented[:20], "invented_count": len(invented),
        "invented_examples": {h: [x.to_dict() for x in report.hosts[h].findings][:3] for h in invented[:3]},
        "precision": tp / len(flagged) if flagged else 1.0,
        "recall": len(found) / len(faults) if faults else 1.0,
    }


def pairwise(n: int) -> dict[str, Any]:
    """Schedule size vs naive, and blame on a simulated run where 2 adjacent nodes are bad."""
    from clusterctl.analysis import schedule

    hosts = host_names(n)
    rounds = schedule.pair_rounds(hosts)
    r, t = schedule.schedule_size(rounds)
    nr, nt = schedule.naive_all_pairs(n)
    bad = {hosts[n // 2], hosts[n // 2 + 1]} if n >= 4 else set()
    results = {p: not (set(p) & bad) for rnd in rounds for p in rnd}
    v = schedule.judge(results)
    follow = schedule.followup_rounds(v, results)
    results2 = dict(results)
    results2.update({p: not (set(p) & bad) for rnd in follow for p in rnd})
    v2 = schedule.judge(results2)
    fr, ft = schedule.schedule_size(follow)
    return {"rounds": r, "tests": t, "naive_rounds": nr, "naive_tests": nt, "followup_rounds": fr,
            "followup_tests": ft, "bad_injected": sorted(bad), "bad_confirmed": sorted(v2.confirmed())}


def write_preparsed(evidence: Path) -> int:
    """Write the collectors' pre-parsed ``<host>/_parsed.json`` (``{KIND: envelope}``, what
    fabric_evidence returns and playbooks/verify.yml writes); identical texts are parsed once.
    Returns the number of envelopes written."""
    from ccparse import preparsed

    from clusterctl.analysis.engine import PARSED_FILE

    cache: dict[tuple[str, str], dict[str, Any] | None] = {}
    count = 0
    for host in sorted(p for p in evidence.iterdir() if p.is_dir()):
        docs = {}
        for txt in sorted(host.glob("*.txt")):
            text = txt.read_text()
            kind = preparsed.base_kind(txt.stem)
            if (kind, text) not in cache:
                cache[(kind, text)] = preparsed.envelope(kind, text)
            env = cache[(kind, text)]
            if env is not None:
                docs[txt.stem] = env
        (host / PARSED_FILE).write_text(json.dumps(docs, separators=(",", ":")))
        count += len(docs)
    return count


def _comparable(report: Any) -> dict[str, Any]:
    d = report.to_dict()
    d["summary"].pop("seconds", None)
    return d


#: the two ``nvidia-smi -q`` formats of the H200 pair, timed on folders of their own
GPU_FORMATS = ("text", "xml")
#: the four configurations timed on the same folder, one after the other: (label, pre-parsed, jobs)
MODES = (("raw_j1", False, 1), ("raw_jN", False, None), ("pre_j1", True, 1), ("pre_jN", True, None))


def run_one(n: int, jobs: int, keep: Path | None) -> dict[str, Any]:
    """Generate, analyse, score one N (called in a fresh process by :func:`main`).

    The folder is judged four times: raw text with 1 process and with ``jobs`` processes, then
    (after writing every host's pre-parsed ``_parsed.json``) the same two again. All four reports
    must be identical (the bench fails otherwise); the score is the first one's.
    """
    from clusterctl.analysis.engine import analyze_dir, default_jobs

    tmp = Path(tempfile.mkdtemp(prefix=f"clusterctl-bench-{n}-"))
    try:
        t0 = time.perf_counter()
        kinds = judged_kinds()
        faults = generate(n, tmp / "evidence", kinds=kinds)
        gen_s = time.perf_counter() - t0
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        walls: dict[str, float] = {}
        reports: dict[str, Any] = {}
        pre_files = 0
        for label, pre, j in MODES:
            if pre and not pre_files:
                t2 = time.perf_counter()
                pre_files = write_preparsed(tmp / "evidence")
                gen_s += time.perf_counter() - t2
            t1 = time.perf_counter()
            reports[label] = analyze_dir(tmp / "evidence", EXPECTATIONS, jobs=jobs if j is None else j)
            walls[label] = time.perf_counter() - t1
        base = _comparable(reports["raw_j1"])
        differ = [k for k, r in reports.items() if _comparable(r) != base]
        if differ:
            raise SystemExit(f"N={n}: reports of {differ} differ from the raw 1-process report")
        fmt_reports: dict[str, Any] = {}
        for fmt in GPU_FORMATS:
            generate(n, tmp / fmt, kinds=kinds, gpu_format=fmt)
            for label, j in (("j1", 1), ("jN", jobs)):
                t1 = time.perf_counter()
                fmt_reports[f"{fmt}_{label}"] = analyze_dir(tmp / fmt, EXPECTATIONS, jobs=j)
                walls[f"h200{fmt}_{label}"] = time.perf_counter() - t1
            shutil.rmtree(tmp / fmt)
        fbase = _comparable(fmt_reports["text_j1"])
        differ = [k for k, r in fmt_reports.items() if _comparable(r) != fbase]
        if differ:
            raise SystemExit(f"N={n}: H200 reports of {differ} differ from the text 1-process report")
        fscore = score(fmt_reports["xml_j1"], faults)
        if fscore["missed"] or fscore["invented_count"]:
            raise SystemExit(f"N={n}: the XML path missed or invented faults: {fscore}")
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, children)
        out = {"n": n, "jobs": jobs, "default_jobs_now": default_jobs(n), "load1": round(os.getloadavg()[0], 2),
               "generate_s": round(gen_s, 2), "analyze_s": round(walls["raw_j1"], 2),
               **{f"{k}_s": round(v, 2) for k, v in walls.items()},
               "peak_rss_mib": round(peak / 1024, 1), "rss_before_mib": round(rss_before / 1024, 1),
               "files": sum(1 for _ in (tmp / "evidence").glob("*/*.txt")), "preparsed_files": pre_files,
               "kinds_skipped": sorted(set(BASE) - kinds), **score(reports["raw_j1"], faults),
               "pairwise": pairwise(n)}
        if keep is not None:
            shutil.copytree(tmp / "evidence", keep / f"n{n}", dirs_exist_ok=True)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def speed_table(rows: list[dict[str, Any]]) -> str:
    """Raw vs pre-parsed, 1 vs ``jobs`` processes: wall seconds and the ratios, same run (one row per
    code and N when frozen references ran beside today's code)."""
    head = ("| N | code | load | raw 1 proc (s) | raw {j} procs (s) | pre-parsed 1 proc (s) | "
            "pre-parsed {j} procs (s) | raw/pre-parsed (1 proc) | raw 1 / pre-parsed {j} |")
    j = rows[0]["jobs"] if rows else 2
    lines = [head.format(j=j), "|" + "---|" * 9]
    for r in rows:
        lines.append(
            f"| {r['n']} | {r.get('code', 'today')} | {r['load1']:.1f} | {r['raw_j1_s']:.2f} | {r['raw_jN_s']:.2f} | "
            f"{r['pre_j1_s']:.2f} | {r['pre_jN_s']:.2f} | {r['raw_j1_s'] / max(r['pre_j1_s'], 1e-3):.1f}x | "
            f"{r['raw_j1_s'] / max(r['pre_jN_s'], 1e-3):.1f}x |")
    return "\n".join(lines)


def ratio_table(rows: list[dict[str, Any]]) -> str:
    """``frozen / today`` wall time per N and mode (above 1: today is faster), same run."""
    j = rows[0]["jobs"] if rows else 2
    labels = [("raw_j1_s", "raw 1 proc"), ("raw_jN_s", f"raw {j} procs"), ("pre_j1_s", "pre-parsed 1 proc"),
              ("pre_jN_s", f"pre-parsed {j} procs"), ("h200text_j1_s", "H200 text 1 proc"),
              ("h200xml_j1_s", "H200 XML 1 proc")]
    lines = ["| N | frozen code | " + " | ".join(f"{t}: frozen / today" for _, t in labels) + " |",
             "|" + "---|" * (len(labels) + 2)]
    today = {r["n"]: r for r in rows if r.get("code", "today") == "today"}
    for r in rows:
        t = today.get(r["n"])
        if t is None or r.get("code", "today") == "today":
            continue
        lines.append(f"| {r['n']} | {r['code']} | " + " | ".join(
            f"{r[k] / max(t[k], 1e-3):.2f}x" for k, _ in labels) + " |")
    return "\n".join(lines)


@contextlib.contextmanager
def frozen_beside_today(ap: argparse.ArgumentParser, ref_arg: str | None,
                        prefix: str) -> Iterator[tuple[Path, dict[str, Path]]]:
    """A scratch folder and ``{NAME: the frozen tree, "today": this checkout}`` for a ``--ref NAME=COMMIT|DIR``
    argument (the A/B benches' common start); the argument parser's error when it is missing."""
    if not ref_arg:
        ap.error("--ref NAME=COMMIT|DIR is required")
    name, ref = ref_arg.split("=", 1)
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        t = Path(tmp)
        yield t, {name: frozen_tree(ref, t / "frozen"), "today": REPO}


def frozen_tree(ref: str, dest: Path) -> Path:
    """``clusterctl``, ``plugins`` and ``bench`` of commit ``ref`` (``git archive``) under ``dest``; ``ref``
    a folder holding those three (a machine without the repository's history: extract them beside it
    first with ``git archive COMMIT clusterctl plugins bench | tar -x -C DIR``): copied from there."""
    import tarfile
    from io import BytesIO

    if Path(ref).is_dir():
        for part in ("clusterctl", "plugins", "bench"):
            shutil.copytree(Path(ref) / part, dest / part, symlinks=True)
    else:
        data = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", ref, "clusterctl", "plugins",
                               "bench"], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(data)) as tar:
            tar.extractall(dest, filter="data")
    # the frozen bench reads today's fixtures (the same captures: its BASE names them)
    (dest / "tests").mkdir(exist_ok=True)
    (dest / "tests" / "fixtures").symlink_to(FIXTURES)
    return dest


def format_table(rows: list[dict[str, Any]]) -> str:
    """``nvidia-smi -q`` text vs ``-q -x`` XML of the same 8 H200 GPUs, raw: wall seconds, same run."""
    j = rows[0]["jobs"] if rows else 2
    lines = [f"| N | load | text 1 proc (s) | XML 1 proc (s) | text/XML (1 proc) | text {j} procs (s) | "
             f"XML {j} procs (s) | text/XML ({j} procs) |", "|" + "---|" * 8]
    for r in rows:
        lines.append(
            f"| {r['n']} | {r['load1']:.1f} | {r['h200text_j1_s']:.2f} | {r['h200xml_j1_s']:.2f} | "
            f"{r['h200text_j1_s'] / max(r['h200xml_j1_s'], 1e-3):.2f}x | {r['h200text_jN_s']:.2f} | "
            f"{r['h200xml_jN_s']:.2f} | {r['h200text_jN_s'] / max(r['h200xml_jN_s'], 1e-3):.2f}x |")
    return "\n".join(lines)


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| N | analyze wall (s) | peak RSS (MiB) | faults found | invented | precision | recall | "
            "pair rounds | pair tests | naive rounds | naive tests | pass-2 tests | bad nodes blamed |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        p = r["pairwise"]
        lines.append(
            f"| {r['n']} | {r['analyze_s']:.2f} | {r['peak_rss_mib']:.0f} | {r['found']}/{r['faults']} | "
            f"{r['invented_count']} | {r['precision']:.2f} | {r['recall']:.2f} | {p['rounds']} | {p['tests']} | "
            f"{p['naive_rounds']} | {p['naive_tests']} | {p['followup_tests']} | "
            f"{len(p['bad_confirmed'])}/{len(p['bad_injected'])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, action="append", help="node count (repeatable; default 8 64 512 4096)")
    ap.add_argument("--jobs", type=int, default=2, help="parser processes of the parallel runs (1-process runs too)")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--keep", type=Path, help="copy each generated evidence folder here")
    ap.add_argument("--json", type=Path, help="write the raw results here")
    ap.add_argument("--ref", action="append", default=[], metavar="NAME=COMMIT",
                    help="also time the code of this commit (or of a folder holding its clusterctl, plugins and "
                         "bench), frozen, beside today's (repeatable)")
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(run_one(a.one, a.jobs, a.keep)))
        return 0
    with tempfile.TemporaryDirectory(prefix="clusterctl-bench-ref-") as tmp:
        codes = [(name, frozen_tree(ref, Path(tmp) / name) / "bench" / "bench_analysis.py")
                 for name, ref in (r.split("=", 1) for r in a.ref)]
        return _main_runs(a, [*codes, ("today", Path(__file__))])


def _main_runs(a: argparse.Namespace, codes: list[tuple[str, Path]]) -> int:
    """Each N with each code (the frozen references first, today's last), in a fresh process each."""
    rows: list[dict[str, Any]] = []
    for n in a.n or [8, 64, 512, 4096]:
        for code, script in codes:
            r = _run_code(a, n, code, script)
            if r is None:
                return 1
            rows.append(r)
    today = [r for r in rows if r["code"] == "today"]
    print(table(today))
    print()
    print(speed_table(rows))
    print()
    print(format_table(today))
    if len(codes) > 1:
        print()
        print(ratio_table(rows))
    skipped = sorted({k for r in today for k in r["kinds_skipped"]})
    if skipped:
        print(f"\nnot scored (no parser or check registered yet): {', '.join(skipped)}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    ok = all(r["precision"] == 1.0 and r["recall"] == 1.0 for r in rows)
    return 0 if ok else 1


def _run_code(a: argparse.Namespace, n: int, code: str, script: Path) -> dict[str, Any] | None:
    cmd = [sys.executable, str(script), "--one", str(n), "--jobs", str(a.jobs)]
    if a.keep and code == "today":
        cmd += ["--keep", str(a.keep)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        return None
    r: dict[str, Any] = {**json.loads(res.stdout.strip().splitlines()[-1]), "code": code}
    print(f"N={n} [{code}]: raw {r['raw_j1_s']}s / {r['raw_jN_s']}s ({a.jobs} procs), pre-parsed {r['pre_j1_s']}s / "
          f"{r['pre_jN_s']}s, load {r['load1']}, peak {r['peak_rss_mib']} MiB, found {r['found']}/{r['faults']}, "
          f"invented {r['invented_count']}, precision {r['precision']:.2f} recall {r['recall']:.2f}",
          file=sys.stderr)
    if r["missed"] or r["invented_count"]:
        print(json.dumps({"missed": r["missed"], "invented": r["invented_examples"]}, indent=1), file=sys.stderr)
    return r


if __name__ == "__main__":
    sys.exit(main())
