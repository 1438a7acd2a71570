"""Latency statistics: the numbers every measuring job reports, computed one way."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

PERCENTILES = {"p50": 50, "p90": 90, "p95": 95, "p99": 99, "p999": 99.9}


def latency_stats(samples_ms: Sequence[float]) -> dict:
    """mean, p50, p90, p95, p99, p999, min, max, std (ms) of the measured runs.

    Percentiles use linear interpolation (numpy's default); std is the population std."""
    data = np.asarray(samples_ms, dtype=np.float64)
    if data.size == 0:
        return {key: math.nan for key in ("mean", *PERCENTILES, "min", "max", "std")}
    result = {"mean": float(data.mean())}
    values = np.percentile(data, list(PERCENTILES.values()))
    result.update({key: float(v) for key, v in zip(PERCENTILES, values)})
    result.update({"min": float(data.min()), "max": float(data.max()), "std": float(data.std())})
    return result


def throughput_per_s(samples_ms: Sequence[float], concurrency: int = 1, wall_s: float | None = None) -> float:
    """Inferences per second: from the wall time when known (concurrent runs overlap)."""
    count = len(samples_ms)
    if count == 0:
        return 0.0
    if wall_s:
        return count / wall_s
    return concurrency * 1000.0 * count / float(np.sum(samples_ms))


def mean_ci(samples: Sequence[float], z: float = 1.96) -> tuple[float, float, float]:
    """(mean, low, high): a normal-approximation confidence interval of the mean."""
    data = np.asarray(samples, dtype=np.float64)
    if data.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(data.mean())
    if data.size == 1:
        return mean, -math.inf, math.inf
    half = z * float(data.std(ddof=1)) / math.sqrt(data.size)
    return mean, mean - half, mean + half
