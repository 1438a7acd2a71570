"""A comparison in several sets of fresh processes ("pairs": with two models, each set is one
process of each, taking turns as ever, app.core.measure.alternate).

Why: two processes of one and the same file can differ by several percent for as long as
they live (where their memory landed, which core and cache they share with whom), and a
run in one pair of processes sees that offset in every round: its rounds agree with each
other, so the interval is narrow around a ratio that is not the models'. In several pairs
the offset is drawn afresh each time and shows up as spread between the pairs' ratios.

So with rounds from two or more pairs the interval is pair-level (`pairs_ratio`): each
pair's log speedup (its own rounds, with the noise rules as ever: stats.median_ratio) is
one value; their mean's interval is a t-interval with pairs - 1 degrees of freedom on the
larger of the pairs' spread and their mean within-pair variance (the spread of a few pairs
can come out small by luck; it cannot really be below what each pair's own rounds allow).
The speedup itself stays the ratio of the two pooled medians, and the interval covers it
and the pairs' mean alike. Every ratio is still formed between two processes on one machine.

`Pairs` is how many sets a run starts with, and whether it starts another: while the
interval cannot answer yet and the time allowed (`max_s`, from the first set's start, with
every start) leaves room for one more set as long as the sets so far took on average.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from app.core.measure.stats import _z, median_ratio


def t_quantile(level: float, df: int) -> float:
    """The two-sided Student t quantile for `level` with `df` degrees of freedom: exact for 1
    and 2, a Cornish-Fisher expansion (within 0.1 % from 3 on) beyond."""
    p = 0.5 + level / 2
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = _z(level)
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3)
            + (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / (92160 * df ** 4))


def pairs_ratio(reference_blocks: Sequence[Sequence[float]], candidate_blocks: Sequence[Sequence[float]],
                pair_of_round: Sequence[int], level: float = 0.95,
                seed: int = 0) -> tuple[float, float, float, list[float]]:
    """(speedup, low, high, each pair's speedup): the pooled medians' ratio and its pair-level
    interval (module docstring). A pair with fewer than two rounds has no interval of its own
    and is left out; with fewer than two pairs left the interval is unbounded (the run cannot
    tell a model's speed from its processes')."""
    rounds = min(len(reference_blocks), len(candidate_blocks), len(pair_of_round))
    reference, candidate = list(reference_blocks[:rounds]), list(candidate_blocks[:rounds])
    if rounds == 0:
        return math.nan, math.nan, math.nan, []
    speedup = float(np.median(np.concatenate(reference)) / np.median(np.concatenate(candidate)))
    labels = np.asarray(pair_of_round[:rounds])
    logs, within, each = [], [], []
    for pair in dict.fromkeys(labels.tolist()):
        chosen = np.flatnonzero(labels == pair)
        own, low, high = median_ratio([reference[i] for i in chosen], [candidate[i] for i in chosen], level,
                                      seed=seed)
        each.append(own)
        if chosen.size < 2 or not (own > 0 and low > 0 and math.isfinite(high)):
            continue
        logs.append(math.log(own))
        within.append(((math.log(high) - math.log(low)) / (2 * _z(level))) ** 2)
    if len(logs) < 2 or not (math.isfinite(speedup) and speedup > 0):
        return speedup, -math.inf, math.inf, each
    variance = max(float(np.var(logs, ddof=1)), float(np.mean(within)))
    half = t_quantile(level, len(logs) - 1) * math.sqrt(variance / len(logs))
    centre = float(np.mean(logs))
    low = min(math.exp(centre - half), speedup * math.exp(-half))
    high = max(math.exp(centre + half), speedup * math.exp(half))
    return speedup, low, high, each


@dataclass
class Pairs:
    """How many sets of fresh processes a run in alternation has: `first` sets, then one more
    while `answered(result)` is false and, at the sets' average length so far, another one
    still ends within `max_s` seconds of the first set's start."""
    first: int = 1
    max_s: float = 0.0
    answered: Callable[[object], bool] | None = None

    def again(self, result, sets: int, elapsed_s: float) -> bool:
        if sets < self.first:
            return True
        if self.answered is None or sets == 0 or elapsed_s + elapsed_s / sets > self.max_s:
            return False
        return not self.answered(result)

    def to_dict(self) -> dict:
        return {"first": self.first, "max_s": self.max_s,
                "rule": "each set of fresh processes gives one ratio; the interval is a t-interval over the sets' "
                        "log ratios (never narrower than their own rounds allow); more sets while it cannot answer, "
                        "as long as one more fits in max_s"}


def per_pair(settings, pairs: int):
    """`settings` (bench.RunSettings) for each of `pairs` sets: its duration or its runs shared
    among them."""
    from app.core.measure.runs import RunSettings

    share = settings.to_dict()
    if settings.duration_s:
        share["duration_s"] = settings.duration_s / max(1, pairs)
    else:
        share["iterations"] = max(1, math.ceil(settings.iterations / max(1, pairs)))
    return RunSettings.from_dict(share)
