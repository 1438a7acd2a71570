"""How a gate judges: each criterion (speed, outputs, accuracy, memory) is a verdict with
its figures, and the gate's verdict is the worst of them.

Speed is judged on the slowdown of the new model, new p50 / old p50 - 1, from the ratio of
block medians round by round (app.core.measure.alternate) with its 95 % bootstrap interval:
- "regression" only when the whole interval lies beyond the limit (a noisy runner widens
  the interval; it cannot push a model that is not slower past the limit);
- "pass" when the whole interval lies at or below the limit, which is where a byte-identical
  copy lands ("no-difference": two processes of one file differ by a percent or two);
- otherwise the interval reaches across the limit: too wide to decide. The gate measures on,
  in more pairs of fresh processes, while one more fits in --max-seconds, then says "undecided".
  It measures on too while the slowdown passes but the verdict rule cannot yet tell its
  direction, so the gate names the verdict compare gives the same pair.
The interval is the one the verdict rule reads (app.core.verdict): on a busy machine it is
widened by the contention measured in the run, never thrown away, so a model twice as slow is
a regression beside a core burner too, and the speed's verdict words are the rule's.
Measured in several pairs of processes, the interval is pair-level (app.core.measure.pairs): two
processes of one file can differ by several percent for as long as they live.
"""

from __future__ import annotations

import math

from app.core.session.fidelity_policy import bounds_text, policy_text
from app.core.verdict import judge_speed, verdict_words
from app.core.formatting import cosine_text, diff_text

PASS, REGRESSION, UNDECIDED, SKIPPED = "pass", "regression", "undecided", "skipped"
SEVERITY = {PASS: 0, SKIPPED: 0, UNDECIDED: 1, REGRESSION: 2}
EXIT_CODES = {PASS: 0, REGRESSION: 5, UNDECIDED: 6}      # 2 (bad input) comes from the command line's rules
SLOWDOWN_DEFINITION = ("slowdown = new p50 / old p50 - 1, each p50 over the runs of its blocks; in each round both "
                       "run one block, in turn, the order swapped every round; rounds where a model's process waited "
                       "for a core are set aside; the run is several pairs of fresh processes, and the interval is a "
                       "t-interval over the pairs' ratios, never narrower than each pair's own rounds allow")


def slowdown(speedup: float, interval: list[float]) -> tuple[float, float, float]:
    """(slowdown, low, high) from a speedup of the new model over the old (old p50 / new p50)."""
    low, high = interval

    def inverse(value: float) -> float:
        return 1.0 / value - 1.0 if value > 0 and math.isfinite(value) else math.inf

    return inverse(speedup), inverse(high), inverse(low)


def speed_decision(low: float, high: float, limit: float) -> str:
    """PASS, REGRESSION or UNDECIDED (the interval [low, high] of the slowdown reaches across `limit`)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return UNDECIDED
    if low > limit:
        return REGRESSION
    if high <= limit:
        return PASS
    return UNDECIDED


def judged_speed(alternation_row: dict):
    """The verdict rule's judgement of a summarize row (app.core.measure.alternate)."""
    return judge_speed(alternation_row["speedup"], *alternation_row["speedup_ci"],
                       alternation_row.get("contention", 0.0), alternation_row.get("measure", "wall"))


def _percent(value: float) -> str:
    return f"{value * 100:+.1f} %" if math.isfinite(value) else "unknown"


def speed_criterion(alternation_row: dict, limit: float, rounds: int, seconds: float, cap_s: float,
                    old_p50_ms: float, new_p50_ms: float) -> dict:
    judged = judged_speed(alternation_row)
    value, low, high = slowdown(alternation_row["speedup"], list(judged.widened))
    too_busy = bool(alternation_row.get("too_busy"))
    pairs = len(alternation_row.get("pair_speedups") or [None])
    verdict = speed_decision(low, high, limit)
    half = (high - low) / 2 if math.isfinite(high - low) else math.inf
    widened = ", widened for a busy machine" if judged.widened != judged.interval else ""
    median = "CPU-time p50" if alternation_row.get("measure") == "cpu" else "p50"
    summary = (f"slowdown {_percent(value)} [{_percent(low)}, {_percent(high)}] (95 % interval{widened}), limit "
               f"{limit * 100:.1f} %; {median} {new_p50_ms:.4g} ms against {old_p50_ms:.4g} ms; the new model: "
               f"{verdict_words(judged.verdict)}")
    if too_busy:
        summary += (f"; the machine was busy: in most of {rounds} rounds a model's process waited for a core, and "
                    f"the interval was widened by {judged.contention:.0%} of the contention it can cause")
    if verdict == UNDECIDED:
        summary += (f"; the interval reaches across the limit after {pairs} pair(s) of processes, {rounds} rounds "
                    f"and {seconds:.1f} s "
                    f"(--max-seconds {cap_s:g}): run longer or on a quieter machine")
    return {"name": "speed", "verdict": verdict, "summary": summary, "limit": limit,
            "figures": {"slowdown": value, "slowdown_ci": [low, high], "precision": half,
                        "speedup": alternation_row["speedup"], "speedup_ci": alternation_row["speedup_ci"],
                        "compare_verdict": judged.verdict, "speedup_widened_ci": list(judged.widened),
                        "contention": judged.contention, "rounds": rounds, "seconds": seconds, "pairs": pairs,
                        "pair_speedups": alternation_row.get("pair_speedups"),
                        "rounds_judged": alternation_row.get("rounds_judged", rounds), "too_busy": too_busy,
                        "measure": alternation_row.get("measure", "wall"),
                        "old_p50_ms": old_p50_ms, "new_p50_ms": new_p50_ms}}


