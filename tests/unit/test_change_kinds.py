"""Change kinds are declared by tags on the tasks and handlers themselves; the rollout reads them
through ansible-runner's ``task_path`` and never looks at names."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from clusterctl import change_kinds
from clusterctl.change_kinds import KINDS, UnknownKindError, declared, kinds_at
from clusterctl.rollout import disruptive_hosts
from clusterctl.runner import Change, run_playbook

REPO = Path(__file__).resolve().parents[2]
ROLE_FILES = sorted(p for d in ("tasks", "handlers") for p in REPO.glob(f"roles/*/{d}/*.yml"))


def at(path: Path, name: str) -> Change:
    """The Change ansible-runner reports for the task called ``name`` in ``path`` (FILE:LINE)."""
    lines = path.read_text().splitlines()
    (n,) = [i + 1 for i, ln in enumerate(lines) if re.fullmatch(r"\s*- name: " + re.escape(name), ln)]
    return Change(name, f"{path}:{n}")


def test_every_kind_tag_of_the_roles_is_in_the_vocabulary() -> None:
    found: set[str] = set()
    for f in [*ROLE_FILES, *REPO.glob("playbooks/*.yml")]:
        for t in declared(f):  # raises UnknownKindError on a clusterctl_* typo
            found |= t.kinds
    assert found == {"clusterctl_disrupts_jobs", "clusterctl_restarts_slurmd", "clusterctl_reboots"}


def _restarts(task: dict[str, object]) -> str | None:
    for key in ("ansible.builtin.systemd_service", "ansible.builtin.systemd", "ansible.builtin.service"):
        args = task.get(key)
        if isinstance(args, dict) and args.get("state") == "restarted":
            return str(args.get("name"))
    return None


def test_each_restart_of_a_compute_service_declares_a_kind() -> None:
    """Found by what the task does (a restart of slurmd, the RDMA driver, networkd, a mount unit),
    not by its name: each such task or handler carries a kind, so the rollout drains for it."""
    import yaml

    seen = []
    for f in ROLE_FILES:
        for task in yaml.safe_load(f.read_text()) or []:
            service = _restarts(task)
            if service is None or service in ("munge", "slurmctld", "mariadb", "slurmdbd", "prometheus-node-exporter",
                                              "prometheus", "prometheus-alertmanager",
                                              "clusterctl-remediate.timer", "clusterctl-slurm-textfile.timer"):
                continue  # controller-side or monitoring daemons, or no restart: jobs on compute nodes keep running
            seen.append(service)
            assert set(task.get("tags", [])) & KINDS.keys(), f"{f}: {task['name']}"
    # slurmd: slurm_common, slurm_compute and containers (a new pyxis)
    assert sorted(seen) == sorted(["slurmd", "slurmd", "slurmd", "systemd-networkd", "openibd", "{{ __juicefs_unit }}"])


def test_renamed_handler_still_drains(tmp_path: Path) -> None:
    """slurm_common's slurmd restart handler, renamed: the plan names the new name, still drains."""
    src = REPO / "roles" / "slurm_common" / "handlers" / "main.yml"
    before = disruptive_hosts({"n1": [at(src, "Restart slurmd")]})
    assert [str(d) for d in before["n1"]] == ["Restart slurmd (clusterctl_restarts_slurmd)"]
    renamed = tmp_path / "handlers" / "main.yml"
    renamed.parent.mkdir()
    renamed.write_text(src.read_text().replace("- name: Restart slurmd\n", "- name: Bounce the node daemon\n"))
    got = disruptive_hosts({"n1": [at(renamed, "Bounce the node daemon"), at(renamed, "Reconfigure Slurm")],
                            "n2": [at(renamed, "Reconfigure Slurm")]})
    assert list(got) == ["n1"]
    assert [(d.task, d.kinds) for d in got["n1"]] == [("Bounce the node daemon",
                                                       frozenset({"clusterctl_restarts_slurmd"}))]


def test_block_tags_are_inherited_and_typos_refused(tmp_path: Path) -> None:
    f = tmp_path / "tasks.yml"
    f.write_text("---\n- name: Outer\n  tags: [clusterctl_reboots, other]\n  block:\n"
                 "    - name: Inner\n      ansible.builtin.debug: {msg: x}\n"
                 "- name: Plain\n  ansible.builtin.debug: {msg: y}\n")
    assert kinds_at(f"{f}:5") == {"clusterctl_reboots"}
    assert kinds_at(f"{f}:7") == frozenset()
    assert kinds_at(f"{tmp_path}/missing.yml:3") == frozenset() and kinds_at("") == frozenset()
    bad = tmp_path / "bad.yml"
    bad.write_text("---\n- name: Reboot\n  ansible.builtin.reboot:\n  tags: [clusterctl_reboot]\n")
    with pytest.raises(UnknownKindError, match=r"bad.yml:2: tags: clusterctl_reboot: not a change kind"):
        kinds_at(f"{bad}:2")


PLAYBOOK = """---
- name: A component whose handler is renamed
  hosts: all
  gather_facts: false
  tags: [slurm]
  tasks:
    - name: Render a setting
      ansible.builtin.debug: {msg: setting}
      changed_when: true
      notify: node daemon restart
    - name: Tune in place
      ansible.builtin.debug: {msg: in place}
      changed_when: true
  handlers:
    - name: HANDLER
      ansible.builtin.debug: {msg: restart}
      changed_when: true
      listen: node daemon restart
      tags: [clusterctl_restarts_slurmd]
"""


@pytest.mark.parametrize("handler", ["Bounce the node daemon"])
def test_real_check_mode_run_reports_declared_kinds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   handler: str) -> None:
    """ansible-runner (local connection, check mode, --tags slurm as reconfigure runs it): the
    changed handler arrives with its task_path, whatever it is called, and drains."""
    if shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("ansible-playbook is not installed next to this python")
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    change_kinds._declared.cache_clear()
    pb = tmp_path / "pb.yml"
    pb.write_text(PLAYBOOK.replace("HANDLER", handler))
    inv = tmp_path / "inv"
    inv.mkdir()
    (inv / "hosts.yml").write_text(f"all:\n  hosts:\n    n1:\n      ansible_connection: local\n"
                                   f"      ansible_python_interpreter: {sys.executable}\n")
    res = run_playbook(str(pb), inv, tags="slurm", check=True, diff=True, label="plan")
    assert res.rc == 0, res.failed_hosts
    assert res.changes == {"n1": ["Render a setting", "Tune in place", handler]}
    got = disruptive_hosts(res.changed_at)
    assert [str(d) for d in got["n1"]] == [f"{handler} (clusterctl_restarts_slurmd)"]
