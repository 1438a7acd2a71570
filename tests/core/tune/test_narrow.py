import numpy as np

from app.core.measure.alternate import Alternation
from app.core.tune.narrow import NarrowPlan, narrow


def _alternation(spread: float, rounds: int = 20) -> Alternation:
    rng = np.random.default_rng(0)
    reference = [np.full(10, 10.0) * (1 + rng.normal(0, spread)) for _ in range(rounds)]
    member = [np.full(10, 5.0) * (1 + rng.normal(0, spread)) for _ in range(rounds)]
    return Alternation(None, [], [reference, member], [[0.1] * rounds, [0.1] * rounds])


def test_a_row_is_narrow_when_its_interval_lies_within_the_width_of_its_speedup():
    assert narrow({"speedup": 2.0, "speedup_ci": [1.97, 2.04]}, 0.03)
    assert not narrow({"speedup": 2.0, "speedup_ci": [1.80, 2.04]}, 0.03)


def test_rounds_go_on_while_an_interval_is_wide_and_stop_when_the_extension_is_spent():
    wide = NarrowPlan(5, budget_s=2.0, min_rounds=10, extend_s=3.0, result=_alternation(0.3))
    assert not wide.done(20, 1.0)            # the time asked is not over
    assert not wide.done(20, 2.5)            # over, but the interval is wide: more rounds
    assert wide.done(20, 5.0)                # the extension is spent
    tight = NarrowPlan(5, budget_s=2.0, min_rounds=10, extend_s=3.0, result=_alternation(0.001))
    assert not tight.done(5, 2.5)            # too few rounds yet
    assert tight.done(20, 2.5)
    assert "width" in tight.to_dict()
