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


BOOTSTRAP_RESAMPLES = 2000
#: the most runs of one member a resample takes its median over (the point estimate takes them all)
BOOTSTRAP_RUNS = 20_000


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


def _pooled_medians(blocks: Sequence[Sequence[float]], picks: np.ndarray) -> np.ndarray:
    """The median of all the runs of the rounds in each row of `picks` (rounds drawn with
    replacement): one member's p50 in every resample."""
    if len({len(block) for block in blocks}) == 1:        # the usual case: vectorised, in slices
        stacked = np.asarray(blocks, dtype=np.float64)
        out = np.empty(len(picks))
        step = max(1, 4_000_000 // max(stacked.size, 1))
        for start in range(0, len(picks), step):
            chosen = stacked[picks[start:start + step]]
            out[start:start + step] = np.median(chosen.reshape(len(chosen), -1), axis=1)
        return out
    arrays = [np.asarray(block, dtype=np.float64) for block in blocks]
    return np.array([np.median(np.concatenate([arrays[i] for i in row])) for row in picks])


def _thinned(blocks: list, most: int = BOOTSTRAP_RUNS) -> list:
    """The blocks with every k-th run, k the least that leaves at most `most` runs in all (as
    they are when they hold fewer): a resample's median over a quarter of a million runs cost
    the interval 15 s, and a subsample's median only spreads the interval a little wider."""
    step = math.ceil(sum(len(block) for block in blocks) / most)
    return blocks if step <= 1 else [block[::step] for block in blocks]


def _moving_blocks(rng: np.random.Generator, rounds: int, run: int, resamples: int) -> np.ndarray:
    """Rows of `rounds` round indices drawn as runs of `run` consecutive rounds (a moving-block
    bootstrap; `run` 1 is the plain one)."""
    run = max(1, min(run, rounds))
    starts = rng.integers(0, rounds - run + 1, size=(resamples, math.ceil(rounds / run)))
    return (starts[:, :, None] + np.arange(run)).reshape(resamples, -1)[:, :rounds]


def round_log_ratios(reference_blocks: Sequence[Sequence[float]],
                     candidate_blocks: Sequence[Sequence[float]]) -> np.ndarray:
    """Per round, log(reference block median / candidate block median)."""
    reference = np.array([np.median(block) for block in reference_blocks], dtype=np.float64)
    candidate = np.array([np.median(block) for block in candidate_blocks], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(reference / candidate)
    return logs[np.isfinite(logs)]


def median_ratio(reference_blocks: Sequence[Sequence[float]], candidate_blocks: Sequence[Sequence[float]],
                 level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> tuple[float, float, float]:
    """(speedup, low, high): the reference's p50 over the candidate's (above 1: the candidate
    is faster), each p50 over all the runs of its blocks, so the speedup is the ratio of the
    two medians a result prints; and a bootstrap interval of it, with a seeded generator.

    The interval resamples whole rounds (a round's two blocks stay together, so a slow spell
    that slowed both stays paired), in runs of consecutive rounds as long as the per-round
    ratios stay correlated (app.core.measure.noise.run_length: a busy spell spans many rounds,
    which are then one piece of evidence, not many). It is never narrower than the normal
    interval of the per-round log ratios' mean over the rounds' effective number
    (rounds / run length): the pooled medians can sit still while the rounds disagree.

    Why not the median of the per-round ratios: with rounds of two kinds (a member slowed
    in every other round, by the one that ran before it) the median of ten ratios is the
    mean of the fifth and sixth, a value between the two kinds that neither median
    shows (0.64 beside p50s of 1.74 and 15.76 ms)."""
    from app.core.measure.noise import run_length

    rounds = min(len(reference_blocks), len(candidate_blocks))
    reference, candidate = list(reference_blocks[:rounds]), list(candidate_blocks[:rounds])
    if rounds == 0:
        return math.nan, math.nan, math.nan
    speedup = float(np.median(np.concatenate(reference)) / np.median(np.concatenate(candidate)))
    if rounds == 1:
        return speedup, -math.inf, math.inf
    logs = round_log_ratios(reference, candidate)
    run = run_length(logs)
    picks = _moving_blocks(np.random.default_rng(seed), rounds, run, resamples)
    ratios = _pooled_medians(_thinned(reference), picks) / _pooled_medians(_thinned(candidate), picks)
    tail = (1.0 - level) / 2 * 100
    low, high = (float(v) for v in np.percentile(ratios, [tail, 100 - tail]))
    if logs.size > 1 and math.isfinite(speedup) and speedup > 0:
        half = _z(level) * float(np.std(logs, ddof=1)) * math.sqrt(run / logs.size)
        low, high = min(low, speedup * math.exp(-half)), max(high, speedup * math.exp(half))
    return speedup, low, high


def _z(level: float) -> float:
    """The two-sided normal quantile for `level` (1.96 for 0.95)."""
    from statistics import NormalDist
    return NormalDist().inv_cdf(0.5 + level / 2)
