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


# --- every finding's severity comes from the table through severity.sev (issue 29, round 2) ---
import ast  # noqa: E402

SEVERITY_WORDS = {"critical", "warning", "info"}
RULE_SOURCES = [*CHECK_SOURCES, REPO / "clusterctl" / "analysis" / "stragglers.py"]
RULE_ID = re.compile(r"[a-z_0-9]+\.[a-z_0-9]+")


def _severity_literals(path: Path) -> list[str]:
    """Severity words written as string constants anywhere in a check module (docstrings are sentences)."""
    return [f"{path.name}:{n.lineno}: {n.value!r}" for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.Constant) and n.value in SEVERITY_WORDS]


def _rule_ids_used(path: Path) -> set[str]:
    """Rule ids passed to sev/rule_sev (literals, or literals of a conditional or a variable set from them)."""
    tree = ast.parse(path.read_text())
    families = {rid.split(".")[0] for rid in severity.rules()}
    used: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and RULE_ID.fullmatch(n.value) \
                and n.value.split(".")[0] in families | {"xid"}:
            used.add(n.value)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("rule_sev", "sev"):
            for value in _chosen(n.args[0]):
                assert RULE_ID.fullmatch(value), f"{path.name}:{n.lineno}: rule_sev({value!r})"
                used.add(value)
    return used


def _chosen(node: ast.expr) -> list[str]:
    """The string constants an argument can evaluate to (a literal, or either branch of a conditional)."""
    if isinstance(node, ast.Constant):
        return [str(node.value)]
    if isinstance(node, ast.IfExp):
        return _chosen(node.body) + _chosen(node.orelse)
    return []


def test_no_check_module_writes_a_severity_itself() -> None:
    found = [hit for p in sorted((REPO / "clusterctl" / "analysis" / "checks").glob("*.py"))
             for hit in _severity_literals(p)]
    assert not found, "severity literals outside severity.yml (use rule_sev('<check>.<cause>')):\n" + "\n".join(found)


def test_every_finding_of_a_check_takes_its_severity_from_the_table() -> None:
    for p in sorted((REPO / "clusterctl" / "analysis" / "checks").glob("*.py")):
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Finding" \
                    and len(n.args) >= 3:
                arg = n.args[2]
                assert not isinstance(arg, ast.Constant), f"{p.name}:{n.lineno}: Finding severity {arg.value!r}"


def test_rule_ids_used_and_rules_in_the_table_are_the_same_set() -> None:
    used: set[str] = set()
    for p in RULE_SOURCES:
        used |= _rule_ids_used(p)
    catalog = (REPO / "clusterctl" / "analysis" / "checks" / "xid_catalog.yml").read_text()
    used |= set(re.findall(r"^  rule: (\S+)$", catalog, re.M))
    table = set(severity.rules())
    assert not used - table, f"rules used by the checks but not in severity.yml: {sorted(used - table)}"
    assert not table - used, f"rules in severity.yml no check uses: {sorted(table - used)}"


def test_the_doc_says_what_each_severity_demands_and_the_readme_points_to_it() -> None:
    doc = (REPO / "docs" / "severity.md").read_text()
    section = doc.split("## What each severity demands", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip(" *"): line for line in section.splitlines() if line.startswith("| **")}
    assert set(rows) == {"failed", "degraded", "note"}
    assert "drain now" in rows["failed"] and "must not run the next job" in rows["failed"]
    assert "slower or at risk" in rows["degraded"] and "no action" in rows["note"]
    readme = (REPO / "README.md").read_text()
    analyze = readme.split("### How `analyze` reads a capture", 1)[1].split("\n## ", 1)[0]
    assert "(docs/severity.md)" in analyze
