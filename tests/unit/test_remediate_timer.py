"""The controller's timer for the node lifecycle loop (roles/slurm_controller, issue 25): the units as
rendered run `clusterctl remediate INVENTORY --once` with the role's limits (arguments the command
itself accepts), systemd takes them, and the role's input check refuses bad limits naming key and value;
the tasks run in check mode on this machine (enabled: would install; disabled: nothing to remove)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
import yaml

from clusterctl import collection

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "slurm_controller"


def _render(name: str, **over: object) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(ROLE / "templates"), undefined=jinja2.StrictUndefined)
    env.filters["float"] = float
    env.filters["int"] = int
    env.filters["bool"] = bool
    values = {**yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()), **over}
    return env.get_template(name).render(ansible_managed="Ansible managed", **values)


def test_service_runs_remediate_once_with_the_role_limits() -> None:
    text = _render("clusterctl-remediate.service.j2", slurm_controller_remediate_share=0.5,
                   slurm_controller_remediate_window=600, slurm_controller_remediate_reverify="node")
    [exec_start] = [ln for ln in text.splitlines() if ln.startswith("ExecStart=")]
    argv = shlex.split(exec_start.split("=", 1)[1])
    assert argv == ["/usr/local/bin/clusterctl", "remediate", "/etc/clusterctl/inventory", "--once",
                    "--share", "0.5", "--window", "600", "--reverify", "node", "--burn-in",
                    "--burn-in-level", "full"]
    assert "ConditionPathExists=/usr/local/bin/clusterctl" in text
    assert "ConditionPathExists=/etc/clusterctl/inventory" in text
    from clusterctl.errors import EXIT_BUSY

    # a run skipped because a provision or reconfigure holds the inventory's lock is no failed unit
    assert f"SuccessExitStatus={EXIT_BUSY}" in text.splitlines()
    # the command takes exactly these options (typer's own parser: --help of each would fail on a typo)
    from typer.main import get_command

    from clusterctl.cli import app

    params = {o for p in get_command(app).commands["remediate"].params for o in p.opts}  # type: ignore[attr-defined]
    assert {a for a in argv if a.startswith("--")} <= params
    off = _render("clusterctl-remediate.service.j2", slurm_controller_remediate_burn_in=False)
    assert "--no-burn-in" in off.split("ExecStart=", 1)[1].splitlines()[0]
    timer = _render("clusterctl-remediate.timer.j2", slurm_controller_remediate_interval=120)
    assert "OnUnitInactiveSec=120" in timer and "WantedBy=timers.target" in timer


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_takes_the_units(tmp_path: Path) -> None:
    for unit in ("service", "timer"):
        (tmp_path / f"clusterctl-remediate.{unit}").write_text(
            _render(f"clusterctl-remediate.{unit}.j2", slurm_controller_remediate_clusterctl="/bin/true"))
    p = subprocess.run(["systemd-analyze", "verify", "--man=no", str(tmp_path / "clusterctl-remediate.timer"),
                        str(tmp_path / "clusterctl-remediate.service")], capture_output=True, text=True, check=False,
                       env=dict(os.environ, SYSTEMD_LOG_LEVEL="warning"))
    bad = [ln for ln in (p.stdout + p.stderr).splitlines() if "clusterctl-remediate" in ln]
    assert not bad, bad


def test_role_checks_the_limits_and_installs_in_check_mode(tmp_path: Path) -> None:
    good = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    hosts = {"ok": {**good}, "off": {**good, "slurm_controller_remediate_enabled": False},
             "share": {**good, "slurm_controller_remediate_share": 1.5},
             "every": {**good, "slurm_controller_remediate_interval": 5},
             "how": {**good, "slurm_controller_remediate_reverify": "full"}}
    # the role's defaults as the lowest inventory level (play vars would win over the host's values)
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {
        "vars": {**defaults, "slurm_common_controller_group": "slurm_controller"},
        "children": {"slurm_controller": {"hosts": hosts}}}}))
    (tmp_path / "templates").symlink_to(ROLE / "templates")  # the playbook's templates: the role's
    play = [{"name": "remediate timer", "hosts": "all", "gather_facts": False,
             "tasks": [{"name": "Input check", "ansible.builtin.include_tasks": str(ROLE / "tasks" / "validate.yml")},
                       {"name": "Units", "ansible.builtin.include_tasks": str(ROLE / "tasks" / "remediate.yml")}]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), **collection.ansible_env(),
               ANSIBLE_GATHERING="explicit", ANSIBLE_STDOUT_CALLBACK="default", ANSIBLE_CALLBACK_RESULT_FORMAT="json",
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    p = subprocess.run(["ansible-playbook", "--check", "-i", str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml")],
                       env=env, capture_output=True, text=True, check=False, cwd=tmp_path)
    out = p.stdout
    assert p.returncode == 2, out[-3000:] + p.stderr[-2000:]
    refused = {"share": "slurm_controller_remediate_share=1.5", "every": "slurm_controller_remediate_interval=5",
               "how": "slurm_controller_remediate_reverify=full"}
    for host, words in refused.items():
        failed = re.search(rf"fatal: \[{host}\]: FAILED! => (.*)", out)
        assert failed and words in failed.group(1), (host, out[-3000:])
    assert re.search(r"ok\s*:\s*ok=\d+\s+changed=[12]\s+unreachable=0\s+failed=0", out), out[-2000:]
    assert re.search(r"off\s*:\s*ok=\d+\s+changed=0\s+unreachable=0\s+failed=0", out), out[-2000:]
