"""Quantization of models the quantizer cannot take as they are, where ONNX Runtime runs
them: each repair is made, said, and the variant still gives the source's answers."""

import onnxruntime as ort
import pytest

from app.core.convert.jobs import MAKE
from app.core.jobs.errors import UserError
from tests import convert_models, models


def quantize(kind, source, output, **params):
    return MAKE({"kind": kind, "input": str(source), "output": str(output), **params}, None)


def test_declared_shapes_that_contradict_inference_are_dropped(tmp_path):
    source = models.save(convert_models.wrong_declared_shape(), tmp_path / "declared.onnx")
    ort.InferenceSession(str(source), providers=["CPUExecutionProvider"])     # ONNX Runtime runs it
    report = quantize("int8-dynamic", source, tmp_path / "declared.int8.onnx")
    assert [r["what"] for r in report["repairs"]] == [
        "dropped the intermediate shapes the model declares (value_info), to be inferred again"]
    assert "MatMulInteger" in report["op_changes"]["added"]
    assert report["fidelity"]["passed"] is True


def test_the_standard_domain_declared_twice_is_declared_once(tmp_path):
    source = models.save(convert_models.standard_domain_twice(), tmp_path / "twice.onnx")
    report = quantize("int8-dynamic", source, tmp_path / "twice.int8.onnx")
    assert report["repairs"][0]["what"] == "declared the standard ONNX operator set once"
    assert report["fidelity"]["passed"] is True


def test_the_standard_domain_at_two_versions_is_refused_for_what_it_is(tmp_path):
    source = models.save(convert_models.standard_domain_twice((17, 13)), tmp_path / "twice.onnx")
    with pytest.raises(UserError) as caught:
        quantize("int8-dynamic", source, tmp_path / "twice.int8.onnx")
    message = caught.value.message
    assert "declares the standard ONNX operator set 2 times" in message and "versions 13, 17" in message
    assert "no standard ONNX operators" not in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["twice.onnx"]


def test_failing_pre_processing_is_left_out_and_said(tmp_path, monkeypatch):
    """quant_pre_process made to fail on every try (as it does on some real models): the
    static quantization retries without it rather than giving up."""
    import onnxruntime.quantization

    def broken(*args, **kwargs):
        raise ValueError("the pre-processor cannot read this model")

    monkeypatch.setattr(onnxruntime.quantization, "quant_pre_process", broken)
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    report = quantize("int8-static", source, tmp_path / "cnn.int8.onnx")
    assert report["repairs"][-1]["what"] == "quantized without pre-processing"
    assert "cannot read this model" in report["repairs"][-1]["why"]
    assert "QuantizeLinear" in report["op_changes"]["added"]
    assert report["fidelity"]["passed"] is True


def test_branches_reading_outer_weights_get_their_own_copies(tmp_path):
    source = models.save(convert_models.conv_branches_with_outer_weights(), tmp_path / "branches.onnx")
    report = quantize("int8-dynamic", source, tmp_path / "branches.int8.onnx")
    assert [r["what"] for r in report["repairs"]] == [
        "quantized inside the If/Loop subgraphs too (EnableSubgraph)",
        "gave each If/Loop subgraph its own copy of the outer weights it reads"]
    assert report["op_changes"]["added"]["ConvInteger"] == 2
    assert report["fidelity"]["passed"] is True


def test_a_kept_node_the_pre_processing_folds_away_keeps_the_node_it_was_folded_into(tmp_path):
    """The quantizer's pre-processing folds each BatchNormalization into the Conv before it, so
    a name the repair loop keeps (the BatchNormalization, where the drift showed) is gone from
    the graph it quantizes: the Conv that now makes its output stays in float32 in its place."""
    import onnx

    source = models.save(models.conv_bn_relu(), tmp_path / "cbr.onnx")
    report = quantize("int8-static", source, tmp_path / "cbr.int8.onnx",
                      options={"nodes_to_exclude": ["bn1"], "quant_format": "QDQ"})
    assert report["kept_instead"] == {"bn1": ["conv1"]}
    graph = onnx.load(str(tmp_path / "cbr.int8.onnx")).graph
    weights = {t.name for t in graph.initializer}
    convs = {n.name: n for n in graph.node if n.op_type == "Conv"}
    assert convs["conv1"].input[1] in weights          # a float weight, read directly: left unquantized
    assert convs["conv0"].input[1] not in weights      # the other Conv reads its weight dequantized
