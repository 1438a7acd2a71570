"""Transformer fusions on a Llama decoder laid out as PyTorch's dynamo exporter writes it (rotary
position embeddings, grouped key/value heads, a KV cache): every layer's attention and both of
its rotations become one GroupQueryAttention, the fused decoder keeps its source's next tokens
in the generation loop, and a layer the grouped-query fusion cannot match is counted and said."""

from __future__ import annotations

import onnx
import pytest

from app.core.convert.jobs import CONVERT
from app.core.generate.jobs import GENERATE
from app.core.jobs.protocol import JobContext
from tests.decoder_models import llama_gqa
from tests.models import save
from tests.rope_models import llama_rope


def convert(source, out):
    return CONVERT({"kind": "transformers", "input": str(source), "output": str(out), "options": {},
                    "speed_s": 0}, JobContext())


def greedy_tokens(path) -> list:
    result = GENERATE({"path": str(path), "prompt_lengths": [9], "new_tokens": 12, "repeats": 1, "batch": 2},
                      JobContext())
    return [row["token_ids"] for row in result["runs"]]


@pytest.fixture(scope="module")
def fused_llama(tmp_path_factory):
    folder = tmp_path_factory.mktemp("llama")
    source = save(llama_rope(layers=4, seed=3), folder / "llama.onnx")
    return source, folder / "fused.onnx", convert(source, folder / "fused.onnx")


def test_every_layer_becomes_group_query_attention_with_its_rotations_inside(fused_llama):
    source, fused, report = fused_llama
    assert report["fuser"] == "onnxscript"
    assert report["fused_operators"]["GroupQueryAttention"] == 4
    assert report["attention_layers"] == {"fused": 4, "of": 4, "ops": {"GroupQueryAttention": 4}}
    assert report["rotary"] == {"fused": 8, "of": 8, "ops": {"GroupQueryAttention": 8}}
    nodes = onnx.load(str(fused)).graph.node
    attention = [{a.name: a.i for a in n.attribute} for n in nodes if n.op_type == "GroupQueryAttention"]
    assert all((a["num_heads"], a["kv_num_heads"], a["do_rotary"]) == (4, 2, 1) for a in attention)
    assert not {"Softmax", "Neg", "Expand", "RotaryEmbedding"} & {n.op_type for n in nodes}
    assert not any("GroupQueryAttention in" in w or "Rotary" in w for w in report["warnings"])


def test_the_attention_mask_left_unread_by_group_query_attention_is_said(fused_llama):
    source, fused, report = fused_llama
    graph = onnx.load(str(fused)).graph
    assert "attention_mask" not in {name for node in graph.node for name in node.input}
    assert any(w.startswith("The fused model no longer reads attention_mask: GroupQueryAttention takes each "
                            "sequence's length from position_ids") for w in report["warnings"])


def test_the_fused_decoder_keeps_its_sources_answers_and_next_tokens(fused_llama):
    source, fused, report = fused_llama
    assert report["fidelity"]["passed"] is True, report["fidelity"]
    assert report["fidelity"]["next_tokens"]["rate"] == 1.0
    assert report["check"] == "passed"
    assert greedy_tokens(fused) == greedy_tokens(source)


def test_a_layer_the_grouped_query_fusion_cannot_match_is_counted_and_said(tmp_path):
    source = save(llama_rope(layers=4, seed=3, tiled=(2,)), tmp_path / "llama.onnx")
    report = convert(source, tmp_path / "fused.onnx")
    layers = report["attention_layers"]
    assert layers["ops"]["GroupQueryAttention"] == 3 and layers["fused"] == 4
    assert report["rotary"]["fused"] == report["rotary"]["of"] == 8
    assert report["rotary"]["ops"]["GroupQueryAttention"] == 6
    assert any(w.startswith("GroupQueryAttention in 3 of 4 layers: onnxscript's grouped-query fusion did not "
                            "match the other 1 (onnxscript: OpType mismatch: expected Expand, got Tile.)")
               for w in report["warnings"]), report["warnings"]
    assert report["fidelity"]["passed"] is True


def test_a_grouped_query_decoder_without_rotary_embeddings_says_why_it_got_no_group_query_attention(tmp_path):
    source = save(llama_gqa("dynamo", layers=2), tmp_path / "llama.onnx")
    report = CONVERT({"kind": "transformers", "input": str(source), "output": str(tmp_path / "fused.onnx"),
                      "options": {}, "speed_s": 0, "fidelity": False}, JobContext())
    assert "GroupQueryAttention" not in report["fused_operators"]
    assert any(w.startswith("A grouped-query decoder (2 key/value heads for 4 query heads) but no GroupQueryAttention")
               and w.endswith("no rotary embedding (rotate_half: Slice/Neg/Concat) was found in this graph.")
               for w in report["warnings"]), report["warnings"]


def test_a_mask_the_grouped_query_fusion_does_not_know_is_named_in_onnxscripts_words(tmp_path):
    source = save(llama_rope(layers=2, fill=-1e4), tmp_path / "llama.onnx")
    report = CONVERT({"kind": "transformers", "input": str(source), "output": str(tmp_path / "fused.onnx"),
                      "options": {}, "speed_s": 0, "fidelity": False}, JobContext())
    assert "GroupQueryAttention" not in report["fused_operators"]
    assert any(w.startswith("A grouped-query decoder (2 key/value heads for 4 query heads) but no GroupQueryAttention")
               and w.endswith("the layers do not have that layout (onnxscript: Mask does not match causal mask "
                              "pattern).") for w in report["warnings"]), report["warnings"]


def test_rotary_angles_written_as_a_broadcast_product_are_rewritten_for_the_fusion(tmp_path):
    """PyTorch 2.14's dynamo export of transformers 5's Llama writes positions × inv_freq: no rotation
    fused, no GroupQueryAttention, until the angles are in the MatMul layout onnxscript reads."""
    import numpy as np
    import onnxruntime as ort

    from app.core.convert.decoder_fusion import canonical_rotary_angles

    model = llama_rope(layers=2, seed=5, broadcast_freqs=True)
    source = save(model, tmp_path / "llama.onnx")
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    assert canonical_rotary_angles(rewritten.graph) == 1
    assert "MatMul" in {n.op_type for n in rewritten.graph.node if n.name.endswith("_angles_MatMul")}
    feeds = {value.name: np.zeros([1 if d.dim_param else d.dim_value for d in value.type.tensor_type.shape.dim],
                                  np.float32 if value.type.tensor_type.elem_type == onnx.TensorProto.FLOAT else np.int64)
             for value in model.graph.input}
    feeds["input_ids"] = np.array([[3]], np.int64)
    feeds["position_ids"] = np.array([[5]], np.int64)
    feeds["attention_mask"] = np.ones((1, 2), np.int64)
    runs = [ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
            for m in (model, rewritten)]
    for before, after in zip(*runs):
        np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-5)
    report = convert(source, tmp_path / "fused.onnx")
    assert report["rotary_angles_rewritten"] == 1 and report["check"] == "passed"
    assert report["attention_layers"] == {"fused": 2, "of": 2, "ops": {"GroupQueryAttention": 2}}
    assert report["rotary"]["fused"] == report["rotary"]["of"] == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fused.onnx", "llama.onnx"], "no scratch copy is left"
