"""The lifecycle's decision table (clusterctl/lifecycle/core.py, issue 25): remedies read from the
severity table, and, over random sequences of events (hypothesis), the safety rules: never touch a
node someone else drained, never more than the share of a partition in remediation, no resume
without two passing verifies in a row, a node failing again within the window is quarantined."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from clusterctl.analysis import severity
from clusterctl.lifecycle import core
from clusterctl.lifecycle.core import Action, Config, NodeView, Record

# -- the table ----------------------------------------------------------------------------------


def test_remedy_comes_from_the_severity_table() -> None:
    rules = severity.rules()
    for rid, r in rules.items():
        want = r.get("remedy", "none") if r["severity"] == "failed" else "none"
        assert core.remedy_of(f"clusterctl: {rid} gpu3: x")[0] == want, rid
    # a reason that names only the check: the most disruptive remedy of its failed rules (none wins)
    assert rules["gpu_row_remap.pending"]["remedy"] == "gpu_reset" and "remedy" not in rules["gpu_row_remap.failure"]
    assert core.remedy_of("clusterctl: gpu_row_remap n1/gpu0: pending")[0] == "none"
    # the check gpu_reset has a rule whose remedy is a reboot (recovery action Reboot): the check alone reboots
    assert core.remedy_of("clusterctl: gpu_reset n1/gpu0: Reset Required")[0] == "reboot"
    assert core.remedy_of("clusterctl: gpu_reset.required n1/gpu0: Reset Required")[0] == "gpu_reset"
    # the node check's reasons name the rule after 'node-check:'
    assert core.remedy_of("clusterctl: node-check: xid.fallen_off_bus gpu0: Xid 79")[0] == "reboot"
    assert core.remedy_of("clusterctl: something unknown")[0] == "none"
    assert core.remedy_of("maintenance")[0] == "none"


def _v(name: str, state: str, reason: str = "", parts: tuple[str, ...] = ("p",), boot: str = "1") -> NodeView:
    return NodeView(name, state, reason, parts, boot)


CFG = Config(share=0.5, window_s=3600)


def test_decision_table_per_reason() -> None:
    views = [_v("n1", "IDLE+DRAIN", "clusterctl: gpu_reset.required n1/gpu0: Reset Required: Yes"),
             _v("n2", "IDLE+DRAIN", "clusterctl: node-check: xid.fallen_off_bus n2/gpu1: Xid 79"),
             _v("n3", "IDLE+DRAIN", "clusterctl: gpu_row_remap.failure n3/gpu2: failed"),
             _v("n4", "IDLE+DRAIN", "rma ticket 42"),
             _v("n5", "IDLE"), _v("n6", "IDLE"), _v("n7", "IDLE"), _v("n8", "IDLE")]
    acts = {a.node: a for a in core.decide(views, {}, CFG, 0.0)}
    assert acts["n1"].kind == core.GPU_RESET and acts["n1"].reason.startswith("clusterctl: remediating: gpu reset")
    assert acts["n2"].kind == core.REBOOT and "xid.fallen_off_bus" in acts["n2"].reason
    assert "n3" not in acts and "n4" not in acts  # needs hardware; an admin's drain
    assert core.classify(views[3], None) == core.ADMIN_DRAINED
    assert core.classify(views[2], None) == core.DRAINED


def test_gpu_reset_waits_for_idle_and_reboot_does_not() -> None:
    views = [_v("n1", "MIXED+DRAIN", "clusterctl: gpu_reset.required n1/gpu0: x"),
             _v("n2", "MIXED+DRAIN", "clusterctl: xid.fallen_off_bus n2/gpu0: x"), _v("n3", "IDLE"), _v("n4", "IDLE")]
    acts = {a.node: a.kind for a in core.decide(views, {}, CFG, 0.0)}
    assert acts == {"n1": core.WAIT, "n2": core.REBOOT}  # scontrol reboot ASAP waits for the jobs itself


def test_share_limit_holds_back_the_rest() -> None:
    views = [_v(f"n{i}", "IDLE+DRAIN", f"clusterctl: xid.fallen_off_bus n{i}/gpu0: x") for i in range(4)]
    views += [_v(f"m{i}", "IDLE") for i in range(4)]
    acts = core.decide(views, {}, Config(share=0.25), 0.0)
    assert [a.kind for a in acts].count(core.REBOOT) == 2
    assert [a.kind for a in acts].count(core.WAIT) == 2
    assert core.share_limit(3, 0.25) == 0  # floor: a 3-node partition at 25% is never remediated automatically


def test_two_passes_then_resume_and_quarantine_within_window() -> None:
    cfg = CFG
    recs: dict[str, Record] = {}
    cause = "clusterctl: xid.fallen_off_bus n1/gpu0: Xid 79"
    v = _v("n1", "IDLE+DRAIN", cause, boot="1")
    others = [_v("n2", "IDLE")]
    [a] = core.decide([v, *others], recs, cfg, 0.0)
    assert a.kind == core.REBOOT
    assert core.after(recs, a, v, 0.0) == []
    assert recs["n1"].phase == core.REBOOTING
    rebooting = _v("n1", "DOWN+DRAIN+REBOOT_ISSUED", a.reason, boot="1")
    assert core.decide([rebooting, *others], recs, cfg, 10.0) == []
    back = _v("n1", "DOWN", a.reason, boot="2")
    [a2] = core.decide([back, *others], recs, cfg, 20.0)
    assert a2.kind == core.VERIFY
    assert core.after(recs, a2, back, 20.0, ok=True) == []  # one pass is not enough
    [a3] = core.decide([back, *others], recs, cfg, 30.0)
    assert core.after(recs, a3, back, 30.0, ok=False, evidence="still Xid 79") == []  # a failure resets the count
    [a4] = core.decide([back, *others], recs, cfg, 40.0)
    assert core.after(recs, a4, back, 40.0, ok=True) == []
    [a5] = core.decide([back, *others], recs, cfg, 50.0)
    [resume] = core.after(recs, a5, back, 50.0, ok=True)
    assert resume.kind == core.RESUME
    core.after(recs, resume, back, 50.0)
    assert recs["n1"].resumed == [50.0] and recs["n1"].phase == ""
    again = _v("n1", "IDLE+DRAIN", "clusterctl: node-check: xid.fallen_off_bus n1/gpu0: Xid 79", boot="2")
    [q] = core.decide([again, *others], recs, cfg, 50.0 + 3600)
    assert q.kind == core.QUARANTINE and q.reason.startswith("clusterctl: quarantined: failed again")
    core.after(recs, q, again, 3650.0)
    quarantined = _v("n1", "IDLE+DRAIN", q.reason, boot="2")
    assert core.classify(quarantined, recs["n1"]) == core.QUARANTINED
    assert core.decide([quarantined, *others], recs, cfg, 4000.0) == []
    # outside the window it would have been remediated again
    recs2 = {"n1": Record(resumed=[0.0])}
    assert core.decide([again, *others], recs2, cfg, 3601.0)[0].kind == core.REBOOT


def test_gives_up_after_failed_verifies_and_a_stuck_reboot() -> None:
    cfg = Config(share=1.0, max_failed_verifies=2, reboot_timeout_s=100)
    recs = {"n1": Record(phase=core.VERIFYING, remedy="gpu_reset", cause="clusterctl: gpu_reset.required x")}
    v = _v("n1", "IDLE+DRAIN", "clusterctl: remediating: gpu reset (was: gpu_reset.required x)")
    assert core.after(recs, Action(core.VERIFY, "n1"), v, 1.0, ok=False, evidence="e1", cfg=cfg) == []
    [g] = core.after(recs, Action(core.VERIFY, "n1"), v, 2.0, ok=False, evidence="e2", cfg=cfg)
    assert g.kind == core.GIVE_UP and g.reason.startswith("clusterctl: needs hardware: gpu_reset did not clear it")
    recs = {"n1": Record(phase=core.REBOOTING, since=0.0, boot_before="1")}
    stuck = _v("n1", "DOWN+DRAIN+REBOOT_ISSUED", "clusterctl: remediating: reboot (was: x)", boot="1")
    assert core.decide([stuck], recs, cfg, 50.0) == []
    assert core.decide([stuck], recs, cfg, 101.0)[0].kind == core.GIVE_UP


def test_failed_gpu_reset_falls_back_to_reboot() -> None:
    recs: dict[str, Record] = {}
    v = _v("n1", "IDLE+DRAIN", "clusterctl: gpu_reset.required n1/gpu0: x")
    [a] = core.decide([v, _v("n2", "IDLE")], recs, CFG, 0.0)
    core.after(recs, a, v, 0.0, ok=False, evidence="nvidia-smi -r: In use by another client")
    assert core.decide([v, _v("n2", "IDLE")], recs, CFG, 1.0)[0].kind == core.REBOOT


def test_config_refuses_unsafe_values() -> None:
    for bad in ({"share": 0}, {"share": 1.5}, {"passes": 1}, {"max_failed_verifies": 0}):
        with pytest.raises(ValueError):
            Config(**bad)  # type: ignore[arg-type]


# -- random sequences of events ------------------------------------------------------------------

NODES = ["n1", "n2", "n3", "n4"]
PARTS = {n: ("all", "half") if i < 2 else ("all",) for i, n in enumerate(NODES)}
CAUSES = ["gpu_reset.required", "xid.fallen_off_bus", "gpu_row_remap.failure", "gpu_row_remap",
          "node-check: xid.reset_or_service", "node-check: ib_port_state.down", "reconfigure gpu", "burn-in"]


@dataclass
class World:
    """Slurm as the loop sees it, driven by the test's events and the loop's actions."""

    state: dict[str, str] = field(default_factory=lambda: dict.fromkeys(NODES, "IDLE"))
    reason: dict[str, str] = field(default_factory=lambda: dict.fromkeys(NODES, ""))
    boot: dict[str, int] = field(default_factory=lambda: dict.fromkeys(NODES, 1))

    def views(self) -> list[NodeView]:
        return [NodeView(n, self.state[n], self.reason[n], PARTS[n], str(self.boot[n])) for n in NODES]


world_event = st.one_of(
    st.tuples(st.just("fault"), st.sampled_from(NODES), st.sampled_from(CAUSES), st.booleans()),
    # a fault on a node the loop resumed earlier (the i-th of them), if any
    st.tuples(st.just("refault"), st.integers(0, 3), st.sampled_from(CAUSES), st.booleans()),
    st.tuples(st.just("admin_drain"), st.sampled_from(NODES)),
    st.tuples(st.just("admin_resume"), st.sampled_from(NODES)),
    st.tuples(st.just("jobs_end"), st.sampled_from(NODES)),
    st.tuples(st.just("advance"), st.sampled_from([10, 300, 1000, 5000])),
)
#: rounds: a few things happen to the cluster, then the loop runs once (verify outcomes per node,
#: whether a GPU reset works, whether issued reboots completed)
rounds = st.lists(st.tuples(st.one_of(st.just([]), st.lists(world_event, min_size=1, max_size=1)),
                            st.lists(st.sampled_from([True, True, True, False]), min_size=4, max_size=4),
                            st.booleans(), st.sampled_from([True, True, False])), min_size=5, max_size=40)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rs=rounds, share=st.sampled_from([0.25, 0.5, 1.0]), window=st.sampled_from([0, 600, 3600]))
def test_safety_over_random_event_sequences(rs: list[tuple], share: float, window: int) -> None:
    cfg = Config(share=share, window_s=window)
    w = World()
    recs: dict[str, Record] = {}
    now = 0.0
    passes_in_row = dict.fromkeys(NODES, 0)  # the test's own count of verifies since the last action
    loop_resumed: dict[str, float] = {}  # when the loop last resumed each node
    fresh_fault: dict[str, str] = {}  # node -> the reason of a fault injected since the last run
    sizes = {p: sum(p in PARTS[n] for n in NODES) for p in ("all", "half")}
    for evs, outcomes, action_ok, booted in rs:
        for ev in evs:
            kind = ev[0]
            if kind == "refault":
                if not loop_resumed:
                    continue
                ev = ("fault", sorted(loop_resumed)[ev[1] % len(loop_resumed)], *ev[2:])
                kind = "fault"
            if kind == "fault":
                _, n, cause, busy = ev
                if w.reason[n] and not w.reason[n].startswith("clusterctl:"):
                    continue  # the node check never overwrites an admin's reason
                if "DOWN" not in w.state[n]:
                    w.state[n] = "MIXED+DRAIN" if busy else "IDLE+DRAIN"
                w.reason[n] = f"clusterctl: {cause} {n}/gpu0: injected"
                fresh_fault[n] = w.reason[n]
            elif kind == "admin_drain":
                w.state[ev[1]] = "IDLE+DRAIN"
                w.reason[ev[1]] = "bob: replacing a fan"
                fresh_fault.pop(ev[1], None)
            elif kind == "admin_resume":
                w.state[ev[1]], w.reason[ev[1]] = "IDLE", ""
                fresh_fault.pop(ev[1], None)
            elif kind == "jobs_end":
                w.state[ev[1]] = w.state[ev[1]].replace("MIXED", "IDLE")
            else:
                now += ev[1]
        if booted:
            for n in NODES:
                if "REBOOT_ISSUED" in w.state[n]:
                    w.state[n] = "DOWN"
                    w.boot[n] += 1
        views = {v.name: v for v in w.views()}
        acts = core.decide(views.values(), recs, cfg, now)
        for n, r in fresh_fault.items():  # a node the loop resumed, failing again within the window
            prior = recs.get(n, Record()).phase
            if views[n].reason == r and prior in ("",) and n in loop_resumed and now - loop_resumed[n] <= window \
                    and not r.startswith(("clusterctl: reconfigure", "clusterctl: burn-in")):
                event("quarantine checked")
                assert any(a.kind == core.QUARANTINE and a.node == n for a in acts), (n, acts)
        fresh_fault.clear()
        queue = list(acts)
        while queue:
            a = queue.pop(0)
            v = views.get(a.node)
            if a.kind in core.TOUCHING:  # never a node someone else drained, never one in service
                assert v is not None and v.out_of_service and v.reason.startswith("clusterctl:"), (a, v)
            ok = True
            if a.kind in (core.REBOOT, core.GPU_RESET):
                assert not (a.node in loop_resumed and now - loop_resumed[a.node] <= window), a
                ok = action_ok or a.kind == core.REBOOT
                passes_in_row[a.node] = 0
                if a.kind == core.REBOOT:
                    w.state[a.node], w.reason[a.node] = "DOWN+DRAIN+REBOOT_ISSUED", a.reason
                elif ok:
                    w.reason[a.node] = a.reason
            elif a.kind == core.VERIFY:
                ok = outcomes[NODES.index(a.node)]
                passes_in_row[a.node] = passes_in_row[a.node] + 1 if ok else 0
            elif a.kind == core.RESUME:
                assert passes_in_row[a.node] >= 2, (a, passes_in_row)
                w.state[a.node], w.reason[a.node] = "IDLE", ""
                loop_resumed[a.node] = now
                event("resumed")
            elif a.kind in (core.QUARANTINE, core.GIVE_UP):
                assert a.reason.startswith("clusterctl: ")
                w.reason[a.node] = a.reason
            queue += core.after(recs, a, v, now, ok=ok, evidence="e", cfg=cfg)
        views = {v.name: v for v in w.views()}
        flying = core.in_flight(views, recs)
        for p, size in sizes.items():
            assert sum(p in PARTS[n] for n in flying) <= core.share_limit(size, share), (p, flying)
