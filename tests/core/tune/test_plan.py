"""Tune's time planned against its budget: the starts of the measured processes are planned
at their cost, so the race is what is left (no clocks: the plan is arithmetic)."""

from app.core.tune.plan import LEAST_EACH_S, RACE_LEAST_S, Post, least_budget, least_each, post_race, race_seconds


def test_without_a_budget_the_remeasurement_is_as_asked():
    assert post_race(None, 3, 2.0, 1.0) == Post(3, 2.0, 1.0)


def test_the_remeasurement_fits_what_is_left_with_its_starts():
    assert post_race(60.0, 2, 2.0, 1.0) == Post(2, 2.0, 1.0)           # 3 + 2 members at 2 s and 1 s starts: 15 s
    post = post_race(10.0, 3, 2.0, 1.0)
    assert post.count < 3 and post.seconds() <= 10.0 + 1e-9, "fewer finalists, each shorter, within what is left"


def test_past_the_budget_one_finalist_is_measured_at_the_least_time_its_runs_take():
    assert post_race(1.0, 3, 2.0, 1.0) == Post(1, LEAST_EACH_S, 1.0)
    assert post_race(1.0, 3, 2.0, 1.0, run_ms=40.0) == Post(1, least_each(40.0), 1.0)
    assert least_each(40.0) == 2.0, "10 rounds of 5 runs of 40 ms"


def test_the_race_has_what_the_starts_and_the_remeasurement_leave():
    race = race_seconds(40.0, 3.0, 2, 2.0)
    after = post_race(40.0 - 3.0 - race, 2, 2.0, 3.0)
    assert abs(3.0 + race + after.seconds() - 40.0) < 1e-9, "the whole plan is the budget"
    assert race_seconds(15.0, 3.0, 2, 2.0) == RACE_LEAST_S, "a short budget races briefly rather than not at all"


def test_the_least_budget_covers_one_start_a_short_race_and_one_confirmed_finalist():
    assert least_budget(3.0) == 3.0 + RACE_LEAST_S + 4 * (3.0 + LEAST_EACH_S)
    assert least_budget(3.0, run_ms=40.0) > least_budget(3.0)


def test_when_none_was_clearly_faster_the_closest_above_one_is_measured_again_fresh():
    from app.core.tune.jobs import _closest

    def trial(label, speedup, verdict, remeasured=True):
        return {"label": label, "speedup": speedup, "verdict": verdict, "remeasured": remeasured,
                "remeasured_ms": 1.0 / speedup, "latency_ms": 0.9}

    result = {"clearly_faster": False, "trials": [trial("a", 1.04, "no-difference"), trial("b", 1.12, "no-difference"),
                                                  trial("c", 1.3, "no-difference", remeasured=False)]}
    assert _closest(result)["label"] == "b", "the race's own figure (c) is no promise: only re-measured ones count"
    assert _closest({**result, "clearly_faster": True}) is None
    assert _closest({"clearly_faster": False, "trials": [trial("a", 0.97, "no-difference")]}) is None
