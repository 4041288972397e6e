"""Bad input, round 3 (issue 28), classes 1, 2, 3, 4 and 9 (this file; class 10: test_interrupted_runs.py;
classes 4, 5, 6 also as tests/bad_inventories cases).

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


# class 1: vault-encrypted files ------------------------------------------------------------------

_PASSWORD = "correct horse battery staple"


def _vaulted(lab: Path, tmp_path: Path, content: str) -> tuple[Path, Path]:
    """A vault-encrypted group_vars file (ansible-core's VaultLib) and the password file opening it."""
    from ansible.parsing.vault import VaultLib, VaultSecret

    lib = VaultLib([("default", VaultSecret(_PASSWORD.encode()))])
    f = lab / "group_vars" / "all" / "secret.yml"
    f.write_bytes(lib.encrypt(content.encode(), VaultSecret(_PASSWORD.encode())))
    pw = tmp_path / "vault-pass"
    pw.write_text(_PASSWORD + "\n")
    return f, pw


def test_vaulted_file_without_password_is_named_as_not_checked(lab: Path, tmp_path: Path) -> None:
    _vaulted(lab, tmp_path, "---\nmtu: 99999\n")
    r = _clusterctl(["validate", str(lab)], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "not checked" in r.stderr and "group_vars/all/secret.yml" in r.stderr


def test_vaulted_file_is_checked_with_the_password(lab: Path, tmp_path: Path) -> None:
    _, pw = _vaulted(lab, tmp_path, "---\nmtu: 99999\n")
    r = _clusterctl(["validate", str(lab), "--vault-password-file", str(pw)], cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert "group_vars/all/secret.yml: mtu:" in out and "<vaulted>" in out and "99999" not in out


def test_vaulted_file_with_secrets_and_good_values_passes(lab: Path, tmp_path: Path) -> None:
    _, pw = _vaulted(lab, tmp_path, "---\nvault_munge_key: s3cr3tmungekeymaterial\nmtu: 1500\n")
    r = _clusterctl(["validate", str(lab), "--vault-password-file", str(pw)], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("password", ["wrong password", _PASSWORD[:5]])
@pytest.mark.parametrize("command", ["validate", "provision"])
def test_wrong_or_truncated_vault_password_is_bad_input(lab: Path, tmp_path: Path, password: str,
                                                        command: str) -> None:
    _, pw = _vaulted(lab, tmp_path, "---\nmtu: 1500\n")
    pw.write_text(password + "\n")
    r = _clusterctl([command, str(lab), "--vault-password-file", str(pw)], cwd=tmp_path,
                    CLUSTERCTL_STATE_DIR=str(tmp_path / "state"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "group_vars/all/secret.yml" in r.stderr and "could not decrypt" in r.stderr
    assert not (tmp_path / "state").exists() or not list((tmp_path / "state").rglob("runs/*")), "something ran"


@pytest.mark.parametrize("command", ["provision", "verify"])
def test_run_without_the_vault_password_runs_nothing(lab: Path, tmp_path: Path, command: str) -> None:
    _vaulted(lab, tmp_path, "---\nmtu: 1500\n")
    r = _clusterctl([command, str(lab)], cwd=tmp_path, CLUSTERCTL_STATE_DIR=str(tmp_path / "state"),
                    ANSIBLE_VAULT_PASSWORD_FILE="")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "group_vars/all/secret.yml" in r.stderr and "no vault password" in r.stderr
    assert not list((tmp_path / "state").rglob("runs/*")), "something ran"


# class 2: dynamic inventory scripts are bounded ------------------------------------------------


def _script_inventory(tmp_path: Path, body: str) -> Path:
    inv = tmp_path / "dyn"
    (inv / "group_vars" / "all").mkdir(parents=True)
    (inv / "group_vars" / "all" / "cluster.yml").write_text(
        "---\ncluster_name: test\nfabric: ethernet\nrdma_devices_per_node: 0\nmtu: 1500\n"
        "slurm_partitions:\n  - {name: batch, default: true}\n")
    script = inv / "dynamic.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return inv


@pytest.mark.parametrize("body,word", [
    ("sleep 600\n", "did not finish within 3 seconds"),
    ("exec yes '{\"all\": {}}'\n", "printed more than 1 MiB"),
])
def test_inventory_script_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, word: str) -> None:
    import time

    from clusterctl.inventory import InventoryError, load_checked, loading

    monkeypatch.setattr(loading, "SCRIPT_SECONDS", 3.0)
    monkeypatch.setattr(loading, "SCRIPT_MAX_BYTES", 1024 * 1024)
    started = time.monotonic()
    with pytest.raises(InventoryError) as exc:
        load_checked(_script_inventory(tmp_path, body))
    assert time.monotonic() - started < 30
    (p,) = exc.value.problems
    assert p.file == "dynamic.sh" and word in p.message, p


def test_well_behaved_inventory_script_still_reads(tmp_path: Path) -> None:
    from clusterctl.inventory import load_checked

    inv = load_checked(_script_inventory(tmp_path, "cat <<'J'\n{\"slurm_controller\": {\"hosts\": [\"ctl01\"]},"
                                                   " \"slurm_compute\": {\"hosts\": [\"node01\"]},"
                                                   " \"_meta\": {\"hostvars\": {}}}\nJ\n"))
    assert set(inv.hosts) == {"ctl01", "node01"}


# class 9: output destinations --------------------------------------------------------------------


def _evidence(tmp_path: Path) -> Path:
    ev = tmp_path / "evidence"
    (ev / "n1").mkdir(parents=True)
    (ev / "n1" / "nvidia-smi.txt").write_text("nothing to see\n")
    return ev


def _one_line_error(r: subprocess.CompletedProcess[str], path: Path) -> None:
    assert r.returncode in (1, 2), r.stdout + r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("clusterctl:")]
    assert len(lines) == 1 and str(path) in lines[0], r.stderr


def test_html_report_where_a_folder_is(tmp_path: Path) -> None:
    dest = tmp_path / "report.html"
    dest.mkdir()
    r = _clusterctl(["analyze", str(_evidence(tmp_path)), "--html", str(dest)], cwd=tmp_path)
    _one_line_error(r, dest)


def test_html_report_on_a_full_disk_leaves_nothing_half_written(tmp_path: Path) -> None:
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True,
                      check=False).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            with pytest.raises(OSError):
                while True:
                    os.write(fd, b"x" * 4096)
        finally:
            os.close(fd)
        dest = mnt / "report.html"
        r = _clusterctl(["analyze", str(_evidence(tmp_path)), "--html", str(dest)], cwd=tmp_path)
        _one_line_error(r, dest)
        assert sorted(p.name for p in mnt.iterdir()) == ["filler"], "a half-written report was left"
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_state_folder_that_is_a_file(lab: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.write_text("not a folder\n")
    r = _clusterctl(["provision", str(lab)], cwd=tmp_path, CLUSTERCTL_STATE_DIR=str(state))
    _one_line_error(r, state)


@pytest.mark.parametrize("value", ["\"{{ lookup('pipe', 'id') }}\"", "\"{{ query('ansible.builtin.lines', 'id') }}\""])
def test_command_running_lookup_in_an_inventory_value_is_warned(lab: Path, tmp_path: Path, value: str) -> None:
    (lab / "group_vars" / "all" / "extra.yml").write_text(f"---\nclusterctl_note: {value}\n")
    r = _clusterctl(["validate", str(lab)], cwd=tmp_path)
    assert "runs a command on this machine" in r.stderr and "group_vars/all/extra.yml" in r.stderr, r.stderr


# class 4: one host, two spellings (the rest: tests/bad_inventories address-*, hostname-case-twice, ...)


@pytest.mark.parametrize("address", ["192.0.2.11\u200b", "\uff11\uff19\uff12.0.2.11", "nod\u043501.example"])
def test_invisible_or_look_alike_character_in_an_address(lab: Path, tmp_path: Path, address: str) -> None:
    from clusterctl.inventory import InventoryError, load_checked

    (lab / "host_vars").mkdir(exist_ok=True)
    (lab / "host_vars" / "lab-c1.yml").write_text(f"---\nansible_host: \"{address}\"\n", encoding="utf-8")
    with pytest.raises(InventoryError) as exc:
        load_checked(lab)
    assert any(p.key == "lab-c1.ansible_host" and "look-alike" in p.message for p in exc.value.problems), \
        exc.value.problems


# class 2: an inventory plugin file (constructed) is read, and what it composes is checked --------

_CONSTRUCTED = ("---\nplugin: ansible.builtin.constructed\nstrict: true\ngroups:\n"
                "  gpu_nodes: \"'c' in inventory_hostname\"\ncompose:\n  ansible_port: \"'{port}'\"\n")


def test_valid_constructed_plugin_file_is_accepted(lab: Path) -> None:
    from clusterctl.inventory import load_checked

    (lab / "zz-constructed.yml").write_text(_CONSTRUCTED.format(port=2222))
    inv = load_checked(lab)
    assert "gpu_nodes" in inv.groups and inv.host_vars["lab-c1"]["ansible_port"] == "2222"


def test_what_constructed_composes_is_checked(lab: Path) -> None:
    from clusterctl.inventory import InventoryError, load_checked

    (lab / "zz-constructed.yml").write_text(_CONSTRUCTED.format(port=70000))
    with pytest.raises(InventoryError) as exc:
        load_checked(lab)
    assert {(p.file, p.key) for p in exc.value.problems} >= {("zz-constructed.yml", "lab-c1.ansible_port")}, \
        exc.value.problems
