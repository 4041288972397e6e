"""The one-pass build in ``safeyaml._check`` gives what the SafeLoader's constructor gives.

``safeyaml.load(text)`` builds plain documents while it checks them; ``load(text, fast=False)`` is
the reference (check, then PyYAML's constructor). For every YAML file in the repository's
inventories and tests, and for generated YAML (anchors, aliases, merge keys, tags, odd scalars,
duplicate keys), both must refuse with the same key and message, or return equal data of the same
types, with aliased values shared the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusterctl.inventory import safeyaml
from clusterctl.inventory.model import VaultValue

REPO = Path(__file__).resolve().parents[2]
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _files() -> list[Path]:
    out: list[Path] = []
    for top in ("inventories", "tests"):
        for p in sorted((REPO / top).rglob("*")):
            if p.is_file() and p.suffix in (".yml", ".yaml", ".json") and p.stat().st_size < 2_000_000:
                out.append(p)
    return out


def _same(a: Any, b: Any, seen_a: dict[int, int], seen_b: dict[int, int], pos: list[int]) -> None:
    """Equal values of the same types, and the same sharing of containers (aliases)."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict | list):
        pos[0] += 1
        ia, ib = seen_a.get(id(a)), seen_b.get(id(b))
        assert ia == ib, "aliased containers shared differently"
        if ia is not None:
            return
        seen_a[id(a)] = seen_b[id(b)] = pos[0]
    if isinstance(a, dict):
        assert list(a) == list(b)
        for ka, kb in zip(a, b, strict=True):
            assert type(ka) is type(kb)
            _same(a[ka], b[kb], seen_a, seen_b, pos)
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y, seen_a, seen_b, pos)
    elif isinstance(a, VaultValue):
        pass
    else:
        assert a == b or (a != a and b != b), (a, b)


def _both(text: str) -> tuple[Any, Any]:
    def one(fast: bool) -> Any:
        try:
            return ("ok", safeyaml.load(text, fast=fast))
        except safeyaml.Refused as exc:
            return ("refused", exc.key, exc.message)

    return one(True), one(False)


def _assert_equivalent(text: str) -> None:
    fast, ref = _both(text)
    assert fast[0] == ref[0], (fast, ref)
    if fast[0] == "refused":
        assert fast == ref
    else:
        _same(fast[1], ref[1], {}, {}, [0])


FILES = _files()


def test_there_are_files_to_compare() -> None:
    assert len(FILES) > 100


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_repository_yaml_file_builds_the_same(path: Path) -> None:
    try:
        text = safeyaml.read_text(path)
    except safeyaml.Refused:
        return  # refused before YAML: neither path sees it
    _assert_equivalent(text)


VAULT = ("!vault |\n    $ANSIBLE_VAULT;1.1;AES256\n    6134\n    " + "0" * 64 + "\n    6162\n")
SCALARS = ["a", "'1'", "1", "0x1F", "0o17", "1_000", "-3", "1.5", "1e3", ".inf", ".nan", "~", "null", "true",
           "yes", "no", "On", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-13-45", "!!binary aGVsbG8=",
           "!!binary ***", "!unsafe '{{ x }}'", "!!str 1", "!!int '7'", "!!int x", "!!float 'nan'", "=",
           "!!set {a, b}", "!!omap [a: 1]", "!unsafe [1, 2]", "!foo x", "''", "\"\\t\"", "'a: b'", "[]", "{}",
           "[1, [2, {x: y}]]", "{a: 1, a: 2}", "{1: a, '1': b}", "{? [k]: v}", "!vault x", VAULT]
KEYS = ["a", "b", "1", "'1'", "~", "true", "2001-12-14", "=", "<<", "!!binary aGk=", "!!int 3", "!foo k"]


@st.composite
def documents(draw: Any) -> str:
    lines: list[str] = []
    anchors: list[str] = []

    def value(depth: int, indent: int) -> list[str]:
        kind = draw(st.sampled_from(["scalar", "map", "seq", "alias", "anchor"] if depth < 3 else ["scalar", "alias"]))
        pad = " " * indent
        if kind == "alias" and anchors:
            return [f" *{draw(st.sampled_from(anchors))}"]
        if kind in ("scalar", "alias"):
            return [f" {draw(st.sampled_from(SCALARS))}".replace("\n", "\n" + pad)]
        if kind == "anchor":
            name = f"a{len(anchors)}"
            inner = value(depth + 1, indent)
            anchors.append(name)  # after its value: no alias inside itself from here
            if inner[0].startswith(" !"):
                tag, _, rest = inner[0][1:].partition(" ")
                return [f" {tag} &{name} {rest}", *inner[1:]]
            return [f" &{name}{inner[0]}", *inner[1:]]
        out: list[str] = [""]
        for _ in range(draw(st.integers(0, 3))):
            sub = value(depth + 1, indent + 2)
            if kind == "map":
                out.append(f"{pad}{draw(st.sampled_from(KEYS))}:{sub[0]}")
            else:
                out.append(f"{pad}-{sub[0]}")
            out.extend(sub[1:])
        if len(out) == 1:
            out[0] = " {}" if kind == "map" else " []"
        return out

    body = value(0, 2)
    lines.append(f"root:{body[0]}")
    lines.extend(body[1:])
    return "\n".join(lines) + "\n"


@SETTINGS
@given(documents())
def test_generated_yaml_builds_the_same(text: str) -> None:
    _assert_equivalent(text)


@SETTINGS
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{},&*!? \n'\"|>#1~.<")), max_size=60))
def test_random_yaml_text_builds_the_same(text: str) -> None:
    _assert_equivalent(text)


def test_merge_keys_and_aliases_are_shared_like_the_constructor() -> None:
    text = "base: &b {x: 1}\nsame: *b\nmerged:\n  <<: *b\n  y: 2\nl: &l [1]\nm: [*l, *l]\n"
    _assert_equivalent(text)
    data = safeyaml.load(text)
    assert data["same"] is data["base"] and data["m"][0] is data["m"][1] is data["l"]
    assert data["merged"] == {"x": 1, "y": 2}


def test_plain_inventory_is_built_in_the_one_pass() -> None:
    loader = safeyaml._Loader("all:\n  hosts:\n    gpu1: {ansible_host: 10.0.0.1, port: 22}\n")
    try:
        done, data = safeyaml._check(loader.get_single_node(), loader)
    finally:
        loader.dispose()
    assert done and data == {"all": {"hosts": {"gpu1": {"ansible_host": "10.0.0.1", "port": 22}}}}


@pytest.mark.parametrize("levels", range(safeyaml.MAX_DEPTH - 2, safeyaml.MAX_DEPTH + 3))
@pytest.mark.parametrize("leaf", ["x", "[x]", "1", "&a x"])
def test_depth_limit_is_the_same_at_the_boundary(levels: int, leaf: str) -> None:
    text = "".join(f"{' ' * i}k{i}:\n" for i in range(levels)) + f"{' ' * levels}last: {leaf}\n"
    _assert_equivalent(text)
    flow = "[" * levels + leaf.replace("&a ", "") + "]" * levels
    _assert_equivalent(f"a: {flow}\n")
