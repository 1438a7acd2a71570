"""What one node costs in arithmetic, per operator: multiply-accumulates (MACs) and
floating-point operations (FLOPs), from the concrete shapes of its inputs and outputs.

Conventions (stated once, so that every total means the same thing):
- a MAC is one multiply and one add; a node with MACs costs 2 FLOPs per MAC, plus one per
  output element where it adds a bias;
- elementwise operators cost 1 FLOP per output element, whatever the function;
- pooling costs one FLOP per window element per output; global pooling and reductions one
  per input element;
- normalisations and Softmax cost a few FLOPs per element (the table's numbers: the passes
  over the data a plain implementation makes);
- operators that only move or reshape data cost nothing (they are counted, as zero);
- any other operator is not counted: `node_cost` returns None and the caller lists it.
"""

from __future__ import annotations

from math import prod
from typing import Callable

#: a node's concrete input and output shapes, by position (None: absent or not known)
Shapes = list[list[int] | None]
#: (macs, flops), or None when a shape the formula needs is not known
Cost = tuple[int, int] | None

ELEMENTWISE = frozenset({
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Mean", "Sum", "Where", "Clip",
    "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
    "Softplus", "Softsign", "Gelu", "FastGelu", "BiasGelu", "QuickGelu", "Mish", "Erf", "Exp", "Log",
    "Sqrt", "Reciprocal", "Neg", "Abs", "Sign", "Floor", "Ceil", "Round", "Sin", "Cos", "Tan",
    "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Not", "And", "Or", "Xor",
    "IsNaN", "IsInf", "BitShift", "Resize", "Upsample", "Trilu", "BiasAdd",
    "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearConcat", "QLinearAveragePool",
    "QLinearGlobalAveragePool", "BiasSplitGelu", "BiasFastGelu", "RotaryEmbedding",
})
#: FLOPs per element of the first output (its input is ids, not values)
PER_OUTPUT = {"EmbedLayerNormalization": 7}
#: operators that move, select or reshape data: zero arithmetic
MOVEMENT = frozenset({
    "Reshape", "Transpose", "Concat", "Gather", "GatherElements", "GatherND", "Slice", "Squeeze",
    "Unsqueeze", "Shape", "Size", "Flatten", "Identity", "Cast", "CastLike", "Expand", "Pad", "Split",
    "Constant", "ConstantOfShape", "Tile", "Range", "DepthToSpace", "SpaceToDepth", "Dropout",
    "ScatterND", "ScatterElements", "NonZero", "OneHot", "EyeLike", "Compress", "ReverseSequence",
    "ReorderInput", "ReorderOutput",          # com.microsoft.nchwc: the blocked layout in and out
})
#: FLOPs per element of the first input
PER_ELEMENT = {
    "BatchNormalization": 2, "InstanceNormalization": 5, "LayerNormalization": 5, "GroupNormalization": 5,
    "LpNormalization": 3, "MeanVarianceNormalization": 5, "SimplifiedLayerNormalization": 4,
    "RMSNormalization": 4, "SkipLayerNormalization": 6, "SkipSimplifiedLayerNormalization": 5,
    "Softmax": 5, "LogSoftmax": 5, "Hardmax": 1, "QuantizeLinear": 2, "DequantizeLinear": 2,
    "DynamicQuantizeLinear": 4, "GlobalAveragePool": 1, "GlobalMaxPool": 1, "GlobalLpPool": 2,
    "ReduceMean": 1, "ReduceSum": 1, "ReduceMax": 1, "ReduceMin": 1, "ReduceProd": 1, "ReduceL1": 2,
    "ReduceL2": 2, "ReduceSumSquare": 2, "ReduceLogSumExp": 3, "ReduceLogSum": 2, "ArgMax": 1,
    "ArgMin": 1, "CumSum": 1, "TopK": 1,
}


def _conv(ins: Shapes, outs: Shapes, attrs: dict) -> Cost:
    """W: [M, C/group, k...]; each output element reads C/group x kernel inputs."""
    weight, out = ins[1], outs[0]
    if weight is None or out is None:
        return None
    macs = prod(out) * prod(weight[1:])
    bias = prod(out) if len(ins) > 2 and ins[2] is not None else 0
    return macs, 2 * macs + bias


def _conv_transpose(ins: Shapes, outs: Shapes, attrs: dict) -> Cost:
    """W: [C, M/group, k...]; each input element is spread over M/group x kernel outputs."""
    data, weight, out = ins[0], ins[1], outs[0]
    if data is None or weight is None or out is None:
        return None
    macs = prod(data) * prod(weight[1:])
    bias = prod(out) if len(ins) > 2 and ins[2] is not None else 0
    return macs, 2 * macs + bias


