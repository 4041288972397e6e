"""Unit tests for plugins/filter/hostlist.py (Slurm hostlist compress/expand)."""

from __future__ import annotations

import pytest

from plugins.filter.hostlist import (
    AnsibleFilterError,
    FilterModule,
    hostlist_compress,
    hostlist_expand,
    split_hostlist,
)


def test_compress_64_padded_nodes() -> None:
    names = [f"node{i:03d}" for i in range(1, 65)]
    assert hostlist_compress(names) == "node[001-064]"


def test_compress_gaps_and_order() -> None:
    assert hostlist_compress(["node3", "node1", "node2", "node7", "node9", "node10"]) == "node[1-3,7,9-10]"


def test_compress_single_name_has_no_brackets() -> None:
    assert hostlist_compress(["node001"]) == "node001"
    assert hostlist_compress(["login"]) == "login"


def test_compress_several_prefixes_sorted() -> None:
    names = ["gpu02", "cpu1", "gpu01", "cpu2", "login"]
    assert hostlist_compress(names) == "cpu[1-2],gpu[01-02],login"


def test_compress_unpadded_joins_padded_of_same_width() -> None:
    assert hostlist_compress(["node09", "node10", "node11"]) == "node[09-11]"


def test_compress_different_widths_stay_apart() -> None:
    assert hostlist_compress(["n1", "n001", "n002"]) == "n1,n[001-002]"


def test_compress_suffix_and_dashes() -> None:
    names = ["cc-slurm-c1", "cc-slurm-c2", "rack1-a", "rack2-a"]
    assert hostlist_compress(names) == "cc-slurm-c[1-2],rack[1-2]-a"


def test_compress_drops_duplicates_and_accepts_hostlists() -> None:
    assert hostlist_compress(["node[1-3]", "node2", "node4"]) == "node[1-4]"


def test_compress_empty() -> None:
    assert hostlist_compress([]) == ""


def test_expand_basic() -> None:
    assert hostlist_expand("node[001-003,007]") == ["node001", "node002", "node003", "node007"]


def test_expand_lists_and_commas() -> None:
    assert hostlist_expand(["a[1-2],b", "c"]) == ["a1", "a2", "b", "c"]


def test_expand_two_dimensions() -> None:
    assert hostlist_expand("r[1-2]n[01-02]") == ["r1n01", "r1n02", "r2n01", "r2n02"]


def test_expand_keeps_width_of_low_end() -> None:
    assert hostlist_expand("n[08-11]") == ["n08", "n09", "n10", "n11"]


@pytest.mark.parametrize(
    "names",
    [
        [f"node{i:03d}" for i in range(1, 513)],
        ["gpu1", "gpu3", "gpu5", "login01", "login02", "ctl"],
        [f"r{r}n{n:02d}" for r in range(1, 3) for n in range(1, 4)],
    ],
)
def test_round_trip(names: list[str]) -> None:
    assert sorted(hostlist_expand(hostlist_compress(names))) == sorted(names)


def test_split_respects_brackets() -> None:
    assert split_hostlist("a[1,2],b[3-4],c") == ["a[1,2]", "b[3-4]", "c"]


@pytest.mark.parametrize("bad", ["node[1-3", "node1-3]", "node[3-1]", "node[a-b]", "node[1,,2]"])
def test_expand_rejects_bad_expressions(bad: str) -> None:
    with pytest.raises(AnsibleFilterError):
        hostlist_expand(bad)


def test_rejects_non_string_items() -> None:
    with pytest.raises(AnsibleFilterError):
        hostlist_compress(["node1", 2])


def test_filter_module_registers_both() -> None:
    filters = FilterModule().filters()
    assert set(filters) == {"hostlist_compress", "hostlist_expand"}
