"""The lifecycle's state folder: ``<state dir>/lifecycle/`` of an inventory.

- ``nodes.json``: one :class:`~clusterctl.lifecycle.core.Record` per node (written atomically);
- ``actions.jsonl``: every action the loop took (or, with ``--dry-run``, would take), one JSON object
  a line: time, node, action, the Slurm reason set, the evidence, the outcome;
- ``acceptance.json``: the burn-in gate's acceptance records, per node and hardware identity;
- ``lock``: one loop at a time (the timer and a person running ``clusterctl remediate``).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clusterctl import paths
from clusterctl.errors import Busy, ClusterctlError
from clusterctl.lifecycle.core import Record

NODES = "nodes.json"
ACTIONS = "actions.jsonl"
ACCEPTANCE = "acceptance.json"


__all__ = ["Busy", "Store"]


class Store:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)

    @property
    def nodes_file(self) -> Path:
        return self.folder / NODES

    @property
    def actions_file(self) -> Path:
        return self.folder / ACTIONS

    def load(self) -> dict[str, Record]:
        """The records; a corrupt file is renamed ``*.corrupt`` and the loop starts afresh."""
        try:
            data = json.loads(self.nodes_file.read_text())
            return {str(n): Record.from_dict(r) for n, r in data.get("nodes", {}).items()}
        except FileNotFoundError:
            return {}
        except (ValueError, TypeError, AttributeError):
            self.nodes_file.replace(self.nodes_file.with_suffix(".json.corrupt"))
            return {}

    def save(self, records: dict[str, Record]) -> None:
        tmp = self.nodes_file.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"nodes": {n: r.to_dict() for n, r in sorted(records.items())}}, indent=1))
        os.replace(tmp, self.nodes_file)

    def load_acceptance(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads((self.folder / ACCEPTANCE).read_text())
            return {str(n): dict(r) for n, r in data.get("nodes", {}).items()}
        except FileNotFoundError:
            return {}
        except (ValueError, TypeError, AttributeError):  # never adopt over a corrupt record: refuse
            raise ClusterctlError(f"{self.folder / ACCEPTANCE}: unreadable acceptance records; move it away to "
                                  "adopt every node's identity again") from None

    def save_acceptance(self, acceptance: dict[str, dict[str, Any]]) -> None:
        tmp = self.folder / (ACCEPTANCE + ".tmp")
        tmp.write_text(json.dumps({"nodes": acceptance}, indent=1, sort_keys=True))
        os.replace(tmp, self.folder / ACCEPTANCE)

    def log(self, entry: dict[str, Any]) -> None:
        """Append one action (with its evidence) to ``actions.jsonl``."""
        line = json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **entry}, default=str)
        with self.actions_file.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def actions(self) -> list[dict[str, Any]]:
        try:
            text = self.actions_file.read_text()
        except FileNotFoundError:
            return []
        out = []
        for ln in text.splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(ln))
        return out

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One loop at a time over this folder (a library caller without the inventory's lock too)."""
        with paths.exclusive(self.folder / "lock", "clusterctl remediate", what="the remediation loop"):
            yield
