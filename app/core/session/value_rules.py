"""Values an input must have because of what it feeds: indices below the axis they index,
masks of ones, and small valid values where an input becomes a shape, a size, an axis, a pad,
a repeat count, k or a split. Random values there make ONNX Runtime refuse the run, or ask
it for a tensor of many gigabytes.

A rule gives the values' own shape where the values decide it (a `shape` input of Reshape
has one entry per axis of the tensor it reshapes), or leaves the shape to the dimension plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from app.core.session.graph_hints import GraphHints, Use

INT_MAX = 2 ** 31 - 1


@dataclass
class ValueRule:
    reason: str
    fixed: list | None = None                                  # the values themselves (1-D or a scalar)
    make: Callable[[list[int], np.dtype, np.random.Generator], np.ndarray] | None = None


def _rank(hints: GraphHints, use: Use, slot: int = 0) -> int | None:
    others = use.others
    if slot >= len(others) or not others[slot]:
        return None
    dims = hints.shapes.get(others[slot])
    return len(dims) if dims is not None else None


def _data_shape(hints: GraphHints, use: Use, slot: int = 0) -> list[int] | None:
    return hints.static_shape(use.others[slot]) if slot < len(use.others) and use.others[slot] else None


def _count(declared, rank: int | None) -> int:
    """How many entries a 1-D shape-like input gets: as declared, else one per axis of the data."""
    if declared and len(declared) == 1 and isinstance(declared[0], int) and declared[0] >= 0:
        return declared[0]
    return rank if rank is not None else 1


def _fixed(values, reason: str) -> ValueRule:
    return ValueRule(reason, fixed=list(values))


def _shape_like(use: Use, hints: GraphHints, declared) -> ValueRule | None:
    op, slot, node = use.op_type, use.slot, use.node
    rank = _rank(hints, use)
    n = _count(declared, rank)
    data = _data_shape(hints, use)
    if op == "Reshape" and slot == 1:
        if data is not None and n == len(data):
            return _fixed(data, f"the shape {node} reshapes to: its input's own shape")
        return _fixed([-1] + [1] * (n - 1), f"a shape {node} can always take")
    if (op in ("Expand", "Tile") and slot == 1) or (op in ("Resize", "Upsample") and slot in (1, 2)):
        what = {"Expand": "a shape that broadcasts to itself", "Tile": "repeats of 1"}.get(op, "scales of 1")
        if op == "Resize" and slot == 1:
            half = _count(declared, None) // 2 if declared else 0
            return _fixed([0.0] * half + [1.0] * half, f"the whole input as {node}'s region of interest")
        return _fixed([1] * n, f"{what} for {node}")
    if op == "Resize" and slot == 3:
        axes = use.attributes.get("axes")
        if data is not None and axes:
            return _fixed([data[a] for a in axes], f"sizes of {node}: its input's own size on its axes")
        return _fixed(data if data is not None else [1] * n, f"sizes of {node}: its input's own size")
    if op == "ConstantOfShape":
        return _fixed([1] * n, f"a small shape for {node}")
    if op == "Slice":
        values = {1: [0] * n, 2: [INT_MAX] * n, 3: list(range(n)), 4: [1] * n}.get(slot)
        names = {1: "starts at 0", 2: "ends past the end", 3: "the first axes", 4: "steps of 1"}
        return _fixed(values, f"{names[slot]} for {node}") if values is not None else None
    if op == "Pad" and slot in (1, 3):
        return _fixed([0] * (2 * (rank or n // 2 or 1)) if slot == 1 else list(range(n)), f"no padding for {node}")
    if op == "TopK" and slot == 1:
        return _fixed([1], f"k = 1 for {node}")
    if op == "Split" and slot == 1:
        axis = int(use.attributes.get("axis", 0))
        if data is not None and -len(data) <= axis < len(data):
            parts = max(_count(declared, None), 1)
            size = data[axis] // parts
            return _fixed([size] * (parts - 1) + [data[axis] - size * (parts - 1)],
                          f"{parts} part(s) of {node}'s whole axis")
        return None
    if op in ("Unsqueeze",) and slot == 1:
        return _fixed(list(range(n)), f"leading axes for {node}")
    if op == "Squeeze" and slot == 1:
        ones = [i for i, d in enumerate(data or []) if d == 1]
        return _fixed(ones, f"the axes of size 1 for {node}")
    if op.startswith("Reduce") and slot == 1:
        fixed_count = declared and len(declared) == 1 and isinstance(declared[0], int) and declared[0] >= 0
        axes = list(range(n)) if fixed_count and (rank is None or n <= rank) else [0]
        return _fixed(axes, f"{'no axes' if not axes else 'the first axes'} for {node}")
    if op in ("CumSum", "CumProd") and slot == 1:
        return _fixed([0] * min(n, 1), f"axis 0 for {node}")
    if op == "DFT" and slot in (1, 2):
        length = data[1] if data is not None and len(data) > 2 else 1
        return _fixed([length] if slot == 1 else [1], f"{'the signal length' if slot == 1 else 'axis 1'} for {node}")
    if op == "AffineGrid" and slot == 1:
        batch = data[0] if data is not None else 1
        return _fixed([batch, 1] + [4] * max(n - 2, 1), f"a small grid for {node}, as many as its thetas")
    if op == "OneHot" and slot == 1:
        return _fixed([10], f"depth 10 for {node}")
    if op == "Range":
        return _fixed([[0], [8], [1]][slot], f"{['start 0', 'limit 8', 'delta 1'][slot]} for {node}")
    if op == "Trilu" and slot == 1:
        return _fixed([0], f"the main diagonal for {node}")
    if op == "Loop" and slot in (0, 1):
        return _fixed([3] if slot == 0 else [True], f"{'3 iterations' if slot == 0 else 'go on'} for {node}")
    if op == "NonMaxSuppression" and slot in (2, 3, 4):
        return _fixed([[10], [0.5], [0.0]][slot - 2], f"a usual threshold for {node}")
    if op == "Clip" and slot in (1, 2):
        return _fixed([-1.0] if slot == 1 else [1.0], f"a valid range for {node}")
    if op in ("RoiAlign",) and slot == 2 or op in ("ReverseSequence",) and slot == 1:
        return ValueRule(f"a valid value for {node}", make=lambda shape, dtype, rng: np.ones(shape, dtype)
                         if op == "ReverseSequence" else np.zeros(shape, dtype))
    return None


def _indices(use: Use, hints: GraphHints) -> ValueRule | None:
    op, node = use.op_type, use.node
    data = _data_shape(hints, use)
    if op == "Gather" and use.slot == 1:
        axis = int(use.attributes.get("axis", 0))
        if data is None or not -len(data) <= axis < len(data) or data[axis] < 1:
            return None
        size = data[axis]
        table = use.others[0]
        what = (f"token ids below the {size:,} rows of {table}" if hints.shapes.get(table) and axis == 0
                and len(hints.shapes[table]) == 2 else f"indices below {size:,}, the size of the axis {node} indexes")
        return ValueRule(what, make=lambda shape, dtype, rng: rng.integers(0, size, size=shape).astype(dtype))
    if op in ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss") and use.slot == 1:
        if data is None or len(data) < 2 or data[1] < 1:
            return None
        classes = data[1]
        return ValueRule(f"class ids below the {classes:,} classes of {node}",
                         make=lambda shape, dtype, rng: rng.integers(0, classes, size=shape).astype(dtype))
    if op in ("GatherElements", "GatherND", "ScatterND", "ScatterElements", "Scatter", "TensorScatter") and use.slot == 1:
        return ValueRule(f"index 0, always in range for {node}", make=lambda shape, dtype, rng: np.zeros(shape, dtype))
    return None


def value_rule(name: str, dtype: np.dtype, declared, hints: GraphHints) -> ValueRule | None:
    """The rule for `name`'s values from what it feeds, or None (random values then)."""
    uses = hints.uses.get(name, [])
    for use in uses:
        rule = _shape_like(use, hints, declared)
        if rule is not None and (rule.make is not None or dtype.kind in "iufb"):
            return rule
    if dtype.kind in "iu":
        for use in uses:
            rule = _indices(use, hints)
            if rule is not None:
                return rule
    return None
