"""The live chart's data: exact extremes, percentiles within a bin, bounded drawing cost."""

import numpy as np
import pytest

from app.core.bench.latency_series import MAX_BLOCKS, LatencySeries


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    values = rng.lognormal(-3, 0.4, 300_000)
    values[1234] = 80.0                      # one outlier
    return values


@pytest.fixture(scope="module")
def series(data):
    series = LatencySeries()
    series.add_warmup([5.0, 1.0])
    for chunk in np.array_split(data, 37):
        series.add(chunk)
    return series


def test_stats_against_numpy(series, data):
    stats = series.stats()
    assert stats["count"] == data.size
    assert stats["mean"] == pytest.approx(data.mean()) and stats["std"] == pytest.approx(data.std())
    assert stats["min"] == data.min() and stats["max"] == data.max()
    for key, q in (("p50", 50), ("p90", 90), ("p99", 99), ("p999", 99.9)):
        assert stats[key] == pytest.approx(np.percentile(data, q), rel=0.012)


def test_the_line_keeps_every_extreme_within_bounded_points(series, data):
    x, y = series.envelope()
    assert y.max() == 80.0 and y.min() == data.min()
    assert len(x) <= 2 * MAX_BLOCKS + 2 * series._envelope.size
    assert x.min() >= 2                      # measured runs follow the two warm-up runs
    mx, my = series.medians()
    assert len(mx) <= MAX_BLOCKS and np.median(my) == pytest.approx(np.median(data), rel=0.02)
    wx, wy = series.warmup_points()
    assert list(wx) == [0, 1] and list(wy) == [5.0, 1.0]


def test_histogram_accounts_for_every_run(series, data):
    edges, counts, hidden = series.histogram(max_bins=50, upper=0.99)
    assert len(edges) == len(counts) + 1 and len(counts) <= 50
    assert counts.sum() + hidden == data.size
    assert edges[0] <= data.min() and hidden > 0
    _, all_counts, none_hidden = series.histogram(upper=1.0)
    assert none_hidden == 0 and all_counts.sum() == data.size


def test_a_short_series_is_drawn_run_by_run():
    series = LatencySeries()
    series.add_warmup([9.0])
    series.add([1.0, 3.0])
    series.add([2.0])
    x, y = series.envelope()
    assert list(x) == [1, 2, 3] and list(y) == [1.0, 3.0, 2.0]
