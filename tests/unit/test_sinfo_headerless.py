"""Headerless default ``sinfo`` rows (``PARTITION AVAIL TIMELIMIT NODES STATE NODELIST`` without the
header, as ``sinfo -h`` prints them or as they are pasted) are read by one reader,
``ccparse.slurm._default_row``, whichever path reaches it: generated rows are read as they say, and a
NODES count that disagrees with the expanded NODELIST is a ParseError naming both."""

from __future__ import annotations

from ccparse.slurm import parse_sinfo
from hypothesis import given, settings
from hypothesis import strategies as st

SUFFIXES = {"": [], "*": ["not_responding"], "~": ["powered_off"], "#": ["powering_up"]}
BASES = ["idle", "alloc", "mix", "drain", "down", "drained", "maint", "comp", "resv"]


@st.composite
def hostlists(draw: st.DrawFn) -> tuple[str, list[str]]:
    """(hostlist text, its hosts): ``gpu07`` or ``gpu[01-04,07]``, two-digit numbers."""
    prefix = draw(st.from_regex(r"[a-z]{1,5}(-[a-z]{1,3})?", fullmatch=True))
    nums = sorted(draw(st.sets(st.integers(0, 99), min_size=1, max_size=12)))
    hosts = [f"{prefix}{n:02d}" for n in nums]
    if len(nums) == 1 and draw(st.booleans()):
        return hosts[0], hosts
    parts, i = [], 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        parts.append(f"{nums[i]:02d}" if i == j else f"{nums[i]:02d}-{nums[j]:02d}")
        i = j + 1
    return f"{prefix}[{','.join(parts)}]", hosts


@st.composite
def rows(draw: st.DrawFn, consistent: bool = True) -> dict:
    nodelist, hosts = draw(hostlists())
    base, suffix = draw(st.sampled_from(BASES)), draw(st.sampled_from(sorted(SUFFIXES)))
    count = len(hosts)
    if not consistent:
        count = draw(st.integers(0, 200).filter(lambda c: c != len(hosts)))
    return {"partition": draw(st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)),
            "default": draw(st.booleans()), "avail": draw(st.sampled_from(["up", "down", "drain", "inact"])),
            "timelimit": draw(st.sampled_from(["infinite", "4:00:00", "1-00:00:00", "30:00"])),
            "count": count, "state": base + suffix, "base": base, "flags": SUFFIXES[suffix],
            "nodelist": nodelist, "hosts": hosts}


def _line(r: dict, sep: str) -> str:
    return sep.join([r["partition"] + ("*" if r["default"] else ""), r["avail"], r["timelimit"],
                     str(r["count"]), r["state"], r["nodelist"]])


@settings(max_examples=200, deadline=None)
@given(st.lists(rows(), min_size=1, max_size=6), st.sampled_from([" ", "   ", "\t"]))
def test_generated_headerless_rows_are_read_as_they_say(rs: list[dict], sep: str) -> None:
    got = parse_sinfo("".join(_line(r, sep) + "\n" for r in rs))["partitions"]
    assert len(got) == len(rs)
    for n, (g, r) in enumerate(zip(got, rs, strict=True), start=1):
        assert (g["partition"], g["default"], g["avail"], g["timelimit"]) == (
            r["partition"], r["default"], r["avail"], r["timelimit"])
        assert (g["nodes"], g["state"], g["base_state"], g["flags"]) == (r["count"], r["state"], r["base"], r["flags"])
        assert (g["nodelist"], g["hosts"], g["line"]) == (r["nodelist"], r["hosts"], n)


@settings(max_examples=200, deadline=None)
@given(st.lists(rows(), max_size=3), rows(consistent=False), st.lists(rows(), max_size=3))
def test_a_headerless_row_whose_count_disagrees_is_read_and_said(before: list[dict], bad: dict,
                                                                 after: list[dict]) -> None:
    text = "".join(_line(r, " ") + "\n" for r in [*before, bad, *after])
    data = parse_sinfo(text)
    assert [c.split(":", 1)[0] for c in data["cut"]] == [f"line {len(before) + 1}"]
    assert f"NODES says {bad['count']} but NODELIST" in data["cut"][0]
    assert len(data["partitions"]) == len(before) + 1 + len(after)


def test_the_count_check_is_the_headed_tables_too() -> None:
    text = "PARTITION AVAIL TIMELIMIT NODES STATE NODELIST\ngpu* up infinite 3 idle gpu[01-04,07]\n"
    assert parse_sinfo(text)["cut"] == [
        "line 2: NODES says 3 but NODELIST 'gpu[01-04,07]' names 5 (a wrapped or edited row)"]
    assert parse_sinfo(text.replace(" 3 ", " 5 "))["partitions"][0]["hosts"] == [
        "gpu01", "gpu02", "gpu03", "gpu04", "gpu07"]
