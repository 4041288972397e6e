"""Step 2 of verify: judge the evidence folder and write the reports.

At ``--level full`` the pairwise ib_write_bw and 2-node nccl-tests rounds run first
(:mod:`clusterctl.pairwise`, one ``playbooks/pairtest.yml`` run a round) and their final judgement
is the report; at ``quick`` the folder is judged as captured. The report is written as
``verify-report.json`` and ``verify-report.html`` beside the capture's Ansible artifacts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from clusterctl.analysis.engine import HostReport, Report, analyze_dir
from clusterctl.analysis.expectations import build
from clusterctl.errors import EXIT_CANNOT_JUDGE, EXIT_HOSTS_FAILED, EXIT_OK, EXIT_UNREACHABLE, NoEvidence, UsageError
from clusterctl.inventory import load_checked
from clusterctl.pairwise import PairwiseRun, Round, RoundRunner, run_pairwise
from clusterctl.report_table import write_outputs
from clusterctl.runner import RunResult, run_playbook
from clusterctl.verify.collect import Collection, VerifyPlan

#: called before a pair round runs: (label, round)
RoundStart = Callable[[str, Round], None]
#: called after a pair round whose run failed on some host: (label, its run)
RoundFailed = Callable[[str, RunResult], None]


@dataclass
class Verification:
    """The judged capture: the report, where it was written, the pair rounds (``full``) and the
    drains made (:func:`clusterctl.verify.drain`)."""

    collection: Collection
    report: Report
    report_json: Path
    report_html: Path
    pairwise: PairwiseRun | None = None
    drained: list[dict[str, str]] = field(default_factory=list)

    @property
    def unreachable(self) -> list[str]:
        return self.collection.unreachable

    @property
    def exit_code(self) -> int:
        """3 when a node failed or left no evidence; else 4 when a node was unreachable or never reached
        (the runs' convention, README: 3 > 4 > 5 > 0); else 5 when a node cannot be judged (as
        ``analyze``); else 0 (every node healthy or degraded)."""
        if self.report.failed or self.report.no_evidence:
            return EXIT_HOSTS_FAILED
        if self.report.unreachable:
            return EXIT_UNREACHABLE
        return EXIT_CANNOT_JUDGE if self.report.cannot_judge else EXIT_OK


def account_for_every_node(report: Report, col: Collection) -> None:
    """Every node the capture was for is in the report (issue 28): a host the run could not reach or
    never got to is ``unreachable`` with why (what it left, if anything, is still judged); a target
    with no evidence folder is ``no evidence``. Never silently missing."""
    for host, why in col.run.unreached.items():
        report.hosts.setdefault(host, HostReport(host)).unreachable = why or "unreachable"
    for host in col.targets:
        report.hosts.setdefault(host, HostReport(host))


def pair_round_runner(p: VerifyPlan, *, on_start: RoundStart | None = None,
                      on_failed: RoundFailed | None = None) -> RoundRunner:
    """One ``playbooks/pairtest.yml`` run per round, its evidence into the plan's folder."""

    def run_round(rnd: Round, label: str) -> int:
        if on_start is not None:
            on_start(label, rnd)
        r = run_playbook("pairtest.yml", p.inventory, forks=p.forks, label=label, record_failures=False,
                         extravars={"clusterctl_pair_round": [list(x) for x in rnd.get("ib_write_bw", [])],
                                    "clusterctl_pair_nccl_round": [list(x) for x in rnd.get("nccl-tests", [])],
                                    "clusterctl_evidence_dir": str(p.evidence)})
        if r.rc != 0 and on_failed is not None:
            on_failed(label, r)
        return r.rc

    return run_round


def analyse(col: Collection, *, run_round: RoundRunner | None = None, on_round_start: RoundStart | None = None,
            on_round_failed: RoundFailed | None = None) -> Verification:
    """Judge the capture (``full``: after the pair rounds, ``run_round`` or :func:`pair_round_runner`)
    and write the reports. :class:`~clusterctl.errors.NoEvidence` when no host wrote any evidence."""
    p = col.plan
    if not col.collected and not col.run.unreached:
        raise NoEvidence("verify: no evidence was collected (see the failures above)")
    exp = build(p.inv.spec())
    pairs: PairwiseRun | None = None
    if p.level == "full" and col.collected:
        # the pair rounds judge the folder after their last pass: that report is final
        verified = col.verified
        slurm_nodes = set(p.inv.groups.get("slurm_compute", []))
        runner = run_round or pair_round_runner(p, on_start=on_round_start, on_failed=on_round_failed)
        pairs = run_pairwise(p.evidence, {"ib_write_bw": verified,
                                          "nccl-tests": [h for h in verified if h in slurm_nodes]}, exp, runner)
        report = pairs.report
    else:
        report = analyze_dir(p.evidence, exp)
    account_for_every_node(report, col)
    out_dir = col.run.artifacts_dir
    v = Verification(col, report, out_dir / "verify-report.json", out_dir / "verify-report.html", pairs)
    write_outputs(report, v.report_json, v.report_html, title=f"clusterctl verify {p.inventory} ({p.level})")
    return v


def judge_folder(evidence_dir: Path, inventory: Path | None = None, *, jobs: int | None = None) -> Report:
    """``clusterctl analyze``: judge a folder of ``<host>/<KIND>.txt`` captured earlier, against
    ``inventory``'s cluster spec (checked first: a bad one is refused before anything is read)
    or the defaults. :class:`~clusterctl.errors.UsageError` when it is no folder or holds no
    host folder (the refusals, if any, named)."""
    spec = load_checked(inventory).spec() if inventory is not None else None
    if not evidence_dir.is_dir():
        raise UsageError(f"analyze: {evidence_dir} is not a folder")
    report = analyze_dir(evidence_dir, build(spec), jobs=jobs)
    if not report.hosts:
        refused = "".join(f"\n  refused {evidence_dir}/{line}" for line in report.refused)
        raise UsageError(f"analyze: no <host>/ folders in {evidence_dir}{refused}")
    return report
