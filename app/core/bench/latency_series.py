"""Latencies as they stream in, kept ready to draw at any count.

A live chart redraws about 30 times a second while hundreds of thousands of runs
arrive, so nothing here touches every sample on a redraw: samples are folded, as
they arrive, into blocks (min/max for the line, median for the trend) whose size
doubles whenever there are too many, and into a fine log-spaced histogram from which
the live percentiles are read. The exact figures come from the job's result."""

from __future__ import annotations

import bisect
import math

import numpy as np

BINS_PER_DECADE = 200            # histogram resolution: about 1.2 % per bin
LOW_MS = 1e-4                    # 100 ns
DECADES = 10                     # up to 1e6 ms
MAX_BLOCKS = 800                # per drawn series
MEDIAN_BLOCK = 16                # the trend line's smallest window
PERCENTILES = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99, "p999": 0.999}


def _mean_of(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return (left + right) / 2


def _middle(blocks: np.ndarray, axis: int) -> np.ndarray:
    """The (upper) median of each row: one partition, without np.median's extra passes."""
    middle = blocks.shape[axis] // 2
    return np.partition(blocks, middle, axis=axis)[:, middle]


class _Blocks:
    """Reductions of consecutive blocks of a growing series. To stay within MAX_BLOCKS
    the block size doubles and neighbouring blocks merge (min and max exactly; the
    trend's medians as the mean of the two, which keeps a redraw from ever re-reading
    a million samples)."""

    def __init__(self, size: int, reducers: dict):
        self.size = size
        self.reducers = reducers          # name -> (reduce(blocks, axis), merge(left, right))
        self.values = {name: np.zeros(0) for name in reducers}
        self.count = 0                    # complete blocks

    def update(self, read, total: int) -> None:
        """Take in the samples up to `total`; `read(start, stop)` gives raw samples."""
        while total // self.size > MAX_BLOCKS:
            pairs = self.count // 2
            self.values = {name: merge(self.values[name][0: 2 * pairs: 2], self.values[name][1: 2 * pairs: 2])
                           for name, (_, merge) in self.reducers.items()}
            self.count, self.size = pairs, self.size * 2
        blocks = total // self.size
        if blocks == self.count:
            return
        chunk = read(self.count * self.size, blocks * self.size).reshape(-1, self.size)
        for name, (reduce, _) in self.reducers.items():
            self.values[name] = np.concatenate([self.values[name], reduce(chunk, axis=1)])
        self.count = blocks

    def centers(self, offset: int) -> np.ndarray:
        return offset + (np.arange(self.count) + 0.5) * self.size


class LatencySeries:
    def __init__(self, concurrency: int = 1):
        self.concurrency = concurrency
        self.warmup = np.zeros(0)
        self._chunks: list[np.ndarray] = []     # the samples as they came: appending never copies
        self._starts: list[int] = []
        self.count = 0
        self._envelope = _Blocks(1, {"min": (np.min, np.minimum), "max": (np.max, np.maximum)})
        self._median = _Blocks(MEDIAN_BLOCK, {"median": (_middle, _mean_of)})
        self._hist = np.zeros(BINS_PER_DECADE * DECADES, dtype=np.int64)
        self._sum = self._sumsq = 0.0
        self._min, self._max = math.inf, -math.inf

    # adding -------------------------------------------------------------------
    def add_warmup(self, values_ms) -> None:
        self.warmup = np.concatenate([self.warmup, np.asarray(values_ms, dtype=np.float64)])

    def add(self, values_ms) -> None:
        values = np.asarray(values_ms, dtype=np.float64)
        if values.size == 0:
            return
        self._chunks.append(values)
        self._starts.append(self.count)
        self.count += values.size
        self._envelope.update(self._read, self.count)
        self._median.update(self._read, self.count)
        self._hist += np.bincount(self._bin_index(values), minlength=self._hist.size)
        self._sum += float(values.sum())
        self._sumsq += float(np.square(values).sum())   # not np.dot: BLAS threads would spin beside the GUI
        self._min = min(self._min, float(values.min()))
        self._max = max(self._max, float(values.max()))

    def _read(self, start: int, stop: int) -> np.ndarray:
        """Samples [start, stop), joined from the chunks they fall in."""
        index = bisect.bisect_right(self._starts, start) - 1
        pieces = []
        while start < stop:
            piece = self._chunks[index][start - self._starts[index]: stop - self._starts[index]]
            pieces.append(piece)
            start += piece.size
            index += 1
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    @staticmethod
    def _bin_index(values: np.ndarray) -> np.ndarray:
        logs = np.log10(np.maximum(values, LOW_MS))
        index = ((logs - math.log10(LOW_MS)) * BINS_PER_DECADE).astype(np.intp)
        return np.minimum(index, BINS_PER_DECADE * DECADES - 1, out=index)

    @staticmethod
    def _edge(index) -> np.ndarray:
        return LOW_MS * 10.0 ** (np.asarray(index, dtype=np.float64) / BINS_PER_DECADE)

    # drawing ------------------------------------------------------------------
    def samples(self) -> np.ndarray:
        if len(self._chunks) > 1:
            self._chunks, self._starts = [np.concatenate(self._chunks)], [0]
        return self._chunks[0] if self._chunks else np.zeros(0)

    def warmup_points(self) -> tuple[np.ndarray, np.ndarray]:
        return np.arange(self.warmup.size, dtype=np.float64), self.warmup

    def envelope(self) -> tuple[np.ndarray, np.ndarray]:
        """The measured runs as a line: every run, or each block's min and max (so no
        outlier disappears however many runs there are)."""
        offset = self.warmup.size
        blocks = self._envelope
        done = blocks.count * blocks.size
        tail_x = offset + np.arange(done, self.count, dtype=np.float64)
        tail_y = self._read(done, self.count) if done < self.count else np.zeros(0)
        if blocks.size == 1:        # few runs: every one as it is
            return np.concatenate([offset + np.arange(blocks.count, dtype=np.float64), tail_x]), \
                np.concatenate([blocks.values["min"], tail_y])
        x = np.repeat(blocks.centers(offset), 2)
        y = np.column_stack([blocks.values["min"], blocks.values["max"]]).ravel()
        return np.concatenate([x, tail_x]), np.concatenate([y, tail_y])

    def medians(self) -> tuple[np.ndarray, np.ndarray]:
        """The trend: the median of each block of at least MEDIAN_BLOCK runs (see _Blocks)."""
        return self._median.centers(self.warmup.size), self._median.values["median"]

    def histogram(self, max_bins: int = 60, upper: float = 0.999) -> tuple[np.ndarray, np.ndarray, int]:
        """(edges, counts, hidden): up to `max_bins` bins from the fastest run to the
        `upper` quantile; `hidden` counts the slower runs left out of view."""
        if self.count == 0:
            return np.zeros(0), np.zeros(0), 0
        cumulative = np.cumsum(self._hist)
        first = int(np.searchsorted(cumulative, 1))
        last = int(np.searchsorted(cumulative, math.ceil(upper * self.count)))
        group = max(1, math.ceil((last - first + 1) / max_bins))
        starts = np.arange(first, last + 1, group)
        counts = np.add.reduceat(self._hist[first: starts[-1] + group], starts - first)
        edges = self._edge(np.append(starts, starts[-1] + group))
        return edges, counts.astype(np.float64), int(self.count - counts.sum())

    # numbers -------------------------------------------------------------------
    def percentile(self, fraction: float) -> float:
        """Read from the histogram: within a bin's width (about 1 %) of the exact value."""
        if self.count == 0:
            return math.nan
        cumulative = np.cumsum(self._hist)
        target = fraction * self.count
        index = int(np.searchsorted(cumulative, target))
        before = cumulative[index - 1] if index > 0 else 0
        inside = (target - before) / max(1, self._hist[index])
        value = float(self._edge(index + min(max(inside, 0.0), 1.0)))
        return min(max(value, self._min), self._max)

    def stats(self) -> dict:
        if self.count == 0:
            return {"count": 0}
        mean = self._sum / self.count
        result = {"count": self.count, "mean": mean, "min": self._min, "max": self._max,
                  "std": math.sqrt(max(self._sumsq / self.count - mean * mean, 0.0)),
                  "throughput_per_s": self.concurrency * 1000.0 * self.count / self._sum if self._sum else math.nan}
        result.update({key: self.percentile(q) for key, q in PERCENTILES.items()})
        return result
