"""Issue 29: a plain ``nvidia-smi`` table cut after a GPU's first row lists that GPU with the same fields as a
GPU whose two rows are there (its second row's fields read from the same place, without a reading)."""

from __future__ import annotations

from typing import Any

from ccparse import registry
from conftest import corpus_capture

#: 'ssh gpu-2-5 nvidia-smi' (driver 325.15): GPUs 0 and 1 with both rows, the paste cut after GPU 2's first row
CBIO = ("round2", "nvidia-smi/cbio24-ssh-gpu-2-5-x11-warnings-325.15-gtx680-three-listed-cut.txt")


def _shape(value: Any) -> Any:
    """The keys of a dict, nested dicts by their own keys."""
    return {k: _shape(v) for k, v in value.items()} if isinstance(value, dict) else None


def test_a_gpu_cut_after_its_first_row_has_the_keys_of_a_full_one() -> None:
    gpus = registry.parse("nvidia-smi", corpus_capture(*CBIO))["gpus"]
    assert [(g["index"], g["bus_id"]) for g in gpus] == [
        (0, "00000000:03:00.0"), (1, "00000000:04:00.0"), (2, "00000000:84:00.0")]
    full, cut = gpus[0], gpus[2]
    assert "cut_after_first_row" not in full and cut["cut_after_first_row"] is True
    assert _shape({k: v for k, v in cut.items() if k != "cut_after_first_row"}) == _shape(full)
    # what the second row would have given is there without a value; the first row's fields are read
    second = set(full) - {"index", "name", "persistence_mode", "driver_model", "bus_id", "display_active",
                          "ecc_uncorrected_volatile", "line"}
    assert {k: cut[k] for k in second} == {
        "fan_pct": None, "temperature_c": {"gpu": None}, "performance_state": None,
        "power_w": {"draw": None, "limit": None}, "memory_used_mib": None, "memory_total_mib": None,
        "utilization_pct": {"gpu": None}, "compute_mode": None, "mig_mode": None, "inforom_corrupted": False,
        "error_fields": []}
    assert (cut["name"], cut["persistence_mode"], cut["display_active"]) == ("GeForce GTX 680", "Off", "N/A")
    # the full GPUs' second rows as the capture shows them: '| 30%   29C  N/A     N/A /  N/A |  9MB /  4095MB |'
    assert (full["fan_pct"], full["temperature_c"]["gpu"], gpus[1]["temperature_c"]["gpu"]) == (30.0, 29.0, 31.0)
    assert (full["memory_total_mib"], full["compute_mode"]) == (4095.0, "Default")
