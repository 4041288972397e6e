"""Pairwise rounds for ``clusterctl verify --level full``: ib_write_bw and 2-node nccl-tests.

After the per-node capture, the nodes that can take part in a pair test are read from each node's
``_collect.json`` (the per-node run of the same test: an RDMA device and ``ib_write_bw`` for
ib_write_bw, the nccl-tests binary and a GPU for nccl-tests; a node running a job is skipped by
the collector and so left out here). Each test's nodes are paired by
:func:`clusterctl.analysis.schedule.pair_rounds` (pass 1: every node meets two partners in O(1)
rounds); round *i* of every test is one run of ``playbooks/pairtest.yml`` (ib_write_bw pairs at
once, then the nccl-tests pairs through srun). The evidence is then judged; nodes the first pass
could not tell apart from their partner are paired with known-good nodes
(:func:`~clusterctl.analysis.schedule.followup_rounds`, pass 2), each test for the pairs whose
nodes can run it. :attr:`PairwiseRun.report` is always the final judgement of the folder: the
judgement after pass 1 when no pass 2 ran (the evidence did not change since), else one more
``analyze_dir`` after pass 2; the caller never judges the folder itself.

The round runner is a parameter so the schedule logic is tested without Ansible.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusterctl.analysis import schedule

#: the pair tests, by the KIND of their per-node run in ``_collect.json``
TESTS = ("ib_write_bw", "nccl-tests")

#: One round: test -> disjoint pairs. Runs it with a label; returns the Ansible exit status.
Round = dict[str, list[schedule.Pair]]
RoundRunner = Callable[[Round, str], int]


@dataclass
class PairwiseRun:
    hosts: dict[str, list[str]] = field(default_factory=dict)  # test -> hosts paired
    excluded: dict[str, dict[str, str]] = field(default_factory=dict)  # test -> host -> why left out
    passes: list[list[Round]] = field(default_factory=list)  # pass -> rounds
    failed_rounds: list[tuple[str, int]] = field(default_factory=list)  # (label, rc)
    #: the final judgement of the evidence folder (after pass 2 when one ran); set by run_pairwise
    report: Any = None

    def lines(self) -> list[str]:
        out = []
        for test in self.hosts:
            ran = False
            for i, rounds in enumerate(self.passes, 1):
                rs, tests = schedule.schedule_size([r.get(test, []) for r in rounds])
                if rs:
                    ran = True
                    out.append(f"pairwise {test} pass {i}: {rs} round(s), {tests} pair test(s): "
                               + "; ".join(" ".join(f"{a}<->{b}" for a, b in r[test]) for r in rounds if r.get(test)))
            if not ran:
                out.append(f"pairwise {test}: not run ({len(self.hosts[test])} node(s) can take part, 2 needed)")
            for host, why in sorted(self.excluded.get(test, {}).items()):
                out.append(f"pairwise {test}: {host} left out: {why}")
        for label, rc in self.failed_rounds:
            out.append(f"pairwise: {label} failed on some host (rc {rc}); see the failures above")
        return out


def eligible(evidence: Path, hosts: Sequence[str], test: str = "ib_write_bw") -> tuple[list[str], dict[str, str]]:
    """Hosts (in the given order) whose capture shows they can run ``test``, and why the others cannot."""
    ok: list[str] = []
    excluded: dict[str, str] = {}
    for host in hosts:
        status_file = evidence / host / "_collect.json"
        try:
            status = json.loads(status_file.read_text())
        except (OSError, ValueError):
            excluded[host] = "no collector status (host unreachable or its capture failed)"
            continue
        st = status.get(test) if isinstance(status, dict) else None
        if not isinstance(st, dict):
            excluded[host] = f"the per-node {test} was not run on it"
            continue
        s = st.get("status")
        if s in ("tool_missing", "device_absent", "skipped"):
            detail = str(st.get("stderr") or "").strip().splitlines()
            excluded[host] = f"{test} {s}" + (f": {detail[0][:160]}" if detail else "")
            continue
        ok.append(host)
    return ok, excluded


def run_pairwise(
    evidence: Path,
    hosts: Mapping[str, Sequence[str]] | Sequence[str],
    expectations: Mapping[str, Any],
    run_round: RoundRunner,
) -> PairwiseRun:
    """Pass 1 per test over its eligible hosts, judge, pass 2 for the nodes still unresolved.

    ``hosts``: test -> candidate hosts (e.g. nccl-tests only on Slurm nodes), or one list for
    ib_write_bw alone.
    """
    from clusterctl.analysis.engine import analyze_dir

    candidates = dict(hosts) if isinstance(hosts, Mapping) else {"ib_write_bw": list(hosts)}
    result = PairwiseRun()
    for test, cands in candidates.items():
        result.hosts[test], result.excluded[test] = eligible(evidence, cands, test)

    def run_pass(n: int, rounds: list[Round]) -> None:
        result.passes.append(rounds)
        for i, rnd in enumerate(rounds, 1):
            label = f"pairtest-p{n}r{i}"
            rc = run_round(rnd, label)
            if rc != 0:
                result.failed_rounds.append((f"pass {n} round {i}", rc))

    per_test = {t: schedule.pair_rounds(h) for t, h in result.hosts.items()}
    depth = max((len(r) for r in per_test.values()), default=0)
    first = [{t: rs[i] for t, rs in per_test.items() if i < len(rs)} for i in range(depth)]
    run_pass(1, first)
    judged = analyze_dir(evidence, expectations)
    verdicts = judged.pair_verdicts
    met = [p for r in first for pairs in r.values() for p in pairs]
    second: list[Round] = []
    for rnd in schedule.followup_rounds(verdicts, met):
        by_test = {t: [p for p in rnd if set(p) <= set(result.hosts[t])] for t in result.hosts}
        by_test = {t: ps for t, ps in by_test.items() if ps}
        if by_test:
            second.append(by_test)
    if second:
        run_pass(2, second)
        judged = analyze_dir(evidence, expectations)
    result.report = judged
    return result
