"""clusterctl.inventory reads what Ansible reads (YAML, INI, a script, a folder of sources) through
ansible-core's InventoryManager, with Ansible's variable precedence, and refuses hostile files
cleanly (no traceback, the secret or the file's lines never printed)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clusterctl.cli import app
from clusterctl.inventory import InventoryError, load, load_checked, safeyaml

REPO = Path(__file__).resolve().parents[2]
BAD = REPO / "tests" / "bad_inventories"
runner = CliRunner()

SPEC = """---
cluster_name: test
fabric: ethernet
rdma_devices_per_node: 0
mtu: 1500
slurm_partitions:
  - {name: batch, default: true}
"""


def _folder(tmp_path: Path, sources: dict[str, str], executable: tuple[str, ...] = ()) -> Path:
    inv = tmp_path / "inv"
    (inv / "group_vars" / "all").mkdir(parents=True)
    (inv / "group_vars" / "all" / "cluster.yml").write_text(SPEC)
    for name, text in sources.items():
        (inv / name).write_text(text)
        if name in executable:
            os.chmod(inv / name, 0o755)
    return inv


def test_ini_inventory_is_read(tmp_path: Path) -> None:
    inv = load_checked(_folder(tmp_path, {"hosts.ini": (
        "[slurm_controller]\nctl01 ansible_host=192.0.2.10\n\n"
        "[slurm_compute]\nnode[01:03] ansible_user=root\n\n[slurm_compute:vars]\nslurm_compute_memlock_limit=4M\n")}))
    assert inv.groups["slurm_compute"] == ["node01", "node02", "node03"]
    assert inv.host_vars["node02"]["slurm_compute_memlock_limit"] == "4M"
    assert inv.spec()["cluster_name"] == "test"


def test_ini_inventory_values_are_checked(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"hosts.ini": (
        "[slurm_controller]\nctl01\n\n[slurm_compute]\nnode01\n\n[slurm_compute:vars]\nslurm_compute_memlock_limt=4M\n")})
    with pytest.raises(InventoryError) as exc:
        load_checked(folder)
    (p,) = exc.value.problems
    assert p.file == "hosts.ini" and p.key == "slurm_compute_memlock_limt" and "did you mean" in p.message


def test_script_inventory_is_run_by_ansible(tmp_path: Path) -> None:
    script = ("#!/bin/sh\ncat <<'J'\n{\"slurm_controller\": {\"hosts\": [\"ctl01\"]},"
              " \"slurm_compute\": {\"hosts\": [\"node01\", \"node02\"]},"
              " \"_meta\": {\"hostvars\": {\"node01\": {\"ansible_host\": \"192.0.2.11\"}}}}\nJ\n")
    inv = load_checked(_folder(tmp_path, {"dynamic.sh": script}, executable=("dynamic.sh",)))
    assert set(inv.hosts) == {"ctl01", "node01", "node02"}
    assert inv.address("node01") == "192.0.2.11"


def test_precedence_is_ansibles(tmp_path: Path) -> None:
    """group_vars/all < group_vars/<group> < inline host vars < host_vars/<host> (Ansible's order)."""
    folder = _folder(tmp_path, {"hosts.yml": (
        "all:\n  children:\n    slurm_controller:\n      hosts:\n        ctl01:\n"
        "    slurm_compute:\n      hosts:\n        node01: {slurm_compute_memlock_limit: 3M}\n        node02:\n")})
    (folder / "group_vars" / "all" / "day2.yml").write_text("slurm_compute_memlock_limit: 1M\n")
    (folder / "group_vars" / "slurm_compute.yml").write_text("slurm_compute_memlock_limit: 2M\n")
    (folder / "host_vars").mkdir()
    (folder / "host_vars" / "node01.yml").write_text("slurm_compute_memlock_limit: 4M\n")
    inv = load_checked(folder)
    assert inv.host_vars["node01"]["slurm_compute_memlock_limit"] == "4M"
    assert inv.host_vars["node02"]["slurm_compute_memlock_limit"] == "2M"
    assert inv.host_vars["ctl01"]["slurm_compute_memlock_limit"] == "1M"
    assert inv.spec_sources()["slurm_compute_memlock_limit"] == "group_vars/all/day2.yml"


def test_huge_file_refused_before_reading(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"hosts.yml": "all:\n  hosts:\n    ctl01:\n"})
    big = folder / "group_vars" / "all" / "big.yml"
    with big.open("wb") as f:  # sparse: costs no disk
        f.truncate(safeyaml.MAX_BYTES + 1)
    (p,) = load(folder).problems
    assert p.file == "group_vars/all/big.yml" and "too large" in p.message


def test_symlink_target_is_never_printed(tmp_path: Path) -> None:
    res = runner.invoke(app, ["validate", str(BAD / "symlink-outside")])
    assert res.exit_code == 2
    assert "leakedlinecontent" not in res.output and "cluster_nam" not in res.output


@pytest.mark.parametrize(("case", "secret"), [
    ("juicefs-metaurl-plaintext", "hunter2metapw"), ("ssh-pass-plaintext", "hunter2sshpw"),
    ("become-pass-plaintext", "hunter2becomepw"), ("vault-default-plain", "plainmungefallback"),
    ("vault-garbage", "plaintextdbpw"), ("private-key-inline", "keymaterial"),
    ("mistyped-password-key", "hunter2typo"),
])
def test_secrets_never_printed(case: str, secret: str) -> None:
    res = runner.invoke(app, ["validate", str(BAD / case)])
    assert res.exit_code == 2
    assert secret not in res.output


def test_real_vault_value_is_accepted(tmp_path: Path) -> None:
    """A payload made by ansible-vault's own code (VaultLib) passes the structure check."""
    from ansible.parsing.vault import VaultLib, VaultSecret

    payload = VaultLib([("default", VaultSecret(b"pw"))]).encrypt("s3cret").decode()
    folder = _folder(tmp_path, {"hosts.yml": "all:\n  children:\n    slurm_controller:\n      hosts:\n"
                                             "        ctl01:\n    slurm_compute:\n      hosts:\n        node01:\n"})
    body = "".join(f"  {line}\n" for line in payload.splitlines())
    (folder / "group_vars" / "all" / "secrets.yml").write_text(f"munge_key: !vault |\n{body}")
    (folder / "group_vars" / "all" / "vault.yml").write_text(payload)
    inv = load_checked(folder)
    assert "group_vars/all/vault.yml" in inv.vaulted_files


def test_shipped_lab_inventory_copy_in_ini_form_is_equivalent(tmp_path: Path) -> None:
    shutil.copytree(REPO / "inventories" / "lab", tmp_path / "lab")
    (tmp_path / "lab" / "hosts.yml").unlink()
    (tmp_path / "lab" / "hosts.ini").write_text(
        "[slurm_controller]\nlab-ctl ansible_host=10.213.77.10\n\n[slurm_compute]\n"
        "lab-c1 ansible_host=10.213.77.11\nlab-c2 ansible_host=10.213.77.12\n\n"
        "[storage_clients:children]\nslurm_compute\n")
    ini, yml = load_checked(tmp_path / "lab"), load_checked(REPO / "inventories" / "lab")
    assert ini.groups == yml.groups
    assert ini.spec() == yml.spec()
