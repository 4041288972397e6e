"""Pairwise ib_write_bw rounds for ``clusterctl verify --level full``.

After the per-node capture, the nodes that can run a pair test (an RDMA device, ``ib_write_bw``
installed, no job running: read from each node's ``_collect.json``) are paired by
:func:`clusterctl.analysis.schedule.pair_rounds` (pass 1: every node meets two partners in O(1)
rounds), each round run by ``playbooks/pairtest.yml`` with all its pairs at once. The evidence is
then judged; nodes the first pass could not tell apart from their partner are paired with
known-good nodes (:func:`~clusterctl.analysis.schedule.followup_rounds`, pass 2). The final
judgement is the caller's ``analyze_dir`` over the same folder.

The round runner is a parameter so the schedule logic is tested without Ansible.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusterctl.analysis import schedule

#: Runs one round (disjoint ``(server, client)`` pairs) with a label; returns the Ansible exit status.
RoundRunner = Callable[[list[schedule.Pair], str], int]


@dataclass
class PairwiseRun:
    hosts: list[str] = field(default_factory=list)  # hosts paired
    excluded: dict[str, str] = field(default_factory=dict)  # host -> why it was not paired
    passes: list[list[list[schedule.Pair]]] = field(default_factory=list)  # pass -> rounds -> pairs
    failed_rounds: list[tuple[str, int]] = field(default_factory=list)  # (label, rc)

    def lines(self) -> list[str]:
        out = []
        for i, rounds in enumerate(self.passes, 1):
            rs, tests = schedule.schedule_size(rounds)
            if rs:
                out.append(f"pairwise ib_write_bw pass {i}: {rs} round(s), {tests} pair test(s): "
                           + "; ".join(" ".join(f"{a}<->{b}" for a, b in r) for r in rounds))
        if not self.passes or not any(self.passes):
            out.append(f"pairwise ib_write_bw: not run ({len(self.hosts)} node(s) can take part, 2 needed)")
        for host, why in sorted(self.excluded.items()):
            out.append(f"pairwise ib_write_bw: {host} left out: {why}")
        for label, rc in self.failed_rounds:
            out.append(f"pairwise ib_write_bw: {label} failed on some host (rc {rc}); see the failures above")
        return out


def eligible(evidence: Path, hosts: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Hosts (in the given order) whose capture shows they can run a pair test, and why the others cannot."""
    ok: list[str] = []
    excluded: dict[str, str] = {}
    for host in hosts:
        status_file = evidence / host / "_collect.json"
        try:
            status = json.loads(status_file.read_text())
        except (OSError, ValueError):
            excluded[host] = "no collector status (host unreachable or its capture failed)"
            continue
        st = status.get("ib_write_bw") if isinstance(status, dict) else None
        if not isinstance(st, dict):
            excluded[host] = "the loopback ib_write_bw was not run on it"
            continue
        s = st.get("status")
        if s in ("tool_missing", "device_absent", "skipped"):
            detail = str(st.get("stderr") or "").strip().splitlines()
            excluded[host] = f"ib_write_bw {s}" + (f": {detail[0][:160]}" if detail else "")
            continue
        ok.append(host)
    return ok, excluded


def run_pairwise(
    evidence: Path,
    hosts: Sequence[str],
    expectations: Mapping[str, Any],
    run_round: RoundRunner,
) -> PairwiseRun:
    """Pass 1 over the eligible ``hosts``, judge, pass 2 for the nodes still unresolved."""
    from clusterctl.analysis.engine import analyze_dir

    paired, excluded = eligible(evidence, hosts)
    result = PairwiseRun(hosts=paired, excluded=excluded)

    def run_pass(n: int, rounds: list[list[schedule.Pair]]) -> None:
        result.passes.append(rounds)
        for i, rnd in enumerate(rounds, 1):
            label = f"pairtest-p{n}r{i}"
            rc = run_round(rnd, label)
            if rc != 0:
                result.failed_rounds.append((f"pass {n} round {i}", rc))

    first = schedule.pair_rounds(paired)
    run_pass(1, first)
    if not first:
        return result
    verdicts = analyze_dir(evidence, expectations).pair_verdicts
    second = schedule.followup_rounds(verdicts, [p for r in first for p in r])
    if second:
        run_pass(2, second)
    return result
