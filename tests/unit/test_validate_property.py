"""Property-based tests over the inventory validator (hypothesis): random and mutated inventories
only ever give exit 0 or a clean exit 2 (a message per problem, no traceback), within a time bound."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from clusterctl.cli import app
from clusterctl.inventory import spec

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab"
TIME_BOUND_S = 30.0  # one validation; a normal one takes well under a second
runner = CliRunner()
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40), st.sampled_from(["{{ vault_x }}", "{{ x | default('p') }}", "a\nb", "gpu[0:9]", "..",
                                           "/mnt/../etc", "ALL", "redis://u:p@h/1", "-----BEGIN RSA PRIVATE KEY-----"]),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)), max_leaves=12)
keys = st.one_of(st.sampled_from([*spec.SPEC, "juicefs_volumes", "slurm_compute_memlock_limit", "munge_key",
                                  "ansible_host", "ansible_ssh_pass", "rdma_stack", "nccl_fabric"]),
                 st.text(min_size=1, max_size=20))


def _validate(inv: Path) -> None:
    start = time.monotonic()
    res = runner.invoke(app, ["validate", str(inv)])
    took = time.monotonic() - start
    assert res.exit_code in (0, 2), res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    if res.exit_code == 2:
        assert "rejected" in res.output and ": " in res.output
    assert took < TIME_BOUND_S


def _copy_lab(tmp_path: Path, n: int) -> Path:
    dst = tmp_path / f"inv{n}"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(LAB, dst)
    return dst


_counter = iter(range(10**9))


def _dump(data: Any) -> str:
    """YAML text (nan/inf come out as .nan/.inf, which the validator must refuse)."""
    return yaml.safe_dump(data, allow_unicode=True)


@SETTINGS
@given(extra=st.dictionaries(keys, values, max_size=6), where=st.sampled_from(
    ["group_vars/all/extra.yml", "group_vars/slurm_compute.yml", "host_vars/lab-c1.yml"]))
def test_random_variables_anywhere(tmp_path: Path, extra: dict[str, Any], where: str) -> None:
    inv = _copy_lab(tmp_path, next(_counter))
    target = inv / where
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_dump(extra))
    _validate(inv)


@SETTINGS
@given(data=st.data(), which=st.sampled_from(["hosts.yml", "group_vars/all/cluster.yml",
                                               "group_vars/all/lab.yml"]))
def test_mutated_lab_files(tmp_path: Path, data: st.DataObject, which: str) -> None:
    inv = _copy_lab(tmp_path, next(_counter))
    f = inv / which
    raw = bytearray(f.read_bytes())
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(st.sampled_from(["flip", "insert", "delete", "dupline"]))
        pos = data.draw(st.integers(0, max(len(raw) - 1, 0)))
        if op == "flip" and raw:
            raw[pos] = data.draw(st.integers(0, 255))
        elif op == "insert":
            raw[pos:pos] = data.draw(st.sampled_from([b"&a ", b"*a", b"!vault ", b"!unsafe ", b"[", b"{", b"\t",
                                                      b"\n", b": ", b"- ", b"\xff\xfe", b"[0:999999999]", b"\x00"]))
        elif op == "delete" and raw:
            del raw[pos:pos + data.draw(st.integers(1, 20))]
        elif op == "dupline":
            lines = raw.split(b"\n")
            i = pos % len(lines)
            lines.insert(i, lines[i])
            raw = bytearray(b"\n".join(lines))
    f.write_bytes(bytes(raw))
    _validate(inv)


@SETTINGS
@given(text=st.text(max_size=300))
def test_random_text_as_hosts_file(tmp_path: Path, text: str) -> None:
    inv = _copy_lab(tmp_path, next(_counter))
    (inv / "hosts.yml").write_text(text)
    _validate(inv)