def output_criterion(fidelity: dict | None, drift: dict | None, drift_error: str | None) -> dict:
    """The new model's outputs against the old's on the same inputs, output by output, with the
    conversion check's tolerances; where they disagree, the first drifting node."""
    if fidelity is None:
        return {"name": "outputs", "verdict": SKIPPED, "summary": "not checked", "limit": None, "figures": {}}
    rows = fidelity["outputs"]
    failed = [row for row in rows if row["passed"] is False]
    tolerance = fidelity["tolerance"]
    limits = policy_text(tolerance) + (f" ({fidelity['policy_why']})" if fidelity.get("policy_why") else "")
    own = [row["name"] for row in rows if row.get("tolerance")]
    if own:
        limits += f"; outputs with their own bounds: {', '.join(own)}"
    figures = {"outputs": rows, "max_abs_diff": fidelity["max_abs_diff"], "min_cosine": fidelity["min_cosine"],
               "tolerance": tolerance, "first_drift": None}
    if fidelity["passed"]:
        summary = f"{len(rows)} output(s) within {limits}; max |Δ| {_number(fidelity['max_abs_diff'])}"
        return {"name": "outputs", "verdict": PASS, "summary": summary, "limit": tolerance, "figures": figures}
    parts = [f"{row['name']}: " + (row.get("problem") or f"max |Δ| {_number(row['max_abs_diff'])}, "
                                                         f"cosine {cosine_text(row['cosine'])}")
             + (f" (its own {bounds_text(row['tolerance'])})" if row.get("tolerance") else "") for row in failed]
    summary = f"{len(failed)} of {len(rows)} output(s) outside {limits} ({'; '.join(parts)})"
    if drift is not None and drift.get("first_drift"):
        first = drift["first_drift"]
        figures["first_drift"] = {key: first.get(key) for key in ("tensor", "node", "op_type", "index", "cosine",
                                                                  "sqnr_db", "max_abs_diff")}
        summary += f"; first drifting node: {first['node'] or '(unnamed)'} ({first['op_type']}), tensor {first['tensor']}"
    elif drift_error:
        summary += f"; the first drifting node was not found: {drift_error}"
    return {"name": "outputs", "verdict": REGRESSION, "summary": summary, "limit": tolerance, "figures": figures}


def _number(value) -> str:
    return diff_text(value)


def accuracy_criterion(old: dict | None, new: dict | None, limit: float) -> dict:
    """Label accuracy on the --data samples: a drop past `limit` (a fraction) is a regression."""
    if not old or not new or old.get("label_accuracy") is None or new.get("label_accuracy") is None:
        why = "no --data given" if not old else "the --data folder has no labels"
        return {"name": "accuracy", "verdict": SKIPPED, "summary": f"not judged: {why}", "limit": limit, "figures": {}}
    drop = old["label_accuracy"] - new["label_accuracy"]
    verdict = REGRESSION if drop > limit + 1e-12 else PASS
    summary = (f"label accuracy {new['label_accuracy']:.2%} against {old['label_accuracy']:.2%} over "
               f"{new['labelled']} labelled samples: a drop of {drop * 100:.2f} points, limit {limit * 100:.2f}")
    return {"name": "accuracy", "verdict": verdict, "summary": summary, "limit": limit,
            "figures": {"old": old["label_accuracy"], "new": new["label_accuracy"], "drop": drop,
                        "labelled": new["labelled"], "samples": new["samples"]}}


def memory_criterion(old_bytes: int | None, new_bytes: int | None, limit: float) -> dict:
    """Peak resident memory of the new model's process against the old's (each held one
    session and the same inputs): growth past `limit` (a fraction) is a regression."""
    from app.core.formatting import human_bytes

    if not old_bytes or not new_bytes:
        return {"name": "memory", "verdict": SKIPPED, "summary": "peak memory not measured here", "limit": limit,
                "figures": {}}
    growth = new_bytes / old_bytes - 1
    verdict = REGRESSION if growth > limit else PASS
    summary = (f"peak RSS {human_bytes(new_bytes)} against {human_bytes(old_bytes)}: {_percent(growth)}, "
               f"limit {limit * 100:.1f} %")
    return {"name": "memory", "verdict": verdict, "summary": summary, "limit": limit,
            "figures": {"old_peak_rss_bytes": old_bytes, "new_peak_rss_bytes": new_bytes, "growth": growth}}


def overall(criteria: list[dict]) -> str:
    """The worst verdict: a regression anywhere fails the gate, else an undecided one leaves it undecided."""
    worst = max((SEVERITY[c["verdict"]] for c in criteria), default=0)
    return {0: PASS, 1: UNDECIDED, 2: REGRESSION}[worst]


def exit_code(verdict: str) -> int:
    return EXIT_CODES[verdict]
