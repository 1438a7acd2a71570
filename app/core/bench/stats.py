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


#: differences smaller than this (±2 %) are "no-difference" even when they are measurable
PRACTICAL_BAND = 0.02
BOOTSTRAP_RESAMPLES = 2000


def block_ratios(reference_blocks: Sequence[Sequence[float]], candidate_blocks: Sequence[Sequence[float]]) -> list[float]:
    """Per round, the reference block's median over the candidate block's (above 1: the
    candidate is faster). Both blocks of a round ran back to back, so a slow spell of the
    machine that slows both alike cancels out of the ratio."""
    return [float(np.median(ref) / np.median(cand)) for ref, cand in zip(reference_blocks, candidate_blocks)]


def bootstrap_median_ci(values: Sequence[float], level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES,
                        seed: int = 0) -> tuple[float, float]:
    """A percentile-bootstrap interval of the median of `values` (one value per round):
    the rounds are resampled with replacement, `resamples` times, with a seeded generator
    so the same rounds always give the same interval."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return math.nan, math.nan
    if data.size == 1:
        return -math.inf, math.inf
    rng = np.random.default_rng(seed)
    medians = np.median(data[rng.integers(0, data.size, size=(resamples, data.size))], axis=1)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(medians, [tail, 100 - tail])
    return float(low), float(high)


def speed_verdict(low: float, high: float, band: float = PRACTICAL_BAND) -> str:
    """"faster", "slower" or "no-difference" from the 95 % interval of a speedup (>1: faster).

    A difference is claimed only when the whole interval lies beyond ±`band` around 1
    (above 1 + band: faster; below 1 / (1 + band): slower); anything else is
    no-difference: an interval that contains 1 (the data cannot tell), one that lies
    within the band (a difference too small to act on) and one that reaches into it.
    Why the band: two processes of one and the same file differ by a percent or two
    (where their memory landed, which core they got, what else ran), steadily within
    one comparison, so intervals of byte-identical copies came out as [1.007, 1.031]
    and [0.973, 0.994] (benchmarks/compare_truth.py). Demanding that the interval clear
    the band keeps such a pair from being called faster or slower; the price is that a
    real gain of 2-4 % may be reported as no-difference until more rounds narrow it."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "no-difference"
    if low > 1.0 + band:
        return "faster"
    if high < 1.0 / (1.0 + band):
        return "slower"
    return "no-difference"
