"""gpu_tools builds nccl-tests MPI=1 against the distribution's Open MPI when multi-node tests are
wanted (gpu_tools_nccl_tests_mpi), MPI=0 otherwise, each in its own tree: the role's make argv and
unpack folder rendered from roles/gpu_tools/tasks/nccl_tests.yml with its defaults."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

ROLE = Path(__file__).resolve().parents[2] / "roles" / "gpu_tools"


def _render(expr: str, vars_: dict[str, Any]) -> Any:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    env.filters["bool"] = lambda v: v if isinstance(v, bool) else str(v).lower() in ("true", "yes", "1")
    env.filters["basename"] = lambda v: Path(v).name
    env.filters["regex_replace"] = lambda v, pat, rep: re.sub(pat, rep, v)
    out = env.from_string(expr).render(**vars_).strip()
    return yaml.safe_load(out) if out.startswith("[") else out


def _tasks() -> list[dict[str, Any]]:
    return yaml.safe_load((ROLE / "tasks" / "nccl_tests.yml").read_text())


@pytest.mark.parametrize("mpi", [False, True])
def test_make_line_and_tree(mpi: bool) -> None:
    v: dict[str, Any] = {**yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()),
                         "gpu_tools_nccl_tests_mpi": mpi,
                         "gpu_tools_nccl_tests_src": "/srv/nccl-tests-2.19.6.tar.gz"}
    name = next(t for t in _tasks() if "set_fact" in str(t) and "__gpu_tools_tree" in str(t))
    local = {k: _render(e, v) for k, e in name["vars"].items()}
    tree = _render(name["ansible.builtin.set_fact"]["__gpu_tools_tree"], {**v, **local})
    assert tree == "/opt/clusterctl/src/nccl-tests-2.19.6" + ("-mpi" if mpi else "")
    block = next(t for t in _tasks() if "block" in t)
    build = next(t for t in block["block"] if str(t["name"]).startswith("Build nccl-tests"))
    argv = _render(build["ansible.builtin.command"]["argv"], v)
    if mpi:
        assert argv[2:4] == ["MPI=1", "MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi"]
        pkgs = next(t for t in block["block"] if "Open MPI" in t["name"])
        assert _render("{{ " + pkgs["when"] + " }}", v) == "True"
        assert "libopenmpi-dev" in v["gpu_tools_mpi_packages"]
    else:
        assert argv[2] == "MPI=0" and not any(a.startswith("MPI_HOME") for a in argv)
    assert argv[0] == "make" and "NCCL_HOME=/usr" in argv
