"""A sweep over a decoder's step counts tokens: a past-length sweep's cells each make one token
per sequence a run, so their tokens per second are runs per second (never scaled by the past
length) and the best is the one that is fastest per token."""

from __future__ import annotations

from app.core.bench.jobs import SWEEP
from app.core.bench.sweep import items_unit, sweep_cell
from app.core.bench.sweep_tokens import decoder_steps
from app.core.jobs.protocol import JobContext
from app.core.session.input_spec import FeedSpec
from tests import models
from tests.decoder_models import gpt2, llama_gqa


def test_each_cell_of_a_decoders_step_makes_batch_times_new_tokens(tmp_path):
    path = str(models.save(llama_gqa("dynamo"), tmp_path / "llama.onnx"))
    assert decoder_steps(path, "s2", [16, 400], FeedSpec()) == [(1, 1), (1, 1)]       # past lengths
    assert decoder_steps(path, "s0", [1, 4], FeedSpec()) == [(1, 1), (4, 1)]           # batches
    assert decoder_steps(path, "s1", [32, 64], FeedSpec(phase="prefill")) == [(1, 32), (1, 64)]   # prompts
    assert decoder_steps(str(models.save(models.mlp(), tmp_path / "mlp.onnx")), "batch", [1], FeedSpec()) is None


def test_a_decoder_cell_reports_tokens_per_second_and_latency_per_token():
    figures = {"throughput_per_s": 100.0, "latency_ms": {"p50": 40.0, "p90": 44.0, "p95": 46.0, "p99": 50.0}}
    cell = sweep_cell(64, 1, figures, {}, (2, 8))
    assert cell["tokens_per_s"] == cell["items_per_s"] == 100.0 * 2 * 8
    assert cell["per_token_ms"]["p50"] == 5.0 and cell["tokens_per_run"] == 16
    assert items_unit("past", [cell]) == "tokens/s" and items_unit("batch", [{"items_per_s": 1}]) == "batch items/s"


def test_a_past_length_sweeps_best_is_the_fastest_per_token(tmp_path):
    path = models.save(gpt2(positions=4096), tmp_path / "gpt2.onnx")
    result = SWEEP({"path": str(path), "dim": "past_sequence_length", "dim_values": [8, 3000],
                    "run": {"warmup": 2, "iterations": 60}, "record": False}, JobContext())
    cells = result["cells"]
    assert result["unit"] == "tokens/s"
    assert [c["input_shapes"]["attention_mask"] for c in cells] == [[1, 9], [1, 3001]]
    for cell in cells:      # one token a run, whatever the past: never runs/s × 3,000
        assert cell["tokens_per_s"] == cell["items_per_s"] == cell["throughput_per_s"]
        assert cell["per_token_ms"]["p50"] == cell["latency_ms"]["p50"]
    # ranked by tokens per second against the first cell, measured in alternation: the fastest per token
    assert result["best"] == max(cells, key=lambda c: c["ratio"])