def _gemm(ins: Shapes, outs: Shapes, attrs: dict) -> Cost:
    """K from A (or from B when A's shape is not known); M x N from the output, else from A and B."""
    a, b, out = ins[0], ins[1] if len(ins) > 1 else None, outs[0] if outs else None
    a = a if a is not None and len(a) == 2 else None
    b = b if b is not None and len(b) == 2 else None
    if a is not None:
        rows, inner = (a[1], a[0]) if attrs.get("transA", 0) else (a[0], a[1])
    elif b is not None:
        rows, inner = None, (b[1] if attrs.get("transB", 0) else b[0])
    else:
        return None
    if out is None:
        if rows is None or b is None:
            return None
        out = [rows, b[0] if attrs.get("transB", 0) else b[1]]
    macs = prod(out) * inner
    bias = prod(out) if len(ins) > 2 and ins[2] is not None else 0
    return macs, 2 * macs + bias


def _matmul_from(position: int, second: int = 1) -> Callable[[Shapes, Shapes, dict], Cost]:
    """MatMul and its quantised kinds: K is the last dim of A, the input at `position`; B, at
    `second`, gives the output's shape where inference did not."""

    def matmul(ins: Shapes, outs: Shapes, attrs: dict) -> Cost:
        a, out = ins[position], outs[0] if outs else None
        b = ins[second] if len(ins) > second else None
        if out is None and a is not None and b is not None:
            out = _matmul_shape(a, b)
        if a is None or out is None or not a:
            return None
        inner = a[-2] if attrs.get("transA", 0) and len(a) > 1 else a[-1]
        macs = prod(out) * inner
        return macs, 2 * macs
    return matmul


def _matmul_shape(a: list[int], b: list[int]) -> list[int] | None:
    """numpy's matmul output shape (batch dims broadcast), None where they do not broadcast."""
    if not a or not b:
        return None
    rows = a[:-1][-1:] if len(a) > 1 else []
    cols = b[-1:] if len(b) > 1 else []
    batch_a, batch_b = a[:-2], b[:-2]
    width = max(len(batch_a), len(batch_b))
    batch_a, batch_b = [1] * (width - len(batch_a)) + batch_a, [1] * (width - len(batch_b)) + batch_b
    if any(x != y and 1 not in (x, y) for x, y in zip(batch_a, batch_b)):
        return None
    return [max(x, y) for x, y in zip(batch_a, batch_b)] + rows + cols


def _matmul_nbits(ins: Shapes, outs: Shapes, attrs: dict) -> Cost:
    out, inner = outs[0], attrs.get("K")
    if out is None or not inner:
        return None
    macs = prod(out) * int(inner)
    return macs, 2 * macs


def _attention(ins: Shapes, outs: Shapes, attrs: dict) -> Cost:
    """com.microsoft Attention: input [B, S, H] times weights [H, Q+K+V], then Q.K^T and
    the weights times V over S x S per batch (the Softmax's few FLOPs left out)."""
    data, weight = ins[0], ins[1]
    if data is None or weight is None or len(data) != 3 or len(weight) != 2:
        return None
    batch, seq, hidden = data
    projection = batch * seq * hidden * weight[1]
    per_head_dims = weight[1] // 3
    macs = projection + 2 * batch * seq * seq * per_head_dims
    return macs, 2 * macs


def _multi_head_attention(ins: Shapes, outs: Shapes, attrs: dict) -> Cost:
    """com.microsoft MultiHeadAttention with query [B, S, D] and key [B, L, D] (or
    [B, N, L, h]): Q.K^T and the weights times V."""
    query = ins[0]
    key = ins[1] if len(ins) > 1 else None
    if query is None or key is None or len(query) != 3 or len(key) not in (3, 4):
        return None
    batch, seq, width = query
    length = key[1] if len(key) == 3 else key[2]
    macs = 2 * batch * seq * length * width
    return macs, 2 * macs


def _group_query_attention(ins: Shapes, outs: Shapes, attrs: dict) -> Cost:
    """com.microsoft GroupQueryAttention: query [B, S, D] (or packed Q, K, V), every query head
    over the total length (past plus new: the present key's length, else S)."""
    query = ins[0]
    if query is None or len(query) != 3:
        return None
    batch, seq, width = query
    heads, kv_heads = int(attrs.get("num_heads", 0) or 0), int(attrs.get("kv_num_heads", 0) or 0)
    if len(ins) < 2 or ins[1] is None and heads and kv_heads:       # packed: D = (N + 2 Nkv) h
        width = width * heads // (heads + 2 * kv_heads) if heads and kv_heads else width
    present = outs[1] if len(outs) > 1 else None
    length = present[2] if present is not None and len(present) == 4 else seq
    macs = 2 * batch * seq * length * width
    return macs, 2 * macs


