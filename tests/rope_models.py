"""A small random-weight Llama decoder laid out as PyTorch's dynamo exporter writes Hugging Face's
LlamaForCausalLM with a cache: RMSNorm as Pow/ReduceMean/Add/Sqrt/Reciprocal/Mul; rotary position
embeddings computed from position_ids (inv_freq × positions → Cos and Sin of the doubled angles)
and applied as x·cos + rotate_half(x)·sin, rotate_half being Slice/Neg/Concat of the head's two
halves; separate Q, K and V MatMuls with fewer key/value heads than query heads (grouped-query
attention), the cache grown by Concat and each key/value head repeated for its query heads by
Unsqueeze/Expand/Reshape (repeat_kv); the 4-D causal mask made from the cache length and the
2-D attention_mask as transformers' _prepare_4d_causal_attention_mask_with_cache_position does
(finfo(float32).min above the diagonal and over padding); SiLU-gated MLP; untied lm_head.

Inputs: input_ids, attention_mask, position_ids, past_key_values.N.key/value; outputs: logits,
present.N.key/value (Optimum's and dynamo's names), so the same generation loop runs it."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from tests.models import _model
from tests.transformer_models import _Graph

MIN = np.finfo(np.float32).min


def llama_rope(layers: int = 4, hidden: int = 64, heads: int = 4, kv_heads: int = 2, vocab: int = 96,
               mlp: int = 128, theta: float = 10000.0, seed: int = 0, tiled: tuple = (),
               fill: float = MIN, broadcast_freqs: bool = False) -> onnx.ModelProto:
    """`tiled`: layers whose key/value heads are repeated by Tile instead (as exports of
    repeat_interleave have it), a layout the grouped-query attention fusion does not know;
    `fill`: what the mask holds where a query may not look (-1e4 as older code had it: a mask
    the grouped-query fusion does not take for transformers'); `broadcast_freqs`: the rotary
    angles as positions [batch, sequence, 1] × inv_freq, as PyTorch 2.14's dynamo exporter
    writes transformers 5's Llama, not as a MatMul and a Transpose."""
    size = hidden // heads
    batch, new, past, total = "batch_size", "sequence_length", "past_sequence_length", "total_sequence_length"
    g = _Graph(seed)
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64

    def ints(*values):
        return g.const(np.array(values, np.int64))

    inputs = [helper.make_tensor_value_info("input_ids", i64, [batch, new]),
              helper.make_tensor_value_info("attention_mask", i64, [batch, total]),
              helper.make_tensor_value_info("position_ids", i64, [batch, new])]
    outputs = [helper.make_tensor_value_info("logits", f32, [batch, new, vocab])]
    for layer in range(layers):
        for part in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{layer}.{part}", f32,
                                                        [batch, kv_heads, past, size]))
            outputs.append(helper.make_tensor_value_info(f"present.{layer}.{part}", f32,
                                                         [batch, kv_heads, total, size]))
    x = g.op("Gather", g.weight(vocab, hidden), "input_ids", axis=0)
    minimum = g.const(np.array(fill, np.float32))
    mask = _causal_mask(g, ints, minimum)
    cos, sin = _rotary_tables(g, size, theta, broadcast_freqs)

    def rms_norm(value: str) -> str:
        mean = g.op("ReduceMean", g.op("Pow", value, g.const(np.array(2.0, np.float32))), ints(-1), keepdims=1,
                      noop_with_empty_axes=0)
        scale = g.op("Reciprocal", g.op("Sqrt", g.op("Add", mean, g.const(np.array(1e-5, np.float32)))))
        weight = g.const((1 + g.rng.normal(0, 0.05, hidden)).astype(np.float32))
        return g.op("Mul", weight, g.op("Mul", value, scale))

    def rotate(value: str) -> str:
        first = g.op("Slice", value, ints(0), ints(size // 2), ints(3), ints(1))
        second = g.op("Slice", value, ints(size // 2), ints(np.iinfo(np.int64).max), ints(3), ints(1))
        turned = g.op("Concat", g.op("Neg", second), first, axis=-1)
        return g.op("Add", g.op("Mul", value, cos), g.op("Mul", turned, sin))

    def repeat_kv(value: str, layer: int) -> str:
        spread = "Tile" if layer in tiled else "Expand"
        grouped = g.op(spread, g.op("Unsqueeze", value, ints(2)), ints(1, 1, heads // kv_heads, 1, 1))
        repeated = g.op("Reshape", grouped, ints(0, heads, -1, size))
        # the exporter records every value's shape in its symbolic dims (value_info)
        known.append(helper.make_tensor_value_info(repeated, f32, [batch, heads, total, size]))
        return repeated

    known = []
    for layer in range(layers):
        normed = rms_norm(x)

        def heads_of(count: int) -> str:
            projected = g.op("MatMul", normed, g.weight(hidden, count * size))
            return g.op("Transpose", g.op("Reshape", projected, ints(0, 0, count, size)), perm=[0, 2, 1, 3])

        q, k, v = rotate(heads_of(heads)), rotate(heads_of(kv_heads)), heads_of(kv_heads)
        key, value = f"present.{layer}.key", f"present.{layer}.value"
        g.nodes.append(helper.make_node("Concat", [f"past_key_values.{layer}.key", k], [key], axis=-2))
        g.nodes.append(helper.make_node("Concat", [f"past_key_values.{layer}.value", v], [value], axis=-2))
        scores = g.op("Mul", g.op("MatMul", q, g.op("Transpose", repeat_kv(key, layer), perm=[0, 1, 3, 2])),
                      g.const(np.array(1 / np.sqrt(size), np.float32)))
        probs = g.op("Softmax", g.op("Add", scores, mask), axis=-1)
        attended = g.op("Transpose", g.op("MatMul", probs, repeat_kv(value, layer)), perm=[0, 2, 1, 3])
        merged = g.op("Reshape", attended, ints(0, 0, hidden))
        x = g.op("Add", x, g.op("MatMul", merged, g.weight(hidden, hidden)))
        normed = rms_norm(x)
        gate = g.op("MatMul", normed, g.weight(hidden, mlp))
        up = g.op("MatMul", normed, g.weight(hidden, mlp))
        silu = g.op("Mul", gate, g.op("Sigmoid", gate))
        x = g.op("Add", x, g.op("MatMul", g.op("Mul", silu, up), g.weight(mlp, hidden)))
    g.nodes.append(helper.make_node("MatMul", [rms_norm(x), g.weight(hidden, vocab)], ["logits"]))
    graph = helper.make_graph(g.nodes, "llama_rope", inputs, outputs, g.inits, value_info=known)
    return _model(graph, opset=18)


def _rotary_tables(g: _Graph, size: int, theta: float, broadcast: bool = False) -> tuple[str, str]:
    """cos and sin [batch, 1, sequence, head_size] of the positions' angles, as LlamaRotaryEmbedding
    computes them: inv_freq [1, size/2, 1] @ positions [batch, 1, sequence], transposed and doubled
    (`broadcast`: positions [batch, sequence, 1] × inv_freq [size/2])."""
    inv_freq = (1.0 / theta ** (np.arange(0, size, 2, dtype=np.float32) / size)).reshape(1, -1, 1)
    if broadcast:
        at = g.op("Cast", g.op("Unsqueeze", "position_ids", g.const(np.array([-1], np.int64))), to=TensorProto.FLOAT)
        freqs = g.op("Mul", at, g.const(inv_freq.reshape(-1).astype(np.float32)))
    else:
        at = g.op("Cast", g.op("Unsqueeze", "position_ids", g.const(np.array([1], np.int64))), to=TensorProto.FLOAT)
        freqs = g.op("Transpose", g.op("MatMul", g.const(inv_freq.astype(np.float32)), at), perm=[0, 2, 1])
    angles = g.op("Concat", freqs, freqs, axis=-1)
    one = g.const(np.array([1], np.int64))
    return g.op("Unsqueeze", g.op("Cos", angles), one), g.op("Unsqueeze", g.op("Sin", angles), one)


def _causal_mask(g: _Graph, ints, minimum: str) -> str:
    """[batch, 1, sequence, total] additive mask: 0 where a query may see a key (at or before its own
    position, and not padding), the float32 minimum elsewhere."""
    sequence = g.op("Shape", "input_ids", start=1, end=2)
    past = g.op("Squeeze", g.op("Shape", "past_key_values.0.key", start=2, end=3))
    total = g.op("Add", past, g.op("Squeeze", sequence))
    current = g.op("Range", past, total, g.const(np.array(1, np.int64)))
    filled = g.op("Expand", minimum, g.op("Concat", sequence, g.op("Reshape", total, ints(-1)), axis=0))
    upper = g.op("Trilu", filled, g.const(np.array(1, np.int64)), upper=1)
    after = g.op("Greater", g.op("Range", g.const(np.array(0, np.int64)), total, g.const(np.array(1, np.int64))),
                 g.op("Reshape", current, ints(-1, 1)))
    causal = g.op("Mul", upper, g.op("Cast", after, to=TensorProto.FLOAT))
    batch = g.op("Shape", "input_ids", start=0, end=1)
    causal = g.op("Expand", g.op("Unsqueeze", causal, ints(0, 1)),
                  g.op("Concat", batch, ints(1, 1, 1), axis=0))
    padding = g.op("Cast", g.op("Unsqueeze", "attention_mask", ints(1, 2)), to=TensorProto.FLOAT)
    padded = g.op("Equal", g.op("Add", causal, padding), g.const(np.array(0.0, np.float32)))
    return g.op("Where", padded, minimum, causal)
