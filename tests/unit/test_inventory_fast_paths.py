"""The shortcuts taken for speed in the inventory rules answer what the long way answers.

* ``validation._IPV4`` accepts an address only where ``ipaddress.IPv4Address`` accepts it (the regex
  only skips the ipaddress call for the valid ones; everything else still goes through it);
* ``secret_looking`` and ``role_vars.owner`` are remembered per key: the remembered answer is the
  computed one.
"""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from clusterctl.inventory import role_vars, validation
from clusterctl.inventory.model import Definition, secret_looking

SETTINGS = settings(max_examples=400, deadline=None, derandomize=True)
octets = st.one_of(st.integers(0, 300).map(str), st.sampled_from(["00", "01", "007", "010", "0000", "1" * 5, ""]))


def _accepted(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
        return True
    except ValueError:
        return False


@SETTINGS
@given(st.lists(octets, min_size=1, max_size=6).map(".".join))
def test_ipv4_regex_accepts_exactly_what_ipaddress_accepts(text: str) -> None:
    assert (validation._IPV4.fullmatch(text) is not None) == _accepted(text)


@SETTINGS
@given(st.text(alphabet="0123456789.", max_size=20))
def test_ipv4_rule_is_unchanged_for_any_digits_and_dots(text: str) -> None:
    got = validation._ansible_host(Definition("hosts.yml", "host:h", "ansible_host", text))
    if not text:
        assert got
    else:
        assert bool(got) == (not _accepted(text)), text


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.one_of(st.text(max_size=30), st.sampled_from(["munge_key", "slurm_dbd_pasword", "a.b[0].token",
                                                        "juicefs_metaurl", "key_file", "ansible_host"])))
def test_remembered_answers_are_the_computed_ones(key: str) -> None:
    assert secret_looking(key) == secret_looking.__wrapped__(key)
    assert role_vars.owner(key) == role_vars.owner.__wrapped__(key)


def test_space_regex_is_str_isspace_for_every_code_point() -> None:
    for cp in range(0x110000):
        c = chr(cp)
        assert (validation._SPACE.search(c) is not None) == c.isspace(), hex(cp)


@SETTINGS
@given(st.text(max_size=12))
def test_ansible_host_rule_is_the_long_way(text: str) -> None:
    long_way = not text.strip() or text != text.strip() or any(c.isspace() for c in text)
    got = validation._ansible_host(Definition("hosts.yml", "host:h", "ansible_host", text))
    if long_way:
        assert got and "one address" in got[0].message
    else:
        # the other rules of an address: IPv4 form, ASCII only (issue 28), not a network
        assert not got or any(w in got[0].message for w in ("IPv4", "look-alike", "not a network"))
