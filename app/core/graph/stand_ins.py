"""Stand-ins, for shape inference only, for the operators ONNX Runtime's optimisations write
into a graph it saves (an .ort file, an offline-optimised model) and that neither onnx's
inference nor ORT's symbolic one follows: FusedConv, FusedGemm, FusedMatMul, the NCHWc
layout's operators (com.microsoft.nchwc), and the quantizer's DynamicQuantizeLSTM.

Each is replaced, in a copy of the model, by standard operators writing the same output
names with the same shapes (a fused activation changes no shape; an NCHWc tensor is
[N, C padded to the block, H, W], and its convolution's weights are stored padded, so a
standard Conv on them gives the padded channels). The cost is still counted on the
original nodes: only the shapes come from the copy."""

from __future__ import annotations

#: attributes of a fused operator that its standard kind does not take
_FUSED_ONLY = {"activation", "activation_params", "activation_alpha", "activation_beta", "activation_gamma"}
_NCHWC = "com.microsoft.nchwc"
_POOLS = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}


def _copy(node, op_type: str, inputs=None, drop=frozenset()):
    from onnx import helper
    made = helper.make_node(op_type, list(node.input) if inputs is None else inputs, list(node.output),
                            name=node.name)
    made.attribute.extend(a for a in node.attribute if a.name not in drop)
    return made


def _rank(types: dict, name: str) -> int | None:
    value = types.get(name)
    if value is None or not value.type.HasField("tensor_type") or not value.type.tensor_type.HasField("shape"):
        return None
    return len(value.type.tensor_type.shape.dim)


def _constant(graph, name: str, values, elem_type: int) -> str:
    from onnx import helper
    graph.initializer.append(helper.make_tensor(name, elem_type, [len(values)], list(values)))
    return name


def _attr(node, name: str, default=None):
    from onnx import helper
    for attribute in node.attribute:
        if attribute.name == name:
            return helper.get_attribute_value(attribute)
    return default


def _transposed_last_two(node, position: int, rank: int | None, made: list) -> str | None:
    from onnx import helper
    if rank is None or rank < 2:
        return None
    name = f"{node.output[0]}__stand_in_t{position}"
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    made.append(helper.make_node("Transpose", [node.input[position]], [name], perm=perm))
    return name


def _fused_matmul(node, types: dict, graph) -> list | None:
    from onnx import helper
    if _attr(node, "transBatchA", 0) or _attr(node, "transBatchB", 0):
        return None
    made, inputs = [], list(node.input[:2])
    for position, flag in enumerate(("transA", "transB")):
        if _attr(node, flag, 0):
            inputs[position] = _transposed_last_two(node, position, _rank(types, node.input[position]), made)
            if inputs[position] is None:
                return None
    return made + [helper.make_node("MatMul", inputs, list(node.output), name=node.name)]


def _reorder_output(node, types: dict, graph) -> list | None:
    from onnx import TensorProto, helper
    channels, tag = int(_attr(node, "channels", 0)), node.output[0]
    if not channels:
        return None
    ends = [_constant(graph, f"{tag}__stand_in_{what}", values, TensorProto.INT64)
            for what, values in (("starts", [0]), ("ends", [channels]), ("axes", [1]))]
    if not _attr(node, "channels_last", 0):
        return [helper.make_node("Slice", [node.input[0]] + ends, list(node.output), name=node.name)]
    rank = _rank(types, node.input[0]) or 4
    sliced = f"{tag}__stand_in_sliced"
    return [helper.make_node("Slice", [node.input[0]] + ends, [sliced]),
            helper.make_node("Transpose", [sliced], list(node.output), perm=[0] + list(range(2, rank)) + [1])]


def _reorder_input(node, types: dict, graph) -> list:
    """Channels are left unpadded: the convolutions' padded weights give their outputs' channels."""
    from onnx import helper
    if not _attr(node, "channels_last", 0):
        return [helper.make_node("Identity", [node.input[0]], list(node.output), name=node.name)]
    rank = _rank(types, node.input[0]) or 4
    return [helper.make_node("Transpose", [node.input[0]], list(node.output), name=node.name,
                             perm=[0, rank - 1] + list(range(1, rank - 1)))]


def _upsample(node, types: dict, graph) -> list | None:
    from onnx import TensorProto, helper
    scales = [float(s) for s in _attr(node, "scales", [])]
    if not scales:
        return None
    scales = [1.0] * (2 if len(scales) == 2 else 0) + scales
    name = _constant(graph, f"{node.output[0]}__stand_in_scales", scales, TensorProto.FLOAT)
    return [helper.make_node("Resize", [node.input[0], "", name], list(node.output), name=node.name)]


def _stand_in(node, types: dict, graph) -> list | None:
    """The standard nodes standing in for `node`, or None to keep it."""
    if node.domain == "com.microsoft" and node.op_type == "FusedConv":
        return [_copy(node, "Conv", list(node.input[:3]), _FUSED_ONLY)]
    if node.domain == "com.microsoft" and node.op_type == "FusedGemm":
        return [_copy(node, "Gemm", None, _FUSED_ONLY)]
    if node.domain == "com.microsoft" and node.op_type == "FusedMatMul":
        return _fused_matmul(node, types, graph)
    if node.domain == "com.microsoft" and node.op_type == "DynamicQuantizeLSTM":
        # its outputs are LSTM's (hidden_size and direction say them); W and R are transposed
        return [_copy(node, "LSTM", list(node.input[:1]) + ["", ""] + list(node.input[3:8]))]
    if node.domain != _NCHWC:
        return None
    if node.op_type == "Conv":
        return [_copy(node, "Conv", list(node.input[:3]), _FUSED_ONLY)]
    if node.op_type in _POOLS:
        return [_copy(node, node.op_type)]
    return {"ReorderOutput": _reorder_output, "ReorderInput": _reorder_input,
            "Upsample": _upsample}.get(node.op_type, lambda *_: None)(node, types, graph)


def with_stand_ins(model):
    """A copy of `model` with the stand-ins in place, or `model` itself when it holds none
    of these operators."""
    from app.core.model.intake import iter_graphs

    wanted = {("com.microsoft", name) for name in ("FusedConv", "FusedGemm", "FusedMatMul", "DynamicQuantizeLSTM")}
    if not any(n.domain == _NCHWC or (n.domain, n.op_type) in wanted
               for g in iter_graphs(model.graph) for n in g.node):
        return model
    copy = type(model)()
    copy.CopyFrom(model)
    # the innermost graphs first: a graph's nodes are copied anew, their bodies with them
    for graph in reversed(list(iter_graphs(copy.graph))):
        types = {v.name: v for v in list(graph.input) + list(graph.value_info) + list(graph.output)}
        nodes = []
        for node in graph.node:
            made = _stand_in(node, types, graph)
            nodes.extend(made if made else [type(node)()])
            if not made:
                nodes[-1].CopyFrom(node)
        del graph.node[:]
        graph.node.extend(nodes)
    return copy