def _rnn(gates: int, elementwise: int) -> Callable[[Shapes, Shapes, dict], Cost]:
    """RNN (1 gate), GRU (3), LSTM (4): per direction and time step, the input X_t times W and
    the hidden state times R for every gate, then `elementwise` FLOPs per hidden unit (bias
    adds, the gates' activations and products)."""

    def rnn(ins: Shapes, outs: Shapes, attrs: dict) -> Cost:
        data, weight = ins[0], ins[1] if len(ins) > 1 else None
        if data is None or weight is None or len(data) != 3 or len(weight) != 3:
            return None
        steps, batch = (data[1], data[0]) if attrs.get("layout", 0) else (data[0], data[1])
        # the hidden size as the node says, else from W [D, gates x H, input]
        directions, width = weight[0], int(attrs.get("hidden_size") or weight[1] // gates)
        per_step = batch * gates * width * (data[2] + width)
        macs = directions * steps * per_step
        return macs, 2 * macs + directions * steps * batch * width * elementwise
    return rnn


def _einsum(ins: Shapes, outs: Shapes, attrs: dict) -> Cost:
    """One multiply-accumulate per point of the space of every letter (two operands); a
    single operand's sum or transpose costs one FLOP per input element."""
    equation = attrs.get("equation")
    if isinstance(equation, bytes):
        equation = equation.decode()
    if not equation or any(s is None for s in ins) or "..." in equation:
        return None
    operands = equation.replace(" ", "").split("->")[0].split(",")
    sizes: dict[str, int] = {}
    for letters, shape in zip(operands, ins):
        if len(letters) != len(shape):
            return None
        sizes.update({letter: max(size, sizes.get(letter, 1)) for letter, size in zip(letters, shape)})
    if len(ins) == 1:
        return 0, prod(ins[0])
    macs = prod(sizes.values()) * (len(ins) - 1)
    return macs, 2 * macs


def _pool(ins: Shapes, outs: Shapes, attrs: dict) -> Cost:
    out, kernel = outs[0], attrs.get("kernel_shape")
    if out is None or not kernel:
        return None
    return 0, prod(out) * prod(kernel)


WITH_MACS: dict[str, Callable[[Shapes, Shapes, dict], Cost]] = {
    "Conv": _conv, "ConvInteger": _conv, "QLinearConv": lambda i, o, a: _conv([i[0], i[3]], o, a),
    "FusedConv": _conv, "NhwcConv": _conv, "ConvTranspose": _conv_transpose,
    "Gemm": _gemm, "FusedGemm": _gemm, "MatMul": _matmul_from(0), "FusedMatMul": _matmul_from(0),
    "MatMulInteger": _matmul_from(0), "MatMulIntegerToFloat": _matmul_from(0),
    "QLinearMatMul": _matmul_from(0, 3), "DynamicQuantizeMatMul": _matmul_from(0),
    "MatMulNBits": _matmul_nbits, "Attention": _attention, "MultiHeadAttention": _multi_head_attention,
    "GroupQueryAttention": _group_query_attention, "LSTM": _rnn(4, 9), "GRU": _rnn(3, 8), "RNN": _rnn(1, 2),
    "DynamicQuantizeLSTM": _rnn(4, 9),          # W [D, input, 4H]: the width from hidden_size
    "Einsum": _einsum, "QGemm": lambda i, o, a: _gemm([i[0], i[3]] + i[6:7], o, a),
    "MaxPool": _pool, "AveragePool": _pool, "LpPool": _pool,
}


def node_cost(op_type: str, ins: Shapes, outs: Shapes, attrs: dict) -> Cost | str:
    """(macs, flops) of one node; None when a shape it needs is unknown; "unknown" for an
    operator the table does not hold."""
    if op_type in WITH_MACS:
        return WITH_MACS[op_type](ins, outs, attrs)
    if op_type in MOVEMENT or op_type in ("If", "Loop", "Scan"):     # a body's nodes carry its cost
        return 0, 0
    if op_type in ELEMENTWISE:
        return None if not outs or outs[0] is None else (0, prod(outs[0]))
    if op_type in PER_OUTPUT:
        return None if not outs or outs[0] is None else (0, PER_OUTPUT[op_type] * prod(outs[0]))
    if op_type in PER_ELEMENT:
        return None if not ins or ins[0] is None else (0, PER_ELEMENT[op_type] * prod(ins[0]))
    return "unknown"
