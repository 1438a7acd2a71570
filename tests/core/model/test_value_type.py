"""Every kind of value reads the same everywhere: ONNX's types, ONNX Runtime's strings and
an .ort file's types all go through one function."""

import subprocess
import sys

import onnx
import pytest
from onnx import TensorProto, helper

from app.core.model.inspect import inspect_model
from app.core.model.value_type import describe_value, io_rows, ort_type_text, type_text

FLOAT = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
ZIPMAP = helper.make_sequence_type_proto(helper.make_map_type_proto(TensorProto.INT64, FLOAT))


@pytest.mark.parametrize("proto, text", [
    (helper.make_tensor_type_proto(TensorProto.FLOAT, [2]), "tensor(float)"),
    (ZIPMAP, "sequence(map(int64, float))"),
    (helper.make_optional_type_proto(FLOAT), "optional(tensor(float))"),
    (helper.make_sparse_tensor_type_proto(TensorProto.FLOAT, [4, 4]), "sparse_tensor(float)"),
    (helper.make_map_type_proto(TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.INT64, None)),
     "map(string, int64)"),
    (helper.make_sequence_type_proto(helper.make_sequence_type_proto(FLOAT)), "sequence(sequence(tensor(float)))"),
    (helper.make_map_type_proto(TensorProto.INT64, helper.make_sequence_type_proto(FLOAT)),
     "map(int64, sequence(tensor(float)))"),
    (onnx.TypeProto(), "undeclared"),
])
def test_type_text(proto, text):
    assert type_text(proto) == text


@pytest.mark.parametrize("ort, text", [
    ("seq(map(int64,tensor(float)))", "sequence(map(int64, float))"),
    ("optional(seq(tensor(float)))", "optional(sequence(tensor(float)))"),
    ("map(string,tensor(int64))", "map(string, int64)"),
    ("tensor(float16)", "tensor(float16)"),
    ("sparse_tensor(double)", "sparse_tensor(double)"),
    ("seq(tensor(float)", "seq(tensor(float)"),          # not ORT's grammar: left as it is
    ("tensor(weird)", "tensor(weird)"),
])
def test_onnx_runtime_strings_read_the_same(ort, text):
    assert ort_type_text(ort) == text


def test_values_say_their_kind_and_only_tensors_have_shapes():
    sequence = describe_value(helper.make_value_info("probs", ZIPMAP))
    assert sequence == {"name": "probs", "kind": "sequence", "dtype": "sequence(map(int64, float))", "shape": None}
    sparse = describe_value(helper.make_value_info(
        "s", helper.make_sparse_tensor_type_proto(TensorProto.FLOAT, [4, "n"])))
    assert sparse == {"name": "s", "kind": "sparse_tensor", "dtype": "sparse_tensor(float)", "shape": [4, "n"]}
    tensor = describe_value(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3]))
    assert tensor == {"name": "x", "kind": "tensor", "dtype": "float", "shape": ["batch", 3]}
    rows = io_rows({"inputs": [tensor], "outputs": [sequence, sparse]})
    assert rows == [["input", "x", "float", "[batch, 3]"], ["output", "probs", "sequence(map(int64, float))", "–"],
                    ["output", "s", "sparse_tensor(float)", "[4, n]"]]


def test_inspect_describes_a_sequence_model(tmp_path):
    sequence = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, ["n"]))
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "sequences",
                              [helper.make_value_info("x", sequence)], [helper.make_value_info("y", sequence)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "sequence.onnx"
    onnx.save(model, path)
    info = inspect_model(path)
    assert info["inputs"] == [{"name": "x", "kind": "sequence", "dtype": "sequence(tensor(float))", "shape": None}]
    assert "unknown rank" not in repr(io_rows(info)) and info["warnings"] == []


def test_an_ort_format_model_reads_the_same(tmp_path):
    zipmap = helper.make_sequence_type_proto(helper.make_map_type_proto(TensorProto.INT64, FLOAT))
    graph = helper.make_graph(
        [helper.make_node("ZipMap", ["x"], ["probabilities"], domain="ai.onnx.ml", classlabels_int64s=[0, 1])],
        "classifier", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2])],
        [helper.make_value_info("probabilities", zipmap)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 8
    source = tmp_path / "classifier.onnx"
    onnx.save(model, source)
    subprocess.run([sys.executable, "-m", "onnxruntime.tools.convert_onnx_models_to_ort", str(source)],
                   check=True, capture_output=True, timeout=300)
    from_ort, from_onnx = inspect_model(tmp_path / "classifier.ort"), inspect_model(source)
    assert from_ort["format"] == "ort"
    assert from_ort["inputs"] == from_onnx["inputs"] == [{"name": "x", "kind": "tensor", "dtype": "float",
                                                          "shape": ["n", 2]}]
    assert from_ort["outputs"] == from_onnx["outputs"] == [
        {"name": "probabilities", "kind": "sequence", "dtype": "sequence(map(int64, float))", "shape": None}]
