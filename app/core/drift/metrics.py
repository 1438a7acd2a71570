"""The numbers for one tensor of the source against the same tensor of the variant."""

from __future__ import annotations

import math

import numpy as np

from app.core.convert.fidelity import Tolerance, compare_values

#: the largest finite float16
FP16_MAX = 65504.0


def sqnr_db(expected: np.ndarray, got: np.ndarray) -> float | None:
    """Signal-to-quantization-noise ratio in dB over the elements finite in both; None when
    there is no noise (identical) or no signal."""
    both = np.isfinite(expected) & np.isfinite(got)
    a, b = expected[both], got[both]
    noise = float(np.sum((a - b) ** 2))
    signal = float(np.sum(a ** 2))
    if noise == 0 or signal == 0:
        return None
    return 10 * math.log10(signal / noise)


def sqnr_floor_db(min_cosine: float) -> float:
    """The SQNR a tensor needs to count as within a cosine bound: noise orthogonal to the
    signal at that cosine (cos² / (1 - cos²)). Unlike the cosine it also catches a tensor
    scaled wrong (a clipped weight column), which keeps its direction but not its size."""
    if min_cosine >= 1:
        return math.inf
    if min_cosine <= 0:
        return -math.inf
    return 10 * math.log10(min_cosine ** 2 / (1 - min_cosine ** 2))


def judge_inside(row: dict, min_cosine: float) -> None:
    """Fail a tensor inside the model whose SQNR is below the floor its cosine bound sets."""
    floor = sqnr_floor_db(min_cosine)
    if row["sqnr_db"] is not None and row["sqnr_db"] < floor:
        row["passed"] = False
        row["problem"] = "; ".join(p for p in (row["problem"], f"SQNR {row['sqnr_db']:.1f} dB below the "
                                               f"{floor:.1f} dB a cosine of {min_cosine:g} allows") if p)


def _range(values: np.ndarray) -> list[float] | None:
    finite = values[np.isfinite(values)]
    return [float(finite.min()), float(finite.max())] if finite.size else None


def tensor_row(name: str, expected, got, tolerance: Tolerance) -> dict:
    """compare_values' row plus SQNR, both value ranges and the source's reach into float16's range."""
    row = compare_values(name, expected, got, tolerance)
    row.update(sqnr_db=None, source_range=None, variant_range=None, fp16_overflow=0, fp16_fraction=None)
    if row["max_abs_diff"] is None or not isinstance(expected, np.ndarray) or row["problem"].startswith("shape"):
        return row
    a, b = expected.astype(np.float64), np.asarray(got).astype(np.float64)
    if a.dtype.kind not in "fiu":
        return row
    row["sqnr_db"] = sqnr_db(a, b)
    row["source_range"], row["variant_range"] = _range(a), _range(b)
    finite = np.abs(a[np.isfinite(a)])
    if finite.size:
        row["fp16_overflow"] = int((finite > FP16_MAX).sum())
        row["fp16_fraction"] = float(finite.max() / FP16_MAX)
    return row
