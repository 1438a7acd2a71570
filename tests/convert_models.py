"""Models that trip the conversion libraries in the ways real models do, built in code."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests import models


def weights_in_constant_nodes() -> onnx.ModelProto:
    """The cnn with every weight made by a Constant node (as Paddle exports do):
    quantize_dynamic then says 'Expected … to be an initializer'."""
    model = models.cnn()
    graph = model.graph
    constants = [helper.make_node("Constant", [], [t.name], name=f"const_{t.name}", value=t)
                 for t in graph.initializer]
    nodes = constants + list(graph.node)
    del graph.initializer[:]
    del graph.node[:]
    graph.node.extend(nodes)
    return model


def cast_to_float() -> onnx.ModelProto:
    """A Cast to float32 of an integer tensor: convert_float_to_float16 relabels its output
    float16 but leaves the cast, so ONNX Runtime refuses the result."""
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("Cast", ["s"], ["sf"], name="to_float", to=TensorProto.FLOAT),
             helper.make_node("ReduceSum", ["sf"], ["n"], name="count", keepdims=1),
             helper.make_node("Div", ["x", "n"], ["y"], name="scale")]
    graph = helper.make_graph(nodes, "cast_trap", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
    return models._model(graph)


def integers_only() -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"], name="add")], "ints",
                              [helper.make_tensor_value_info("x", TensorProto.INT64, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [3])])
    return models._model(graph)


def ml_domain_only() -> onnx.ModelProto:
    """A scikit-learn style linear classifier: ai.onnx.ml operators only."""
    node = helper.make_node("LinearRegressor", ["x"], ["y"], domain="ai.onnx.ml", name="linear",
                            coefficients=[0.5, -1.0, 2.0, 0.25], intercepts=[0.1])
    graph = helper.make_graph([node], "linear", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 1)],
                              producer_name="ortune-tests")
    model.ir_version = 8
    return model


def with_changed_weight(model: onnx.ModelProto, name: str, delta: float) -> onnx.ModelProto:
    """A copy of `model` with one initializer shifted: a variant that must fail fidelity."""
    broken = onnx.ModelProto()
    broken.CopyFrom(model)
    for tensor in broken.graph.initializer:
        if tensor.name == name:
            tensor.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(tensor) + np.float32(delta), name))
    return broken


def shape_inference_gives_up() -> onnx.ModelProto:
    """A MatMul followed by ONNX Runtime's own Inverse operator: the symbolic shape
    inference that the quantization pre-processor runs does not know Inverse and, giving
    up, writes sym_shape_infer_temp.onnx and a data file into the current folder."""
    weight = numpy_helper.from_array(np.eye(4, dtype=np.float32) * 2 + 0.1, "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
             helper.make_node("Inverse", ["m"], ["y"], name="inverse", domain="com.microsoft")]
    graph = helper.make_graph(nodes, "inverse", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])], initializer=[weight])
    return models._model(graph, extra_opsets=[helper.make_opsetid("com.microsoft", 1)])


def wrong_declared_shape() -> onnx.ModelProto:
    """The mlp declaring a width its first MatMul does not produce (value_info), as some
    exporters leave it: ONNX Runtime loads it, the quantizer's shape inference trips."""
    model = models.mlp()
    model.graph.value_info.append(helper.make_tensor_value_info("m0", TensorProto.FLOAT, ["batch", 7]))
    return model


def standard_domain_twice(versions=(17, 17)) -> onnx.ModelProto:
    """The mlp declaring the standard operator set as both '' and 'ai.onnx'."""
    model = models.mlp()
    del model.opset_import[:]
    model.opset_import.extend([helper.make_opsetid("", versions[0]), helper.make_opsetid("ai.onnx", versions[1])])
    return model


def weights_in_a_branch() -> onnx.ModelProto:
    """An If whose two branches hold all the weights (a MatMul each)."""
    rng = np.random.default_rng(0)

    def branch(name: str) -> onnx.GraphProto:
        weight = numpy_helper.from_array(rng.normal(0, 0.1, (16, 64)).astype(np.float32), f"w_{name}")
        return helper.make_graph([helper.make_node("MatMul", ["x", weight.name], [name], name=f"{name}_matmul")],
                                 name, [], [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 64])],
                                 initializer=[weight])

    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
             helper.make_node("Greater", ["s", "zero"], ["cond"], name="positive"),
             helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=branch("then"),
                              else_branch=branch("otherwise"))]
    graph = helper.make_graph(nodes, "weights_in_a_branch", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
                              initializer=[numpy_helper.from_array(np.array(0, np.float32), "zero")])
    return models._model(graph)


def conv_branches_with_outer_weights() -> onnx.ModelProto:
    """An If with a biased convolution in each branch whose weights live in the main graph,
    as PyTorch's torch.cond exports them (silero_vad_op18_ifless is made so): the
    quantizer looks for a Conv's weight in its own graph when it adds the bias."""
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.normal(0, 0.1, shape).astype(np.float32), f"{kind}_{name}")
               for name in ("then", "otherwise") for kind, shape in (("w", (4, 3, 3, 3)), ("b", (4,)))]

    def branch(name: str) -> onnx.GraphProto:
        conv = helper.make_node("Conv", ["x", f"w_{name}", f"b_{name}"], [name], name=f"{name}_conv")
        return helper.make_graph([conv], name, [], [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 4, 6, 6])])

    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
             helper.make_node("Greater", ["s", "zero"], ["cond"], name="positive"),
             helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=branch("then"),
                              else_branch=branch("otherwise"))]
    graph = helper.make_graph(nodes, "conv_branches", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
                              initializer=[numpy_helper.from_array(np.array(0, np.float32), "zero"), *weights])
    return models._model(graph)


def gemm_layers(width=64):
    """Three linear layers written as Gemm: B transposed with a bias, plain without, and one with
    alpha 2 (which the int4 rewrite leaves as it is)."""
    rng = np.random.default_rng(0)
    weights = {"w1": rng.normal(size=(width, width)), "b1": rng.normal(size=width),     # transB, bias
               "w2": rng.normal(size=(width, width)),                                    # no bias
               "w3": rng.normal(size=(width, width)), "b3": rng.normal(size=width)}      # alpha 2: left as it is
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], name="l1", transB=1),
             helper.make_node("Relu", ["h1"], ["r1"]),
             helper.make_node("Gemm", ["r1", "w2"], ["h2"], name="l2"),
             helper.make_node("Gemm", ["h2", "w3", "b3"], ["y"], name="l3", alpha=2.0)]
    graph = helper.make_graph(nodes, "gemms", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", width])],
                              [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
