"""Straggler detection: median of peers + MAD, no false positives on normal noise."""

from __future__ import annotations

import random

from clusterctl.analysis.model import Metric
from clusterctl.analysis.stragglers import find_stragglers


def fleet(n: int, base: float, noise: float, seed: int = 1, name: str = "nccl_busbw_GBps",
          hib: bool = True) -> list[Metric]:
    rng = random.Random(seed)
    return [Metric(f"h{i:03d}", name, base * (1 + rng.uniform(-noise, noise)), "all_reduce", "GB/s", hib)
            for i in range(n)]


def test_healthy_noise_gives_none() -> None:
    for seed in range(20):
        assert find_stragglers(fleet(64, 231.72, 0.03, seed)) == []
    assert find_stragglers(fleet(8, 231.72, 0.05)) == []


def test_node_30_percent_slower_is_named() -> None:
    ms = fleet(32, 231.72, 0.02)
    ms[7] = Metric("h007", "nccl_busbw_GBps", 231.72 * 0.70, "all_reduce", "GB/s")
    s = find_stragglers(ms)
    assert [(x.host, x.metric, x.subject) for x in s] == [("h007", "nccl_busbw_GBps", "all_reduce")]
    assert 0.28 < s[0].deviation < 0.32
    assert abs(s[0].median - 231.72) / 231.72 < 0.02
    assert s[0].robust_z is not None and s[0].robust_z > 10
    assert "below the median of 31 peers" in s[0].message()


def test_identical_values_mad_zero() -> None:
    ms = [Metric(f"h{i}", "ib_write_bw_Gbps", 392.0, "mlx5_0/1") for i in range(5)]
    ms.append(Metric("h9", "ib_write_bw_Gbps", 196.0, "mlx5_0/1"))
    s = find_stragglers(ms)
    assert [(x.host, x.robust_z) for x in s] == [("h9", None)]


def test_min_peers() -> None:
    ms = [Metric("a", "x", 100.0), Metric("b", "x", 100.0), Metric("c", "x", 50.0)]
    assert find_stragglers(ms) == []  # c has 2 peers < 3
    assert [x.host for x in find_stragglers(ms, min_peers=2)] == ["c"]


def test_lower_is_better_step_time() -> None:
    ms = fleet(16, 1.20, 0.02, name="step_time_s", hib=False)
    ms[3] = Metric("h003", "step_time_s", 1.20 * 1.35, "all_reduce", "s", False)
    ms.append(Metric("fast", "step_time_s", 0.6, "all_reduce", "s", False))  # faster is never a straggler
    assert [x.host for x in find_stragglers(ms)] == ["h003"]


def test_widely_noisy_metric_flags_nobody() -> None:
    # a metric that varies +-40 % everywhere: a low value is not an outlier of that population
    assert find_stragglers(fleet(64, 100.0, 0.4, seed=3)) == []


def test_subjects_judged_separately_and_threshold_configurable() -> None:
    ms = [Metric(f"h{i}", "ib_write_bw_Gbps", 390.0, f"mlx5_{r}/1") for i in range(6) for r in range(2)]
    ms.append(Metric("h9", "ib_write_bw_Gbps", 390.0 * 0.85, "mlx5_1/1"))
    assert find_stragglers(ms) == []
    s = find_stragglers(ms, threshold=0.10)
    assert [(x.host, x.subject) for x in s] == [("h9", "mlx5_1/1")]
