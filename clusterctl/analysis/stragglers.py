"""Stragglers: hosts markedly slower than their peers on the same metric.

Robust statistics, so one bad host cannot drag the reference with it: for every metric name and
subject (e.g. ``nccl_busbw_GBps``/``all_reduce``, ``ib_write_bw_Gbps``/``mlx5_0/1``) the reference
is the median of the *other* hosts' values, the spread is the MAD (median absolute deviation) of
all values, scaled by 1.4826 so it estimates a standard deviation for normal noise.

A host is a straggler when both hold:

* it is at least ``threshold`` (default 25 %) worse than the peers' median - worse means lower for
  bandwidths, higher for times (``Metric.higher_is_better``). 25 % catches every node 30 % slow with
  room for the noise in the median itself, and is far above run-to-run noise (a few %);
* its robust z-score ``|value - median| / (1.4826 * MAD)`` is at least ``z_min`` (default 3.5,
  Iglewicz & Hoaglin's outlier cut), so a metric that is simply noisy everywhere flags nobody.
  When the MAD is 0 (identical values) only the relative rule applies.

Groups with fewer than ``min_peers`` other hosts are not judged (default 3: a median of 3 peers
still has one value of slack). A host reporting several values for one group is represented by
their median.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from statistics import median
from typing import Any

from clusterctl.analysis.model import Metric

DEFAULT_THRESHOLD = 0.25
DEFAULT_Z_MIN = 3.5
DEFAULT_MIN_PEERS = 3
MAD_SCALE = 1.4826  # 1 / Phi^-1(3/4): MAD -> standard deviation for normal data


@dataclass(frozen=True)
class Straggler:
    host: str
    metric: str
    subject: str
    value: float
    median: float  # of the peers (the other hosts)
    deviation: float  # fraction worse than the median: 0.30 = 30 % slower
    robust_z: float | None  # None when the MAD is 0
    peers: int
    unit: str = ""
    higher_is_better: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host, "metric": self.metric, "subject": self.subject,
            "value": round(self.value, 4), "median": round(self.median, 4),
            "deviation": round(self.deviation, 4),
            "robust_z": None if self.robust_z is None else round(self.robust_z, 2),
            "peers": self.peers, "unit": self.unit, "higher_is_better": self.higher_is_better,
        }

    def message(self) -> str:
        word = "below" if self.higher_is_better else "above"
        subj = f" ({self.subject})" if self.subject else ""
        return (f"{self.metric}{subj} = {self.value:g}{self.unit and ' ' + self.unit} is "
                f"{self.deviation:.0%} {word} the median of {self.peers} peers ({self.median:g})")


def _loo_median(sorted_vals: list[float], r: int) -> float:
    """Median of ``sorted_vals`` without the element at index ``r`` (O(1))."""
    m = len(sorted_vals) - 1

    def at(k: int) -> float:
        return sorted_vals[k] if k < r else sorted_vals[k + 1]

    if m % 2:
        return at(m // 2)
    return (at(m // 2 - 1) + at(m // 2)) / 2


def group_metrics(metrics: Iterable[Metric]) -> dict[tuple[str, str], dict[str, list[Metric]]]:
    """(metric name, subject) -> host -> metrics."""
    groups: dict[tuple[str, str], dict[str, list[Metric]]] = {}
    for m in metrics:
        groups.setdefault((m.name, m.subject), {}).setdefault(m.host, []).append(m)
    return groups


def find_stragglers(
    metrics: Iterable[Metric],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    z_min: float = DEFAULT_Z_MIN,
    min_peers: int = DEFAULT_MIN_PEERS,
) -> list[Straggler]:
    """Every (host, metric, subject) worse than its peers by the rules in the module docstring."""
    out: list[Straggler] = []
    for (name, subject), by_host in sorted(group_metrics(metrics).items()):
        if len(by_host) - 1 < min_peers:
            continue
        first = next(iter(by_host.values()))[0]
        hib, unit = first.higher_is_better, first.unit
        per_host = sorted(((median(m.value for m in ms), h) for h, ms in by_host.items()))
        vals = [v for v, _ in per_host]
        med_all = median(vals)
        mad = median(abs(v - med_all) for v in vals) * MAD_SCALE
        for r, (v, host) in enumerate(per_host):
            ref = _loo_median(vals, r)
            if ref <= 0:
                continue
            dev = (ref - v) / ref if hib else (v - ref) / ref
            if dev < threshold:
                continue
            z = abs(v - ref) / mad if mad > 0 else None
            if z is not None and z < z_min:
                continue
            out.append(Straggler(host, name, subject, v, ref, dev, z, len(vals) - 1, unit, hib))
    return out
