"""The one ansible-runner builder: what reaches ansible-runner, Ansible's verbosity and timeout,
extra vars and the vault password file passed through, logging, and no change to os.environ."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from clusterctl.commands.common import setup_logging
from clusterctl.errors import UsageError
from clusterctl.runner import AnsibleCall, RunOptions, run_module, run_playbook

needs_ansible = pytest.mark.skipif(shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) is None,
                                   reason="ansible-playbook is not installed next to this python")


@pytest.fixture
def local_inv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLUSTERCTL_STATE_DIR", str(tmp_path / "state"))
    inv = tmp_path / "inv"
    inv.mkdir()
    (inv / "hosts.yml").write_text(f"all:\n  hosts:\n    n1:\n      ansible_connection: local\n"
                                   f"      ansible_python_interpreter: {sys.executable}\n")
    return inv


def test_kwargs_carry_options_and_keep_inline_extra_vars_off_the_command_line(local_inv: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault-pass"
    vault.write_text("pw\n")
    varfile = tmp_path / "vars.yml"
    varfile.write_text("a: 1\n")
    opts = RunOptions(verbosity=2, timeout=30, extra_vars=("token=s3cret other=x", '{"n": 2}', f"@{varfile}"),
                      vault_password_file=vault)
    call = AnsibleCall(local_inv, playbook=Path("/x/site.yml"), limit="n1", tags="slurm", check=True, diff=True,
                       options=opts)
    env_before = dict(os.environ)
    with contextlib.ExitStack() as stack:
        kw = call.kwargs("ident", stack)
        assert kw["verbosity"] == 2 and kw["timeout"] == 30
        assert (kw["playbook"], kw["limit"], kw["tags"]) == ("/x/site.yml", "n1", "slurm")
        args = kw["cmdline"].split()
        assert args[:4] == ["--check", "--diff", "--vault-password-file", str(vault.resolve())]
        files = [a[1:] for a in args if a.startswith("@")]
        assert len(files) == 3 and files[2] == str(varfile.resolve())
        assert json.loads(Path(files[0]).read_text()) == {"token": "s3cret", "other": "x"}
        assert json.loads(Path(files[1]).read_text()) == {"n": 2}
        assert oct(Path(files[0]).stat().st_mode & 0o777) == "0o600"
        assert "s3cret" not in json.dumps(kw)  # neither in the command line nor in the environment
    assert not Path(files[0]).exists() and not Path(files[1]).exists()  # removed after the run
    assert dict(os.environ) == env_before


@pytest.mark.parametrize(("extra", "msg"), [("@/nonexistent.yml", "no such file"), ("[1, 2]", "mapping"),
                                            ("{bad", "JSON/YAML")])
def test_bad_extra_vars_are_usage_errors(local_inv: Path, extra: str, msg: str) -> None:
    call = AnsibleCall(local_inv, playbook=Path("/x.yml"), options=RunOptions(extra_vars=(extra,)))
    with contextlib.ExitStack() as stack, pytest.raises(UsageError, match=msg):
        call.kwargs("i", stack)


def test_missing_vault_password_file_is_a_usage_error(local_inv: Path, tmp_path: Path) -> None:
    call = AnsibleCall(local_inv, playbook=Path("/x.yml"), options=RunOptions(vault_password_file=tmp_path / "no"))
    with contextlib.ExitStack() as stack, pytest.raises(UsageError, match="--vault-password-file"):
        call.kwargs("i", stack)


PLAYBOOK = """---
- name: Show what was passed
  hosts: all
  gather_facts: false
  tasks:
    - name: Plain extra var
      ansible.builtin.debug:
        msg: "greeting={{ greeting }}"
    - name: Vaulted extra var (only its length is shown)
      ansible.builtin.debug:
        msg: "secret length={{ secret | length }}"
"""


@needs_ansible
def test_extra_vars_vault_and_verbosity_reach_ansible(local_inv: Path, tmp_path: Path) -> None:
    from ansible.parsing.vault import VaultLib, VaultSecret

    vault = tmp_path / "vault-pass"
    vault.write_text("correct horse\n")
    enc = VaultLib([("default", VaultSecret(b"correct horse"))]).encrypt("s3cret!").decode()
    varfile = tmp_path / "vault-vars.yml"
    varfile.write_text("secret: !vault |\n" + "".join(f"  {ln}\n" for ln in enc.splitlines()))
    pb = tmp_path / "pb.yml"
    pb.write_text(PLAYBOOK)
    log = tmp_path / "clusterctl.log"
    setup_logging(0, log)
    try:
        msgs: list[str] = []
        def on_event(e: dict[str, Any]) -> None:
            msgs.append(str(((e.get("event_data") or {}).get("res") or {}).get("msg")))

        res = run_playbook(str(pb), local_inv, label="t", record_failures=False, on_event=on_event,
                           options=RunOptions(verbosity=2, extra_vars=("greeting=hello", f"@{varfile}"),
                                              vault_password_file=vault))
    finally:
        setup_logging(0, None)
        logging.getLogger("clusterctl").handlers.clear()
    assert res.rc == 0, res.failed_hosts
    assert "greeting=hello" in msgs and "secret length=7" in msgs
    text = log.read_text()
    assert " -vv" in text and "ansible-playbook" in text  # the command, with Ansible's verbosity
    assert "greeting=hello" in text  # Ansible's own output is in the log
    assert "s3cret!" not in text and "correct horse" not in text


def _processes_running(needle: str) -> list[int]:
    """Pids whose command line names ``needle`` (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "cmdline").read_bytes().decode(errors="replace") and \
                    (entry / "stat").read_text().split(") ", 1)[1][0] != "Z":
                found.append(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


@needs_ansible
def test_timeout_stops_the_run(local_inv: Path, tmp_path: Path) -> None:
    pb = tmp_path / "slow.yml"
    pb.write_text("---\n- name: Slow\n  hosts: all\n  gather_facts: false\n  tasks:\n"
                  "    - name: Wait\n      ansible.builtin.pause:\n        seconds: 60\n")
    res = run_playbook(str(pb), local_inv, label="slow", record_failures=False, options=RunOptions(timeout=3))
    assert res.status == "timeout" and res.exit_code == 1
    assert res.seconds < 30
    # ansible-core's worker (it calls setsid(), so ansible-runner's killpg misses it) was ended too:
    # before clusterctl.leftovers, every run of this test left an ansible-playbook process pausing for good
    assert res.leftovers, "the pausing worker should have been found and ended"
    assert not [p for p in _processes_running(str(pb))], "a process of the timed-out run is still running"


@needs_ansible
def test_ad_hoc_argv_reaches_the_command_unquoted(local_inv: Path) -> None:
    """The Slurm path (clusterctl.slurm.Slurm.run): argv lists go to ansible.builtin.command as JSON,
    no shell, no hand quoting, no $VARIABLE expansion."""
    from clusterctl.slurm import Slurm

    argv = ["printf", "%s|", "it's \"q\"; a b", "$HOME", "{x}"]
    assert Slurm(local_inv, controller="n1").run(argv) == "it's \"q\"; a b|$HOME|{x}|"
    out = run_module(local_inv, "n1", "ansible.builtin.command", {"argv": argv})  # the module's default
    assert out["n1"]["_event"] == "runner_on_ok" and "$HOME" not in out["n1"]["stdout"]
