import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.bench.stats import latency_stats, mean_ci, throughput_per_s


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

