import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from app.core.jobs.errors import UserError
from app.core.model.inspect import summarise_onnx
from app.core.model.intake import load_onnx
from app.core.model.proto_scan import ScanError, load_structure, structure_bytes
from tests import bad_models, models

DATA_FIELDS = ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data")


def without_data(model: onnx.ModelProto) -> onnx.ModelProto:
    """What the walk should give: the model with its top-level initializers' data cleared."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for tensor in copy.graph.initializer:
        for name in DATA_FIELDS:
            tensor.ClearField(name)
    return copy


def every_storage() -> onnx.ModelProto:
    """Initializers in each of TensorProto's data fields, a string tensor, an int4 tensor,
    a Constant node and an If subgraph with its own initializer."""
    model = models.with_if_subgraph()
    graph = model.graph
    graph.initializer.extend([
        helper.make_tensor("as_floats", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0]),
        helper.make_tensor("as_int64", TensorProto.INT64, [2], [7, 8]),
        helper.make_tensor("as_int32", TensorProto.INT32, [2], [5, 6]),
        helper.make_tensor("as_doubles", TensorProto.DOUBLE, [1], [0.5]),
        helper.make_tensor("as_uint64", TensorProto.UINT64, [1], [9]),
        helper.make_tensor("as_strings", TensorProto.STRING, [2], [b"a", b"b"]),
        helper.make_tensor("as_int4", TensorProto.INT4, [5], [1, -2, 3, -4, 5]),
        numpy_helper.from_array(np.arange(1000, dtype=np.float32), "as_raw"),
    ])
    sub = next(a.g for n in graph.node for a in n.attribute if a.HasField("g"))
    sub.initializer.append(numpy_helper.from_array(np.ones(4, np.float32), "inner"))
    graph.node.insert(0, helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.ones(3, np.float32))))
    model.metadata_props.add(key="after", value="the graph")
    return model


@pytest.mark.parametrize("maker", [models.mlp, models.cnn, models.transformer_block, every_storage])
def test_the_structure_is_the_model_without_its_weights(tmp_path, maker):
    model = maker()
    path = models.save(model, tmp_path / "m.onnx")
    structure = load_structure(path)
    assert structure == without_data(onnx.load(str(path)))
    assert structure.ByteSize() < path.stat().st_size or not model.graph.initializer


def test_subgraph_and_constant_tensors_keep_their_data(tmp_path):
    path = models.save(every_storage(), tmp_path / "m.onnx")
    structure = load_structure(path)
    sub = next(a.g for n in structure.graph.node for a in n.attribute if a.HasField("g"))
    assert len(sub.initializer[0].raw_data) == 16
    assert structure.graph.node[0].attribute[0].t.raw_data


def test_the_summary_of_the_structure_matches_the_full_models(tmp_path):
    path = models.save(every_storage(), tmp_path / "m.onnx")
    full = summarise_onnx(path, onnx.load(str(path)), [])
    assert summarise_onnx(path, load_structure(path), []) == full
    assert full["initializer_bytes"] > 4000


def test_external_data_references_survive(tmp_path):
    path = bad_models.external_ok(tmp_path)
    structure = load_structure(path)
    full = onnx.load(str(path), load_external_data=False)
    assert structure == full
    assert any(t.external_data for t in structure.graph.initializer)


@pytest.mark.parametrize("broken", [b"\x3a\xff\xff\xff\xff\x0f", b"\x0b\x00", b"\x3a\x80"])
def test_bytes_that_are_not_a_model_are_refused(broken):
    with pytest.raises(ScanError):
        structure_bytes(broken)


@pytest.mark.parametrize("maker", [bad_models.truncated, bad_models.random_bytes])
def test_a_damaged_file_gets_the_same_message_either_way(tmp_path, maker):
    path, _ = maker(tmp_path)
    with pytest.raises(UserError) as full:
        load_onnx(path)
    with pytest.raises(UserError) as quick:
        load_onnx(path, weights=False)
    assert (quick.value.kind, quick.value.message) == (full.value.kind, full.value.message)
