"""The results other tools read: the JSON fields each command promises (more may be added,
none renamed). A job entry names its result type; tests check real results against it."""

from __future__ import annotations

import math
from typing import Any, TypedDict


def json_safe(value: Any) -> Any:
    """A result as JSON can hold it: NaN and Infinity (which JSON lacks) written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


class InspectResult(TypedDict):
    path: str
    size_bytes: int
    ir_version: int
    opsets: dict[str, int]
    producer: str
    inputs: list[dict]
    outputs: list[dict]
    node_count: int
    op_counts: dict[str, int]
    parameters: int
    initializer_bytes: int
    external_data: bool
    warnings: list[str]            # what is odd about a model ONNX Runtime loads all the same


class DevicesResult(TypedDict):
    providers: list[dict]          # {name, available, reason}


class BenchResult(TypedDict):
    latency_ms: dict[str, float]   # mean, p50, p90, p95, p99, p999, min, max, std
    iterations: int
    throughput_per_s: float
    session_create_ms: float
    first_run_ms: float
    peak_rss_bytes: int
    providers: list[str]
    session: dict                  # a preset: --config reproduces it
    inputs: list[dict]             # {name, dtype, shape, source, reason, values}


class CompareResult(TypedDict):
    baseline: str
    models: list[dict]             # per model, its `inputs` too
    session: dict
    inputs: list[dict]             # the reference's input plan: every model ran on these


class GateResult(TypedDict):
    verdict: str                   # pass, regression, undecided
    criteria: list[dict]           # {name, verdict, summary, limit, figures}: speed, outputs, accuracy, memory
    new: dict                      # {label, path, sha256, size_bytes, session}
    old: dict
    models: list[dict]             # the comparison's rows, old first (as compare reports them)
    inputs: list[dict]             # the old model's input plan: both ran on these
    session: dict


class SweepResult(TypedDict):
    cells: list[dict]              # per cell its latency, items_per_s, inputs, ratio, ratio_ci, verdict
    best: dict | None
    best_vs_runner_up: dict | None  # {ratio, ci, verdict, measurable, runner_up}
    ratio_definition: str
    inputs: list[dict]             # the first cell's input plan
    session: dict


class ConvertResult(TypedDict):
    kind: str
    input: str
    output: str
    input_bytes: int
    output_bytes: int
    seconds: float
    fidelity: dict                 # outputs [{name, max_abs_diff, max_rel_diff, cosine, nonfinite}], passed
    check: str                     # passed, failed, not-run, skipped
    speed: dict                    # ratio, ratio_ci, verdict, source_p50_ms, variant_p50_ms, rounds; or skipped, why


class ProfileResult(TypedDict):
    trace: str
    runs: int
    by_op_type: list[dict]         # {op_type, total_us, count, avg_us, percent}
    by_node: list[dict]
    by_provider: dict[str, Any]


class TuneResult(TypedDict):
    default: dict                  # {session, latency_ms (alone, re-measured), race_latency_ms}
    best: dict                     # a finalist found faster alone, or the user's own settings
    speedup: float                 # default p50 / best p50, both alone, in alternation
    speedup_ci: list[float]        # its 95 % interval ([1, 1] when best is the user's settings)
    verdict: str                   # faster, or reference when best is the user's settings
    note: str                      # one sentence: what was offered and why
    trials: list[dict]             # the race's in-process figures; finalists add speedup, speedup_ci, verdict


class DiagnoseResult(TypedDict):
    findings: list[dict]           # {id, severity, title, evidence, fix}
    inputs: list[dict]


class IOBindingResult(TypedDict):
    provider: str
    modes: list[dict]              # {name, latency_ms, bytes_copied_per_run}
    inputs: list[dict]


class DriftResult(TypedDict):
    tensors: list[dict]            # {name, node, op_type, max_abs_diff, max_rel_diff, cosine, sqnr_db, nonfinite, …}
    first_drift: dict | None       # {tensor, node, op_type, …}: the first tensor past the tolerance
    first_nonfinite: dict | None   # the first tensor with NaN/Inf the source does not have
    inputs: list[dict]


class OptimizeResult(TypedDict):
    model: str                     # the source, never modified
    out_dir: str                   # the folder shipped: model, preset, session.py, report.html, optimize.json
    objective: str                 # latency or throughput
    candidates: list[dict]         # per kind: status, speedup, speedup_ci, verdict, reason, fidelity, model?
    choice: dict                   # the answer shipped: kind, settings, speedup, speedup_ci, verdict, note
    tune: dict | None              # the tuning of the best candidate's session, if it ran
    inputs: list[dict]             # the input plan every candidate ran on
    data: dict                     # what the candidates were judged on: your data, samples or synthetic values
    session: dict
    partial: bool                  # cancelled or out of budget before every candidate was judged
    status: str                    # complete or cancelled
    elapsed_seconds: float
    files: list[str]


class RepairResult(ConvertResult):
    repair: dict                   # steps [{step, kept, added, cosine, max_abs_diff, passed, speed, first_drift, next}],
                                   # passed, kept, option, stopped, seconds
