"""What an ORT profile trace says: time per operator type, per node and per provider, the
session's phases and runs, one run's timeline (the comparison of two is in diff.py).

Totals and counts cover every node event of the trace. Averages leave the first run out
(it warms caches, allocates the arena and, on GPUs, tunes kernels) unless asked not to,
and only when there is a second run to average. Shares are of the total node time."""

from __future__ import annotations


import numpy as np

from app.core.jobs.protocol import JobContext
from app.core.profile.trace_reader import TraceData, read_trace

PERCENT_OF = "total node time"
SLOW_RUN_FACTOR = 1.5     # a steady run this many times the median stands out
LOADING_PHASES = ("model_loading_uri", "model_loading_array", "model_loading_from_saved_proto")
UNKNOWN_OP = "(unknown)"
MAX_RUN_SERIES = 2000     # steady runs whose per-run times a profile keeps (for intervals over runs)


def shape_texts(entries) -> list[str]:
    """ORT's [{"float": [1, 3, 224, 224]}, …] as ["float[1, 3, 224, 224]", …]."""
    texts = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            texts += [f"{dtype}[{', '.join(str(d) for d in dims)}]" for dtype, dims in entry.items()]
    return texts


def _sums(groups: np.ndarray, weights: np.ndarray | None, size: int) -> np.ndarray:
    # float64 sums of whole µs stay exact far beyond any real trace (2**53 µs is 285 years)
    return np.rint(np.bincount(groups, weights=weights, minlength=size)).astype(np.int64)


def _runs(trace: TraceData) -> tuple[np.ndarray, np.ndarray]:
    """(start, duration) of each model_run, in time order."""
    run_keys = [i for i, k in enumerate(trace.keys) if k.category == "Session" and k.name == "model_run"]
    mask = np.isin(trace.key, run_keys)
    order = np.argsort(trace.ts[mask], kind="stable")
    return trace.ts[mask][order], trace.dur[mask][order]


def _phase_us(trace: TraceData, names) -> int | None:
    keys = [i for i, k in enumerate(trace.keys) if k.category == "Session" and k.name in names]
    return int(trace.dur[np.isin(trace.key, keys)].sum()) if keys else None


def _run_stats(run_dur: np.ndarray, first_excluded: bool) -> dict:
    steady = run_dur[1:] if first_excluded else run_dur
    if steady.size == 0:
        return {"first_run_us": None, "steady_run_us": None, "slow_runs": []}
    median = float(np.median(steady))
    offset = 1 if first_excluded else 0
    slow = [int(i) + offset for i in np.nonzero(steady > SLOW_RUN_FACTOR * median)[0]]
    return {"first_run_us": int(run_dur[0]),
            "steady_run_us": {"mean": float(steady.mean()), "median": median, "min": int(steady.min()),
                              "max": int(steady.max())},
            "slow_runs": slow}


class _NodeTable:
    """Per-node totals of the node events, and which run each event belongs to."""

    def __init__(self, trace: TraceData, run_start: np.ndarray, run_dur: np.ndarray, include_first_run: bool):
        node_key = np.array([k.category == "Node" for k in trace.keys], dtype=bool)
        events = np.nonzero(node_key[trace.key])[0]
        self.events = events
        self.key_ids, self.inverse = np.unique(trace.key[events], return_inverse=True)
        self.inverse = self.inverse.astype(np.int32)
        ts, dur = trace.ts[events], trace.dur[events]
        self.run = np.full(events.size, -1, np.int32)
        if run_start.size:
            position = np.searchsorted(run_start, ts, side="right") - 1
            inside = (position >= 0) & (ts <= (run_start + run_dur)[np.maximum(position, 0)])
            self.run = np.where(inside, position, -1).astype(np.int32)
        # Per-run figures only count events inside a run (a truncated trace may end mid-run);
        # events of a trace whose runs hold none are taken as one whole.
        by_run = bool(run_start.size) and bool((self.run >= 0).any())
        self.first_excluded = by_run and not include_first_run and run_start.size >= 2
        first = 1 if self.first_excluded else 0
        steady = self.run >= first if by_run else np.ones(events.size, bool)
        self.steady_runs = run_start.size - first if by_run else 1
        size = self.key_ids.size
        self.by_run, self.first = by_run, first
        self.total = _sums(self.inverse, dur, size)
        self.count = _sums(self.inverse, None, size)
        self.steady_total = _sums(self.inverse[steady], dur[steady], size)
        self.steady_count = _sums(self.inverse[steady], None, size)
        keys = [trace.keys[k] for k in self.key_ids]
        self.names = [k.name for k in keys]
        self.ops = [k.op_type or UNKNOWN_OP for k in keys]
        self.providers = [str(k.args.get("provider", "")) or "unknown" for k in keys]
        self.args = [k.args for k in keys]


