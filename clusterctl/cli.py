"""Entry point: importing the command modules registers every command on the app."""

from __future__ import annotations

import importlib
import os
import pkgutil

from clusterctl import commands, paths

# clusterctl's own Ansible configuration for everything it runs, in this process (reading an
# inventory) and in ansible-playbook (clusterctl.runner.ansible_env): an ansible.cfg in the current
# folder, or $ANSIBLE_CONFIG, must not load plugins or change how an inventory is read. Set before any
# command imports ansible (ansible.constants reads the configuration once, when first imported).
os.environ["ANSIBLE_CONFIG"] = str(paths.data_root() / "ansible.cfg")
from clusterctl.app import app

for _info in pkgutil.iter_modules(commands.__path__):
    importlib.import_module(f"{commands.__name__}.{_info.name}")

__all__ = ["app"]

if __name__ == "__main__":  # pragma: no cover
    app()
