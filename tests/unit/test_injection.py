"""Issue 15 injection class: an nccl_overrides value with a newline (a second ``export`` line in every
Slurm task, e.g. a library preload) is refused by validate, and even rendered directly through the
templates it cannot become a second line; the TaskProlog exports only NCCL_* names, one per line,
quoting anything that is not a single safe token."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_nccl_env import render as render_nccl
from test_slurm_templates import render as render_slurm
from typer.testing import CliRunner

from clusterctl.cli import app

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "plugins" / "filter"))
from nccl_env import nccl_env  # noqa: E402

INJECTED = "INFO\nLD_PRELOAD=/tmp/x.so"


def test_validate_refuses_a_newline_in_an_override() -> None:
    res = CliRunner().invoke(app, ["validate", str(REPO / "tests" / "bad_inventories" / "nccl-override-newline")])
    assert res.exit_code == 2
    assert "nccl_overrides.NCCL_DEBUG" in res.output


def test_templates_cannot_write_a_second_line() -> None:
    env = nccl_env(None, "ethernet", overrides={"NCCL_DEBUG": INJECTED})
    conf = render_nccl("nccl.conf.j2", env, "ethernet")
    profile = render_nccl("nccl.sh.j2", env, "ethernet")
    for text in (conf, profile):
        assert "LD_PRELOAD" not in text
        assert not any(line.startswith(("NCCL_DEBUG=", "export NCCL_DEBUG")) for line in text.splitlines())
    assert "NCCL_IB_DISABLE=1" in conf.splitlines()


def _prolog(tmp_path: Path, conf_text: str) -> list[str]:
    conf = tmp_path / "nccl.conf"
    conf.write_text(conf_text)
    script = tmp_path / "task_prolog.sh"
    script.write_text(render_slurm("task_prolog.sh", item={"phase": "prolog"}, slurm_common_nccl_conf=str(conf)))
    return subprocess.run(["sh", str(script)], capture_output=True, text=True, check=True).stdout.splitlines()


def test_task_prolog_exports_only_nccl_names_and_quotes(tmp_path: Path) -> None:
    out = _prolog(tmp_path, "NCCL_DEBUG=INFO\nLD_PRELOAD=/tmp/x.so\nNCCL_SOCKET_IFNAME=^docker0,lo\n"
                            "NCCL_X=a b;touch /tmp/pwned\nNCCL_Y=it's\n")
    assert out == [
        "export NCCL_DEBUG=INFO",
        "export NCCL_SOCKET_IFNAME=^docker0,lo",
        "export NCCL_X='a b;touch /tmp/pwned'",
        "export NCCL_Y='it'\\''s'",
    ]
