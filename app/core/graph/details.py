"""What the node panel shows of each node: operator, domain, attributes, the inputs and
outputs with their inferred dtypes and shapes (on the input plan's shapes), the
initializers it reads (shape, dtype, size, and min/max/mean of the values) and its cost.

Shapes come from the same inference as the cost (app.core.graph.cost.inferred_types);
the values of the weights are read once, tensor by tensor, for their statistics.

Each node's details travel as one JSON text, decoded when the node is shown
(`node_facts`): 20,000 nodes' details as Python objects would hold the window's
interpreter for a second as they arrive. The FLOPs, which an overlay needs for every
node at once, come beside them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from app.core.jobs.protocol import JobContext
from app.core.session.input_spec import FeedSpec


def attribute_text(attr) -> str:
    """An attribute's value as one line (a tensor by its dtype, shape and a hash, a body by its
    size): a Constant's weights turned to float16 show as a dtype change, not only a new hash."""
    import hashlib

    from onnx import helper

    from app.core.model.value_type import element_name
    if attr.HasField("g") or attr.graphs:
        return f"graph ({len(attr.g.node)} nodes)" if attr.HasField("g") else f"{len(attr.graphs)} graphs"
    value = helper.get_attribute_value(attr)
    if hasattr(value, "dims"):                          # a TensorProto attribute
        return (f"tensor {element_name(value.data_type)} {list(value.dims)} "
                f"#{hashlib.sha256(value.SerializeToString()).hexdigest()[:12]}")
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return repr(value)


def value_stats(values: np.ndarray) -> dict:
    """min, max and mean of a tensor's values (None for an empty or non-numeric one)."""
    if values.size == 0 or not (np.issubdtype(values.dtype, np.number) or values.dtype == np.bool_):
        return {"min": None, "max": None, "mean": None}
    if not np.issubdtype(values.dtype, np.number):
        values = values.astype(np.uint8)
    wide = values.astype(np.float64, copy=False) if values.dtype.kind == "f" else values
    return {"min": float(np.min(wide)), "max": float(np.max(wide)), "mean": float(np.mean(wide, dtype=np.float64))}


def initializer_facts(path: Path, ctx: JobContext) -> dict[str, dict]:
    """name -> {dtype, shape, bytes, min, max, mean} for every initializer, subgraphs included
    (the external data read from the model's own folder only)."""
    from onnx import numpy_helper

    from app.core.model.value_type import element_name as _dtype_name
    from app.core.model.intake import check_external_data, iter_graphs, load_onnx

    model = load_onnx(path, weights=True)
    check_external_data(path, model)
    facts = {}
    for graph in iter_graphs(model.graph):
        for tensor in graph.initializer:
            ctx.check_cancel()
            row = {"dtype": _dtype_name(tensor.data_type), "shape": list(tensor.dims)}
            try:
                values = numpy_helper.to_array(tensor, base_dir=str(path.resolve().parent))
            except (ValueError, TypeError, OSError, KeyError) as exc:
                row.update(bytes=None, min=None, max=None, mean=None, note=f"values not read: {str(exc)[:120]}")
            else:
                row.update(bytes=int(values.nbytes), **value_stats(values))
            facts[tensor.name] = row
    return facts


def _described(model) -> dict[str, dict]:
    from app.core.model.value_type import describe_value, element_name as _dtype_name
    from app.core.model.intake import iter_graphs

    found = {}
    for graph in iter_graphs(model.graph):
        for value in list(graph.input) + list(graph.value_info) + list(graph.output):
            found[value.name] = describe_value(value)
        for tensor in graph.initializer:
            found[tensor.name] = {"name": tensor.name, "dtype": _dtype_name(tensor.data_type),
                                  "shape": list(tensor.dims)}
    return found


def node_facts(details: dict, node_id: str) -> dict | None:
    """{op_type, domain, attributes, inputs, outputs, initializers, cost} of one node."""
    text = details["nodes"].get(node_id)
    return None if text is None else json.loads(text)


def node_details(path: str | Path, spec: FeedSpec | None = None, ctx: JobContext | None = None) -> dict:
    """nodes: id -> its facts as JSON text (see `node_facts`) for every node (ids as
    app.core.graph.structure gives them); flops: id -> FLOPs of the counted nodes; the plan's
    inputs and the inference note."""
    from app.core.graph.cost import inferred_types, node_row
    from app.core.graph.structure import walk

    ctx = ctx or JobContext()
    path = Path(path)
    found = inferred_types(path, spec, ctx)
    types, weights = found["types"], found["weights"]
    ctx.progress(0.5, "reading the weights")
    weight_facts = initializer_facts(path, ctx)
    described = _described(found["model"])
    nodes, flops = {}, {}
    for node_id, _owner, node, index, graph in walk(found["model"].graph):
        cost = node_row(node, index, graph.name, types, weights)
        if cost["counted"]:
            flops[node_id] = cost["flops"]
        nodes[node_id] = json.dumps({
            "op_type": node.op_type, "domain": node.domain or "ai.onnx",
            "attributes": {a.name: attribute_text(a) for a in node.attribute},
            "inputs": [described.get(n, {"name": n, "dtype": None, "shape": None}) for n in node.input if n],
            "outputs": [described.get(n, {"name": n, "dtype": None, "shape": None}) for n in node.output if n],
            "initializers": [{"name": n, **weight_facts[n]} for n in node.input if n in weight_facts],
            "cost": {k: cost[k] for k in ("macs", "flops", "parameters", "activation_bytes", "counted", "why_not")},
        })
    return {"nodes": nodes, "flops": flops, "inputs": found["inputs"], "inference_note": found["note"]}
