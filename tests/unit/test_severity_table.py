"""The one severity table (clusterctl/analysis/severity.yml, issue 29): rendered doc current, every
check's findings covered by a rule, every rule used by a check sourced."""

from __future__ import annotations

import re
from pathlib import Path

from clusterctl.analysis import severity

REPO = Path(__file__).resolve().parents[2]
CHECK_SOURCES = [*sorted((REPO / "clusterctl" / "analysis" / "checks").glob("*.py")),
    REPO / "clusterctl" / "analysis" / "engine.py"]


def test_rendered_doc_is_current() -> None:
    assert (REPO / "docs" / "severity.md").read_text() == severity.render(), \
        "run: python -m clusterctl.analysis.severity"


def test_every_rule_has_severity_and_source() -> None:
    for rid, r in severity.rules().items():
        assert re.fullmatch(r"[a-z_0-9]+\.[a-z_0-9]+", rid), rid
        assert r["severity"] in ("failed", "degraded", "note"), rid
        assert str(r.get("source") or "").strip(), f"{rid}: no source"


def test_every_check_id_has_a_rule_and_every_sev_call_names_one() -> None:
    families = {rid.split(".")[0] for rid in severity.rules()}
    for path in CHECK_SOURCES:
        text = path.read_text()
        for check in re.findall(r'Finding\(\s*[a-z_.]+,\s*"([a-z_0-9]+)"', text):
            if check in ("parse", "evidence", "coverage"):
                continue  # not verdicts: what could not be read
            assert check in families, f"{path.name}: check {check!r} has no rule in severity.yml"
        for rid in re.findall(r'rule_sev\(\s*"([a-z_0-9.]+)"', text):
            assert rid in severity.rules(), f"{path.name}: rule {rid!r} not in severity.yml"


def test_severity_words_map_to_finding_severities() -> None:
    assert severity.sev("dcgmi_diag.all_skipped") == "warning"
    assert severity.sev("gpu_row_remap.pending") == "critical"
    assert severity.sev("gpu_ecc.aggregate_handled") == "info"
