"""One run of the remediation loop (clusterctl/lifecycle/flow.py) against a stand-in controller that
prints ``scontrol show node`` as Slurm does (the layout of tests/fixtures/scontrol-node/) and keeps
what the loop asks of it; the lab test (tests/integration/test_lifecycle_lab.py) does it for real."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import read_fixture

from clusterctl.lifecycle import core, flow
from clusterctl.lifecycle.core import Config
from clusterctl.lifecycle.store import Busy, Store


class Controller:
    """``scontrol`` on a controller: show node, update State=DRAIN/FAIL/RESUME, reboot ASAP nextstate=DOWN, as
    slurm 22.05 answers them (seen in the lab, ReturnToService=2): the reboot's completion leaves the node DOWN
    and drops its DRAIN flag, its next registration (:meth:`registers`) returns a DOWN node to service, a FAIL
    flag survives both."""

    def __init__(self, nodes: dict[str, tuple[str, str]]) -> None:
        self.nodes = dict(nodes)  # name -> (State=, Reason=)
        self.boot = dict.fromkeys(nodes, "2026-12-01T00:00:00")
        self.calls: list[tuple[str, ...]] = []

    def show_nodes(self) -> str:
        out = []
        for n, (state, reason) in self.nodes.items():
            out.append(f"NodeName={n} Arch=x86_64 CoresPerSocket=4\n   State={state} ThreadsPerCore=1\n"
                       f"   Partitions=gpu\n   BootTime={self.boot[n]} SlurmdStartTime={self.boot[n]}\n"
                       + (f"   Reason={reason} [root@2026-12-01T00:00:00]\n" if reason else "") + "\n")
        return "".join(out)

    def drain(self, nodes: Sequence[str], reason: str) -> None:
        self.calls.append(("drain", *nodes, reason))
        for n in nodes:
            base = self.nodes[n][0].split("+")[0]
            self.nodes[n] = (f"{base}+DRAIN", reason)

    def resume(self, nodes: Sequence[str]) -> None:
        self.calls.append(("resume", *nodes))
        for n in nodes:
            self.nodes[n] = ("IDLE", "")

    def fail(self, nodes: Sequence[str], reason: str) -> None:
        self.calls.append(("fail", *nodes, reason))
        for n in nodes:
            flags = [f for f in self.nodes[n][0].split("+") if f not in ("DRAIN", "FAIL")]
            self.nodes[n] = ("+".join([flags[0], "FAIL", *flags[1:]]), reason)

    def reboot(self, nodes: Sequence[str], reason: str) -> None:
        self.calls.append(("reboot", *nodes, reason))
        for n in nodes:
            self.nodes[n] = ("DOWN+DRAIN+REBOOT_ISSUED", reason)

    def booted(self, n: str) -> None:
        """The reboot completed: DOWN (nextstate=DOWN), DRAIN dropped, FAIL kept."""
        state, reason = self.nodes[n]
        self.nodes[n] = ("DOWN+FAIL" if "+FAIL" in state else "DOWN", f"{reason} : reboot issued : reboot complete")
        self.boot[n] = "2026-12-02T00:00:00"

    def registers(self, n: str) -> None:
        """slurmd registers again (ReturnToService=2): a DOWN node without DRAIN or FAIL returns to service."""
        state, reason = self.nodes[n]
        flags = state.split("+")
        if flags[0] == "DOWN" and not {"DRAIN", "FAIL"} & set(flags):
            self.nodes[n] = ("IDLE", "")
        elif flags[0] == "DOWN":
            self.nodes[n] = ("+".join(["IDLE", *flags[1:]]), reason)


def test_views_from_a_real_scontrol_capture() -> None:
    text = read_fixture("scontrol-node/drained-and-idle.txt")
    views = {v.name: v for v in flow.views_from_text(text)}
    # read off the capture: gpu-node-07 State=IDLE+DRAIN, Reason=clusterctl: ib port ..., BootTime=2024-11-01T08:12:44
    v7 = views["gpu-node-07"]
    assert v7.state == "IDLE+DRAIN" and v7.reason == "clusterctl: ib port mlx5_3/1 DOWN/Polling"
    assert v7.partitions == ("gpu", "debug") and v7.boot_time == "2024-11-01T08:12:44"
    assert v7.out_of_service and v7.ours and v7.idle
    assert not views["gpu-node-08"].out_of_service


def _loop(ctl: Controller, store: Store, verdicts: dict[str, bool], cfg: Config | None = None,
          dry_run: bool = False) -> flow.RunReport:
    def verify(node: str) -> tuple[bool, str]:
        ok = verdicts.get(node, True)
        return ok, f"/evidence/{node}/node-check.txt: {'ok' if ok else 'Xid 79 again'}"

    return flow.remediate(ctl, store, cfg or Config(share=0.5, window_s=3600), verify=verify,
                          reset=lambda n: (True, "reset"), dry_run=dry_run)


def test_reboot_reverify_twice_resume_and_log(tmp_path: Path) -> None:
    cause = "clusterctl: node-check: xid.fallen_off_bus c1/gpu0: Xid 79 (evidence /var/lib/clusterctl/nc/x)"
    ctl = Controller({"c1": ("IDLE+DRAIN", cause), "c2": ("IDLE+DRAIN", "bob: fan"), "c3": ("IDLE", ""),
                      "c4": ("MIXED", "")})
    store = Store(tmp_path / "lifecycle")
    dry = _loop(ctl, store, {}, dry_run=True)
    assert [(s.action.kind, s.outcome) for s in dry.steps] == [("reboot", "would")]
    assert ctl.calls == [] and store.load() == {}
    _loop(ctl, store, {})
    assert ctl.calls[0][:2] == ("reboot", "c1") and ctl.calls[0][2].startswith("clusterctl: remediating: reboot")
    assert ctl.calls[1] == ("fail", "c1", ctl.calls[0][2])  # held through the reboot
    assert flow.nodes(ctl, store)[0].state == core.REMEDIATING
    _loop(ctl, store, {})  # not back yet: nothing
    assert len(ctl.calls) == 2
    ctl.booted("c1")
    _loop(ctl, store, {"c1": False})  # back; the fault is still there: stays out of service
    assert ctl.nodes["c1"][0].startswith("DOWN")
    _loop(ctl, store, {})  # first pass
    assert ctl.nodes["c1"][0].startswith("DOWN")
    _loop(ctl, store, {})  # second pass: resumed
    assert ctl.calls[-1] == ("resume", "c1") and ctl.nodes["c1"] == ("IDLE", "")
    assert not any(c[1] == "c2" for c in ctl.calls)  # the admin's drain
    log = [json.loads(ln) for ln in store.actions_file.read_text().splitlines()]
    assert [(e["node"], e["kind"], e["outcome"]) for e in log if not e["dry_run"]] == [
        ("c1", "reboot", "done"), ("c1", "verify", "failed"), ("c1", "verify", "passed"),
        ("c1", "verify", "passed"), ("c1", "resume", "done")]
    assert "Xid 79 again" in log[2]["evidence"] and log[0]["slurm_reason"] == cause
    # fails again within the window: quarantined, listed with its history
    ctl.nodes["c1"] = ("IDLE+DRAIN", cause)
    _loop(ctl, store, {})
    assert ctl.nodes["c1"][1].startswith("clusterctl: quarantined: failed again")
    st = {s.name: s for s in flow.nodes(ctl, store)}
    assert st["c1"].state == core.QUARANTINED and [h["event"] for h in st["c1"].history][-3:] == [
        "reboot", "resumed", "quarantined"]
    assert st["c2"].state == core.ADMIN_DRAINED and st["c3"].state == core.IN_SERVICE
    _loop(ctl, store, {})
    assert ctl.calls[-1][0] == "drain"  # nothing more


def test_a_rebooted_node_stays_out_until_two_verifies_pass(tmp_path: Path) -> None:
    """Slurm drops the DRAIN flag when the reboot completes and ReturnToService=2 returns the DOWN node to
    service at its next registration (the lab's CI failure: resumed by Slurm between the loop's two verifies):
    the FAIL the loop sets with the reboot keeps it out until the loop resumes it."""
    cause = "clusterctl: node-check: ib_port_state c1/mlx5_1/1 evidence=/x: port DOWN"
    ctl = Controller({"c1": ("IDLE+DRAIN", cause), "c2": ("IDLE", "")})
    store = Store(tmp_path / "lifecycle")
    _loop(ctl, store, {})
    ctl.booted("c1")
    ctl.registers("c1")
    assert ctl.nodes["c1"][0] == "IDLE+FAIL" and ctl.nodes["c1"][1].startswith("clusterctl: remediating: reboot")
    report = _loop(ctl, store, {})
    assert [(s.action.kind, s.outcome) for s in report.steps] == [("verify", "passed")]
    ctl.registers("c1")
    assert ctl.nodes["c1"][0] == "IDLE+FAIL"  # one pass: still out
    report = _loop(ctl, store, {})
    assert [(s.action.kind, s.outcome) for s in report.steps] == [("verify", "passed"), ("resume", "done")]
    assert ctl.nodes["c1"] == ("IDLE", "")


def test_a_node_back_down_from_an_older_reboot_is_held_before_its_verify(tmp_path: Path) -> None:
    """A reboot issued without the hold (a loop before it, or an admin's FAIL cleared): the node is back DOWN
    and would be returned by its next registration; the loop holds it (FAIL) before it verifies."""
    cause = "clusterctl: node-check: xid.fallen_off_bus c1/gpu0: Xid 79"
    ctl = Controller({"c1": ("IDLE+DRAIN", cause), "c2": ("IDLE", "")})
    store = Store(tmp_path / "lifecycle")
    _loop(ctl, store, {})
    ctl.nodes["c1"] = ("DOWN+DRAIN+REBOOT_ISSUED", ctl.nodes["c1"][1])  # as if no FAIL had been set
    ctl.booted("c1")
    assert ctl.nodes["c1"][0] == "DOWN"
    _loop(ctl, store, {})
    assert ctl.calls[-1][:2] == ("fail", "c1") and ctl.calls[-1][2].endswith(": reboot complete")
    ctl.registers("c1")
    assert ctl.nodes["c1"][0] == "IDLE+FAIL"


def test_admin_takes_over_between_decision_and_action(tmp_path: Path) -> None:
    cause = "clusterctl: xid.fallen_off_bus c1/gpu0: Xid 79"
    ctl = Controller({"c1": ("IDLE+DRAIN", cause), "c2": ("IDLE", "")})
    real_show = ctl.show_nodes
    shows = []

    def show() -> str:  # the admin drains c1 right after the loop's first look
        shows.append(1)
        if len(shows) == 2:
            ctl.nodes["c1"] = ("IDLE+DRAIN", "alice: reseating GPU0")
        return real_show()

    ctl.show_nodes = show  # type: ignore[method-assign]
    report = _loop(ctl, Store(tmp_path / "s"), {})
    assert [(s.action.kind, s.outcome) for s in report.steps] == [("reboot", "skipped")]
    assert ctl.calls == [] and ctl.nodes["c1"][1] == "alice: reseating GPU0"


def test_one_loop_at_a_time(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    ctl = Controller({"c1": ("IDLE", "")})
    with store.locked(), pytest.raises(Busy):
        _loop(ctl, store, {})


def test_commands_refuse_bad_input_with_exit_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from clusterctl.cli import app

    repo = Path(__file__).resolve().parents[2]
    res = CliRunner().invoke(app, ["remediate", str(repo / "inventories" / "lab"), "--once", "--reverify", "full",
                                   "--json"])
    assert res.exit_code == 2 and "'full' is not one of 'node', 'quick'" in res.stdout
    bad = repo / "tests" / "bad_inventories" / "address-with-prefix"
    for cmd in (["remediate", str(bad), "--once"], ["nodes", str(bad)]):
        res = CliRunner().invoke(app, cmd)
        assert res.exit_code == 2, (cmd, res.output)
    res = CliRunner().invoke(app, ["remediate", str(repo / "inventories" / "lab"), "--share", "0"])
    assert res.exit_code == 2


def test_burn_in_gate(tmp_path: Path) -> None:
    from clusterctl.lifecycle import burnin

    a = {"gpus": ["GPU-a/1", "GPU-b/2"], "nics": ["0x1"], "kernel": "6.1.0-28", "driver": "550.90.07"}
    ctl = Controller({"c1": ("IDLE", ""), "c2": ("IDLE", ""), "c3": ("IDLE", ""), "c4": ("IDLE", "")})
    store = Store(tmp_path / "s")
    idents = {"c1": dict(a), "c2": {**a, "gpus": ["GPU-c/3", "GPU-d/4"]}, "c3": {**a, "nics": ["0x3"]}}
    verdicts: dict[str, bool] = {}

    def loop(dry: bool = False) -> flow.RunReport:
        return flow.remediate(ctl, store, Config(share=0.25), verify=lambda n: (verdicts.get(n, True), f"ev {n}"),
                              reset=lambda n: (True, ""), identify=lambda: {k: dict(v) for k, v in idents.items()},
                              dry_run=dry)

    # the first run adopts every identity as it is: enabling the gate drains nothing
    assert [(s.action.kind, s.action.node) for s in loop().steps] == [("adopt", "c1"), ("adopt", "c2"),
                                                                       ("adopt", "c3")]
    assert ctl.calls == [] and loop().steps == []
    # c1 returns with a replaced GPU and a new kernel; c4 joins; c3 is drained by an admin meanwhile
    idents["c1"] = {**a, "gpus": ["GPU-a/1", "GPU-z/9"], "kernel": "6.1.0-30"}
    idents["c4"] = dict(a)
    ctl.nodes["c3"] = ("IDLE+DRAIN", "bob: cabling")
    idents["c3"] = {**a, "nics": ["0x9"]}
    assert [s.action.kind for s in loop(dry=True).steps] == ["burn_in_drain", "wait"] and ctl.calls == []
    steps = loop().steps
    assert [(s.action.kind, s.action.node) for s in steps] == [("burn_in_drain", "c1"), ("wait", "c4")]
    assert ctl.nodes["c1"] == ("IDLE+DRAIN", "clusterctl: burn-in: gpus -1 +1, kernel 6.1.0-28 -> 6.1.0-30")
    assert ctl.nodes["c3"][1] == "bob: cabling" and ctl.nodes["c4"] == ("IDLE", "")  # share 0.25 of 4: 1
    st = {s.name: s.state for s in flow.nodes(ctl, store)}
    assert st["c1"] == core.BURN_IN and st["c3"] == core.ADMIN_DRAINED
    # its checks fail: it stays drained; then they pass: accepted and resumed
    verdicts["c1"] = False
    assert [(s.action.kind, s.outcome) for s in loop().steps][:1] == [("burn_in_verify", "failed")]
    assert ctl.nodes["c1"][1].startswith("clusterctl: burn-in")
    verdicts["c1"] = True
    steps = loop().steps
    assert [(s.action.node, s.action.kind, s.outcome) for s in steps][:2] == [
        ("c1", "burn_in_verify", "passed"), ("c1", "resume", "done")]
    assert ctl.nodes["c1"] == ("IDLE", "")
    acc = store.load_acceptance()
    assert burnin.accepted(acc, "c1", idents["c1"]) and acc["c1"][burnin.fingerprint(idents["c1"])]["how"] == \
        "burn-in passed"
    # then c4 (the new node) gets its turn
    assert ("c4", "burn_in_drain") in [(s.action.node, s.action.kind) for s in loop().steps]
    assert ctl.nodes["c4"] == ("IDLE+DRAIN", "clusterctl: burn-in: new node")


def test_burn_in_of_an_accepted_identity_is_verified_not_left_drained(tmp_path: Path) -> None:
    """A node drained ``clusterctl: burn-in`` whose identity is (again) an accepted one - back to the accepted
    kernel while in burn-in, or drained for burn-in by hand - is verified and resumed when it passes; before,
    the gate skipped accepted identities and the node stayed drained for ever."""
    from clusterctl.lifecycle import burnin

    a = {"gpus": ["GPU-a/1"], "nics": ["0x1"], "kernel": "6.1.0-28", "driver": "550.90.07"}
    ctl = Controller({"c1": ("IDLE", ""), "c2": ("IDLE", "")})
    store = Store(tmp_path / "s")
    idents = {"c1": dict(a), "c2": dict(a, nics=["0x2"])}
    verdicts: dict[str, bool] = {}

    def loop() -> flow.RunReport:
        return flow.remediate(ctl, store, Config(share=0.5), verify=lambda n: (verdicts.get(n, True), f"ev {n}"),
                              reset=lambda n: (True, ""), identify=lambda: {k: dict(v) for k, v in idents.items()})

    loop()  # adopts both
    idents["c1"]["kernel"] = "6.1.0-30"
    loop()
    assert ctl.nodes["c1"][1] == "clusterctl: burn-in: kernel 6.1.0-28 -> 6.1.0-30"
    verdicts["c1"] = False
    assert [(s.action.kind, s.outcome) for s in loop().steps] == [("burn_in_verify", "failed")]
    idents["c1"]["kernel"] = "6.1.0-28"  # rolled back to the accepted kernel while in burn-in
    verdicts["c1"] = True
    steps = [(s.action.node, s.action.kind, s.outcome) for s in loop().steps]
    assert steps == [("c1", "burn_in_verify", "passed"), ("c1", "resume", "done")], steps
    assert ctl.nodes["c1"] == ("IDLE", "")
    # drained for burn-in by hand (an accepted identity): verified; it stays drained while it fails
    ctl.nodes["c2"] = ("IDLE+DRAIN", "clusterctl: burn-in: after a cable swap")
    verdicts["c2"] = False
    assert [(s.action.node, s.action.kind, s.outcome) for s in loop().steps] == [("c2", "burn_in_verify", "failed")]
    assert ctl.nodes["c2"][1].startswith("clusterctl: burn-in")
    verdicts["c2"] = True
    assert [(s.action.kind, s.outcome) for s in loop().steps] == [("burn_in_verify", "passed"), ("resume", "done")]
    assert burnin.accepted(store.load_acceptance(), "c2", idents["c2"]) and loop().steps == []


def test_burn_in_full_checks_with_a_known_good_idle_partner(tmp_path: Path) -> None:
    """The burn-in gate's full checks get a known-good partner for the node's pair tests: in service, idle,
    in a partition of the node; never a busy node (a pair test would disturb its job) nor a drained one.
    Without one the node stays in burn-in."""
    a = {"gpus": ["GPU-a/1"], "nics": ["0x1"], "kernel": "6.1.0-28", "driver": "550.90.07"}
    ctl = Controller({"c1": ("IDLE", ""), "c2": ("ALLOCATED", ""), "c3": ("IDLE+DRAIN", "bob: fan"),
                      "c4": ("IDLE", "")})
    store = Store(tmp_path / "s")
    idents = {n: dict(a, nics=[f"0x{i}"]) for i, n in enumerate(("c1", "c2", "c3", "c4"))}
    calls: list[tuple[str, list[str]]] = []

    def burn(node: str, partners: list[str]) -> tuple[bool, str]:
        calls.append((node, partners))
        return bool(partners), f"full verify with {partners}"

    def loop() -> flow.RunReport:
        return flow.remediate(ctl, store, Config(share=0.5), verify=lambda n: (True, "node check"),
                              reset=lambda n: (True, ""), identify=lambda: {k: dict(v) for k, v in idents.items()},
                              burn_verify=burn)

    loop()  # adopts
    idents["c1"]["kernel"] = "6.1.0-30"  # c1 returns with a new kernel: drained for burn-in
    loop()
    assert ctl.nodes["c1"][1].startswith("clusterctl: burn-in")
    steps = loop().steps
    assert calls == [("c1", ["c4"])], calls  # c2 runs a job, c3 is drained: c4 is the partner
    assert [(s.action.kind, s.outcome) for s in steps][:2] == [("burn_in_verify", "passed"), ("resume", "done")]
    # no idle partner: the node stays in burn-in, saying why
    ctl.nodes["c4"] = ("MIXED", "")
    idents["c1"]["driver"] = "560.35.03"
    loop()
    steps = loop().steps
    assert calls[-1] == ("c1", []) and [(s.action.kind, s.outcome) for s in steps][:1] == [("burn_in_verify",
                                                                                            "failed")]
    assert ctl.nodes["c1"][1].startswith("clusterctl: burn-in")


def test_burn_in_verifier_levels(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from clusterctl.lifecycle import probes

    checked: list[str] = []
    verdict = {"ok": True}

    def fake_check(inventory: Path, *, level: str = "quick", program: str = "") -> flow.Verifier:
        checked.append(level)
        return lambda node: (verdict["ok"], f"node check {node}")

    full: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(probes, "node_check_verifier", fake_check)
    def fake_full(inventory: Path, node: str, partners: list[str]) -> tuple[bool, str]:
        full.append((node, partners))
        return True, "full"

    monkeypatch.setattr(probes, "full_verify", fake_full)
    v = probes.burn_in_verifier(tmp_path, level="full")
    assert checked == ["quick"]
    assert v("c1", ["c4"]) == (True, "full") and full == [("c1", ["c4"])]
    ok, why = v("c1", [])
    assert not ok and "no idle known-good partner" in why and len(full) == 1
    verdict["ok"] = False
    assert v("c1", ["c4"]) == (False, "node check c1") and len(full) == 1  # a failed node check is enough
    assert probes.burn_in_verifier(tmp_path, level="node")("c1", ["c4"]) == (False, "node check c1")
    assert checked[-1] == "node" and len(full) == 1


def test_burn_in_gate_first_run_verifies_a_node_held_at_registration(tmp_path: Path) -> None:
    """A node the slurm_controller role drained ``clusterctl: burn-in: new node`` when it joined (before the
    gate's first run, so no identity is accepted yet) is verified on that first run, not adopted as it is;
    the other nodes are adopted. It is resumed and accepted only when its checks pass."""
    from clusterctl.lifecycle import burnin

    a = {"gpus": ["GPU-a/1"], "nics": ["0x1"], "kernel": "6.1.0-28", "driver": "550.90.07"}
    ctl = Controller({"c1": ("IDLE", ""), "c2": ("IDLE+DRAIN", "clusterctl: burn-in: new node")})
    store = Store(tmp_path / "s")
    verdicts = {"c2": False}

    def loop() -> flow.RunReport:
        return flow.remediate(ctl, store, Config(share=0.5), verify=lambda n: (verdicts.get(n, True), f"ev {n}"),
                              reset=lambda n: (True, ""),
                              identify=lambda: {"c1": dict(a), "c2": {**a, "nics": ["0x2"]}})

    assert [(s.action.kind, s.action.node, s.outcome) for s in loop().steps] == [
        ("adopt", "c1", "done"), ("burn_in_verify", "c2", "failed")]
    assert ctl.nodes["c2"] == ("IDLE+DRAIN", "clusterctl: burn-in: new node")
    assert not burnin.accepted(store.load_acceptance(), "c2", {**a, "nics": ["0x2"]})
    verdicts["c2"] = True
    assert [(s.action.kind, s.action.node, s.outcome) for s in loop().steps][:2] == [
        ("burn_in_verify", "c2", "passed"), ("resume", "c2", "done")]
    assert ctl.nodes["c2"] == ("IDLE", "")
    assert store.load_acceptance()["c2"][burnin.fingerprint({**a, "nics": ["0x2"]})]["how"] == "burn-in passed"
