"""Models ONNX Runtime loads and runs that the onnx checker (or an older rule of ORTune's)
calls bad. Each maker returns (model, words the intake's warning must hold)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper


def _add_model(output, name: str = "odd", opset: int = 17, ir: int = 8) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"], name="add")], name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])], [output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir
    return model


def output_without_shape():
    return _add_model(helper.make_tensor_value_info("y", TensorProto.FLOAT, None)), \
        "Field 'shape' of 'type' is required"


def empty_graph_name():
    return _add_model(helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]), name=""), \
        "Field 'name' of 'graph' is required to be non-empty"


def untyped_output():
    return _add_model(onnx.ValueInfoProto(name="y")), "Field 'type' of 'value_info' is required"


def old_opset():
    """Relu at opset 6: older than ONNX Runtime promises, and it still has the kernel."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "old",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])
    model.ir_version = 3
    return model, "opset 6 is older than 7"


def old_ir():
    return _add_model(helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]), ir=2), "IR version < 3"


def negative_dimension():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "negative",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-3, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-3, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, "negative dimension (-3)"


def fused_layer_norm():
    """What ONNX Runtime's own optimiser writes (the PP-OCRv4 recogniser, optimised): a
    LayerNormalization in an opset-12 model, an operator ONNX only has from opset 17."""
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [4], np.ones(4, np.float32))
    bias = helper.make_tensor("bias", TensorProto.FLOAT, [4], np.zeros(4, np.float32))
    graph = helper.make_graph(
        [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], name="norm", axis=-1, epsilon=1e-5)],
        "fused", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], initializer=[scale, bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 7
    return model, "No Op registered for LayerNormalization with domain_version of 12"


ALL = [output_without_shape, empty_graph_name, untyped_output, old_opset, old_ir, negative_dimension,
       fused_layer_norm]


def feeds(model: onnx.ModelProto) -> dict:
    """Ones for every input, with unknown sizes as 2."""
    result = {}
    for value in model.graph.input:
        dims = [d.dim_value if d.dim_value > 0 else 2 for d in value.type.tensor_type.shape.dim]
        result[value.name] = np.ones(dims, np.float32)
    return result
