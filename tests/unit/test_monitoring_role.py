"""Issue 26 item 2 (fast tier): roles/monitoring renders a Prometheus configuration that Prometheus'
own checker accepts (``promtool check config``), scrapes every node of the scrape groups on its
inventory address (never 0.0.0.0), and sends alerts to Alertmanager only when asked. The lab run
(check mode, idempotence, real scrapes) is item 5 and not here."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

from plugins.filter.tokens import problems
from plugins.filter.web_users import web_users

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "monitoring"
PROMTOOL = shutil.which("promtool")
#: the internals of vars/main.yml the templates read, rendered from the role's expressions
INTERNALS = ("__monitoring_web_managed", "__monitoring_web_config", "__monitoring_https",
             "__monitoring_scrape_password_file")


def _unique(seq: list[Any]) -> list[Any]:
    return list(dict.fromkeys(seq))


def _flatten(seq: list[Any]) -> list[Any]:
    return [x for s in seq for x in (s if isinstance(s, list) else [s])]


def _bool(v: Any) -> bool:
    """Ansible's bool filter: the strings an expression renders to ('False') are booleans too."""
    return v if isinstance(v, bool) else str(v).strip().lower() in ("1", "true", "yes", "on")


def render(name: str, **over: Any) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(ROLE / "templates"), trim_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters.update(extract=lambda k, d: d[k] if k in d else jinja2.Undefined(name=k), flatten=_flatten,
                       unique=_unique, bool=_bool)
    groups = {"slurm_controller": ["ctl01"], "slurm_compute": ["gpu02", "gpu01"], "storage": ["nfs01"]}
    hostvars = {"ctl01": {"ansible_host": "10.0.0.1"}, "gpu01": {"ansible_host": "10.0.1.1"},
                "gpu02": {"ansible_host": "10.0.1.2", "monitoring_node_exporter_listen_address": "192.168.5.2",
                          "monitoring_node_exporter_port": 9200}}
    env.filters["clusterctl.hpc.web_users"] = web_users
    values = {**yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()), "ansible_managed": "managed",
              "groups": groups, "hostvars": hostvars, "__monitoring_address": "10.0.0.1",
              "inventory_hostname": "ctl01", **over}
    internals = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())
    for key in INTERNALS:  # vars/main.yml's own expressions, in their order
        if key not in over:
            values[key] = env.from_string(str(internals[key])).render(**values).strip()
    return env.get_template(name).render(**values)


def test_scrape_targets_follow_the_inventory() -> None:
    cfg = yaml.safe_load(render("prometheus.yml.j2"))
    (job,) = cfg["scrape_configs"]
    targets = [t for sc in job["static_configs"] for t in sc["targets"]]
    assert targets == ["10.0.0.1:9100", "10.0.1.1:9100", "192.168.5.2:9200"]  # storage is no scrape group
    assert "alerting" not in cfg and cfg["rule_files"] == ["/etc/prometheus/clusterctl-alerts.rules.yml"]
    cfg = yaml.safe_load(render("prometheus.yml.j2", monitoring_alertmanager=True))
    assert cfg["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] == ["10.0.0.1:9093"]


def test_nothing_listens_on_every_address_unless_asked() -> None:
    assert "--web.listen-address=10.0.0.1:9100 " in render("node-exporter.default.j2")
    assert "--collector.infiniband" in render("node-exporter.default.j2")
    assert "0.0.0.0" not in render("node-exporter.default.j2") + render("prometheus.default.j2")
    assert "--web.listen-address=0.0.0.0:9100" in render("node-exporter.default.j2",
                                                         monitoring_node_exporter_listen_address="0.0.0.0")
    assert "--storage.tsdb.retention.time=30d" in render("prometheus.default.j2", monitoring_prometheus_retention="30d")


def test_token_rules_refuse_hostile_values() -> None:
    assert problems("monitoring_node_exporter_listen_address", "1.2.3.4 --web.enable-admin-api")
    assert problems("monitoring_textfile_dir", "relative/dir")
    assert not problems("monitoring_node_exporter_listen_address", "")
    assert problems("monitoring_scrape_groups", ["ok", "bad group"])


@pytest.mark.skipif(PROMTOOL is None, reason="promtool missing: apt-get install prometheus (scripts/setup.sh)")
@pytest.mark.parametrize("alertmanager", [False, True])
def test_promtool_accepts_the_rendered_config(tmp_path: Path, alertmanager: bool) -> None:
    assert PROMTOOL is not None
    (tmp_path / "prometheus.yml").write_text(render("prometheus.yml.j2", monitoring_alertmanager=alertmanager))
    r = subprocess.run([PROMTOOL, "check", "config", "--syntax-only", str(tmp_path / "prometheus.yml")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    (tmp_path / "bad.yml").write_text(render("prometheus.yml.j2") + "  - job_name: node\n")  # duplicate job
    r = subprocess.run([PROMTOOL, "check", "config", "--syntax-only", str(tmp_path / "bad.yml")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0


def test_clusterctl_validate_refuses_a_hostile_listen_address(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from clusterctl.cli import app

    inv = tmp_path / "inv"
    shutil.copytree(REPO / "inventories" / "lab", inv)
    f = inv / "group_vars" / "all" / "monitoring.yml"
    f.write_text('monitoring_node_exporter_listen_address: "1.2.3.4 --web.enable-admin-api"\n')
    r = CliRunner().invoke(app, ["validate", str(inv)])
    assert r.exit_code == 2 and "monitoring_node_exporter_listen_address" in r.output, r.output
    f.write_text('monitoring_node_exporter_listen_address: "10.0.0.5"\nmonitoring_scrape_groups: [slurm_compute]\n')
    assert CliRunner().invoke(app, ["validate", str(inv)]).exit_code == 0
