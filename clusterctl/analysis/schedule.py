"""Pairwise test schedule (ib_write_bw / 2-node nccl-tests) and blame of bad pairs.

Testing every pair of N nodes needs N(N-1)/2 tests in N-1 rounds (round-robin). To find a bad node
it is enough that every node meets two *different* partners:

* pass 1 (:func:`pair_rounds`): 2 rounds of N/2 disjoint pairs - ``(0,1),(2,3),...`` then the same
  ring shifted by one ``(1,2),(3,4),...,(N-1,0)``; odd N adds a third round of one pair, so the
  node left out of each round still meets two partners. Rounds are O(1) whatever N is.
* :func:`judge` reads the results: a node that passed with some partner is good; a bad pair where
  one partner is good elsewhere blames the other; a node bad with two good partners is confirmed
  bad; a bad pair of two nodes good elsewhere is a path (cable/switch) anomaly, not a node fault.
* pass 2 (:func:`followup_rounds`): every node not yet told apart (both partners bad too, or
  blamed only once) is paired with known-good nodes it has not met, in disjoint rounds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

Pair = tuple[str, str]


def pair_rounds(hosts: Sequence[str]) -> list[list[Pair]]:
    """Pass-1 rounds for ``hosts`` (in the given order): every node gets up to 2 different partners."""
    n = len(hosts)
    if n < 2:
        return []
    h = list(hosts)
    r1 = [(h[i], h[i + 1]) for i in range(0, n - 1, 2)]
    if n == 2:
        return [r1]
    if n % 2 == 0:
        r2 = [(h[i], h[(i + 1) % n]) for i in range(1, n, 2)]
        return [r1, r2]
    # odd: round 1 leaves h[n-1] out, round 2 (1,2)..(n-2,n-1) leaves h[0] out; round 3 joins the
    # two ends so both meet a second partner.
    r2 = [(h[i], h[i + 1]) for i in range(1, n - 1, 2)]
    return [r1, r2, [(h[n - 1], h[0])]]


def naive_all_pairs(n: int) -> tuple[int, int]:
    """(rounds, tests) of testing every pair: round-robin needs n-1 rounds (n when n is odd)."""
    if n < 2:
        return (0, 0)
    return (n - 1 if n % 2 == 0 else n, n * (n - 1) // 2)


def schedule_size(rounds: Iterable[Sequence[Pair]]) -> tuple[int, int]:
    """(rounds, tests) of a schedule."""
    rs = [r for r in rounds if r]
    return (len(rs), sum(len(r) for r in rs))


@dataclass
class Verdicts:
    """What the pair results say about each node."""

    good: set[str] = field(default_factory=set)  # passed with at least one partner
    bad: dict[str, list[str]] = field(default_factory=dict)  # node -> good partners it failed with
    suspect: set[str] = field(default_factory=set)  # failed only with partners that are not known good
    path_anomalies: list[Pair] = field(default_factory=list)  # bad pair of two nodes good elsewhere

    def confirmed(self, min_evidence: int = 2) -> dict[str, list[str]]:
        """Bad nodes seen failing with at least ``min_evidence`` different good partners."""
        return {h: p for h, p in self.bad.items() if len(set(p)) >= min_evidence}

    def unresolved(self, min_evidence: int = 2) -> set[str]:
        """Nodes needing pass 2: suspects, and bad nodes with fewer than ``min_evidence`` good partners."""
        return self.suspect | {h for h, p in self.bad.items() if len(set(p)) < min_evidence}


def judge(results: Mapping[Pair, bool]) -> Verdicts:
    """Verdicts from pair results (``True`` = the pair met the expected bandwidth)."""
    v = Verdicts()
    for (a, b), ok in results.items():
        if ok:
            v.good.update((a, b))
    for (a, b), ok in results.items():
        if ok:
            continue
        a_good, b_good = a in v.good, b in v.good
        if a_good and b_good:
            v.path_anomalies.append((a, b))
        elif a_good:
            v.bad.setdefault(b, []).append(a)
        elif b_good:
            v.bad.setdefault(a, []).append(b)
        else:
            v.suspect.update((a, b))
    v.suspect -= set(v.bad)
    return v


def followup_rounds(
    verdicts: Verdicts,
    met: Iterable[Pair] = (),
    *,
    partners: int = 2,
) -> list[list[Pair]]:
    """Pass 2: pair every unresolved node with ``partners`` known-good nodes it has not met yet.

    Each round is disjoint (a node is in at most one pair per round); a good node may serve several
    suspects across rounds. Returns no rounds when nothing is unresolved or no node is known good.
    """
    good = sorted(verdicts.good)
    if not good:
        return []
    seen: set[frozenset[str]] = {frozenset(p) for p in met}
    need: dict[str, int] = {}
    for h in sorted(verdicts.unresolved(partners)):
        have = len(set(verdicts.bad.get(h, [])))
        need[h] = max(partners - have, 0) if h in verdicts.bad else partners
    need = {h: k for h, k in need.items() if k}
    rounds: list[list[Pair]] = []
    cursor = 0
    while need:
        used: set[str] = set()
        rnd: list[Pair] = []
        for h in list(need):
            for step in range(len(good)):
                g = good[(cursor + step) % len(good)]
                if g in used or g == h or frozenset((h, g)) in seen:
                    continue
                rnd.append((h, g))
                used.update((h, g))
                seen.add(frozenset((h, g)))
                cursor = (cursor + step + 1) % len(good)
                need[h] -= 1
                break
            else:
                if all(g == h or frozenset((h, g)) in seen for g in good):
                    need[h] = 0  # met every good node already
            if need[h] <= 0:
                del need[h]
        if not rnd:
            break
        rounds.append(rnd)
    return rounds
