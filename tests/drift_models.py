"""Models with planted accuracy traps, for drift: one layer that float16 or int8 breaks."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests import models


def mlp_with_weights(weights: list[np.ndarray], name: str) -> onnx.ModelProto:
    """x -> (MatMul layer_i -> Relu)* -> y; layer i's MatMul is named `layer{i}`."""
    nodes, inits, current = [], [], "x"
    for i, w in enumerate(weights):
        inits.append(numpy_helper.from_array(w.astype(np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [current, f"w{i}"], [f"mm{i}"], name=f"layer{i}"))
        last = i == len(weights) - 1
        out = "y" if last else f"h{i}"
        nodes.append(helper.make_node("Relu" if not last else "Identity", [f"mm{i}"], [out], name=f"act{i}"))
        current = out
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, weights[0].shape[0]])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, weights[-1].shape[1]])], inits)
    return models._model(graph)


def fp16_clip_trap(width: int = 16) -> onnx.ModelProto:
    """Layer 2's weights hold values past the float16 converter's clip bound (1e4) but its
    output stays moderate (the next weights scale it down): float16 clips those weights, so the
    values part from that node on, while layers 0 and 1 stay within float16's rounding."""
    rng = np.random.default_rng(0)
    w = [rng.normal(0, 1 / np.sqrt(width), (width, width)) for _ in range(4)]
    w[2][:, 3] = 3e4                           # one column far past 1e4, fed by Relu's (non-negative) h1
    w[3][3, :] *= 1e-5                         # keeps the output moderate; the clipped column still dominates it
    return mlp_with_weights(w, "fp16_clip_trap")


def int8_wide_layer(width: int = 16) -> onnx.ModelProto:
    """Layer 1's weights are small but for one outlier 500 times larger: one int8 scale per
    tensor then rounds every other weight of that layer to zero, so it dominates the error."""
    rng = np.random.default_rng(1)
    w = [rng.normal(0, 1 / np.sqrt(width), (width, width)) for _ in range(3)]
    w[1][0, 0] = 500 * np.abs(w[1]).max()
    return mlp_with_weights(w, "int8_wide_layer")


def fp16_constant_overflow(width: int = 8) -> onnx.ModelProto:
    """x / sqrt(variance) * 1000, the variance coming from an unnamed Constant node holding
    1e6 (past float16's 65504, as a BatchNormalization's variance can be): the float16
    converter clips it to 1e4, so the output is 10 times too large. Keeping the Constant
    alone still hands it to its reader through float16 (infinity); its Sqrt must be kept too."""
    variance = numpy_helper.from_array(np.full((width,), 1e6, np.float32), "variance_value")
    gain = numpy_helper.from_array(np.array(1000, np.float32), "gain")
    nodes = [helper.make_node("Constant", [], ["variance"], value=variance),
             helper.make_node("Sqrt", ["variance"], ["deviation"], name="root"),
             helper.make_node("Div", ["x", "deviation"], ["scaled"], name="divide"),
             helper.make_node("Mul", ["scaled", "gain"], ["y"], name="amplify")]
    graph = helper.make_graph(nodes, "fp16_constant_overflow",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])], [gain])
    return models._model(graph)
