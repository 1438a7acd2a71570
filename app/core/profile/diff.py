"""Two profiles side by side: per operator type, time and calls per run of `after` against
`before`, with 95 % intervals over runs where both traces are split in enough runs; and,
when the two models were also timed in alternation, where the profile disagrees.

The intervals come from resampling each trace's steady runs (with replacement, each trace
on its own): they say how much the ratio could move with other runs of the same two
recordings, not what happened to the machine between them. The two traces were recorded
one after the other, and ORT's profiler adds a cost per node that weighs most on small
operators, so the profile's total ratio can stray from what the models really do;
`with_measurement` holds it against an alternating timing of the two models (compare)."""

from __future__ import annotations

import math

import numpy as np

from app.core.measure.stats import BOOTSTRAP_RESAMPLES
from app.core.verdict import PRACTICAL_BAND, judge_speed

MIN_RUNS = 5              # steady runs each trace needs before an interval means anything
NOTE = ("these ratios come from two separate profiles, recorded one after the other, not from an alternating "
        "measurement: their intervals cover the runs of each recording, not a slow spell of the machine during "
        "one of them, and the profiler's cost per node weighs most on small operators; `--measure` (or "
        "`ortune compare`) times the two models in alternation")
DISAGREEMENT_RULE = ("the profile disagrees when its total ratio's 95 % interval (or the ratio itself, without one) "
                     "does not overlap the alternating timing's 95 % interval")


def _bootstrap_means(matrix: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """[resamples × columns]: the column means of `matrix` (runs × columns) over runs resampled."""
    runs = matrix.shape[0]
    weights = rng.multinomial(runs, np.full(runs, 1.0 / runs), size=BOOTSTRAP_RESAMPLES)
    return weights @ matrix / runs


def _ratio_intervals(before: dict, after: dict, ops: list[str], seed: int) -> dict | None:
    """Per op type in both traces and for the total: the 95 % interval of before / after."""
    runs_before, runs_after = before.get("per_run_by_op_type"), after.get("per_run_by_op_type")
    if not runs_before or not runs_after:
        return None
    one = np.array([runs_before.get(op, [0] * len(next(iter(runs_before.values())))) for op in ops], float).T
    two = np.array([runs_after.get(op, [0] * len(next(iter(runs_after.values())))) for op in ops], float).T
    if min(one.shape[0], two.shape[0]) < MIN_RUNS:
        return None
    rng = np.random.default_rng(seed)
    means_one, means_two = _bootstrap_means(one, rng), _bootstrap_means(two, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.column_stack([means_one / means_two, means_one.sum(axis=1) / means_two.sum(axis=1)])
    lows, highs = np.percentile(ratios, [2.5, 97.5], axis=0)
    return {name: [float(low), float(high)] for name, low, high in zip([*ops, None], lows, highs)}


def _judged(ratio: float | None, interval: list[float] | None, band: float) -> tuple[list | None, str | None]:
    if ratio is None or interval is None or not all(math.isfinite(v) for v in interval):
        return None, None
    return interval, judge_speed(ratio, *interval, band=band).verdict


def diff_profiles(before: dict, after: dict, band: float = PRACTICAL_BAND, seed: int = 0) -> dict:
    """Per operator type, time and calls per run of `after` against `before` (steady runs).

    Op types present on one side only (fused away, or made by fusion) are kept, with 0 on
    the other. `speedup` (per op type) and `total.ratio` are before / after (above 1: after
    is faster); `ratio_ci`, `verdict` and `total.ci`, `total.verdict` are there when both
    traces hold at least MIN_RUNS steady runs (else None)."""
    rows_before = {row["op_type"]: row for row in before["by_op_type"]}
    rows_after = {row["op_type"]: row for row in after["by_op_type"]}
    ops = sorted(set(rows_before) | set(rows_after))
    intervals = _ratio_intervals(before, after, ops, seed) or {}
    rows = []
    for op_type in ops:
        one, two = rows_before.get(op_type), rows_after.get(op_type)
        before_us = one["per_run_us"] if one else 0.0
        after_us = two["per_run_us"] if two else 0.0
        before_count = one["per_run_count"] if one else 0.0
        after_count = two["per_run_count"] if two else 0.0
        speedup = before_us / after_us if after_us and before_us else None
        ratio_ci, verdict = _judged(speedup, intervals.get(op_type), band)
        rows.append({"op_type": op_type, "before_us": before_us, "after_us": after_us,
                     "delta_us": after_us - before_us, "before_count": before_count, "after_count": after_count,
                     "delta_count": after_count - before_count, "speedup": speedup,
                     "ratio_ci": ratio_ci, "verdict": verdict,
                     "only_in": None if one and two else ("before" if one else "after")})
    rows.sort(key=lambda row: (-abs(row["delta_us"]), row["op_type"]))
    node_before = sum(row["before_us"] for row in rows)
    node_after = sum(row["after_us"] for row in rows)
    total = node_before / node_after if node_after else None
    total_ci, total_verdict = _judged(total, intervals.get(None), band)
    run_before = (before["phases"]["steady_run_us"] or {}).get("mean")
    run_after = (after["phases"]["steady_run_us"] or {}).get("mean")
    return {
        "before": before["trace"], "after": after["trace"],
        "models": {"before": before.get("model"), "after": after.get("model")},
        "node_us_per_run": {"before": node_before, "after": node_after},
        "speedup": total,
        "total": {"ratio": total, "ci": total_ci, "verdict": total_verdict},
        "run_us": {"before": run_before, "after": run_after},
        "run_speedup": run_before / run_after if run_before and run_after else None,
        "by_op_type": rows,
        "interval_rule": (f"95 % bootstrap over each trace's steady runs (at least {MIN_RUNS} each), resampled on "
                          "their own; verdict: faster or slower only when the whole interval lies beyond "
                          f"±{band:.0%} around 1"),
        "note": NOTE,
    }


def with_measurement(diff: dict, compare: dict) -> dict:
    """`diff` with the alternating timing of its two models (a compare result, before as
    the reference): `measured` {speedup, speedup_ci, verdict} and `disagrees`."""
    row = compare["models"][1]
    measured = {"speedup": row["speedup"], "speedup_ci": row["speedup_ci"], "verdict": row["verdict"],
                "rounds": row["rounds"], "speedup_definition": compare["speedup_definition"]}
    total = diff["total"]
    low, high = total["ci"] or [total["ratio"], total["ratio"]]
    disagrees = None if total["ratio"] is None else bool(high < row["speedup_ci"][0] or low > row["speedup_ci"][1])
    return diff | {"measured": measured, "disagrees": disagrees, "disagreement_rule": DISAGREEMENT_RULE}
