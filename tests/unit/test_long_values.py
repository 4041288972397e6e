"""Very long values and keys: validation ends cleanly (exit 2 or 0, no traceback), within a bound
that only a hang or a quadratic scan would miss, and each message stays one readable line.

Found by a sweep of 100,000- and 1,000,000-character values over the keys of the lab inventory:
a value of letters under any key took 38 s at 200,000 characters and 2 minutes at 400,000 (the
search for a password inside a URL started a scheme at every letter), a partition's `nodes` of many
bracket groups ended in a RecursionError traceback (one recursion per group, and the product was
built before its size was checked), and a long key or a message quoting a long expression was
printed in full.
"""

from __future__ import annotations

import re
import shutil
import threading
import time
from pathlib import Path

import pytest
import yaml
from ccparse import hostlist
from typer.testing import CliRunner

from clusterctl.cli import app
from clusterctl.inventory import secrets

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab"
HANG_BOUND_S = 60.0  # a clean run takes about a second here; a quadratic scan of 1,000,000 characters takes hours
runner = CliRunner()
N = 1_000_000

SHAPES = {
    "letters": "a" * N,
    "letters-digits": "a1" * (N // 2),
    "colons-after-scheme": "redis://" + ":" * N,
    "schemes": "x://" * (N // 4),
    "brackets": "a[0-9]" * (N // 6),
}
WHERE = {
    "unknown key": lambda v: {"cluster_comment": v},
    "secret key": lambda v: {"munge_key": v},
    "nccl override": lambda v: {"nccl_overrides": {"NCCL_X": v}},
    "partition nodes": lambda v: {"slurm_partitions": [{"name": "batch", "default": True, "nodes": v}]},
    "key": lambda v: {v[:100_000]: 1},
}


def _run_bounded(inv: Path) -> tuple[int, str, float]:
    box: dict[str, object] = {}

    def go() -> None:
        res = runner.invoke(app, ["validate", str(inv)])
        box["rc"], box["out"], box["exc"] = res.exit_code, res.output, res.exception

    start = time.monotonic()
    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(HANG_BOUND_S)
    took = time.monotonic() - start
    assert not t.is_alive(), f"validation of {inv} still running after {HANG_BOUND_S} s"
    exc = box["exc"]
    assert exc is None or isinstance(exc, SystemExit), repr(exc)
    return int(box["rc"]), str(box["out"]), took  # type: ignore[call-overload]


# each shape where it went wrong, or where its text is checked by another rule (about 2 s each)
CASES = [("letters", "unknown key"), ("letters", "secret key"), ("letters-digits", "nccl override"),
         ("colons-after-scheme", "secret key"), ("schemes", "unknown key"), ("brackets", "partition nodes"),
         ("letters", "key"), ("brackets", "key")]


@pytest.mark.parametrize("shape,where", CASES, ids=[f"{s}-{w}" for s, w in CASES])
def test_long_value_ends_cleanly_with_short_messages(tmp_path: Path, shape: str, where: str) -> None:
    inv = tmp_path / "inv"
    shutil.copytree(LAB, inv)
    (inv / "group_vars" / "all" / "long.yml").write_text(yaml.safe_dump(WHERE[where](SHAPES[shape]), width=10**9))
    rc, out, _ = _run_bounded(inv)
    assert rc == 2, out[-2000:]
    assert "Traceback" not in out
    assert "long.yml" in out
    assert max(len(line) for line in out.splitlines()) < 1200, "a message line must stay readable"


def test_many_bracket_groups_refused_before_expansion() -> None:
    with pytest.raises(hostlist.HostlistError, match=r"too large \(more than 1000000 names\)"):
        hostlist.expand_hostlist("a[0-9]" * 20_000)
    # 2**20 names is over the limit, refused from the sizes alone
    with pytest.raises(hostlist.HostlistError, match="too large"):
        hostlist.expand_hostlist("n[1-2]" * 20)
    # 2**3: the product in Slurm's order (the last group varies fastest)
    assert hostlist.expand_hostlist("r[1-2]n[1-2]g[0-1]") == [
        "r1n1g0", "r1n1g1", "r1n2g0", "r1n2g1", "r2n1g0", "r2n1g1", "r2n2g0", "r2n2g1"]
    assert hostlist.expand_hostlist("n[01,5-5,009-010]") == ["n01", "n5", "n009", "n010"]


def test_hostlist_message_quotes_at_most_80_characters_of_the_expression() -> None:
    with pytest.raises(hostlist.HostlistError) as err:
        hostlist.expand_hostlist("n[x]" + "a" * 10_000)
    assert len(str(err.value)) < 400 and "10004 characters" in str(err.value)


# the regular expression the URL-password check used before (quadratic on long runs of letters):
# the oracle for what the linear scan must still find
_OLD = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*:([^@/\s]+)@")


@pytest.mark.parametrize("text,password", [
    ("redis://:s3cret@ctl01:6379/1", "s3cret"),
    ("mysql://root:pw@db/x", "pw"),
    ("1redis://u:pw@h", "pw"),
    ("jfs meta=postgres://u:p%40ss@h:5432/db", "p%40ss"),
    ("a://b://u:pw@h", "pw"),
    ("redis://ctl01:6379/1", None),
    ("://u:pw@h", None),
    ("9://u:pw@h", None),
    ("no url here", None),
])
def test_url_password_found_as_the_regular_expression_did(text: str, password: str | None) -> None:
    assert secrets._url_password(text) == password
    old = _OLD.search(text)
    assert (old.group(1) if old else None) == password


def test_url_password_agrees_with_the_old_expression_on_random_text() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    alphabet = st.sampled_from(list("ab1+.-:/@ %x"))

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(st.text(alphabet, max_size=30))
    def check(text: str) -> None:
        assert (secrets._url_password(text) is None) == (_OLD.search(text) is None), text

    check()
