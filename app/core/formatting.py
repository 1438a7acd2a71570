"""Numbers as people read them: durations in their unit, ratios with their intervals,
differences, cosines, byte counts and shapes, the same on every screen and in every report."""

from __future__ import annotations

import math


def human_bytes(count: float | None) -> str:
    if count is None:
        return "?"
    value = float(count)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(value) < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"


#: (size in ms, name), largest first
DURATION_UNITS = ((1000.0, "s"), (1.0, "ms"), (1e-3, "µs"), (1e-6, "ns"))


def significant(value: float, digits: int = 3, trim: bool = True) -> str:
    """`value` to `digits` significant digits, without an exponent, with thousands separators,
    and (`trim`) without trailing zeros (1234.5 -> "1,234", 0.012345 -> "0.0123", 2.0 -> "2")."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{round(value, decimals):,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if trim and "." in text else text


def duration_unit(ms: float) -> tuple[float, str]:
    """The unit a duration of `ms` milliseconds reads best in, as (its size in ms, its name):
    the largest unit in which it is at least 1 (a value that rounds up to 1,000 of a unit
    moves up to the next)."""
    size = abs(ms)
    for index, (factor, name) in enumerate(DURATION_UNITS):
        if size >= factor * 0.9995 or index == len(DURATION_UNITS) - 1:
            return factor, name
    raise AssertionError("unreachable")


def duration_text(ms: float | None, digits: int = 3, trim: bool = True) -> str:
    """A duration given in ms, in the unit its magnitude reads best in: 0.0123 -> "12.3 µs",
    294.851 -> "295 ms", 2767.2 -> "2.77 s"; `trim=False` keeps trailing zeros ("27.70 ms"),
    for figures shown side by side."""
    if ms is None or not math.isfinite(ms):
        return "–"
    if ms == 0:
        return "0 ms"
    factor, name = duration_unit(ms)
    return f"{significant(ms / factor, digits, trim)} {name}"


def ratio_text(ratio: float | None) -> str:
    """A ratio (a speedup, a variant's speed against its source) as every panel writes it: "×0.60"."""
    return "–" if ratio is None or not math.isfinite(ratio) else f"×{ratio:.2f}"


def interval_text(interval) -> str:
    """A ratio's 95 % interval, to the ratio's two decimals: "0.55–0.65" ("" without one)."""
    if not interval or interval[0] is None or interval[1] is None:
        return ""
    return f"{interval[0]:.2f}–{interval[1]:.2f}"


def ratio_with_interval(ratio: float | None, interval) -> str:
    """"×0.60 [0.55–0.65]": a ratio with its interval, where it has one."""
    bounds = interval_text(interval)
    return ratio_text(ratio) + (f" [{bounds}]" if bounds else "")


def diff_text(value: float | None) -> str:
    """A difference between two outputs (max abs, max rel) to three significant digits: "0.00433",
    "2.09e-07" (never 0.000000 for a tiny one)."""
    return "–" if value is None else f"{value:.3g}"


def cosine_text(value: float | None) -> str:
    """A cosine similarity to six digits: 0.999987 is not 1."""
    return "–" if value is None else f"{value:.6g}"


def shared_decimals(values, digits: int = 3, most: int = 4) -> int:
    """One number of decimals for a whole column: enough for its smallest non-zero value to
    keep `digits` significant digits, at most `most`."""
    sizes = [abs(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)
             and math.isfinite(v) and v != 0]
    if not sizes:
        return 0
    return max(0, min(most, digits - 1 - math.floor(math.log10(min(sizes)))))


def column_unit(values_ms) -> tuple[float, str]:
    """One duration unit for a column of ms figures: the one its largest reads best in."""
    sizes = [abs(v) for v in values_ms if isinstance(v, (int, float)) and math.isfinite(v)]
    return duration_unit(max(sizes)) if sizes and max(sizes) > 0 else (1.0, "ms")


def duration_column(values_ms, digits: int = 3) -> tuple[str, list[str]]:
    """A column of ms figures in one unit and one number format: (the unit's name, the texts)."""
    factor, name = column_unit(values_ms)
    scaled = [v / factor if isinstance(v, (int, float)) else None for v in values_ms]
    decimals = shared_decimals([v for v in scaled if v is not None], digits, most=3)
    return name, ["–" if v is None or not math.isfinite(v) else f"{v:,.{decimals}f}" for v in scaled]


def tidy_floats(value, digits: int = 6):
    """A JSON-able value with every float rounded to `digits` significant digits, so binary
    noise (1.0187484949999999) does not show."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else value
    if isinstance(value, dict):
        return {key: tidy_floats(item, digits) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [tidy_floats(item, digits) for item in value]
    return value


def shape_text(shape) -> str:
    if shape is None:
        return "(unknown rank)"
    return "[" + ", ".join(str(d) for d in shape) + "]"
