"""Bench's measure(): counts, batching, concurrency, cancel, IO binding, and the job."""

import threading

import numpy as np
import pytest

from app.core.measure.runs import RunSettings, benchmark, measure, time_runs
from app.core.measure.timing import TICK_NS
from app.core.jobs.errors import JobCancelled, UserError
from app.core.jobs.protocol import JobContext
from app.core.runner.process import run_job
from app.core.session.config import SessionConfig
from app.core.measure.stats import latency_stats
from tests import models
from app.core.bench.jobs import BENCH


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return models.save(models.tiny_add(), tmp_path_factory.mktemp("bench") / "tiny.onnx")


@pytest.fixture(scope="module")
def session(tiny):
    import onnxruntime as ort
    return ort.InferenceSession(str(tiny), providers=["CPUExecutionProvider"])


FEEDS = {"x": np.ones((1, 4), np.float32)}


def test_counts_and_batches(session):
    batches = []
    result = measure(session, FEEDS, RunSettings(warmup=7, iterations=3000), None,
                     lambda phase, ns: batches.append((phase, np.frombuffer(ns, np.int64))))
    assert len(result.warmup_ns) == 7 and len(result.samples_ns) == 3000
    measured = np.concatenate([b for phase, b in batches if phase == "measure"])
    warm = np.concatenate([b for phase, b in batches if phase == "warmup"])
    assert np.array_equal(measured, np.frombuffer(result.samples_ns, np.int64))
    assert np.array_equal(warm, np.frombuffer(result.warmup_ns, np.int64))
    # batched by time, never one message per run
    assert len(batches) <= 2 + 2 * (result.wall_s * 1e9 / TICK_NS + 1)
    assert (measured > 0).all()


def test_summary_matches_numpy(session):
    result = measure(session, FEEDS, RunSettings(warmup=0, iterations=500))
    summary = result.summary()
    samples = np.frombuffer(result.samples_ns, np.int64) / 1e6
    assert summary["iterations"] == 500
    assert summary["latency_ms"] == latency_stats(samples)
    assert summary["latency_ms"]["p99"] == pytest.approx(np.percentile(samples, 99))
    assert summary["throughput_per_s"] == pytest.approx(500 / result.wall_s)


def test_concurrency_splits_the_runs(session):
    result = measure(session, FEEDS, RunSettings(warmup=2, iterations=1001, concurrency=3))
    assert len(result.samples_ns) == 1001
    assert result.summary()["concurrency"] == 3


def test_duration_mode_runs_until_the_deadline(session):
    result = measure(session, FEEDS, RunSettings(warmup=0, duration_s=0.3))
    assert len(result.samples_ns) > 0
    assert result.wall_s >= 0.3


def test_cancel_stops_a_long_run(session):
    ctx = JobContext()
    threading.Timer(0.3, ctx.cancel).start()
    with pytest.raises(JobCancelled):
        measure(session, FEEDS, RunSettings(warmup=0, duration_s=600), ctx)


def test_io_binding_on_the_cpu(tiny):
    config = SessionConfig(io_binding=True)
    report, measurement = benchmark(tiny, config, RunSettings(warmup=1, iterations=50))
    assert report["iterations"] == 50 and report["session"]["io_binding"] is True


def test_required_dimension_must_exist(tiny):
    with pytest.raises(UserError, match="no symbolic dimension named sequence"):
        benchmark(tiny, SessionConfig(), RunSettings(warmup=0, iterations=1), require_dims=("sequence",))


def test_bench_job_streams_batches_and_stores_the_result(tiny):
    from app.core.store.history import History

    from app.core.launch.start import run

    events = []
    report = run(BENCH,
                     {"path": str(tiny), "session": SessionConfig().to_dict(),
                      "run": {"warmup": 5, "iterations": 20000}},
                     on_event=lambda kind, payload: events.append((kind, payload)))
    for key in ("mean", "p50", "p90", "p95", "p99", "p999", "min", "max", "std"):
        assert report["latency_ms"][key] > 0
    assert report["iterations"] == 20000 and report["providers"] == ["CPUExecutionProvider"]
    assert report["session_create_ms"] > 0 and report["first_run_ms"] > 0 and report["peak_rss_bytes"] > 0
    assert report["session"]["inputs"]["dims"] == {"batch": 1}
    SessionConfig.from_dict(report["session"])          # the report's session is a preset
    data = [p["payload"] for kind, p in events if kind == "data" and p["kind"] == "latency"]
    assert len(data) < 20000 / 10
    counts = {phase: sum(len(d["ns"]) // 8 for d in data if d["phase"] == phase) for phase in ("first", "warmup", "measure")}
    assert counts == {"first": 1, "warmup": 5, "measure": 20000}
    kinds = [p["kind"] for kind, p in events if kind == "data"]
    assert kinds[0] == "inputs", "the inputs are known before the first run's latency"
    planned = next(p["payload"] for kind, p in events if kind == "data" and p["kind"] == "inputs")
    assert planned == {"inputs": report["inputs"], "dims": report["input_dims"], "guessed": report["inputs_guessed"]}
    stored = History().get(report["history_id"])
    assert stored["samples_ms"].size == 20000 and stored["warmup_ms"].size == 5
    assert stored["model_sha256"] == report["model"]["sha256"]


def test_quick_timings_stop_at_the_count_or_the_budget(session):
    counted = time_runs(session, FEEDS, 5, 60.0)
    assert len(counted) == 5 and all(ms > 0 for ms in counted)
    budgeted = time_runs(session, FEEDS, 10**9, 0.2)   # without the budget this would not end
    assert 0 < len(budgeted) < 10**9


def test_cancel_stops_the_quick_timings(session):
    ctx = JobContext()
    threading.Timer(0.3, ctx.cancel).start()
    with pytest.raises(JobCancelled):
        time_runs(session, FEEDS, 10**9, 600.0, ctx)
