"""Issue 28 class 6 in the roles' own input checks: a plain ansible-playbook run (no clusterctl
validate) refuses a system mountpoint, one mountpoint twice (``/data/`` is ``/data``, also across
``storage_mounts`` and an explicit ``juicefs_volumes``) and one name twice, naming key and value, in
the role's validate tasks, before anything is written. The rules are the ones clusterctl validate
applies (``plugins/filter/tokens.py``); the cases are those of tests/bad_inventories."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterctl import collection

REPO = Path(__file__).resolve().parents[2]
BAD = REPO / "tests" / "bad_inventories"
#: case -> the role whose input check must refuse it
CASES = {"mountpoint-system-etc": "lustre_client", "mountpoint-under-proc": "lustre_client",
         "mountpoint-twice-trailing-slash": "lustre_client", "mount-name-twice": "lustre_client",
         "mountpoint-storage-and-juicefs": "juicefs"}


def _case_vars(case: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in sorted((BAD / case / "group_vars" / "all").glob("*.yml")):
        data = yaml.safe_load(f.read_text()) or {}
        out.update({k: v for k, v in data.items() if k in ("storage_mounts", "juicefs_volumes")})
    return out


def _expect(case: str) -> dict[str, str]:
    return dict(ln.split(": ", 1) for ln in (BAD / case / "EXPECT.txt").read_text().splitlines())


@pytest.mark.skipif(shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) is None,
                    reason="ansible-playbook is not installed next to this python")
def test_storage_roles_refuse_what_validate_refuses(tmp_path: Path) -> None:
    hosts: dict[str, Any] = {"ok": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                    "case_role": "lustre_client", "storage_mounts": [
                                        {"type": "lustre", "name": "scratch", "mountpoint": "/mnt/scratch",
                                         "mgs": "10.0.0.2@o2ib", "fsname": "scratch"},
                                        {"type": "lustre", "name": "data", "mountpoint": "/data",
                                         "mgs": "10.0.0.2@o2ib", "fsname": "data"}]}}
    for i, (case, role) in enumerate(CASES.items()):
        hosts[f"h{i}"] = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                          "case_role": role, **_case_vars(case)}
    tasks = [{"name": f"Input check of {role}", "ansible.builtin.include_role":
              {"name": f"clusterctl.hpc.{role}", "tasks_from": "validate"}, "when": f"case_role == '{role}'"}
             for role in sorted(set(CASES.values()))]
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    (tmp_path / "play.yml").write_text(yaml.safe_dump([{"name": "checks", "hosts": "all", "gather_facts": False,
                                                         "tasks": tasks}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), **collection.ansible_env(),
               ANSIBLE_GATHERING="explicit", ANSIBLE_STDOUT_CALLBACK="default", ANSIBLE_CALLBACK_RESULT_FORMAT="json",
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    p = subprocess.run(["ansible-playbook", "-i", str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml")],
                       env=env, capture_output=True, text=True, check=False, cwd=tmp_path)
    out = p.stdout
    for i, case in enumerate(CASES):
        exp = _expect(case)
        failed = re.search(rf"fatal: \[h{i}\]: FAILED! => (.*)", out)
        assert failed, (case, out[-3000:])
        msg = failed.group(1)
        field = exp["key"].rsplit(".", 1)[1]  # mountpoint or name
        assert f"].{field}: " in msg and repr(exp["value"]) in msg.replace('\\"', '"'), (case, msg)
        assert "Check mountpoints and names" in out
    # the healthy host passes this check (it may stop later, at checks of variables it does not set)
    assert not re.search(r"fatal: \[ok\]: FAILED! => .*(system path|two mounts)", out), out[-3000:]