def _average(total: int, count: int) -> float | None:
    return total / count if count else None


def _steady_average(steady_total: int, steady_count: int, total: int, count: int) -> float | None:
    """Per call over the steady runs; over everything when no steady call was seen."""
    return _average(steady_total, steady_count) if steady_count else _average(total, count)


def _group(table: _NodeTable, labels: list[str], grand_total: int) -> list[dict]:
    """Node totals summed per label (op type or provider), largest first."""
    names = sorted(set(labels))
    index = {name: i for i, name in enumerate(names)}
    groups = np.array([index[label] for label in labels], dtype=np.int64)
    sums = {field: _sums(groups, getattr(table, field), len(names))
            for field in ("total", "count", "steady_total", "steady_count")}
    nodes = np.bincount(groups, minlength=len(names))
    rows = []
    for i, name in enumerate(names):
        total, count = int(sums["total"][i]), int(sums["count"][i])
        steady_total, steady_count = int(sums["steady_total"][i]), int(sums["steady_count"][i])
        rows.append({"name": name, "total_us": total, "count": count,
                     "avg_us": _steady_average(steady_total, steady_count, total, count),
                     "avg_all_us": _average(total, count),
                     "percent": 100.0 * total / grand_total if grand_total else 0.0,
                     "per_run_us": steady_total / table.steady_runs,
                     "per_run_count": steady_count / table.steady_runs, "nodes": int(nodes[i])})
    rows.sort(key=lambda row: (-row["total_us"], row["name"]))
    return rows


def _per_run(table: _NodeTable, trace: TraceData, by_op_type: list[dict]) -> dict[str, list[int]] | None:
    """Per op type, its node time (µs) in each steady run, for intervals over runs (the
    last MAX_RUN_SERIES runs of a longer trace); None when the trace is not split in runs."""
    if not table.by_run or table.steady_runs < 2:
        return None
    runs = table.steady_runs
    kept = max(0, runs - MAX_RUN_SERIES)
    ops = [row["op_type"] for row in by_op_type]
    column = {op: i for i, op in enumerate(ops)}
    op_of_key = np.array([column[op] for op in table.ops], dtype=np.int64)
    run = table.run.astype(np.int64) - table.first - kept
    inside = run >= 0
    cells = run[inside] * len(ops) + op_of_key[table.inverse[inside]]
    dur = trace.dur[table.events][inside]
    matrix = _sums(cells, dur, (runs - kept) * len(ops)).reshape(runs - kept, len(ops))
    return {op: matrix[:, i].tolist() for i, op in enumerate(ops)}


def _by_node(table: _NodeTable, grand_total: int) -> tuple[list[dict], np.ndarray]:
    """Every node, largest total first, and the rank of each node id."""
    order = np.lexsort((np.arange(table.total.size), -table.total))
    rows = []
    for i in order:
        total, count = int(table.total[i]), int(table.count[i])
        rows.append({"name": table.names[i], "op_type": table.ops[i], "provider": table.providers[i],
                     "total_us": total, "count": count,
                     "avg_us": _steady_average(int(table.steady_total[i]), int(table.steady_count[i]),
                                               total, count),
                     "avg_all_us": _average(total, count),
                     "percent": 100.0 * total / grand_total if grand_total else 0.0,
                     "per_run_us": int(table.steady_total[i]) / table.steady_runs,
                     "input_shapes": shape_texts(table.args[i].get("input_type_shape")),
                     "output_shapes": shape_texts(table.args[i].get("output_type_shape"))})
    rank = np.empty(order.size, np.int32)
    rank[order] = np.arange(order.size, dtype=np.int32)
    return rows, rank


