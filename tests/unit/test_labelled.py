"""Every labelled real capture (tests/fixtures/labelled, copied from ../shared/fixtures/labelled) judged
through the production path of ``clusterctl analyze`` and scored as that folder's README says (issue 29).

A capture is put alone into a one-host evidence folder as ``<host>/<KIND>.txt`` and judged by
:func:`clusterctl.analysis.engine.analyze_dir`: ``set1/`` against the expectations of
``inventories/example-prod``, ``set2/`` with NO inventory (defaults only).

Scoring (labelled/README.md): expected ``failed`` needs status failed with a critical finding of a
real check (a parse or evidence warning is not a verdict); ``degraded`` needs degraded or failed with
a warning or critical finding of a real check; ``healthy`` needs status healthy.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from clusterctl.analysis import engine
from clusterctl.analysis.expectations import build, from_inventory

REPO = Path(__file__).resolve().parents[2]
LABELLED = REPO / "tests" / "fixtures" / "labelled"
#: manifest KIND -> the evidence KIND of ``analyze`` (README: syslog/ holds kernel-log captures)
KIND_ALIASES = {"syslog": "kernel-log"}
#: checks whose findings are not verdicts (they say what could not be read)
NOT_A_VERDICT = frozenset({"parse", "evidence", "coverage"})


def manifest(set_name: str) -> list[tuple[str, str, str]]:
    rows = []
    lines = (LABELLED / set_name / "manifest.tsv").read_text().splitlines()
    for line in lines[1:]:
        if not line.strip():
            continue
        cols = line.split("\t")
        expected = cols[2].split()[0]
        if "GPU-count finding is acceptable" in cols[2]:  # "healthy (a GPU-count finding is acceptable ...)"
            expected = "healthy-or-gpu-count"
        rows.append((cols[0], KIND_ALIASES.get(cols[1], cols[1]), expected))
    return rows


@functools.cache
def expectations(set_name: str) -> dict[str, Any]:
    return from_inventory(REPO / "inventories" / "example-prod") if set_name == "set1" else build(None)


def judge(set_name: str, rel: str, kind: str, tmp_path: Path) -> engine.HostReport:
    host = tmp_path / "n1"
    host.mkdir()
    (host / f"{kind}.txt").write_bytes((LABELLED / set_name / rel).read_bytes())
    report = engine.analyze_dir(tmp_path, expectations(set_name), jobs=1)
    return report.hosts["n1"]


def score(rep: engine.HostReport, expected: str) -> bool:
    real = [f for f in rep.findings if f.check not in NOT_A_VERDICT]
    if expected == "failed":
        return rep.status == "failed" and any(f.severity == "critical" for f in real)
    if expected == "degraded":
        return rep.status in ("degraded", "failed") and bool(real)
    if expected == "healthy-or-gpu-count":
        return all(f.check == "gpu_count" for f in rep.findings)
    return rep.status == "healthy"


#: today's misses, each named; removed one by one as the classes of issue 29 are fixed
KNOWN_MISSES: dict[str, str] = {
}

CASES = [(s, rel, kind, exp) for s in ("set1", "set2") for rel, kind, exp in manifest(s)]


def test_all_46_labelled_captures_are_listed() -> None:
    assert len(CASES) == 46


@pytest.mark.parametrize(
    ("set_name", "rel", "kind", "expected"),
    [pytest.param(*c, id=f"{c[0]}/{c[1]}",
                  marks=[pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[f"{c[0]}/{c[1]}"])]
                  if f"{c[0]}/{c[1]}" in KNOWN_MISSES else []) for c in CASES])
def test_labelled_verdict(set_name: str, rel: str, kind: str, expected: str, tmp_path: Path) -> None:
    rep = judge(set_name, rel, kind, tmp_path)
    shown = "; ".join(f"{f.severity} {f.check} {f.subject}: {f.message[:160]}" for f in rep.findings)
    assert score(rep, expected), f"expected {expected}, got {rep.status}: {shown or 'no findings'}"
