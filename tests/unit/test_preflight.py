"""The pre-flight gate (roles/node_health, issue 25 item 6): the Prolog as rendered, run as slurmd runs a
Prolog (its environment names the job's partition), with a stand-in node check: only the partitions that
opted in are checked; a failing check fails the Prolog (Slurm's prolog-failure path requeues the job); a
check that hangs is cut at the budget and the job runs."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import jinja2
import yaml

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "node_health"


def _prolog(tmp: Path, check_body: str, budget: int = 2) -> Path:
    check = tmp / "clusterctl-node-check"
    check.write_text(f"#!/bin/sh\necho ran >> {tmp}/ran\n{check_body}\n")
    check.chmod(0o755)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(ROLE / "templates"), undefined=jinja2.StrictUndefined)
    env.filters["int"] = int
    values = {**yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()), "node_health_program_path": str(check),
              "node_health_preflight_partitions": ["train", "big"], "node_health_preflight_budget": budget}
    p = tmp / "50-clusterctl-preflight.sh"
    p.write_text(env.get_template("clusterctl-preflight.sh.j2").render(ansible_managed="Ansible managed", **values))
    p.chmod(0o755)
    return p


def _run(p: Path, partition: str) -> int:
    return subprocess.run([str(p)], env={"PATH": "/usr/bin:/bin", "SLURM_JOB_PARTITION": partition,
                                         "SLURM_JOB_ID": "42"}, capture_output=True, check=False, timeout=60).returncode


def test_only_opted_in_partitions_are_checked(tmp_path: Path) -> None:
    p = _prolog(tmp_path, "exit 1")
    assert _run(p, "debug") == 0 and not (tmp_path / "ran").exists()
    assert _run(p, "trai") == 0 and _run(p, "") == 0 and not (tmp_path / "ran").exists()  # no prefix match
    assert _run(p, "train") == 1 and _run(p, "big") == 1  # a failing node fails the Prolog: Slurm requeues
    assert (tmp_path / "ran").read_text().count("ran") == 2


def test_a_healthy_node_passes_and_a_hung_check_is_cut(tmp_path: Path) -> None:
    assert _run(_prolog(tmp_path, "exit 0"), "train") == 0
    p = _prolog(tmp_path, "sleep 60", budget=1)
    t0 = time.monotonic()
    assert _run(p, "train") == 0  # cut at the budget: the job runs, the node is not blocked
    assert time.monotonic() - t0 < 10
