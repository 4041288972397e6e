"""Issue 26: the alert rules shipped in roles/monitoring/files are valid Prometheus rules
(``promtool check rules``) and each alert fires on its input series and only there
(``promtool test rules`` on tests/promtool/clusterctl-alerts.test.yml). Without promtool (Debian
package ``prometheus``, installed by scripts/setup.sh) the promtool tests skip with the reason."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from clusterctl.report.prom import FAMILIES

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "roles" / "monitoring" / "files" / "clusterctl-alerts.rules.yml"
RULE_TESTS = REPO / "tests" / "promtool" / "clusterctl-alerts.test.yml"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool missing: apt-get install prometheus "
                                                             "(scripts/setup.sh installs it)")


def _promtool(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def _alerts() -> dict[str, str]:
    doc = yaml.safe_load(RULES.read_text())
    return {r["alert"]: r["expr"] for g in doc["groups"] for r in g["rules"] if "alert" in r}


@needs_promtool
def test_promtool_check_rules() -> None:
    r = _promtool("check", "rules", str(RULES))
    assert r.returncode == 0, r.stdout + r.stderr


@needs_promtool
def test_promtool_test_rules() -> None:
    r = _promtool("test", "rules", str(RULE_TESTS))
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_alert_has_a_test_that_fires_it() -> None:
    doc = yaml.safe_load(RULE_TESTS.read_text())
    fired = {t["alertname"] for case in doc["tests"] for t in case.get("alert_rule_test", ()) if t.get("exp_alerts")}
    assert sorted(set(_alerts()) - fired) == []
    assert sorted(fired - set(_alerts())) == []


def test_clusterctl_metrics_in_rules_are_written() -> None:
    """A rule on a clusterctl_* name clusterctl/report/prom.py does not write would never fire."""
    used = {m for expr in _alerts().values() for m in re.findall(r"\bclusterctl_[a-z_]+", expr)}
    assert used and sorted(used - set(FAMILIES)) == []


@needs_promtool
def test_promtool_test_rules_can_fail(tmp_path: Path) -> None:
    """A rule whose threshold moved (stale after a week, not a day) fails its unit test."""
    (tmp_path / "rules.yml").write_text(RULES.read_text().replace("> 86400", "> 604800"))
    tests = yaml.safe_load(RULE_TESTS.read_text())
    tests["rule_files"] = ["rules.yml"]
    (tmp_path / "t.yml").write_text(yaml.safe_dump(tests))
    r = _promtool("test", "rules", "t.yml", cwd=tmp_path)
    assert r.returncode != 0 and "ClusterctlVerifyStale" in r.stdout + r.stderr
