"""A decoder with a KV cache is planned as one step of generation, whichever exporter made it:
decode (1 new token after the past) by default, prefill on request; mask, positions and cache
agree with each other, and the cache's sizes are the model's."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from app.core.jobs.errors import UserError
from app.core.session.graph_hints import read_hints
from app.core.session.inputs import FeedSpec, make_feeds, session_inputs
from tests.decoder_models import NAMES, gpt2, llama_gqa
from tests.models import save

MODELS = [("gpt2", names) for names in NAMES] + [("llama", names) for names in NAMES if names != "legacy"]


def _plan(tmp_path, kind: str, names: str, spec: FeedSpec | None = None):
    path = save((gpt2 if kind == "gpt2" else llama_gqa)(names), tmp_path / f"{kind}_{names}.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds, info = make_feeds(session_inputs(session), spec or FeedSpec(), read_hints(path))
    return session, feeds, info


def _caches(feeds: dict) -> dict:
    return {name: array for name, array in feeds.items() if name.startswith("past")}


@pytest.mark.parametrize("kind,names", MODELS)
def test_the_default_plan_is_a_decode_step_with_a_consistent_mask(tmp_path, kind, names):
    session, feeds, info = _plan(tmp_path, kind, names)
    assert info["decoder"]["phase"] == "decode"
    assert feeds["input_ids"].shape == (1, 1)
    past = info["decoder"]["past"]
    for array in _caches(feeds).values():
        assert array.shape[-2] == past          # every cache holds the same past
        assert array.shape[-1] == 8             # the head size, never 1 nor an image's
    assert feeds["attention_mask"].shape == (1, past + 1) and feeds["attention_mask"].all()
    assert feeds["position_ids"].tolist() == [[past]]
    outputs = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    assert outputs["logits"].shape[:2] == (1, 1)
    assert all(row["source"] == "default" for row in info["inputs"])


@pytest.mark.parametrize("kind,names", [("gpt2", "legacy"), ("llama", "dynamo"), ("llama", "genai")])
def test_prefill_is_the_prompt_with_an_empty_cache(tmp_path, kind, names):
    session, feeds, info = _plan(tmp_path, kind, names, FeedSpec(phase="prefill", prompt_length=24))
    assert info["decoder"] | {"max_context": None} == {
        "phase": "prefill", "batch": 1, "past": 0, "new": 24, "context": 24, "max_context": None,
        "cache_inputs": len(_caches(feeds)), "kv_cache_bytes_per_token": info["decoder"]["kv_cache_bytes_per_token"],
        "kv_cache_bytes": info["decoder"]["kv_cache_bytes_per_token"] * 24}
    assert feeds["position_ids"].tolist() == [list(range(24))]
    assert all(array.shape[-2] == 0 for array in _caches(feeds).values())
    assert all(row["source"] == "user" for row in info["inputs"])
    session.run(None, feeds)


def test_gqa_caches_have_the_fewer_key_value_heads_and_their_bytes_are_counted(tmp_path):
    _, feeds, info = _plan(tmp_path, "llama", "optimum", FeedSpec(past_length=400))
    assert {array.shape for array in _caches(feeds).values()} == {(1, 2, 400, 8)}
    # 2 layers × key and value × 2 heads × 8 × 4 bytes a token
    assert info["decoder"]["kv_cache_bytes_per_token"] == 2 * 2 * 2 * 8 * 4
    assert info["decoder"]["kv_cache_bytes"] == 2 * 2 * 2 * 8 * 4 * 401


def test_a_long_context_is_planned_as_asked_without_a_probe(tmp_path):
    big = save(gpt2("optimum", positions=8192), tmp_path / "long.onnx")
    session = ort.InferenceSession(str(big), providers=["CPUExecutionProvider"])
    feeds, info = make_feeds(session_inputs(session), FeedSpec(past_length=8190), read_hints(big))
    assert feeds["attention_mask"].shape == (1, 8191) and info["guessed"] == []
    session.run(None, feeds)


def test_a_context_past_the_models_positions_is_refused(tmp_path):
    with pytest.raises(UserError, match="past the 512 positions"):
        _plan(tmp_path, "gpt2", "optimum", FeedSpec(past_length=600))


def test_the_models_own_dimension_names_set_the_step(tmp_path):
    _, feeds, info = _plan(tmp_path, "gpt2", "dynamo", FeedSpec(dims={"s0": 3, "s2": 40}))
    assert feeds["attention_mask"].shape == (3, 41)
    assert np.array_equal(feeds["position_ids"], np.full((3, 1), 40))
    assert info["dims"] == {"s0": 3, "s1": 1, "s2": 40, "s2 + s1": 41}


def test_a_model_without_a_cache_is_planned_as_before(tmp_path):
    from tests.transformer_models import gpt2_layer

    path = save(gpt2_layer(), tmp_path / "nocache.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    _, info = make_feeds(session_inputs(session), FeedSpec(), read_hints(path))
    assert "decoder" not in info


def test_past_inputs_nothing_gives_back_are_no_cache(tmp_path):
    """A time-series model's past values beside token ids: no present outputs, so no cache."""
    from onnx import TensorProto, helper

    from tests.models import _model

    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["past_time_features"], ["y"], keepdims=0)], "series",
        [helper.make_tensor_value_info("past_time_features", TensorProto.FLOAT, ["batch", "time", 4]),
         helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "time"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = save(_model(graph), tmp_path / "series.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    _, info = make_feeds(session_inputs(session), FeedSpec(), read_hints(path))
    assert "decoder" not in info


def test_a_static_export_is_planned_at_the_sizes_it_fixed(tmp_path):
    """Every length fixed at export (batch 1, 1 new token after 255 past): the plan takes them."""
    import onnx

    model = gpt2("optimum")
    sizes = {"batch_size": 1, "sequence_length": 1, "past_sequence_length": 255,
             "past_sequence_length + sequence_length": 256}
    for value in list(model.graph.input) + list(model.graph.output):
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param in sizes:
                dim.dim_value = sizes[dim.dim_param]
    path = tmp_path / "static.onnx"
    onnx.save(model, path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds, info = make_feeds(session_inputs(session), FeedSpec(), read_hints(path))
    assert info["decoder"]["past"] == 255 and feeds["attention_mask"].shape == (1, 256)
    assert all(row["source"] == "model" for row in info["inputs"])
    session.run(None, feeds)


def test_an_exporters_own_output_names_are_paired_by_position_and_rank(tmp_path):
    from app.core.session.decoder import find_decoder

    model = llama_gqa("dynamo")
    renamed = {value.name: value.name.replace("present", "updated_cache") for value in model.graph.output}
    for node in model.graph.node:
        node.input[:] = [renamed.get(name, name) for name in node.input]
        node.output[:] = [renamed.get(name, name) for name in node.output]
    for value in model.graph.output:
        value.name = renamed[value.name]
    path = save(model, tmp_path / "renamed.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    decoder = find_decoder(session_inputs(session), read_hints(path))
    assert [(c.name, c.output) for c in decoder.cache][:2] == [
        ("past_key_values.0.key", "updated_cache.0.key"), ("past_key_values.0.value", "updated_cache.0.value")]


def test_a_cross_attention_cache_holds_the_encoders_length_and_is_not_given_back(tmp_path):
    from tests.decoder_models import decoder

    path = save(decoder(cross=True), tmp_path / "whisper_like.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    spec = FeedSpec(dims={"encoder_sequence_length_out": 300}, past_length=20)
    feeds, info = make_feeds(session_inputs(session), spec, read_hints(path))
    assert feeds["past_key_values.0.decoder.key"].shape == (1, 4, 20, 8)
    assert feeds["past_key_values.0.encoder.key"].shape == (1, 4, 300, 8)
    assert feeds["attention_mask"].shape == (1, 21)
    assert info["decoder"]["kv_cache_bytes_per_token"] == 2 * 2 * 4 * 8 * 4      # the decoder's own cache only
    assert info["decoder"]["cross_attention_cache_bytes"] == 2 * 2 * 4 * 300 * 8 * 4
    session.run(None, feeds)


def test_genai_config_gives_the_sizes_the_graph_leaves_open(tmp_path):
    import json

    from app.core.session.cache_dims import resolve_cache_dims
    from app.core.session.graph_hints import GraphHints

    (tmp_path / "genai_config.json").write_text(json.dumps(
        {"model": {"context_length": 4096, "decoder": {"head_size": 64, "num_key_value_heads": 8}}}))
    (tmp_path / "model.onnx").write_bytes(b"not read: the config answers")
    hints = GraphHints(shapes={"present.0.key": ["batch_size", "kv_heads", "total_sequence_length", "kv_cache_dim"]},
                       outputs=["logits", "present.0.key"])
    resolve_cache_dims(tmp_path / "model.onnx", hints)
    assert hints.shapes["present.0.key"] == ["batch_size", 8, "total_sequence_length", 64]
    assert hints.metadata["genai.context_length"] == "4096"


def test_a_step_too_big_for_the_budget_is_refused_before_its_inputs_are_made(tmp_path):
    path = save(gpt2(positions=None), tmp_path / "rotary.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    spec = FeedSpec(past_length=500_000, dims={"batch_size": 64})
    with pytest.raises(UserError, match="memory budget") as caught:
        make_feeds(session_inputs(session), spec, read_hints(path), budget=256 << 20)
    assert caught.value.kind == "over-memory-budget"
    with pytest.raises(UserError, match="GiB; choose a shorter context"):
        make_feeds(session_inputs(session), FeedSpec(past_length=900_000, dims={"batch_size": 4096}),
                   read_hints(path))
