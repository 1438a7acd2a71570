import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.measure.stats import bootstrap_median_ci, latency_stats, mean_ci, median_ratio, throughput_per_s
from app.core.verdict import judge_speed


def test_known_values():
    stats = latency_stats([1, 2, 3, 4, 100])
    assert stats["mean"] == 22 and stats["p50"] == 3 and stats["min"] == 1 and stats["max"] == 100
    assert stats["p90"] == pytest.approx(4 + 0.6 * 96)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.001, 1e4, allow_nan=False), min_size=1, max_size=300))
def test_matches_numpy(samples):
    stats = latency_stats(samples)
    data = np.array(samples)
    assert stats["p99"] == pytest.approx(np.percentile(data, 99))
    assert stats["std"] == pytest.approx(data.std(), abs=1e-9)
    assert stats["min"] <= stats["p50"] <= stats["p90"] <= stats["p99"] <= stats["p999"] <= stats["max"]


def test_empty_and_throughput():
    assert np.isnan(latency_stats([])["mean"])
    assert throughput_per_s([10.0] * 100) == pytest.approx(100.0)
    assert throughput_per_s([10.0] * 100, wall_s=0.5) == pytest.approx(200.0)
    mean, low, high = mean_ci([1.0, 2.0, 3.0])
    assert low < mean == 2.0 < high



def synthetic_rounds(rng, speedup, rounds=15, runs=20):
    """Blocks of a reference and a candidate `speedup` times faster, with per-run noise and
    slow spells of the machine that hit both blocks of a round alike."""
    reference, candidate = [], []
    for _ in range(rounds):
        spell = rng.choice([1.0, 1.0, 1.6])
        reference.append(spell * rng.lognormal(0.0, 0.08, runs))
        candidate.append(spell / speedup * rng.lognormal(0.0, 0.08, runs))
    return reference, candidate


def test_the_speedup_is_the_ratio_of_the_two_medians():
    speedup, _, _ = median_ratio([[2.0, 2.0, 9.0], [4.0, 4.0, 4.0]], [[1.0, 1.0, 1.0], [8.0, 8.0, 8.0]])
    assert speedup == pytest.approx(np.median([2, 2, 9, 4, 4, 4]) / np.median([1, 1, 1, 8, 8, 8]))


def test_rounds_of_two_kinds_give_the_medians_ratio():
    """As a conversion's speed check saw it: the source slowed at the start of every other
    block (it ran right after the variant), p50s 1.74 and 15.76 ms. The median of the ten
    per-round ratios lies between the two kinds of round, a figure neither median says;
    the speedup is the ratio of the two medians, and its interval spans what the rounds
    leave open."""
    reference = [[1.74] * 6 if r % 2 == 0 else [16.0] * 4 + [1.74] * 2 for r in range(10)]
    candidate = [[15.76] * 6 for _ in range(10)]
    speedup, low, high = median_ratio(reference, candidate)
    ratios = [np.median(a) / np.median(b) for a, b in zip(reference, candidate)]
    assert np.median(ratios) == pytest.approx(0.56, abs=0.01)       # the old figure, between the two kinds
    assert speedup == pytest.approx(1.74 / 15.76)
    assert low <= speedup < high


def test_bootstrap_interval_contains_the_true_speedup():
    rng = np.random.default_rng(7)
    trials, covered = 200, 0
    for _ in range(trials):
        _, low, high = median_ratio(*synthetic_rounds(rng, 1.25), seed=int(rng.integers(1 << 30)))
        covered += low <= 1.25 <= high
    assert covered / trials >= 0.9


def test_bootstrap_interval_is_seeded_and_narrows_with_rounds():
    rng = np.random.default_rng(1)
    few = synthetic_rounds(rng, 1.0, rounds=10)
    many = synthetic_rounds(rng, 1.0, rounds=1000)
    assert median_ratio(*few) == median_ratio(*few)
    width = [high - low for _, low, high in (median_ratio(*few), median_ratio(*many))]
    assert width[1] < width[0] / 2
    assert median_ratio([[1.0, 1.1]], [[1.0]])[1:] == (-np.inf, np.inf)
    assert bootstrap_median_ci([1.1]) == (-np.inf, np.inf)


def test_blocks_of_different_sizes_are_pooled_too():
    speedup, low, high = median_ratio([[2.0] * 5, [2.0] * 7, [2.0] * 6], [[1.0] * 3, [1.0] * 9, [1.0] * 4])
    assert (speedup, low, high) == (2.0, 2.0, 2.0)


def test_a_speedup_and_none_get_the_right_verdicts_on_synthetic_rounds():
    rng = np.random.default_rng(3)
    for truth, verdict in ((1.0, "no-difference"), (1.3, "faster"), (0.5, "slower")):
        speedup, low, high = median_ratio(*synthetic_rounds(rng, truth))
        assert judge_speed(speedup, low, high).verdict == verdict


def test_a_long_measurement_resamples_a_thinned_copy_but_keeps_every_run_in_the_speedup():
    from app.core.measure.stats import BOOTSTRAP_RUNS, _thinned
    rng = np.random.default_rng(3)
    reference = [list(rng.normal(1.0, 0.05, 300)) for _ in range(800)]      # 240,000 runs
    candidate = [list(rng.normal(0.8, 0.04, 300)) for _ in range(800)]
    thin = _thinned(reference)
    assert sum(map(len, thin)) <= BOOTSTRAP_RUNS and len({len(b) for b in thin}) == 1
    assert _thinned(reference[:10]) == reference[:10]      # few: as they are
    speedup, low, high = median_ratio(reference, candidate)
    exact = float(np.median(np.concatenate(reference)) / np.median(np.concatenate(candidate)))
    assert speedup == pytest.approx(exact, rel=1e-12) and low < speedup < high
    assert high / low < 1.01      # still the narrow interval so many runs give
