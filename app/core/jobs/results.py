"""The results other tools read: the JSON fields each command promises (more may be added,
none renamed). A job entry names its result type; tests check real results against it."""

from __future__ import annotations

from typing import Any, TypedDict


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
    models: list[dict]
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


class ProfileResult(TypedDict):
    trace: str
    runs: int
    by_op_type: list[dict]         # {op_type, total_us, count, avg_us, percent}
    by_node: list[dict]
    by_provider: dict[str, Any]


class TuneResult(TypedDict):
    default: dict                  # {session, latency_ms}
    best: dict
    speedup: float
    trials: list[dict]


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