def _kernels(trace: TraceData) -> list[dict]:
    kernel_ids = [i for i, k in enumerate(trace.keys) if k.category == "Kernel"]
    if not kernel_ids:
        return []
    mask = np.isin(trace.key, kernel_ids)
    totals = np.bincount(trace.key[mask], weights=trace.dur[mask], minlength=len(trace.keys))
    counts = np.bincount(trace.key[mask], minlength=len(trace.keys))
    all_kernels = float(trace.dur[mask].sum()) or 1.0
    rows = [{"name": trace.keys[i].name, "op_type": trace.keys[i].op_type or UNKNOWN_OP,
             "total_us": int(round(totals[i])), "count": int(counts[i]), "percent": 100.0 * totals[i] / all_kernels}
            for i in kernel_ids]
    return sorted(rows, key=lambda row: -row["total_us"])


def summarize(trace: TraceData, include_first_run: bool = False, with_timeline: bool = False) -> dict:
    """The profile of one trace (JSON-able; with_timeline adds numpy columns for the window)."""
    run_start, run_dur = _runs(trace)
    table = _NodeTable(trace, run_start, run_dur, include_first_run)
    grand_total = int(table.total.sum())
    by_node, rank = _by_node(table, grand_total)
    by_op_type = [{"op_type": row.pop("name"), **row} for row in _group(table, table.ops, grand_total)]
    shares: dict[str, dict[str, int]] = {}
    for node in by_node:
        share = shares.setdefault(node["op_type"], {})
        share[node["provider"]] = share.get(node["provider"], 0) + node["total_us"]
    for row in by_op_type:
        row["providers"] = sorted(shares[row["op_type"]], key=lambda name: -shares[row["op_type"]][name])
        row["provider"] = row["providers"][0]
    providers = [{"provider": row.pop("name"), **row} for row in _group(table, table.providers, grand_total)]
    tids = trace.tid[table.events]
    lanes, lane_of_event = np.unique(tids, return_inverse=True)
    lane_totals = _sums(lane_of_event, trace.dur[table.events], lanes.size)
    result = {
        "trace": str(trace.path), "trace_bytes": trace.size_bytes, "events": int(trace.ts.size),
        "node_events": int(table.events.size), "total_node_us": grand_total, "runs": int(run_start.size),
        "warmup_excluded": table.first_excluded, "percent_of": PERCENT_OF,
        "by_op_type": by_op_type, "by_node": by_node,
        "by_provider": {row["provider"]: row["total_us"] for row in providers}, "providers": providers,
        "phases": {"model_loading_us": _phase_us(trace, LOADING_PHASES),
                   "session_initialization_us": _phase_us(trace, ("session_initialization",)),
                   "run_us": [int(d) for d in run_dur], **_run_stats(run_dur, table.first_excluded)},
        "threads": [{"tid": int(t), "node_events": int(n), "total_us": int(s)}
                    for t, n, s in zip(lanes, np.bincount(lane_of_event, minlength=lanes.size), lane_totals)],
        "kernels": _kernels(trace),
        "per_run_by_op_type": _per_run(table, trace, by_op_type),
        "truncated": trace.truncated, "warnings": [trace.problem] if trace.problem else [],
    }
    if not table.events.size:
        result["warnings"].append(f"{trace.path.name} holds no node events: no run was profiled, or profiling "
                                  "stopped before the first one")
    if with_timeline:
        result["timeline"] = {"ts": trace.ts[table.events], "dur": trace.dur[table.events], "tid": tids,
                              "node": rank[table.inverse], "run": table.run,
                              "run_start": run_start, "run_dur": run_dur}
    return result


# jobs ---------------------------------------------------------------------------------------


def read_reporting(path: str, ctx: JobContext, start: float, span: float, label: str) -> TraceData:
    def progress(fraction: float) -> None:
        ctx.check_cancel()
        ctx.progress(start + span * fraction, f"reading {label}")

    return read_trace(path, progress)
