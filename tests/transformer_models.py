"""One layer of a BERT and of a GPT-2, built in code the way PyTorch exports them: the
head split's target shape is put together at run time (Shape, Gather, Concat), so no
[.., heads, head_size] constant names the head count, as in real exports."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.models import _model


class _Graph:
    """Nodes and weights collected under short, unique names."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: list = []
        self.count = 0

    def weight(self, *shape: int) -> str:
        return self.const(self.rng.normal(0, 0.05, shape).astype(np.float32))

    def const(self, value) -> str:
        name = f"c{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type: str, *inputs: str, outputs: int = 1, **attrs) -> str | list[str]:
        self.count += 1
        names = [f"{op_type.lower()}{self.count}_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=f"{op_type}_{self.count}", **attrs))
        return names[0] if outputs == 1 else names

    def linear(self, x: str, n_in: int, n_out: int) -> str:
        return self.op("Add", self.op("MatMul", x, self.weight(n_in, n_out)), self.weight(n_out))

    def layer_norm(self, x: str, width: int) -> str:
        scale = self.const(np.ones(width, np.float32))
        return self.op("LayerNormalization", x, scale, self.weight(width), axis=-1, epsilon=1e-5)

    def dim(self, x: str, axis: int) -> str:
        """Dimension `axis` of x as a 1-element tensor, as torch.size() exports."""
        gathered = self.op("Gather", self.op("Shape", x), self.const(np.array(axis, np.int64)), axis=0)
        return self.op("Unsqueeze", gathered, self.const(np.array([0], np.int64)))

    def split_heads(self, x: str, heads: int, head_size: int | None, perm: list[int]) -> str:
        """x [batch, seq, hidden] -> [batch, heads, seq, head_size] (perm permutes it).
        head_size None: it is computed as hidden // heads at run time (GPT-2's export)."""
        if head_size is None:
            last = self.op("Div", self.dim(x, 2), self.const(np.array([heads], np.int64)))
        else:
            last = self.const(np.array([head_size], np.int64))
        shape = self.op("Concat", self.dim(x, 0), self.dim(x, 1), self.const(np.array([heads], np.int64)), last,
                        axis=0)
        return self.op("Transpose", self.op("Reshape", x, shape), perm=perm)

    def merge_heads(self, x: str, hidden: int) -> str:
        merged = self.op("Transpose", x, perm=[0, 2, 1, 3])
        shape = self.op("Concat", self.dim(merged, 0), self.dim(merged, 1), self.const(np.array([hidden], np.int64)),
                        axis=0)
        return self.op("Reshape", merged, shape)

    def finish(self, name: str, inputs: list, output: str, hidden: int) -> onnx.ModelProto:
        self.nodes.append(helper.make_node("Identity", [output], ["y"], name="output"))
        graph = helper.make_graph(self.nodes, name, inputs,
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", hidden])],
                                  initializer=self.inits)
        return _model(graph)


def bert_layer(hidden: int = 32, heads: int = 8, seed: int = 0) -> onnx.ModelProto:
    """An encoder layer after the embeddings: self-attention with the padding mask, then
    residual + LayerNorm, the erf-Gelu feed-forward, residual + LayerNorm (post-norm).
    The scores are divided by √head_size; with 4 values per head that is 2."""
    g = _Graph(seed)
    head = hidden // heads
    x = "hidden_states"
    q = g.split_heads(g.linear(x, hidden, hidden), heads, head, [0, 2, 1, 3])
    k = g.split_heads(g.linear(x, hidden, hidden), heads, head, [0, 2, 3, 1])
    v = g.split_heads(g.linear(x, hidden, hidden), heads, head, [0, 2, 1, 3])
    scores = g.op("Div", g.op("MatMul", q, k), g.const(np.array(np.sqrt(head), np.float32)))
    mask = g.op("Unsqueeze", g.op("Unsqueeze", "attention_mask", g.const(np.array([1], np.int64))),
                g.const(np.array([2], np.int64)))
    mask = g.op("Cast", mask, to=TensorProto.FLOAT)
    mask = g.op("Mul", g.op("Sub", g.const(np.array(1.0, np.float32)), mask), g.const(np.array(-10000.0, np.float32)))
    probs = g.op("Softmax", g.op("Add", scores, mask), axis=-1)
    context = g.merge_heads(g.op("MatMul", probs, v), hidden)
    attended = g.layer_norm(g.op("Add", g.linear(context, hidden, hidden), x), hidden)
    up = g.linear(attended, hidden, 4 * hidden)
    erf = g.op("Erf", g.op("Div", up, g.const(np.array(np.sqrt(2.0), np.float32))))
    gelu = g.op("Mul", g.op("Mul", up, g.op("Add", erf, g.const(np.array(1.0, np.float32)))),
                g.const(np.array(0.5, np.float32)))
    out = g.layer_norm(g.op("Add", g.linear(gelu, 4 * hidden, hidden), attended), hidden)
    inputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", "sequence", hidden]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"])]
    return g.finish("bert_layer", inputs, out, hidden)


