"""A comparison in several pairs of fresh processes: the interval comes from the spread between
the pairs, so an offset one pair of processes carries throughout is not taken for the models'."""

import math

import numpy as np
import pytest

from app.core.measure.alternate import alternate, summarize
from app.core.measure.runs import RunSettings
from app.core.measure.pairs import Pairs, pairs_ratio, per_pair, t_quantile
from app.core.measure.stats import median_ratio
from app.core.gate.judge import REGRESSION, UNDECIDED, slowdown, speed_decision
from app.core.jobs.protocol import JobContext
from tests.sample_jobs import PACED_MEMBER, SampleParams


@pytest.mark.parametrize("df, expected", [(1, 12.706), (2, 4.303), (3, 3.182), (5, 2.571), (10, 2.228), (30, 2.042)])
def test_the_t_quantile_matches_the_table(df, expected):
    assert t_quantile(0.95, df) == pytest.approx(expected, rel=2e-3)


def _blocks(rng, count, scale=1.0, noise=0.0):
    return [scale * (1.0 + noise * rng.standard_normal(8)) for _ in range(count)]


def test_one_pair_offset_by_ten_percent_is_spread_not_a_regression():
    rng = np.random.default_rng(1)
    reference = _blocks(rng, 40, noise=0.002)
    candidate = _blocks(rng, 10, 1.10, 0.002) + _blocks(rng, 30, 1.0, 0.002)   # the first pair's process is slow
    labels = [pair for pair in range(4) for _ in range(10)]
    alone = median_ratio(reference[:10], candidate[:10])           # that pair alone: a clear "10 % slower"
    assert speed_decision(*slowdown(alone[0], list(alone[1:]))[1:], 0.05) == REGRESSION
    speedup, low, high, each = pairs_ratio(reference, candidate, labels)
    assert each[0] == pytest.approx(1 / 1.1, rel=0.01) and each[1:] == pytest.approx([1, 1, 1], rel=0.01)
    assert low < 1 / 1.05 and high > 1.0           # it cannot tell a 5 % slowdown from none
    assert speed_decision(*slowdown(speedup, [low, high])[1:], 0.05) == UNDECIDED


def test_pairs_that_agree_keep_the_uncertainty_of_their_own_rounds():
    rng = np.random.default_rng(2)
    rounds = [(_blocks(rng, 10, noise=0.05), _blocks(rng, 10, noise=0.05)) for _ in range(3)]
    reference = [block for pair in rounds for block in pair[0]]
    candidate = [block for pair in rounds for block in pair[1]]
    labels = [pair for pair in range(3) for _ in range(10)]
    speedup, low, high, each = pairs_ratio(reference, candidate, labels)
    own = [median_ratio(pair[0], pair[1]) for pair in rounds]
    within = np.mean([((math.log(h) - math.log(lo)) / (2 * 1.96)) ** 2 for _, lo, h in own])
    assert math.log(high) - math.log(speedup) >= t_quantile(0.95, 2) * math.sqrt(within / 3) - 1e-12
    assert low < speedup < high


def test_fewer_than_two_pairs_with_rounds_of_their_own_leave_it_unbounded():
    blocks = [np.ones(5) for _ in range(11)]
    speedup, low, high, each = pairs_ratio(blocks, blocks, [0] * 10 + [1])
    assert speedup == 1.0 and (low, high) == (-math.inf, math.inf) and len(each) == 2


def test_more_pairs_run_while_unanswered_and_one_more_fits():
    unanswered = Pairs(first=2, max_s=30.0, answered=lambda result: False)
    assert unanswered.again(None, 1, 100.0)                 # the first pairs run whatever the time
    assert unanswered.again(None, 2, 20.0)                  # 10 s a pair: a third ends at 30 s
    assert not unanswered.again(None, 2, 21.0)              # it would end past max_s
    assert not Pairs(first=2, max_s=30.0, answered=lambda result: True).again(None, 2, 2.0)
    assert not Pairs(first=2).again(None, 2, 2.0)           # no rule: the first pairs only


def test_the_first_pairs_share_the_run():
    assert per_pair(RunSettings(duration_s=2.0), 4).duration_s == 0.5
    assert per_pair(RunSettings(iterations=100), 3).iterations == 34


def test_each_pair_runs_in_fresh_processes_and_their_offset_is_spread(tmp_path):
    members = [SampleParams(value=1.0, path=str(tmp_path)),
               SampleParams(value=[1.1, 1.0, 1.0, 1.0], path=str(tmp_path), module="candidate")]
    result = alternate(PACED_MEMBER, members, RunSettings(iterations=50), JobContext(), pairs=Pairs(4))
    assert len(list(tmp_path.glob("*.pid"))) == 8 and result.pairs == [pair for pair in range(4) for _ in range(10)]
    row = summarize(result)[1]
    assert row["pair_speedups"] == pytest.approx([1 / 1.1, 1, 1, 1])
    assert speed_decision(*slowdown(row["speedup"], row["speedup_ci"])[1:], 0.05) == UNDECIDED
    assert result.reports[1]["processes"] == 4 and result.reports[1]["iterations"] == 200
    assert result.describe(pairs=Pairs(4))["pairs_run"] == 4


def test_a_single_pair_sees_its_offset_as_the_models(tmp_path):
    members = [SampleParams(value=1.0), SampleParams(value=[1.1], path=str(tmp_path), module="candidate")]
    result = alternate(PACED_MEMBER, members, RunSettings(iterations=50), JobContext(), pairs=Pairs(1))
    row = summarize(result)[1]
    assert "pair_speedups" not in row and speed_decision(*slowdown(row["speedup"], row["speedup_ci"])[1:], 0.05) == REGRESSION


def test_pairs_go_on_until_the_rule_is_answered(tmp_path):
    members = [SampleParams(value=1.0), SampleParams(value=1.0)]
    looked = []

    def answered(result):
        looked.append(len(set(result.pairs)))
        return looked[-1] >= 3

    result = alternate(PACED_MEMBER, members, RunSettings(iterations=50), JobContext(),
                       pairs=Pairs(first=2, max_s=600.0, answered=answered))
    assert looked == [2, 3] and sorted(set(result.pairs)) == [0, 1, 2]
