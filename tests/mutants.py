"""Broken copies of the small test models, as an attacker or a bad exporter makes them:
flipped bytes, cut files, and models whose protobuf fields are set to wrong values.

`mutant(seed)` is deterministic, so a failing case found by the hypothesis tests or by
benchmarks/robustness.py can be made again from its seed alone."""

from __future__ import annotations

import random

import onnx

from tests import models

BASES = {
    "tiny": models.tiny_add,
    "mlp": lambda: models.mlp(width=8, depth=2),
    "cnn": lambda: models.cnn(channels=2, size=8),
    "branching": models.with_if_subgraph,
    "block": lambda: models.transformer_block(hidden=8, heads=2),
}

#: values that break a field's assumptions: zero, negative, past 32 and 64 bits, huge
_WHOLE = [0, -1, 1, 2, 7, 255, 2 ** 31, 2 ** 31 - 1, 2 ** 40, 2 ** 62, -(2 ** 63), 2 ** 63 - 1]
_TEXT = ["", "x", "../../etc/passwd", "/etc/passwd", "\x00", "é" * 3, "A" * 5000, "y", "com.microsoft",
         "ai.onnx.ml", "Loop", "Conv"]


def _pick(rng: random.Random, items):
    return items[rng.randrange(len(items))]


def _graph_nodes(graph: onnx.GraphProto):
    """Every node, subgraphs included."""
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from _graph_nodes(attribute.g)


def _tensors(model: onnx.ModelProto) -> list:
    tensors = list(model.graph.initializer)
    for node in _graph_nodes(model.graph):
        tensors += [a.t for a in node.attribute if a.type == onnx.AttributeProto.TENSOR]
    return tensors


def _value_infos(model: onnx.ModelProto) -> list:
    graph = model.graph
    return [v for v in [*graph.input, *graph.output, *graph.value_info] if v.type.HasField("tensor_type")]


def _field_mutation(model: onnx.ModelProto, rng: random.Random) -> str:
    """Set one field of `model` to a wrong value; returns what was done."""
    nodes = list(_graph_nodes(model.graph))
    tensors = _tensors(model)
    infos = _value_infos(model)
    choice = rng.randrange(16)
    if choice == 0:
        node = _pick(rng, nodes)
        node.op_type = _pick(rng, _TEXT)
        return f"op_type of {node.name} = {node.op_type[:20]!r}"
    if choice == 1:
        node = _pick(rng, nodes)
        if node.input:
            node.input[rng.randrange(len(node.input))] = _pick(rng, _TEXT)
        return f"an input of {node.name} renamed"
    if choice == 2:
        node = _pick(rng, nodes)
        if node.output:
            node.output[rng.randrange(len(node.output))] = _pick(rng, ["", "x", nodes[0].output[0]])
        return f"an output of {node.name} renamed"
    if choice == 3:
        node = _pick(rng, nodes)
        node.domain = _pick(rng, _TEXT)
        return f"domain of {node.name} changed"
    if choice == 4:
        node = _pick(rng, nodes)
        node.attribute.append(onnx.helper.make_attribute(_pick(rng, ["axis", "perm", "pads", "to", "junk"]),
                                                         _pick(rng, [_pick(rng, _WHOLE), [_pick(rng, _WHOLE)] * 3,
                                                                     "text", 1.5])))
        return f"an attribute added to {node.name}"
    if choice == 5 and any(n.attribute for n in nodes):
        node = _pick(rng, [n for n in nodes if n.attribute])
        attribute = _pick(rng, node.attribute)
        attribute.type = _pick(rng, sorted(onnx.AttributeProto.AttributeType.values()))   # protobuf takes no other
        return f"type of attribute {attribute.name} = {attribute.type}"
    if choice == 6 and tensors:
        tensor = _pick(rng, tensors)
        if tensor.dims:
            tensor.dims[rng.randrange(len(tensor.dims))] = _pick(rng, _WHOLE)
        else:
            tensor.dims.append(_pick(rng, _WHOLE))
        return f"a dim of tensor {tensor.name}"
    if choice == 7 and tensors:
        tensor = _pick(rng, tensors)
        tensor.data_type = rng.randrange(0, 30)
        return f"data_type of {tensor.name} = {tensor.data_type}"
    if choice == 8 and tensors:
        tensor = _pick(rng, tensors)
        try:
            data = onnx.numpy_helper.to_array(tensor).tobytes()
        except Exception:     # an earlier mutation broke it already
            data = tensor.raw_data
        cut = rng.randrange(len(data) + 1) if data else 0
        for field in ("float_data", "int64_data", "int32_data", "double_data"):
            tensor.ClearField(field)
        tensor.raw_data = data[:cut] if rng.random() < 0.7 else data + b"\0" * rng.randrange(1, 64)
        return f"raw_data of {tensor.name} resized"
    if choice == 9 and tensors:
        tensor = _pick(rng, tensors)
        tensor.data_location = onnx.TensorProto.EXTERNAL
        del tensor.external_data[:]
        for key, value in (("location", _pick(rng, _TEXT)), ("offset", str(_pick(rng, _WHOLE))),
                           ("length", str(_pick(rng, _WHOLE)))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        return f"{tensor.name} points at external data"
    if choice == 10 and infos:
        info = _pick(rng, infos)
        info.type.tensor_type.elem_type = rng.randrange(0, 30)
        return f"elem_type of {info.name} = {info.type.tensor_type.elem_type}"
    if choice == 11 and infos:
        info = _pick(rng, infos)
        dim = info.type.tensor_type.shape.dim.add() if rng.random() < 0.3 else None
        dims = info.type.tensor_type.shape.dim
        if dims:
            (dim or dims[rng.randrange(len(dims))]).dim_value = _pick(rng, _WHOLE)
        return f"a dim of {info.name}"
    if choice == 12:
        opset = _pick(rng, model.opset_import)
        opset.version = _pick(rng, [0, 1, 3, 6, 7, 12, 30, 2 ** 40, -1])
        return f"opset {opset.domain or 'ai.onnx'} = {opset.version}"
    if choice == 13:
        model.ir_version = _pick(rng, [0, 1, 2, 3, 11, 12, 99, -1, 2 ** 40])
        return f"ir_version = {model.ir_version}"
    if choice == 14 and len(model.graph.node) > 1:
        index = rng.randrange(len(model.graph.node))
        if rng.random() < 0.5:
            del model.graph.node[index]
            return "a node removed"
        model.graph.node.append(model.graph.node[index])
        return "a node doubled"
    model.graph.output.append(_pick(rng, list(model.graph.output)))
    return "an output doubled"


def mutant(seed: int) -> tuple[bytes, str]:
    """A broken model file's bytes and what was done to make it, drawn from `seed`."""
    rng = random.Random(seed)
    base = _pick(rng, sorted(BASES))
    model = BASES[base]()
    how = rng.randrange(4)
    if how == 0:
        data = bytearray(model.SerializeToString())
        for _ in range(rng.randrange(1, 9)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data), f"{base}: bytes flipped"
    if how == 1:
        data = model.SerializeToString()
        return data[: rng.randrange(len(data))], f"{base}: truncated"
    done = [_field_mutation(model, rng) for _ in range(rng.randrange(1, 4))]
    return model.SerializeToString(), f"{base}: " + "; ".join(done)