def gpt2_layer(hidden: int = 32, heads: int = 4, positions: int = 256, seed: int = 0) -> onnx.ModelProto:
    """A decoder block as GPT-2 exports: its Conv1D layers as Gemm between two Reshapes, one
    of them for q, k and v together (split three ways), heads whose size is computed at
    run time, the causal mask a lower-triangular constant sliced to the scores' shape,
    the tanh-Gelu MLP, residuals around both (pre-norm)."""
    g = _Graph(seed)
    x = "hidden_states"

    def conv1d(value: str, n_in: int, n_out: int) -> str:
        flat = g.op("Reshape", value, g.const(np.array([-1, n_in], np.int64)))
        out = g.op("Gemm", flat, g.weight(n_in, n_out), g.weight(n_out))
        shape = g.op("Concat", g.dim(value, 0), g.dim(value, 1), g.const(np.array([n_out], np.int64)), axis=0)
        return g.op("Reshape", out, shape)

    q, k, v = g.op("Split", conv1d(g.layer_norm(x, hidden), hidden, 3 * hidden),
                   g.const(np.array([hidden] * 3, np.int64)), outputs=3, axis=2)
    q = g.split_heads(q, heads, None, [0, 2, 1, 3])
    k = g.split_heads(k, heads, None, [0, 2, 3, 1])
    v = g.split_heads(v, heads, None, [0, 2, 1, 3])
    scores = g.op("Div", g.op("MatMul", q, k), g.const(np.array(np.sqrt(hidden // heads), np.float32)))
    shape = g.op("Shape", scores)
    axis0 = g.const(np.array([0], np.int64))

    def scores_dim(start: int, end: int) -> str:
        return g.op("Squeeze", g.op("Slice", shape, g.const(np.array([start], np.int64)),
                                    g.const(np.array([end], np.int64)), axis0), axis0)

    keys = scores_dim(-1, np.iinfo(np.int64).max)
    queries = scores_dim(-2, -1)
    causal = g.const(np.tril(np.ones((1, 1, positions, positions), bool)))
    rows = g.op("Slice", causal, g.op("Unsqueeze", g.op("Sub", keys, queries), axis0), g.op("Unsqueeze", keys, axis0),
                g.const(np.array([2], np.int64)))
    window = g.op("Slice", rows, g.const(np.array([0], np.int64)), g.op("Unsqueeze", keys, axis0),
                  g.const(np.array([3], np.int64)))
    masked = g.op("Where", window, scores, g.const(np.array(-10000.0, np.float32)))
    context = g.merge_heads(g.op("MatMul", g.op("Softmax", masked, axis=-1), v), hidden)
    attended = g.op("Add", x, conv1d(context, hidden, hidden))
    up = conv1d(g.layer_norm(attended, hidden), hidden, 4 * hidden)
    cube = g.op("Mul", g.op("Pow", up, g.const(np.array(3.0, np.float32))), g.const(np.array(0.044715, np.float32)))
    inner = g.op("Mul", g.op("Add", up, cube), g.const(np.array(np.sqrt(2 / np.pi), np.float32)))
    gelu = g.op("Mul", g.op("Mul", up, g.const(np.array(0.5, np.float32))),
                g.op("Add", g.op("Tanh", inner), g.const(np.array(1.0, np.float32))))
    out = g.op("Add", attended, conv1d(gelu, 4 * hidden, hidden))
    inputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", "sequence", hidden])]
    return g.finish("gpt2_layer", inputs, out, hidden)
