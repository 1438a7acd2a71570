"""Two transformer fusers side by side: ONNX Runtime's optimizer and onnxscript's ORT fusions.
The better result that passes its check is kept and both are reported; a fuser that fails
(as ORT's does on PyTorch's dynamo exports: IndexError, or a model it cannot load) leaves
the other; attention left unfused is said, with the reason."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from app.core.convert import fusers, transformers
from app.core.convert.fusers import fusers_lines, pick
from app.core.convert.jobs import MAKE
from app.core.convert.transformers import detect_transformer_shape
from app.core.jobs.errors import UserError
from tests import models, transformer_models


def fuse(source, output, **options):
    return MAKE({"kind": "transformers", "input": str(source), "output": str(output), "options": options}, None)


def ops(path):
    return [n.op_type for n in onnx.load(str(path)).graph.node]


def test_both_fusers_are_tried_and_reported_and_the_one_fusing_more_is_kept(tmp_path):
    source = models.save(transformer_models.gpt2_layer(), tmp_path / "layer.onnx")
    report = fuse(source, tmp_path / "fused.onnx")
    assert set(report["fusers"]) == {"onnxruntime", "onnxscript"}
    # onnxscript's rules do not know this GPT-2 layout; ONNX Runtime's fuse its attention
    assert report["fusers"]["onnxscript"]["fused_operators"] == {}
    assert report["fusers"]["onnxruntime"]["fused_operators"]["Attention"] == 1
    assert report["fuser"] == "onnxruntime" and "Attention" in ops(tmp_path / "fused.onnx")
    assert all(o["passed"] for o in report["fusers"].values())
    lines = fusers_lines(report)
    assert lines[0].startswith("onnxruntime: kept: Attention ×1") and lines[1] == "onnxscript: not kept: nothing fused"


def test_onnxscript_alone_fuses_the_attention_into_multi_head_attention(tmp_path):
    source = models.save(transformer_models.bert_layer(), tmp_path / "layer.onnx")
    report = fuse(source, tmp_path / "fused.onnx", fuser="onnxscript")
    assert report["fuser"] == "onnxscript" and list(report["fusers"]) == ["onnxscript"]
    assert report["fused_operators"]["MultiHeadAttention"] == 1
    assert "MultiHeadAttention" in ops(tmp_path / "fused.onnx")
    assert report["fidelity"]["passed"] is True, report["fidelity"]
    assert not list(tmp_path.glob("*scratch*")) and not list(tmp_path.glob(".*partial*"))


def test_a_failing_fuser_leaves_the_other(tmp_path, monkeypatch):
    def crash(work, target):
        raise IndexError("list index out of range")      # what ORT's optimizer raises on a dynamo GPT-2

    monkeypatch.setattr(transformers, "_fuse_with_onnxruntime", crash)
    source = models.save(transformer_models.bert_layer(), tmp_path / "layer.onnx")
    report = fuse(source, tmp_path / "fused.onnx")
    assert report["fuser"] == "onnxscript"
    assert report["fusers"]["onnxruntime"] == {"problem": "IndexError: list index out of range"}
    assert "MultiHeadAttention" in ops(tmp_path / "fused.onnx")
    assert fusers_lines(report)[1] == "onnxruntime: not used — IndexError: list index out of range"


def test_a_result_outside_the_tolerance_is_not_kept(tmp_path, monkeypatch):
    real = transformers._fuse_with_onnxruntime

    def drifting(work, target):
        real(work, target)
        model = onnx.load(str(target))
        for tensor in model.graph.initializer:      # the fused model answers differently
            if tensor.data_type == TensorProto.FLOAT and len(tensor.dims) == 2:
                tensor.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(tensor) * 3, tensor.name))
        onnx.save(model, str(target))

    monkeypatch.setattr(transformers, "_fuse_with_onnxruntime", drifting)
    source = models.save(transformer_models.bert_layer(), tmp_path / "layer.onnx")
    report = fuse(source, tmp_path / "fused.onnx")
    assert report["fusers"]["onnxruntime"]["passed"] is False
    assert report["fuser"] == "onnxscript" and report["fidelity"]["passed"] is True
    assert "(outside the tolerance)" in fusers_lines(report)[1]


def test_both_failing_is_one_clear_error(tmp_path, monkeypatch):
    def crash(work, target):
        raise IndexError("list index out of range")

    monkeypatch.setattr(transformers, "_fuse_with_onnxruntime", crash)
    monkeypatch.setattr(fusers, "fuse_with_onnxscript", crash)
    source = models.save(transformer_models.bert_layer(), tmp_path / "layer.onnx")
    with pytest.raises(UserError, match="the transformer fusers failed on this graph"):
        fuse(source, tmp_path / "fused.onnx")
    assert not (tmp_path / "fused.onnx").exists()


def test_attention_left_unfused_is_said_with_the_reason(tmp_path):
    source = models.save(transformer_models.gpt2_layer(), tmp_path / "layer.onnx")
    report = fuse(source, tmp_path / "fused.onnx", model_type="bert")
    assert not any(op in report["fused_operators"] for op in ("Attention", "MultiHeadAttention"))
    assert any("1 attention block but none was fused" in w and "as a bert model" in w for w in report["warnings"])


@pytest.mark.parametrize("outcomes, kept", [
    ({"onnxruntime": {"fused_operators": {"Attention": 1}, "passed": True},
      "onnxscript": {"fused_operators": {"MultiHeadAttention": 1, "SkipLayerNormalization": 2}, "passed": True}},
     "onnxscript"),                                                        # same attention, more fused
    ({"onnxruntime": {"fused_operators": {"SkipLayerNormalization": 4}, "passed": True},
      "onnxscript": {"fused_operators": {"MultiHeadAttention": 2}, "passed": True}}, "onnxscript"),  # attention first
    ({"onnxruntime": {"fused_operators": {"Attention": 1}, "passed": True},
      "onnxscript": {"fused_operators": {"MultiHeadAttention": 1}, "passed": True}}, "onnxruntime"),  # a tie
    ({"onnxruntime": {"fused_operators": {}, "passed": True},
      "onnxscript": {"fused_operators": {"MultiHeadAttention": 2}, "passed": False}}, "onnxruntime"),
    ({"onnxruntime": {"problem": "IndexError"}, "onnxscript": {"problem": "not installed"}}, None),
])
def test_the_pick(outcomes, kept):
    assert pick(outcomes) == kept


def _positions_graph(other_side_from_range: bool) -> onnx.ModelProto:
    """Scores masked where a comparison of positions says so, as PyTorch's dynamo exporter
    writes the causal mask (key position <= query position); or against a constant."""
    n = 8
    init = [numpy_helper.from_array(np.array(v, np.int64), name) for v, name in
            ((0, "zero"), (n, "n"), (1, "one"), ([0], "ax0"), ([1], "ax1"), (3, "three"))]
    nodes = [helper.make_node("Range", ["zero", "n", "one"], ["pos"]),
             helper.make_node("Unsqueeze", ["pos", "ax0"], ["keys"]),
             helper.make_node("Unsqueeze", ["pos", "ax1"], ["queries"]),
             helper.make_node("LessOrEqual", ["keys", "queries" if other_side_from_range else "three"], ["mask"]),
             helper.make_node("Where", ["mask", "x", "x"], ["y"])]
    graph = helper.make_graph(nodes, "mask", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])], initializer=init)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("compared, model_type", [(True, "gpt2"), (False, "bert")])
def test_a_causal_mask_computed_from_positions_makes_a_decoder(tmp_path, compared, model_type):
    shape = detect_transformer_shape(models.save(_positions_graph(compared), tmp_path / "mask.onnx"))
    assert shape["model_type"] == model_type
    if compared:
        assert "position" in shape["model_type_reason"]


@pytest.mark.parametrize("mask", ["ones-below", "additive"])
def test_a_causal_mask_kept_in_an_external_data_file_makes_a_decoder(tmp_path, mask):
    """The classic GPT-2 holds a 0/1 lower-triangular buffer; the dynamo exporter folds an
    additive mask (0 below, very negative above) into its external data file."""
    n = 16
    lower = np.tril(np.ones((n, n), np.float32))
    value = lower if mask == "ones-below" else np.where(lower > 0, 0, np.finfo(np.float32).min).astype(np.float32)
    init = [numpy_helper.from_array(value.reshape(1, 1, n, n), "mask")]
    graph = helper.make_graph([helper.make_node("Add", ["x", "mask"], ["y"])], "masked",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, n, n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, n, n])], initializer=init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(tmp_path / "m.onnx"), save_as_external_data=True, location="m.onnx.data", size_threshold=0)
    shape = detect_transformer_shape(tmp_path / "m.onnx")
    assert shape["model_type"] == "gpt2" and "lower-triangular" in shape["model_type_reason"]


def test_a_decoder_whose_fusions_fail_is_fused_as_an_encoder(tmp_path, monkeypatch):
    """ORT's gpt2 fusions raise IndexError on a dynamo GPT-2 and onnxscript's result may not
    load: the layer norms and Gelu are still fused, with the bert fusions, and the repair says so."""
    real = transformers._fuse_with_onnxruntime

    def gpt2_crashes(work, target):
        if work.plan["shape"]["model_type"] == "gpt2":
            raise IndexError("list index out of range")
        real(work, target)

    def crash(work, target):
        raise ValueError("rank 3")

    monkeypatch.setattr(transformers, "_fuse_with_onnxruntime", gpt2_crashes)
    monkeypatch.setattr(fusers, "fuse_with_onnxscript", crash)
    source = models.save(transformer_models.gpt2_layer(), tmp_path / "layer.onnx")
    report = fuse(source, tmp_path / "fused.onnx")
    assert report["model_type"] == "bert" and "after the gpt2 fusions failed" in report["shape_source"]["model_type"]
    assert report["repairs"][0]["what"] == "fused as an encoder (bert)"
    assert report["fused_operators"].get("SkipLayerNormalization") and report["fidelity"]["passed"] is True


def _attention_into_gemm(path):
    """Attention's [1, 4, 8] result fed straight to a Gemm, as onnxscript's fusion leaves a
    dynamo export's linear layer."""
    rng = np.random.default_rng(0)
    weight, bias = rng.standard_normal((8, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["view_8"], domain="com.microsoft", num_heads=2),
         helper.make_node("Gemm", ["view_8", "w", "b"], ["y"], name="node_Gemm_343")],
        "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4, 8]) for n in "qkv"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")],
        value_info=[helper.make_tensor_value_info("view_8", TensorProto.FLOAT, [4, 8])])
    model = helper.make_model(graph, ir_version=8,
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    onnx.save(model, str(path))
    return model


def test_an_attention_result_feeding_a_gemm_is_flattened_again(tmp_path):
    import onnxruntime as ort

    broken = _attention_into_gemm(tmp_path / "broken.onnx")
    feeds = {n: np.random.default_rng(1).standard_normal((1, 4, 8)).astype(np.float32) for n in "qkv"}
    with pytest.raises(Exception, match="NumDimensions"):   # the stale type lets it load, not run
        ort.InferenceSession(str(tmp_path / "broken.onnx"), providers=["CPUExecutionProvider"]).run(None, feeds)
    assert fusers.flatten_attention_into_gemm(broken.graph) == 1
    assert "view_8" not in {v.name for v in broken.graph.value_info}
    onnx.save(broken, str(tmp_path / "fixed.onnx"))
    session = ort.InferenceSession(str(tmp_path / "fixed.onnx"), providers=["CPUExecutionProvider"])
    attended = ort.InferenceSession(
        helper.make_model(helper.make_graph(
            [broken.graph.node[0]], "a", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4, 8]) for n in "qkv"],
            [helper.make_tensor_value_info("view_8", TensorProto.FLOAT, [1, 4, 8])]),
            ir_version=8, opset_imports=broken.opset_import).SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    weight, bias = (numpy_helper.to_array(t) for t in broken.graph.initializer[:2])
    np.testing.assert_allclose(session.run(None, feeds)[0], attended.reshape(4, 8) @ weight + bias, rtol=1e-5, atol=1e-5)


def test_a_torchscript_exports_unfused_attention_gets_the_export_that_fuses(tmp_path):
    layer = transformer_models.gpt2_layer()
    plain = models.save(layer, tmp_path / "plain.onnx")
    assert not fusers.torchscript_export(plain)
    for index, node in enumerate(layer.graph.node):        # named as TorchScript names them, from the module path
        node.name = f"/transformer/h.0/attn/{node.op_type}_{index}"
    layer.producer_name = "pytorch"
    exported = models.save(layer, tmp_path / "exported.onnx")
    assert fusers.torchscript_export(exported)
    warnings = fuse(exported, tmp_path / "fused.onnx", model_type="bert")["warnings"]
    unfused = next(w for w in warnings if "none was fused" in w)
    assert "dynamo=True" in unfused and 'attn_implementation="eager"' in unfused
    plain_warnings = fuse(plain, tmp_path / "fused_plain.onnx", model_type="bert")["warnings"]
    assert not any("dynamo=True" in w for w in plain_warnings)
