"""Diagnosis: why is this model slow here? Gathers evidence (the model, a profile,
timings, small experiments) in a child process and turns it into findings with fixes; then,
where the model has symbolic dimensions, measures fixing them in alternation
(app.core.diagnose.symbolic), each session in a process of its own."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np

from app.core.diagnose import rules
from app.core.diagnose.symbolic import candidate_overrides, measure_overrides, node_counts
from app.core.session.load import LoadWatch
from app.core.measure.runs import time_runs
from app.core.session.probe import prepare_feeds
from app.core.model.inspect import inspect_model
from app.core.jobs.protocol import JobContext
from app.core.session.machine_cpu import cpu_description, int8_acceleration
from app.core.session.config import SessionConfig
from app.core.session.create import create_session
from app.core.measure.stats import latency_stats

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2, "info": 3}


def fp16_tensor_count(path: str) -> int:
    if not path.lower().endswith(".onnx"):
        return 0
    import onnx
    from app.core.model.intake import iter_graphs, iter_tensors, load_onnx

    model = load_onnx(Path(path))
    count = sum(1 for t in iter_tensors(model) if t.data_type == onnx.TensorProto.FLOAT16)
    for graph in iter_graphs(model.graph):
        for value in list(graph.input) + list(graph.output) + list(graph.value_info):
            if value.type.tensor_type.elem_type == onnx.TensorProto.FLOAT16:
                count += 1
    return count


def spinning_probe(path: str, config: SessionConfig, feeds: dict, ctx: JobContext, gap_s: float = 0.01) -> dict:
    """CPU time per request with spinning on and off, when requests arrive with gaps."""
    result = {"gap_ms": gap_s * 1000}
    for label, spin in (("spin", True), ("nospin", False)):
        variant = config.checked()
        variant.intra_op_allow_spinning = spin
        variant.inter_op_allow_spinning = spin
        session = create_session(path, variant)
        time_runs(session, feeds, 3, 1.0, ctx)
        cpu_start, latencies = time.process_time(), []
        for _ in range(20):
            ctx.check_cancel()
            latencies += time_runs(session, feeds, 1, 1.0, ctx)
            time.sleep(gap_s)
        result[f"cpu_ms_{label}"] = (time.process_time() - cpu_start) * 1000 / 20
        result[f"latency_{label}_ms"] = float(np.median(latencies))
        del session
    return result


def profile_for(path: str, config: SessionConfig, trace: str | None, runs: int, ctx: JobContext) -> dict:
    from app.core.profile.trace_reader import read_trace
    from app.core.profile.traces import summarize

    if trace:
        return summarize(read_trace(trace))
    from app.core.profile.jobs import PROFILE
    with tempfile.TemporaryDirectory() as folder:
        return PROFILE({"model": path, "session": config, "runs": runs, "out": os.path.join(folder, "trace.json")},
                       ctx)


def gather(params, ctx: JobContext) -> dict:
    """The diagnosis less its measured experiments, in one child process. params: DiagnoseParams
    (app.core.diagnose.jobs)."""
    import psutil

    config = params.session
    providers = config.provider_names()
    ctx.progress(0.05, "reading the model")
    summary = inspect_model(params.path)
    path = summary["path"]         # the file itself, links followed
    ctx.progress(0.15, "profiling" if not params.trace else "reading the profile")
    watch = LoadWatch()
    profile = profile_for(path, config, params.trace, params.runs, ctx)
    ctx.progress(0.45, "timing runs")
    session = create_session(path, config)
    first = prepare_feeds(path, session, config.inputs, ctx)
    feeds, feed_info = first.feeds, first.info
    time_runs(session, feeds, 5, 2.0, ctx)
    samples = time_runs(session, feeds, params.timing_runs, params.timing_s, ctx)
    stats = {**latency_stats(samples), "runs": len(samples)}
    load = watch.stop()
    intra_threads = config.intra_op_num_threads or (psutil.cpu_count(logical=False) or 1)
    del session
    ctx.check_cancel()
    probes = {}
    overrides = candidate_overrides(feed_info["dims"], config)
    if overrides and params.symbolic_s > 0:
        ctx.progress(0.6, "optimising with fixed dimensions")
        probes["symbolic"] = node_counts(path, config, overrides)
    if providers[0] == "CPUExecutionProvider" and config.intra_op_allow_spinning is not False and intra_threads > 1:
        ctx.progress(0.8, "measuring spinning")
        probes["spinning"] = spinning_probe(path, config, feeds, ctx)
    cpu_name, flags = cpu_description()
    settings = config.to_dict()
    # on a busy machine the shares and the spread are the other programs' doing: not blamed on the model
    disturbed = [] if load.busy else (rules.variance_findings(stats, settings) + rules.hot_op_findings(profile, settings))
    findings = (rules.busy_findings(load.to_dict())
                + rules.placement_findings(profile, providers)
                + rules.quantization_findings(summary, profile, providers, cpu_name, int8_acceleration(flags),
                                              bool(flags))
                + rules.fp16_findings(summary, fp16_tensor_count(path), profile, providers)
                + rules.initializer_findings(summary)
                + rules.thread_findings(settings, psutil.cpu_count(logical=False) or 0, psutil.cpu_count() or 0)
                + rules.spinning_findings(probes.get("spinning"))
                + disturbed)
    findings = ordered(rules.without_what_is_set(findings, settings))
    ctx.progress(1.0, "done")
    return {"model": str(Path(path).resolve()), "session": settings, "findings": findings,
            "inputs": feed_info["inputs"],
            "evidence": {"latency_ms": stats, "load": load.to_dict(), "cpu": cpu_name, "int8_instructions": int8_acceleration(flags),
                         "profile": {**{k: profile[k] for k in ("trace", "runs", "total_node_us", "by_provider")
                                        if k in profile}, "read_from_trace": bool(params.trace)},
                         "top_op_types": profile["by_op_type"][:10], "probes": probes, "inputs": feed_info["inputs"]}}


def ordered(findings: list[dict]) -> list[dict]:
    return sorted(findings, key=lambda f: SEVERITY_ORDER.get(f["severity"], 9))


#: the share of the progress bar the child's evidence takes when fixed dimensions are measured after
GATHER_SHARE = 0.7


def diagnose(params, ctx: JobContext, gather_entry) -> dict:
    """Runs in the calling process (it only starts children): the evidence and findings from
    one child (`gather_entry`: the job entry of gather), then the symbolic dimensions'
    experiment in alternation: a finding only when fixing them is measurably faster."""
    from app.core.jobs.protocol import stage_events
    from app.core.runner.process import run_child

    limit = str(ctx.memory_budget) if ctx.memory_budget else None
    result = run_child(gather_entry, params, ctx, stage_events(ctx, 0.0, GATHER_SHARE), memory_limit=limit)
    probe = result["evidence"]["probes"].get("symbolic")
    if probe:
        probe.update(measure_overrides(result["model"], params.session, probe["overrides"], ctx, GATHER_SHARE,
                                       1 - GATHER_SHARE, params.symbolic_s))
        result["findings"] = ordered(result["findings"] + rules.symbolic_findings(probe))
    ctx.progress(1.0, "done")
    return result
