"""roles/monitoring's TLS and basic auth (issue 26): the web config file the role writes, the daemons'
``--web.config.file`` and Prometheus' https/basic_auth scrapes, rendered from the role's own templates,
vars and filters and checked by Prometheus' own tools (``promtool check web-config`` with a real
certificate made here, ``promtool check config``). Passwords: only bcrypt hashes in any rendered file, the
same hash on a second run, never a password in a validation message."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import bcrypt
import pytest
import yaml
from test_monitoring_role import ROLE, render

from plugins.filter.tokens import problems
from plugins.filter.web_users import web_user_problems, web_users

PROMTOOL = shutil.which("promtool")
OPENSSL = shutil.which("openssl")
PASSWORD = "n0t-in-any-file"
USERS = [{"name": "prometheus", "password": PASSWORD}, {"name": "grafana", "password": "another one!"}]
ON: dict[str, Any] = {"monitoring_tls_cert_file": "/etc/ssl/clusterctl/monitoring.crt",
                      "monitoring_tls_key_file": "/etc/ssl/clusterctl/monitoring.key",
                      "monitoring_tls_ca_file": "/etc/ssl/clusterctl/ca.crt",
                      "monitoring_basic_auth_users": USERS, "monitoring_scrape_user": "prometheus",
                      "monitoring_alertmanager": True}
DAEMONS = ("node-exporter.default.j2", "prometheus.default.j2", "alertmanager.default.j2")


def test_off_by_default_nothing_changes() -> None:
    for t in DAEMONS:
        assert "--web.config.file" not in render(t), t
    job = yaml.safe_load(render("prometheus.yml.j2", monitoring_alertmanager=True))
    assert "scheme" not in job["scrape_configs"][0] and "basic_auth" not in job["scrape_configs"][0]
    assert set(job["alerting"]["alertmanagers"][0]) == {"static_configs"}


def test_a_site_web_config_file_still_works() -> None:
    for t in DAEMONS:
        assert "--web.config.file=/etc/site/web.yml" in render(t, monitoring_web_config_file="/etc/site/web.yml"), t
    job = yaml.safe_load(render("prometheus.yml.j2", monitoring_web_config_file="/etc/site/web.yml"))
    assert job["scrape_configs"][0]["scheme"] == "https"


def test_tls_and_basic_auth_on_every_daemon_and_scrape() -> None:
    for t in DAEMONS:
        assert "--web.config.file=/etc/prometheus/clusterctl-web.yml" in render(t, **ON), t
    cfg = yaml.safe_load(render("prometheus.yml.j2", **ON))
    want = {"scheme": "https", "tls_config": {"ca_file": ON["monitoring_tls_ca_file"]},
            "basic_auth": {"username": "prometheus", "password_file": "/etc/prometheus/clusterctl-scrape-password"}}
    job = cfg["scrape_configs"][0]
    assert {k: job[k] for k in want} == want
    am = cfg["alerting"]["alertmanagers"][0]
    assert {k: am[k] for k in want} == want
    # basic auth alone: http with basic_auth; TLS alone: https without
    cfg = yaml.safe_load(render("prometheus.yml.j2", monitoring_basic_auth_users=USERS,
                                monitoring_scrape_user="prometheus"))
    job = cfg["scrape_configs"][0]
    assert "scheme" not in job and job["basic_auth"]["username"] == "prometheus"
    cfg = yaml.safe_load(render("prometheus.yml.j2", monitoring_tls_cert_file="/c", monitoring_tls_key_file="/k"))
    assert cfg["scrape_configs"][0]["scheme"] == "https" and "basic_auth" not in cfg["scrape_configs"][0]


def test_web_config_holds_hashes_only_and_is_stable() -> None:
    text = render("web-config.yml.j2", **ON)
    doc = yaml.safe_load(text)
    assert doc["tls_server_config"] == {"cert_file": ON["monitoring_tls_cert_file"],
                                        "key_file": ON["monitoring_tls_key_file"]}
    assert set(doc["basic_auth_users"]) == {"prometheus", "grafana"}
    for user in USERS:
        h = doc["basic_auth_users"][user["name"]]
        assert h.startswith("$2b$10$") and bcrypt.checkpw(user["password"].encode(), h.encode())
    everything = "".join(render(t, **ON) for t in (*DAEMONS, "prometheus.yml.j2", "web-config.yml.j2"))
    assert PASSWORD not in everything and "another one!" not in everything
    # a second run writes the same file; another host gets another salt; a new password a new hash
    assert render("web-config.yml.j2", **ON) == text
    other = yaml.safe_load(render("web-config.yml.j2", **ON, inventory_hostname="gpu01"))["basic_auth_users"]
    assert other["prometheus"] != doc["basic_auth_users"]["prometheus"]
    new = web_users([{"name": "prometheus", "password": "changed"}], "ctl01")["prometheus"]
    assert new != doc["basic_auth_users"]["prometheus"] and bcrypt.checkpw(b"changed", new.encode())


@pytest.mark.skipif(PROMTOOL is None or OPENSSL is None, reason="promtool or openssl missing (scripts/setup.sh)")
def test_promtool_accepts_the_web_config_and_the_scrape_config(tmp_path: Path) -> None:
    assert PROMTOOL is not None and OPENSSL is not None
    crt, key = tmp_path / "monitoring.crt", tmp_path / "monitoring.key"
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-subj", "/CN=ctl01", "-days", "2", "-keyout", str(key), "-out", str(crt)],
                   check=True, capture_output=True, timeout=60)
    on = {**ON, "monitoring_tls_cert_file": str(crt), "monitoring_tls_key_file": str(key),
          "monitoring_tls_ca_file": str(crt)}
    (tmp_path / "web.yml").write_text(render("web-config.yml.j2", **on))
    r = subprocess.run([PROMTOOL, "check", "web-config", str(tmp_path / "web.yml")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    (tmp_path / "bad.yml").write_text(render("web-config.yml.j2", **{**on, "monitoring_tls_key_file": "/none.key"}))
    bad = subprocess.run([PROMTOOL, "check", "web-config", str(tmp_path / "bad.yml")], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode != 0  # the check can fail: a key file that is not there is refused
    (tmp_path / "prometheus.yml").write_text(render("prometheus.yml.j2", **on))
    r = subprocess.run([PROMTOOL, "check", "config", "--syntax-only", str(tmp_path / "prometheus.yml")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_bad_users_are_named_without_their_passwords() -> None:
    assert web_user_problems(USERS, "prometheus") == []
    assert web_user_problems([], "") == []
    bad = web_user_problems([{"name": "9lives", "password": " " + PASSWORD},
                             {"name": "ok", "password": "x" * 73},
                             {"name": "ok", "password": PASSWORD + "\n"},
                             {"name": "nopw"}, "just-a-string"], "nobody")
    text = "; ".join(bad)
    assert PASSWORD not in text and "x" * 73 not in text
    for piece in ("monitoring_basic_auth_users[0].name='9lives'", "monitoring_basic_auth_users[0].password=(hidden)",
                  "monitoring_basic_auth_users[1].password=(hidden): longer than 72 bytes",
                  "monitoring_basic_auth_users[2].name='ok': given twice",
                  "monitoring_basic_auth_users[3].password: missing", "monitoring_basic_auth_users[4]=",
                  "monitoring_scrape_user='nobody': must be one of"):
        assert piece in text, piece
    assert web_user_problems(USERS, "") == [
        "monitoring_scrape_user='': required with monitoring_basic_auth_users (one of their names)"]
    assert web_user_problems("prometheus:pw", "")[0].startswith("monitoring_basic_auth_users='prometheus:pw'")


def test_token_rules_for_the_new_keys() -> None:
    assert problems("monitoring_tls_cert_file", "certs/relative.pem")
    assert problems("monitoring_tls_key_file", "/etc/ssl/key.pem --web.enable-admin-api")
    assert not problems("monitoring_tls_ca_file", "")
    assert problems("monitoring_basic_auth_users", [{"name": "bad name", "password": "any thing ' $ goes"}])
    assert not problems("monitoring_basic_auth_users", [{"name": "prometheus", "password": "any thing ' $ goes"}])


def test_the_tasks_that_see_passwords_run_with_no_log() -> None:
    tasks = [t for f in ("main.yml", "prometheus.yml") for t in yaml.safe_load((ROLE / "tasks" / f).read_text())]
    seeing = [t for t in tasks if ("password" in yaml.safe_dump(t) and "ansible.builtin.file" not in t)
              or "web-config.yml.j2" in yaml.safe_dump(t)]
    assert len(seeing) >= 2
    assert all(t.get("no_log") is True for t in seeing), [t["name"] for t in seeing if t.get("no_log") is not True]


def test_validate_never_shows_a_password_of_a_misspelt_key() -> None:
    from clusterctl.inventory import role_vars

    got = role_vars.check("group_vars/all/m.yml", "monitoring_basic_auth_users",
                          [{"name": "prometheus", "pasword": "sekrit-typo-pw"}])
    assert got and all("sekrit-typo-pw" not in str(p) for p in got), [str(p) for p in got]
    assert any("did you mean 'password'" in str(p) for p in got)
