"""Builds the demo model shipped with ORTune (resources/demo/demo_classifier.onnx).

A small image classifier — two convolution blocks, global pooling and a linear head —
with a symbolic batch dimension, so every panel has something real to show.
Run it again to rebuild the file; the weights come from a fixed seed, so the bytes
are the same each time.

    python resources/make_demo_model.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = Path(__file__).resolve().parent / "demo" / "demo_classifier.onnx"


def build() -> onnx.ModelProto:
    rng = np.random.default_rng(0)

    def weight(name, *shape):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        data = rng.normal(0, (2.0 / fan_in) ** 0.5, size=shape).astype(np.float32)
        return numpy_helper.from_array(data, name)

    inits = [
        weight("conv1.weight", 16, 3, 3, 3), numpy_helper.from_array(np.zeros(16, np.float32), "conv1.bias"),
        weight("conv2.weight", 32, 16, 3, 3), numpy_helper.from_array(np.zeros(32, np.float32), "conv2.bias"),
        weight("conv3.weight", 64, 32, 3, 3), numpy_helper.from_array(np.zeros(64, np.float32), "conv3.bias"),
        weight("fc.weight", 10, 64), numpy_helper.from_array(np.zeros(10, np.float32), "fc.bias"),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p2", "conv3.weight", "conv3.bias"], ["c3"], name="conv3", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
        helper.make_node("GlobalAveragePool", ["r3"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "demo_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 64, 64])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="ORTune demo", producer_version="1")
    model.ir_version = 8
    model.doc_string = "A small image classifier (random weights) bundled with ORTune for trying things out."
    helper.set_model_props(model, {"purpose": "demo", "input": "RGB image, 64x64, NCHW"})
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(build(), str(OUT))
    print(OUT)
