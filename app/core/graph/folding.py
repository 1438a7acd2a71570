"""Small constants folded, for shape inference only: a node of ONNX's own operators whose
inputs are all small constants (initializers that kept their data, Constant nodes, what an
earlier fold gave) is computed once with onnx's reference evaluator and becomes a Constant.

PyTorch's exports compute many shapes and pads from constants (a Pad's pads from a
ConstantOfShape, a Concat and a Reshape of constants); onnx's data propagation follows only
some of those operators, and the symbolic inference stops where such a chain stays unknown
(an If's branches then disagree on ranks). Folding them gives both the values. A Shape or
Size of a tensor whose shape is declared (the input plan's) folds too, and an If whose
condition folds is, for inference, the branch it takes. The cost is
still counted on the model's own nodes: only the shapes come from the folded copy."""

from __future__ import annotations

#: the most elements a folded input or result may have (shape arithmetic is small)
MOST_ELEMENTS = 1 << 14
_NOT_FOLDED = {"If", "Loop", "Scan", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
               "Multinomial", "Bernoulli", "Constant"}


def _values(graph, known: dict) -> None:
    """The small constants `graph` holds, added to `known` (name -> array)."""
    from onnx import numpy_helper
    for tensor in graph.initializer:
        if tensor.raw_data or tensor.int64_data or tensor.int32_data or tensor.float_data:
            try:
                array = numpy_helper.to_array(tensor)
            except (ValueError, TypeError):
                continue
            if array.size <= MOST_ELEMENTS:
                known[tensor.name] = array


def _constant_value(node):
    from onnx import numpy_helper
    for attribute in node.attribute:
        if attribute.name == "value" and attribute.HasField("t"):
            try:
                return numpy_helper.to_array(attribute.t)
            except (ValueError, TypeError):
                return None
    return None


def _static_shapes(graph, shapes: dict) -> dict:
    """`shapes` and the concrete shapes `graph` declares (inputs, value_info, initializers)."""
    from app.core.graph.shapes import concrete

    shapes = dict(shapes)
    for value in list(graph.input) + list(graph.value_info):
        dims = concrete(value.type)[0]
        if dims is not None:
            shapes[value.name] = dims
    shapes.update({t.name: list(t.dims) for t in graph.initializer})
    return shapes


def _shape_of(node, shapes: dict, known: dict):
    """The value of a Shape or Size node of a tensor whose shape is known, else None."""
    import numpy as np

    name = node.input[0] if node.input else ""
    dims = list(known[name].shape) if name in known else shapes.get(name)
    if dims is None:
        return None
    if node.op_type == "Size":
        return np.array(int(np.prod(dims)), dtype=np.int64)
    attributes = {a.name: a.i for a in node.attribute}
    start, end = attributes.get("start", 0), attributes.get("end", len(dims))
    return np.array(dims[start:end], dtype=np.int64)


def _branch(node, known: dict) -> list | None:
    """An If whose condition is known, as its taken branch's nodes writing the If's outputs."""
    from onnx import helper

    condition = known.get(node.input[0]) if node.input else None
    if condition is None or getattr(condition, "size", 0) != 1:
        return None
    taken = "then_branch" if bool(condition.reshape(-1)[0]) else "else_branch"
    body = next((a.g for a in node.attribute if a.name == taken), None)
    if body is None or len(body.output) != len(node.output):
        return None
    constants = [helper.make_node("Constant", [], [t.name], value=t) for t in body.initializer]
    return constants + list(body.node) + [helper.make_node("Identity", [inner.name], [outer])
                                          for inner, outer in zip(body.output, node.output) if outer]


def _alone(node, names: list[str], opsets: dict[str, int]):
    """`node` as a model of its own, under the model's opsets (an operator's meaning can
    change between them: Unsqueeze's axes became an input in opset 13)."""
    import onnx
    from onnx import helper

    graph = helper.make_graph([node], "fold", [helper.make_value_info(n, onnx.TypeProto()) for n in names],
                              [helper.make_value_info(node.output[0], onnx.TypeProto())])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()])


def _fold_graph(graph, known: dict, shapes: dict, opsets: dict[str, int]) -> int:
    """Fold `graph`'s foldable nodes in place (bodies too, seeing this graph's values), and
    put an If whose condition folds to a constant as its taken branch; returns how many
    nodes changed."""
    import numpy as np
    from onnx import helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    known = dict(known)
    _values(graph, known)
    shapes = _static_shapes(graph, shapes)
    folded, nodes = 0, []
    for node in graph.node:
        nodes.append(node)
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            value = _constant_value(node)
            if value is not None and value.size <= MOST_ELEMENTS and node.output:
                known[node.output[0]] = value
            continue
        for attribute in node.attribute:
            for body in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                folded += _fold_graph(body, known, shapes, opsets)
        if node.op_type == "If" and node.domain in ("", "ai.onnx"):
            taken = _branch(node, known)
            if taken is not None:
                nodes[-1:] = taken
                folded += 1
            continue
        names = [name for name in node.input if name]
        if node.domain not in ("", "ai.onnx") or node.op_type in _NOT_FOLDED or len(node.output) != 1:
            continue
        if node.op_type in ("Shape", "Size"):
            result = _shape_of(node, shapes, known)
        elif not names or any(name not in known for name in names):
            continue
        else:
            try:
                result = np.asarray(ReferenceEvaluator(_alone(node, names, opsets)).run(
                    None, {n: known[n] for n in names})[0])
            except Exception:  # an operator the evaluator lacks or refuses: left to inference
                continue
        if result is None or getattr(result, "size", MOST_ELEMENTS + 1) > MOST_ELEMENTS:
            continue
        known[node.output[0]] = result
        nodes[-1] = helper.make_node("Constant", [], [node.output[0]], name=node.name,
                                     value=numpy_helper.from_array(result, node.output[0]))
        folded += 1
    if folded:
        copies = []
        for node in nodes:
            copies.append(type(node)())
            copies[-1].CopyFrom(node)
        del graph.node[:]
        graph.node.extend(copies)
    return folded


def with_small_constants_folded(model):
    """A copy of `model` with its small constant computations folded, or `model` itself
    when there is none to fold."""
    copy = type(model)()
    copy.CopyFrom(model)
    opsets = {(o.domain if o.domain != "ai.onnx" else ""): o.version for o in model.opset_import}
    return copy if _fold_graph(copy.graph, {}, {}, opsets) else model
