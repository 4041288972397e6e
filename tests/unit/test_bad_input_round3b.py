"""Bad input, round 3 (issue 28), classes 1, 3 and 9 (this file; class 10: test_interrupted_runs.py).

* class 3: an ``ansible.cfg`` in the current folder (or $ANSIBLE_CONFIG) is not read: clusterctl pins
  its own configuration, so such a file cannot load an inventory plugin while ``validate`` reads.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

_EVIL_PLUGIN = '''from pathlib import Path
Path(__file__).resolve().parent.parent.joinpath("PLUGIN-RAN").write_text("x")
from ansible.plugins.inventory import BaseInventoryPlugin
class InventoryModule(BaseInventoryPlugin):
    NAME = "evil"
    def verify_file(self, path):
        return False
'''


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    dest = tmp_path / "inv"
    shutil.copytree(REPO / "inventories" / "lab", dest)
    return dest


def _clusterctl(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "plugins" / "module_utils")]), **env}
    return subprocess.run([sys.executable, "-m", "clusterctl.cli", *args], cwd=cwd, env=full, text=True,
                          capture_output=True, timeout=120, check=False)


@pytest.mark.parametrize("how", ["current folder", "ANSIBLE_CONFIG"])
def test_foreign_ansible_cfg_loads_no_plugin_during_validate(lab: Path, tmp_path: Path, how: str) -> None:
    work = tmp_path / "work"
    (work / "inv_plugins").mkdir(parents=True)
    (work / "inv_plugins" / "evil.py").write_text(_EVIL_PLUGIN)
    cfg = work / "ansible.cfg"
    cfg.write_text(f"[defaults]\ninventory_plugins = {work / 'inv_plugins'}\n"
                   "[inventory]\nenable_plugins = evil, yaml, ini\n")
    env = {"ANSIBLE_CONFIG": str(cfg)} if how == "ANSIBLE_CONFIG" else {}
    r = _clusterctl(["validate", str(lab)], cwd=work if how == "current folder" else tmp_path, **env)
    assert not (work / "PLUGIN-RAN").exists(), "a plugin named by a foreign ansible.cfg was loaded"
    assert r.returncode == 0, r.stdout + r.stderr
