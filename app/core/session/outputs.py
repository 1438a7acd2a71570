"""How far one model's outputs lie from another's on the same feeds, output by output:
the numbers and verdict the conversions' fidelity check (app.core.convert.fidelity) and
the comparisons (app.core.bench.compare) both report.

Per output: the largest absolute and relative difference, the cosine similarity, the NaN/Inf
count and, for class scores or logits, the top-1 agreement; an output passes when the shapes
agree, the variant has no NaN/Inf where the source has none, and what its fidelity policy
says decides holds (app.core.session.fidelity_policy): every element within
`atol + rtol * |source|` (numpy.allclose) and the cosine at least `min_cosine`, or for the
lower precisions the cosine, or the top-1 agreement. An output whose every value lies within
the absolute bound of zero (and below NEAR_ZERO) has no direction worth the name: the bound
alone judges it, and its row's `note` says so."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

import numpy as np

from app.core.jobs.errors import UserError
from app.core.session.fidelity_policy import TASK_ROWS
from app.core.formatting import cosine_text

#: elements smaller than this share of an output's largest magnitude are left out of
#: the relative difference (they make it explode without meaning anything)
REL_FLOOR = 1e-3
#: an output whose largest magnitude is at most this (and within the policy's absolute bound)
#: is near zero everywhere: the bound judges it, not its cosine. The cap keeps int8's loose
#: bound (0.1) from calling an L2-normalised embedding (elements about 0.04) near zero.
NEAR_ZERO = 1e-3


@dataclass
class Tolerance:
    """The bounds an output is held to, and the fidelity policy they come from
    (app.core.session.fidelity_policy; its defaults are the strict float32 policy's)."""
    atol: float = 1e-4
    rtol: float = 1e-3
    min_cosine: float = 0.9999
    min_top1: float = 0.0          # the least top-1 agreement on class scores or logits (0: reported only)
    policy: str = "float32"

    @classmethod
    def from_dict(cls, data: dict | None) -> "Tolerance":
        from app.core.session.fidelity_policy import POLICIES

        data = dict(data or {})
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise UserError("bad-option", f"unknown tolerance setting(s): {', '.join(sorted(unknown))}")
        policy = str(data.pop("policy", "float32"))
        if policy not in POLICIES:
            raise UserError("bad-option", f"no fidelity policy is called {policy!r} (there are "
                                          f"{', '.join(POLICIES)})")
        try:
            tolerance = cls(**{k: float(v) for k, v in data.items()}, policy=policy)
        except (TypeError, ValueError):
            raise UserError("bad-option", f"the fidelity tolerances must be numbers, not {data}") from None
        tolerance.validate()
        return tolerance

    def validate(self) -> None:
        if not (self.atol >= 0 and self.rtol >= 0):
            raise UserError("bad-option", "the fidelity tolerances must be ≥ 0")
        if not -1 <= self.min_cosine <= 1:
            raise UserError("bad-option", "the minimum cosine similarity must lie between -1 and 1")
        if not 0 <= self.min_top1 <= 1:
            raise UserError("bad-option", "the least top-1 agreement must lie between 0 and 1")

    @property
    def decides(self) -> str:
        """What decides a pass: "bounds", "direction" or "task" (app.core.session.fidelity_policy)."""
        from app.core.session.fidelity_policy import POLICIES
        return POLICIES[self.policy].decides

    def to_dict(self) -> dict:
        return asdict(self)


def as_array(value):
    """An ndarray for an output value, or None when it cannot be compared numerically.

    Sequences of maps (ZipMap's class probabilities) become one row per item."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        keys = sorted(value[0])
        try:
            return np.array([[item[k] for k in keys] for item in value], dtype=np.float64)
        except (KeyError, TypeError, ValueError):
            return None
    if isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
        try:
            return np.stack(value)
        except ValueError:
            return None
    return None


#: words in an output's name that say it holds class scores or logits
_SCORE_NAMES = re.compile(r"logit|prob|score|class|cls|softmax", re.IGNORECASE)


def top1_agreement(name: str, expected: np.ndarray, got: np.ndarray) -> tuple[float, int] | None:
    """(the share of rows whose largest entry is at the same place, the rows) for an output
    that holds class scores: `[N, C]` rows of probabilities (non-negative, summing to 1) or
    named so, or a decoder's `[B, S, V]` logits named so; None for any other output (a hidden
    state, an embedding, boxes), where a top-1 means nothing."""
    if expected.dtype.kind not in "fc" or not np.all(np.isfinite(expected)) or expected.ndim not in (2, 3):
        return None
    if expected.shape[-1] < 2 or (expected.ndim == 3 and not _SCORE_NAMES.search(name)):
        return None
    probabilities = bool(np.all(expected >= 0)) and bool(np.allclose(expected.sum(axis=-1), 1.0, atol=1e-3))
    if not (probabilities or _SCORE_NAMES.search(name)):
        return None
    classes = expected.shape[-1]
    a, b = expected.reshape(-1, classes), np.nan_to_num(got.reshape(-1, classes), nan=-np.inf)
    if not a.shape[0]:
        return None
    return float(np.mean(a.argmax(axis=1) == b.argmax(axis=1))), int(a.shape[0])


def compare_values(name: str, expected, got, tolerance: Tolerance) -> dict:
    """The numbers for one output."""
    row = {"name": name, "shape": None, "max_abs_diff": None, "max_rel_diff": None, "cosine": None,
           "nonfinite": 0, "source_nonfinite": 0, "passed": False, "problem": ""}
    a, b = as_array(expected), as_array(got)
    if a is None or b is None:
        row["problem"] = "values of this kind are not compared"
        row["passed"] = None
        return row
    row["shape"] = list(a.shape)
    if a.shape != b.shape:
        row["problem"] = f"shape {list(b.shape)} instead of {list(a.shape)}"
        return row
    if a.dtype.kind in "USO" or b.dtype.kind in "USO":
        same = bool(np.array_equal(a, b))
        row.update(max_abs_diff=0.0 if same else None, passed=same, problem="" if same else "texts differ")
        return row
    a, b = a.astype(np.float64), b.astype(np.float64)
    bad_a, bad_b = ~np.isfinite(a), ~np.isfinite(b)
    row["source_nonfinite"], row["nonfinite"] = int(bad_a.sum()), int(bad_b.sum())
    new_bad = bad_b & ~(bad_a & ((a == b) | (np.isnan(a) & np.isnan(b))))
    both = ~bad_a & ~bad_b
    a_f, b_f = a[both], b[both]
    diff = np.abs(a_f - b_f)
    row["max_abs_diff"] = float(diff.max()) if diff.size else 0.0
    scale = float(np.abs(a_f).max()) if a_f.size else 0.0
    meaningful = np.abs(a_f) > max(scale * REL_FLOOR, np.finfo(np.float64).tiny)
    row["max_rel_diff"] = float((diff[meaningful] / np.abs(a_f[meaningful])).max()) if meaningful.any() else 0.0
    norms = float(np.linalg.norm(a_f)) * float(np.linalg.norm(b_f))
    if norms > 0:
        row["cosine"] = float(np.dot(a_f.ravel(), b_f.ravel()) / norms)
    elif a_f.size and np.array_equal(a_f, b_f):
        row["cosine"] = 1.0
    elif a_f.size and norms == 0 and np.any(a_f):
        row["cosine"] = 0.0          # the variant lost the whole output (see the problem)
    # else the source's output is all zeros: it has no direction to keep, so no cosine (it
    # was 0, and failed an output the variant met within 2e-07); the element-wise bound judges it
    within = bool(np.all(diff <= tolerance.atol + tolerance.rtol * np.abs(a_f)))
    lost = bool(a_f.size) and bool(np.any(a_f)) and not np.any(b_f)     # judged by the bound alone
    near_zero = 0 < scale <= min(tolerance.atol, NEAR_ZERO)
    if near_zero:
        row["note"] = near_zero_note(scale, row["cosine"], tolerance)
    cosine_ok = row["cosine"] is None or lost or near_zero or row["cosine"] >= tolerance.min_cosine
    elementwise = [] if within else [f"differences above {tolerance.atol:g} + {tolerance.rtol:g}·|source|"]
    direction = [] if cosine_ok else [f"cosine {cosine_text(row['cosine'])} below {tolerance.min_cosine:g}"]
    problems = [f"{int(new_bad.sum())} NaN/Inf value(s) the source does not have"] if new_bad.any() else []
    if lost and not within:
        problems.append("all zeros where the source's are not")
    agreement = top1_agreement(name, a, b)
    task = None
    if agreement is not None:
        row["top1_agreement"], row["top1_rows"] = agreement
        share, rows = agreement
        asked = tolerance.min_top1 > 0 and rows >= TASK_ROWS
        task = share >= tolerance.min_top1 if asked else None
        if task is False:
            problems.append(f"top-1 agrees on {share:.1%} of {rows} rows, below {tolerance.min_top1:.0%}")
    decides = tolerance.decides
    if near_zero and task is None:                  # no direction to judge: the absolute bound decides
        beside, problems = [], problems + elementwise
    elif decides == "task" and task is not None:    # the answer decides; the bounds are figures beside it
        beside = elementwise + direction
    elif decides in ("task", "direction"):          # the direction decides; the element-wise bound is a figure
        beside, problems = elementwise, problems + direction
    else:
        beside, problems = [], problems + elementwise + direction
    if beside:
        row["beside"] = "; ".join(beside)
    row["passed"] = not problems
    row["problem"] = "; ".join(problems)
    return row


def near_zero_note(scale: float, cosine: float | None, tolerance: Tolerance) -> str:
    """Why an output whose every value lies within the absolute bound of zero (NEAR_ZERO) is
    judged by that bound alone: its direction is the rounding of numbers that are all but zero (PP-OCR's
    text detector on an image without text: a map of at most 4.8e-05, where OpenVINO in
    float32 gives cosine 0.99981 at |Δ| 1.2e-07), so its cosine says nothing of the answer."""
    figure = f" (cosine {cosine_text(cosine)}, not used)" if cosine is not None else ""
    return (f"near zero everywhere: its largest |value| {scale:.3g} is within the absolute bound {tolerance.atol:g}, "
            f"so that bound judges it{figure}")
