"""Transformer fusions with no flags given: the model type, head count and hidden size are
read from the graph of BERT- and GPT-2-style exports, and the fused model gives the
source's answers (a wrong head count would not: the fused attention splits by it)."""

import onnx
import pytest

from app.core.convert.jobs import MAKE
from app.core.convert.transformers import detect_transformer_shape
from tests import models, transformer_models

LAYERS = [  # builder, heads, model type read, why
    (transformer_models.bert_layer, 8, "bert", "no causal attention mask"),
    (transformer_models.gpt2_layer, 4, "gpt2", "causal attention mask"),
]


def fuse(source, output, **options):
    return MAKE({"kind": "transformers", "input": str(source), "output": str(output), "options": options}, None)


def attention_heads(path):
    nodes = [n for n in onnx.load(str(path)).graph.node if n.op_type == "Attention"]
    return [a.i for n in nodes for a in n.attribute if a.name == "num_heads"]


@pytest.mark.parametrize("build, heads, model_type, why", LAYERS)
def test_default_flags_fuse_the_attention_with_the_heads_read_from_the_graph(tmp_path, build, heads, model_type, why):
    source = models.save(build(), tmp_path / "layer.onnx")
    report = fuse(source, tmp_path / "fused.onnx")
    assert (report["model_type"], report["num_heads"], report["hidden_size"]) == (model_type, heads, 32)
    assert why in report["shape_source"]["model_type"]
    assert report["shape_source"]["num_heads"] == "read from the graph"
    assert report["fused_operators"]["Attention"] == 1
    assert attention_heads(tmp_path / "fused.onnx") == [heads]
    assert report["fidelity"]["passed"] is True, report["fidelity"]
    assert report["warnings"] == []


@pytest.mark.parametrize("build, heads, model_type, why", LAYERS)
def test_fp16_after_the_fusions(tmp_path, build, heads, model_type, why):
    source = models.save(build(), tmp_path / "layer.onnx")
    report = fuse(source, tmp_path / "fused16.onnx", fp16=True)
    assert report["fused_operators"]["Attention"] == 1
    assert report["float16_weights"]["share"] > 0.99
    assert report["fidelity"]["tolerance"]["atol"] == 1e-2      # held to float16's tolerance, not float32's
    assert report["fidelity"]["passed"] is True, report["fidelity"]


@pytest.mark.parametrize("heads", [2, 4, 8])
@pytest.mark.parametrize("build", [transformer_models.bert_layer, transformer_models.gpt2_layer])
def test_heads_are_read_from_the_shapes_put_together_at_run_time(tmp_path, build, heads):
    shape = detect_transformer_shape(models.save(build(hidden=64, heads=heads), tmp_path / "layer.onnx"))
    assert (shape["num_heads"], shape["hidden_size"]) == (heads, 64)


def test_a_graph_without_readable_heads_gets_neither_and_a_warning(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")      # weights 64 wide, no attention
    report = fuse(source, tmp_path / "fused.onnx")
    assert (report["num_heads"], report["hidden_size"]) == (0, 0)
    assert any("head count could not be read" in w for w in report["warnings"])
    assert report["fidelity"]["passed"] is True


def test_the_users_model_type_is_kept(tmp_path):
    source = models.save(transformer_models.gpt2_layer(), tmp_path / "layer.onnx")
    report = fuse(source, tmp_path / "fused.onnx", model_type="bert")
    assert report["model_type"] == "bert" and report["shape_source"]["model_type"] == "yours"
    assert "Attention" not in report["fused_operators"]        # bert's fusions do not know GPT-2's attention


def _with_plain_attention(model):
    """The layer followed by one more attention block no fuser knows: single-head scores of
    the output against itself, with no projections or head split."""
    from onnx import helper

    graph = model.graph
    last = graph.node[-1]                       # Identity(out) -> y
    out = last.input[0]
    graph.node.extend([helper.make_node("Transpose", [out], ["plain_kt"], name="plain_t", perm=[0, 2, 1]),
                       helper.make_node("MatMul", [out, "plain_kt"], ["plain_scores"], name="plain_qk"),
                       helper.make_node("Softmax", ["plain_scores"], ["plain_probs"], name="plain_softmax", axis=-1),
                       helper.make_node("MatMul", ["plain_probs", out], ["plain_context"], name="plain_pv")])
    identity = helper.make_node("Identity", ["plain_context"], ["y"], name="output")
    graph.node.remove(last)
    graph.node.append(identity)
    return model


def test_partial_fusion_is_counted_and_said(tmp_path):
    source = models.save(_with_plain_attention(transformer_models.bert_layer()), tmp_path / "two_blocks.onnx")
    report = fuse(source, tmp_path / "fused.onnx")
    assert report["attention_layers"] == {"fused": 1, "of": 2, "ops": {"Attention": 1}}
    assert any(w.startswith("Attention in 1 of 2 layers: the other 1 kept") for w in report["warnings"])
    whole = fuse(models.save(transformer_models.bert_layer(), tmp_path / "one.onnx"), tmp_path / "fused_one.onnx")
    assert whole["attention_layers"] == {"fused": 1, "of": 1, "ops": {"Attention": 1}}
    assert not any("Attention in" in w for w in whole["warnings"])
