"""Sweep: one model over a grid of a symbolic dimension's values (batch 1, 2, 4 …)
and concurrency levels, each cell measured in a fresh process.

The answer a user wants is usually "the most throughput whose latency I can still
accept": with a latency limit, the best cell under it is named. Throughput counts items:
runs per second times the swept dimension's value (images a second for a batch sweep,
tokens a second for a sequence sweep); without a dimension, items are runs."""

from __future__ import annotations


from app.core.jobs.errors import UserError

LIMIT_PERCENTILES = ("p50", "p90", "p95", "p99")


def best_cell(cells: list[dict], limit_ms: float | None, percentile: str = "p99") -> dict | None:
    """The cell with the most items per second whose latency percentile is within the limit."""
    allowed = [c for c in cells if limit_ms is None or c["latency_ms"][percentile] <= limit_ms]
    return max(allowed, key=lambda c: c["items_per_s"], default=None)


def parse_values(text: str, what: str) -> list[int]:
    """'1,2,4,8' -> [1, 2, 4, 8] (whole numbers ≥ 1, in the order given, no repeats)."""
    values = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) < 1:
            raise UserError("bad-option", f"{what} values must be whole numbers ≥ 1, not {part!r}")
        if int(part) not in values:
            values.append(int(part))
    if not values:
        raise UserError("bad-option", f"{what} needs at least one value")
    return values
