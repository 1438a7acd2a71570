import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.bench.stats import (block_ratios, bootstrap_median_ci, latency_stats, mean_ci, speed_verdict,
                                   throughput_per_s)


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


def test_block_ratios_are_reference_median_over_candidate_median():
    assert block_ratios([[2.0, 2.0, 9.0], [4.0]], [[1.0, 1.0, 1.0], [8.0]]) == [2.0, 0.5]


def test_bootstrap_interval_contains_the_true_speedup():
    rng = np.random.default_rng(7)
    trials, covered = 200, 0
    for _ in range(trials):
        ratios = block_ratios(*synthetic_rounds(rng, 1.25))
        low, high = bootstrap_median_ci(ratios, seed=int(rng.integers(1 << 30)))
        covered += low <= 1.25 <= high
    assert covered / trials >= 0.9


def test_bootstrap_interval_is_seeded_and_narrows_with_rounds():
    rng = np.random.default_rng(1)
    few = block_ratios(*synthetic_rounds(rng, 1.0, rounds=10))
    many = block_ratios(*synthetic_rounds(rng, 1.0, rounds=1000))
    assert bootstrap_median_ci(few) == bootstrap_median_ci(few)
    width = [high - low for low, high in (bootstrap_median_ci(few), bootstrap_median_ci(many))]
    assert width[1] < width[0] / 2
    assert bootstrap_median_ci([1.1]) == (-np.inf, np.inf)


@pytest.mark.parametrize("low, high, verdict", [
    (0.95, 1.08, "no-difference"),       # contains 1: the data cannot tell
    (1.004, 1.018, "no-difference"),     # measurable, but all of it within ±2 %
    (0.981, 0.996, "no-difference"),
    (1.007, 1.031, "no-difference"),     # reaches into the band: as two copies of one file can differ
    (0.973, 0.994, "no-difference"),
    (1.021, 1.06, "faster"),             # all of it beyond the band
    (1.3, 1.5, "faster"),
    (0.6, 0.97, "slower"),
    (-np.inf, np.inf, "no-difference"),
])
def test_verdicts(low, high, verdict):
    assert speed_verdict(low, high) == verdict


def test_a_speedup_and_none_get_the_right_verdicts_on_synthetic_rounds():
    rng = np.random.default_rng(3)
    for truth, verdict in ((1.0, "no-difference"), (1.3, "faster"), (0.5, "slower")):
        ratios = block_ratios(*synthetic_rounds(rng, truth))
        assert speed_verdict(*bootstrap_median_ci(ratios)) == verdict
