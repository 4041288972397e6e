"""Pairwise schedule: O(1) rounds of disjoint pairs, two partners each, blame of bad pairs."""

from __future__ import annotations

import pytest

from clusterctl.analysis import schedule


def hosts(n: int) -> list[str]:
    return [f"n{i:02d}" for i in range(n)]


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9, 64, 65, 4096])
def test_rounds_are_disjoint_and_give_two_partners(n: int) -> None:
    rounds = schedule.pair_rounds(hosts(n))
    assert len(rounds) <= 3
    partners: dict[str, set[str]] = {h: set() for h in hosts(n)}
    for rnd in rounds:
        in_round = [h for p in rnd for h in p]
        assert len(in_round) == len(set(in_round)), "a node twice in one round"
        assert len(rnd) >= (n // 2 if len(rnd) > 1 else 1)
        for a, b in rnd:
            assert a != b
            partners[a].add(b)
            partners[b].add(a)
    want = min(2, n - 1)
    assert all(len(p) >= want for p in partners.values()), partners


def test_first_rounds_shape() -> None:
    r = schedule.pair_rounds(hosts(6))
    assert r[0] == [("n00", "n01"), ("n02", "n03"), ("n04", "n05")]
    assert r[1] == [("n01", "n02"), ("n03", "n04"), ("n05", "n00")]
    assert schedule.pair_rounds(["a"]) == []


def test_sizes_against_naive() -> None:
    assert schedule.naive_all_pairs(8) == (7, 28)
    assert schedule.naive_all_pairs(9) == (9, 36)
    assert schedule.schedule_size(schedule.pair_rounds(hosts(8))) == (2, 8)
    assert schedule.schedule_size(schedule.pair_rounds(hosts(9))) == (3, 9)


def test_node_bad_with_two_good_partners_is_bad() -> None:
    # ring a-b-c-d-e-f, c is bad: (b,c) and (c,d) fail, b and d pass elsewhere
    res = {("a", "b"): True, ("c", "d"): False, ("e", "f"): True,
           ("b", "c"): False, ("d", "e"): True, ("f", "a"): True}
    v = schedule.judge(res)
    assert v.confirmed() == {"c": ["d", "b"]}
    assert v.suspect == set() and v.path_anomalies == []
    assert schedule.followup_rounds(v, res) == []


def test_bad_pair_blames_the_partner_that_fails_elsewhere_and_path_anomaly() -> None:
    res = {("a", "b"): False, ("b", "c"): True, ("c", "d"): False, ("d", "a"): True}
    v = schedule.judge(res)
    # every node passed once: both failures are between nodes good elsewhere -> path anomalies
    assert v.bad == {} and sorted(v.path_anomalies) == [("a", "b"), ("c", "d")]
    res2 = {("a", "b"): False, ("b", "c"): True, ("a", "d"): False, ("d", "c"): True}
    v2 = schedule.judge(res2)
    assert set(v2.bad) == {"a"} and sorted(v2.bad["a"]) == ["b", "d"]


def test_adjacent_bad_nodes_need_a_second_pass() -> None:
    hs = hosts(8)
    bad = {"n02", "n03"}
    rounds = schedule.pair_rounds(hs)
    res = {p: not (set(p) & bad) for r in rounds for p in r}
    v = schedule.judge(res)
    assert set(v.unresolved()) == bad  # each failed with one good partner and with each other
    follow = schedule.followup_rounds(v, res)
    for rnd in follow:
        in_round = [h for p in rnd for h in p]
        assert len(in_round) == len(set(in_round))
        for a, b in rnd:
            assert (a in bad) != (b in bad), "pass 2 pairs a suspect with a known-good node"
            assert frozenset((a, b)) not in {frozenset(p) for p in res}
    res.update({p: not (set(p) & bad) for r in follow for p in r})
    assert set(schedule.judge(res).confirmed()) == bad


def test_two_suspects_paired_together_only() -> None:
    v = schedule.judge({("a", "b"): False})
    assert v.suspect == {"a", "b"}
    assert schedule.followup_rounds(v) == []  # no known-good node to pair with
