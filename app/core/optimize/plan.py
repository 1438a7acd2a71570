"""What the search's phases need of the budget, at what the work is seen to cost (the
budget's learned starts and makes, app.core.optimize.budget): the share kept for tuning, and
the least budget that measures anything at all, so an answer from a budget too small says so
and names a budget that would do."""

from __future__ import annotations

from app.core.tune.plan import least_budget

#: the share of the budget kept for tuning the best candidate's session
TUNE_SHARE = 0.35
#: tuning is planned only when its share reaches this part of the least it needs
TUNE_FIT = 0.75
#: of what is left when tuning starts, the budget tune is given (the rest is its margin before
#: the budget's hard stop, which would lose all it measured)
TUNE_OWN = 0.9


def tune_needs(start_s: float) -> float:
    """The least seconds left that tuning starts with, at `start_s` a process start."""
    return least_budget(start_s) / TUNE_OWN


def tune_keep(budget_s: float, start_s: float) -> float:
    """The seconds kept for tuning: TUNE_SHARE of the budget, raised to the least a tune
    needs at `start_s` a process start; 0 when the share is too far below that least."""
    share, least = TUNE_SHARE * budget_s, tune_needs(start_s)
    if share < TUNE_FIT * least:
        return 0.0
    return max(share, least)


def tune_least(budget_s: float, start_s: float) -> float:
    """The least of tuning's share that other phases leave it (they may take the rest of
    the share when they would do nothing otherwise): 0 when tuning is not planned."""
    return min(tune_keep(budget_s, start_s), tune_needs(start_s))


def least_to_measure(fixed_s: float, start_s: float) -> float:
    """The least budget (a round figure) whose work besides tuning's share holds `fixed_s`:
    the reading, the rounds of making, and the screening of the first candidates with
    their starts, and the finish."""
    budget = 10.0 * max(1, -(-fixed_s // 10))
    while budget - tune_least(budget, start_s) < fixed_s:
        budget += 10.0
    return budget


def nothing_measured(rows: list[dict], budget_s: float, least_s: float) -> str:
    """'' when some candidate was timed against the source; else why none was, in one
    sentence (the budget too small: raise it to a named figure)."""
    candidates = [r for r in rows if r["kind"] != "source"]
    if any(r.get("speedup") is not None for r in candidates):
        return ""
    timed_out = [r["kind"] for r in candidates if r["status"] == "skipped" and "budget" in r["reason"]]
    if not timed_out:
        return ""
    figure = max(least_s, budget_s + 10)
    return (f"the {budget_s:g} s budget was too small to measure any candidate ({', '.join(timed_out)} "
            f"skipped for time): raise the budget to about {figure:.0f} s")
