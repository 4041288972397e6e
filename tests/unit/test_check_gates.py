"""The speed gates of the engine and the checks answer as the plain forms they replace (issue 29 item 7,
session 11): HostReport.add's message-first duplicate test, the throttle check's any-reason gate, the
desktop-board test of the persistence check and the port check's number-first expected rate."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from clusterctl.analysis.checks import gpu, ports
from clusterctl.analysis.engine import HostReport
from clusterctl.analysis.model import Finding

_findings = st.builds(Finding, st.sampled_from(["h1", "h2"]), st.sampled_from(["gpu_ecc", "collect"]),
                      st.sampled_from(["critical", "warning", "info"]), st.sampled_from(["h1", "h1/gpu0"]),
                      st.sampled_from(["m", "m ", "n", ""]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_findings, max_size=12))
def test_add_keeps_each_finding_once_as_list_membership_does(found: list[Finding]) -> None:
    rep = HostReport("h1")
    want: dict[str, list[Finding]] = {"info": [], "other": []}
    for f in found:
        rep.add(f)
        target = want["info" if f.severity == "info" else "other"]
        if f not in target:
            target.append(f)
    assert rep.notes == want["info"] and rep.findings == want["other"]


_reason_values = st.sampled_from([None, True, False, 0, 1, "", "x"])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.just("Active"),
                 st.dictionaries(st.sampled_from([*gpu.HW_THROTTLE, *gpu.SW_THROTTLE, "gpu_idle"]), _reason_values)),
       st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, width=32)))
def test_throttle_gate_answers_as_the_two_lists(reasons: Any, temp: float | None) -> None:
    g = {"index": 0, "bus_id": "00000000:07:00.0", "clocks_event_reasons": reasons, "temperature_c": {"gpu": temp}}
    got = gpu._throttle("h", g)
    active = isinstance(reasons, dict) and any(reasons.get(r) for r in (*gpu.HW_THROTTLE, *gpu.SW_THROTTLE))
    assert bool(got) == active
    if active:
        hw = [r for r in gpu.HW_THROTTLE if reasons.get(r)]
        assert any(", ".join(hw) in f.message for f in got) or not hw


@given(st.sampled_from(["NVIDIA GeForce RTX 4090", "TITAN RTX", "Quadro RTX 8000", "NVIDIA H100 80GB HBM3",
                        "A100-SXM4-40GB", "", "geforce", "NVIDIA RTX A6000", "tItAn V"]))
def test_desktop_board_test_equals_the_substring_search(name: str) -> None:
    g = {"index": 1, "name": name, "persistence_mode": "Disabled"}
    desktop = any(d in name.lower() for d in gpu._DESKTOP)
    assert (gpu._persistence("h", g, {}) == []) == desktop


@given(st.one_of(st.none(), st.booleans(), st.integers(-5, 900), st.floats(allow_nan=False, width=32),
                 st.just("400"), st.dictionaries(st.sampled_from(["infiniband", "roce", "IB", "Ethernet"]),
                                                 st.integers(1, 800), max_size=3)),
       st.sampled_from(["InfiniBand", "Ethernet", None]))
def test_expected_rate_number_first_equals_the_general_form(exp: Any, ll: str | None) -> None:
    def plain(exp: Any, link_layer: str | None) -> float | None:
        if exp is None:
            return None
        if isinstance(exp, dict):
            for key, val in exp.items():
                if ports._FABRIC_LINK_LAYER.get(str(key).lower(), str(key)) == link_layer:
                    return float(val)
            return None
        return float(exp)

    a, b = ports._expected_rate(exp, ll), plain(exp, ll)
    assert a == b or (a is not None and b is not None and math.isnan(a) and math.isnan(b))
