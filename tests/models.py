"""Small models built in code for the tests (and sizeable ones for the benchmarks)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _model(graph, opset: int = OPSET, ir: int = 8, extra_opsets=()) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), *extra_opsets],
                              producer_name="ortune-tests")
    model.ir_version = ir
    return model


def tiny_add() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["y"], name="add")], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
    return _model(graph)


def mlp(width: int = 64, depth: int = 3, seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    nodes, inits, current = [], [], "x"
    for i in range(depth):
        w = numpy_helper.from_array(rng.normal(0, 0.1, (width, width)).astype(np.float32), f"w{i}")
        b = numpy_helper.from_array(rng.normal(0, 0.1, (width,)).astype(np.float32), f"b{i}")
        inits += [w, b]
        nodes += [helper.make_node("MatMul", [current, f"w{i}"], [f"m{i}"], name=f"matmul{i}"),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"add{i}")]
        current = f"a{i}"
        if i < depth - 1:
            nodes.append(helper.make_node("Relu", [current], [f"r{i}"], name=f"relu{i}"))
            current = f"r{i}"
    nodes.append(helper.make_node("Identity", [current], ["y"], name="out"))
    graph = helper.make_graph(nodes, "mlp",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", width])],
                              initializer=inits)
    return _model(graph)


def cnn(channels: int = 8, size: int = 32, seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    inits = [
        numpy_helper.from_array(rng.normal(0, 0.2, (channels, 3, 3, 3)).astype(np.float32), "c1.w"),
        numpy_helper.from_array(np.zeros(channels, np.float32), "c1.b"),
        numpy_helper.from_array(rng.normal(0, 0.2, (channels, channels, 3, 3)).astype(np.float32), "c2.w"),
        numpy_helper.from_array(np.zeros(channels, np.float32), "c2.b"),
        numpy_helper.from_array(rng.normal(0, 0.2, (10, channels)).astype(np.float32), "fc.w"),
        numpy_helper.from_array(np.zeros(10, np.float32), "fc.b"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "c1.w", "c1.b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "c2.w", "c2.b"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(nodes, "cnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
                              initializer=inits)
    return _model(graph)


def conv_bn_relu(channels: int = 8, size: int = 32, seed: int = 0) -> onnx.ModelProto:
    """Two Conv → BatchNormalization → Relu blocks (the second Relu unnamed), an Identity,
    a pool: ORT fuses each block into one Conv and removes the Identity."""
    rng = np.random.default_rng(seed)
    inits, nodes, previous, width = [], [], "x", 3
    for i in range(2):
        inits += [numpy_helper.from_array(rng.normal(0, 0.2, (channels, width, 3, 3)).astype(np.float32), f"w{i}")]
        inits += [numpy_helper.from_array(np.full(channels, value, np.float32), f"{name}{i}")
                  for name, value in (("scale", 1.0), ("bias", 0.1), ("mean", 0.0), ("var", 1.0))]
        nodes += [helper.make_node("Conv", [previous, f"w{i}"], [f"c{i}"], name=f"conv{i}", pads=[1, 1, 1, 1]),
                  helper.make_node("BatchNormalization", [f"c{i}"] + [f"{n}{i}" for n in ("scale", "bias", "mean", "var")],
                                   [f"b{i}"], name=f"bn{i}"),
                  helper.make_node("Relu", [f"b{i}"], [f"r{i}"], name="relu0" if i == 0 else "")]
        previous, width = f"r{i}", channels
    nodes += [helper.make_node("Identity", [previous], ["same"], name="same"),
              helper.make_node("GlobalAveragePool", ["same"], ["y"], name="gap")]
    graph = helper.make_graph(nodes, "conv_bn_relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 1, 1])],
                              initializer=inits)
    return _model(graph)


def with_if_subgraph() -> onnx.ModelProto:
    then_graph = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="then_relu")], "then", [],
                                   [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    else_graph = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="else_neg"),
                                    helper.make_node("Abs", ["e"], ["e2"], name="else_abs")], "else", [],
                                   [helper.make_tensor_value_info("e2", TensorProto.FLOAT, [2])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
             helper.make_node("Constant", [], ["zero"], name="zero", value=numpy_helper.from_array(np.array(0, np.float32))),
             helper.make_node("Greater", ["s", "zero"], ["cond"], name="gt"),
             helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_graph, else_branch=else_graph)]
    graph = helper.make_graph(nodes, "branching",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return _model(graph)


def transformer_block(hidden: int = 32, heads: int = 4, seq: str = "sequence", seed: int = 0) -> onnx.ModelProto:
    """LayerNorm -> self-attention (MatMul/Softmax) -> residual -> LayerNorm -> MLP with Gelu."""
    rng = np.random.default_rng(seed)

    def w(name, *shape):
        return numpy_helper.from_array(rng.normal(0, 0.05, shape).astype(np.float32), name)

    head = hidden // heads
    inits = [w("ln1.g", hidden), w("ln1.b", hidden), w("wq", hidden, hidden), w("wk", hidden, hidden),
             w("wv", hidden, hidden), w("wo", hidden, hidden), w("ln2.g", hidden), w("ln2.b", hidden),
             w("w1", hidden, 4 * hidden), w("w2", 4 * hidden, hidden),
             numpy_helper.from_array(np.array([0, 0, heads, head], np.int64), "split_shape"),
             numpy_helper.from_array(np.array([0, 0, hidden], np.int64), "merge_shape"),
             numpy_helper.from_array(np.array(1.0 / np.sqrt(head), np.float32), "scale")]
    nodes = [
        helper.make_node("LayerNormalization", ["x", "ln1.g", "ln1.b"], ["h"], name="ln1", axis=-1),
        helper.make_node("MatMul", ["h", "wq"], ["q"], name="q"),
        helper.make_node("MatMul", ["h", "wk"], ["k"], name="k"),
        helper.make_node("MatMul", ["h", "wv"], ["v"], name="v"),
        helper.make_node("Reshape", ["q", "split_shape"], ["q4"], name="q_split"),
        helper.make_node("Reshape", ["k", "split_shape"], ["k4"], name="k_split"),
        helper.make_node("Reshape", ["v", "split_shape"], ["v4"], name="v_split"),
        helper.make_node("Transpose", ["q4"], ["qt"], name="q_t", perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k4"], ["kt"], name="k_t", perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v4"], ["vt"], name="v_t", perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qt", "kt"], ["scores"], name="scores"),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"], name="scale"),
        helper.make_node("Softmax", ["scaled"], ["probs"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["probs", "vt"], ["ctx"], name="context"),
        helper.make_node("Transpose", ["ctx"], ["ctx_t"], name="ctx_t", perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctx_t", "merge_shape"], ["merged"], name="merge"),
        helper.make_node("MatMul", ["merged", "wo"], ["attn"], name="o"),
        helper.make_node("Add", ["x", "attn"], ["res1"], name="residual1"),
        helper.make_node("LayerNormalization", ["res1", "ln2.g", "ln2.b"], ["h2"], name="ln2", axis=-1),
        helper.make_node("MatMul", ["h2", "w1"], ["up"], name="up"),
        helper.make_node("Gelu", ["up"], ["act"], name="gelu", domain="com.microsoft"),
        helper.make_node("MatMul", ["act", "w2"], ["down"], name="down"),
        helper.make_node("Add", ["res1", "down"], ["y"], name="residual2"),
    ]
    graph = helper.make_graph(nodes, "block",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", seq, hidden])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", seq, hidden])],
                              initializer=inits)
    return _model(graph, extra_opsets=[helper.make_opsetid("com.microsoft", 1)])


def foldable(width: int = 64, inner: int = 512, seed: int = 0) -> onnx.ModelProto:
    """y = x @ (A @ B): the product of two weights is a constant that any optimisation
    level folds, so with optimisations disabled every run multiplies them again (many
    times slower): a setting that is slower beyond doubt."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(rng.normal(0, 0.05, (width, inner)).astype(np.float32), "a"),
             numpy_helper.from_array(rng.normal(0, 0.05, (inner, width)).astype(np.float32), "b")]
    nodes = [helper.make_node("MatMul", ["a", "b"], ["ab"], name="fold"),
             helper.make_node("MatMul", ["x", "ab"], ["y"], name="apply")]
    graph = helper.make_graph(nodes, "foldable",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", width])],
                              initializer=inits)
    return _model(graph)


def save(model: onnx.ModelProto, path: Path) -> Path:
    path = Path(path)
    onnx.save(model, str(path))
    return path


def write_all(folder: Path) -> Path:
    folder = Path(folder)
    save(tiny_add(), folder / "tiny.onnx")
    save(mlp(), folder / "mlp.onnx")
    save(cnn(), folder / "cnn.onnx")
    save(with_if_subgraph(), folder / "branching.onnx")
    save(transformer_block(), folder / "block.onnx")
    return folder


def shape_dependent(width: int = 16) -> onnx.ModelProto:
    """Ones made from Shape(x): ORT can fold them into a constant only when the batch size is fixed."""
    inits = [numpy_helper.from_array(np.random.default_rng(0).normal(0, 0.1, (width, width)).astype(np.float32), "w")]
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("ConstantOfShape", ["shape"], ["ones"], name="ones",
                              value=numpy_helper.from_array(np.array([1.0], np.float32))),
             helper.make_node("Add", ["x", "ones"], ["shifted"], name="shift"),
             helper.make_node("MatMul", ["shifted", "w"], ["m"], name="matmul"),
             helper.make_node("Relu", ["m"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "shape_dependent",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", width])],
                              initializer=inits)
    return _model(graph)
