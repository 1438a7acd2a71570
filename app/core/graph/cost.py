"""What a model costs to run, per node and in all: MACs, FLOPs, parameters, the bytes of
the activations it writes, and an estimate of the activation memory alive at its peak.

Shapes come from onnx's own shape inference (`onnx.shape_inference.infer_shapes`, with
data propagation), then ONNX Runtime's symbolic shape inference where onnx's stops (see
app.core.graph.shapes), run on the model's structure without its weights, after the input
plan's concrete shapes replace the declared symbolic dims; the arithmetic per node comes
from the table in app.core.graph.formulas.

Why not onnx-tool: it installs, but it infers shapes with its own re-implementation of
every operator on the weights' *values* (it loads and executes the graph's constants in
numpy), so a large model costs its full weights in memory and time; it has its own
incomplete operator set (an unknown operator stops the whole count rather than leaving
one node uncounted); and it reads input shapes from its own argument format rather than
from ORTune's input plan, so the figures could not name the inputs they assume. onnx's
inference is the reference for the operator set, already a dependency, and works on the
weightless structure; the table of formulas is small and states its conventions.

Only the weights' data is left out: initializers under KEEP_BELOW bytes keep theirs,
because inference reads small constants (a Reshape's target shape, Slice bounds). How
An .ort file is counted on the graph it holds (app.core.model.ort_graph), which is the
graph after the optimisations its conversion applied (an NCHWc convolution counts the
channels its layout pads to the block, as ONNX Runtime runs it); the operators those optimisations
write that no inference follows get shapes through app.core.graph.stand_ins, and shapes
computed from constants are folded first (app.core.graph.folding). How
control-flow bodies (If, Loop, Scan) enter the totals: app.core.graph.control_flow. A node
that cannot be counted (an operator the table lacks, a shape not known) is listed with its
reason, and the totals are then a lower bound (`macs_is_lower_bound`)."""

from __future__ import annotations

from pathlib import Path

from app.core.graph.formulas import node_cost
from app.core.graph.shapes import fix_inputs, infer
from app.core.graph.folding import with_small_constants_folded
from app.core.graph.stand_ins import with_stand_ins
from app.core.graph.structure import display_name
from app.core.jobs.protocol import JobContext
from app.core.session.input_spec import FeedSpec

#: initializers whose message is smaller keep their data for shape inference
KEEP_BELOW = 4096
#: inference and folding alternate at most this many times more (each can settle an If)
FOLD_ROUNDS = 4
#: INT4, UINT4, FLOAT4E2M1: two values a byte
_PACKED_TYPES = {21, 22, 23}


def _itemsize(elem_type: int) -> float:
    import onnx
    if elem_type in _PACKED_TYPES:
        return 0.5
    try:
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type).itemsize
    except (KeyError, TypeError, ValueError):
        return 0


def plan_shapes(path: Path, model, spec: FeedSpec,
                free_dims: dict[str, int] | None = None) -> tuple[dict[str, list[int]], list[dict]]:
    """The input plan's concrete shape for each graph input, and what it says of them;
    `free_dims` (the session's free dimension overrides) fix those dims before the plan, as
    ORT fixes them in the session the measuring commands plan on."""
    from app.core.model.inspect import describe_value
    from app.core.session.graph_hints import read_hints
    from app.core.session.inputs import make_feeds

    initializers = {t.name for t in model.graph.initializer}
    inputs = [describe_value(v) for v in model.graph.input if v.name not in initializers]
    for item in inputs:
        if item.get("shape") is not None and free_dims:
            item["shape"] = [free_dims.get(d, d) if isinstance(d, str) else d for d in item["shape"]]
    _, info = make_feeds(inputs, spec, read_hints(path), budget=1 << 30)
    return info["shapes"], info["inputs"]


def _types(model, extra: dict[str, tuple]) -> tuple[dict[str, tuple], set[str]]:
    """name -> (dims or None, elem type) over every graph (`extra`: what the symbolic
    inference found where onnx's did not), and the initializers' names."""
    from app.core.graph.shapes import value_types
    from app.core.model.intake import iter_graphs

    types: dict[str, tuple] = {}
    weights: set[str] = set()
    for graph in iter_graphs(model.graph):
        types.update(value_types(list(graph.input) + list(graph.value_info) + list(graph.output)))
        types.update({name: found for name, found in extra.items() if types.get(name, (None, 0))[0] is None})
        for tensor in graph.initializer:
            types[tensor.name] = (list(tensor.dims), tensor.data_type)
            weights.add(tensor.name)
        for node in graph.node:
            if node.op_type == "Constant":
                for attr in node.attribute:
                    if attr.name == "value" and node.output:
                        types[node.output[0]] = (list(attr.t.dims), attr.t.data_type)
    return types, weights


def _attributes(node) -> dict:
    from onnx import helper
    values = {}
    for attr in node.attribute:
        if attr.type in (1, 2, 3, 6, 7):        # FLOAT, INT, STRING, FLOATS, INTS: what the formulas read
            values[attr.name] = helper.get_attribute_value(attr)
    return values


def _bytes(types: dict, name: str) -> int | None:
    dims, elem_type = types.get(name, (None, 0))
    if dims is None:
        return None
    count = 1
    for d in dims:
        count *= d
    return int(count * _itemsize(elem_type))


def node_row(node, index: int, graph_name: str, types: dict, weights: set[str]) -> dict:
    """What one node costs (`index`: its place in its graph, for a node without a name)."""
    ins = [types.get(n, (None, 0))[0] if n else None for n in node.input]
    outs = [types.get(n, (None, 0))[0] for n in node.output]
    cost = node_cost(node.op_type, ins, outs, _attributes(node))
    out_bytes = [_bytes(types, n) for n in node.output if n]
    params = 0
    for name in node.input:
        if name in weights and types[name][0] is not None:
            count = 1
            for d in types[name][0]:
                count *= d
            params += count
    return {
        "name": display_name(node, index), "op_type": node.op_type, "domain": node.domain,
        "graph": graph_name, "counted": isinstance(cost, tuple),
        "why_not": "" if isinstance(cost, tuple) else (
            "operator not in the table" if cost == "unknown" else "shapes not known"),
        "macs": cost[0] if isinstance(cost, tuple) else 0,
        "flops": cost[1] if isinstance(cost, tuple) else 0,
        "parameters": params,
        "activation_bytes": sum(b for b in out_bytes if b is not None),
        "outputs_known": None not in out_bytes,
    }


def node_costs(model, types: dict, weights: set[str]) -> list[dict]:
    """One entry per node, subgraphs included, depth first (ids as app.core.graph.structure
    gives them), with how often it runs and whether it is in the totals (see control_flow)."""
    from app.core.graph import control_flow
    from app.core.graph.structure import CONTROL_FLOW, walk

    rows, owners = [], {}
    for node_id, _owner, node, index, graph in walk(model.graph):
        rows.append({"id": node_id, **node_row(node, index, graph.name, types, weights)})
        if node.op_type in CONTROL_FLOW:
            owners[node_id] = (node, graph)
    control_flow.apply(rows, owners, types)
    return rows


def peak_activation_bytes(graph, types: dict, weights: set[str]) -> int:
    """The most activation bytes alive at once running the top-level graph in its order: a
    tensor lives from the node that writes it (or the start, for an input) until its last
    reader; the graph's outputs live to the end. Tensors of unknown size count as 0."""
    last_use: dict[str, int] = {}
    for index, node in enumerate(graph.node):
        for name in node.input:
            last_use[name] = index
    ends = len(graph.node)
    for value in graph.output:
        last_use[value.name] = ends
    live: dict[str, int] = {v.name: _bytes(types, v.name) or 0 for v in graph.input if v.name not in weights}
    peak = sum(live.values())
    for index, node in enumerate(graph.node):
        for name in node.output:
            if name:
                live[name] = _bytes(types, name) or 0
        peak = max(peak, sum(live.values()))
        for name in list(live):
            if last_use.get(name, -1) <= index:
                del live[name]
    return peak


def inferred_types(path: str | Path, spec: FeedSpec | None = None, ctx: JobContext | None = None,
                   free_dims: dict[str, int] | None = None) -> dict:
    """The model's structure with shapes inferred on the input plan's shapes: the inferred
    model, name -> (dims or None, elem type), the initializers' names, the plan's inputs and
    a note where inference gave up."""
    from app.core.model.intake import load_onnx, sniff
    from app.core.model.proto_scan import ScanError, load_structure

    ctx = ctx or JobContext()
    path = Path(path)
    if sniff(path) == "ort":
        from app.core.model.ort_graph import ort_to_onnx
        model = ort_to_onnx(path, keep_below=KEEP_BELOW)
    else:
        try:
            model = load_structure(path, keep_below=KEEP_BELOW)
        except (ScanError, OSError):
            model = load_onnx(path, weights=False)
    shapes, planned = plan_shapes(path, model, spec or FeedSpec(mode="zeros"), free_dims)
    ctx.check_cancel()
    fix_inputs(model, shapes)
    ctx.progress(0.3, "inferring shapes")
    standing = with_small_constants_folded(with_stand_ins(model))
    inferred, extra, note = infer(standing)
    ctx.check_cancel()
    for _ in range(FOLD_ROUNDS):                        # the Shapes of what inference found fold now
        again = with_small_constants_folded(inferred)
        if again is inferred:
            break
        inferred, extra, note = infer(again)
        ctx.check_cancel()
    types, weights = _types(inferred, extra)
    # the nodes counted are the model's own; only the shapes come from the stand-ins
    return {"model": inferred if standing is model else model, "types": types, "weights": weights,
            "inputs": planned, "note": note}


def model_cost(path: str | Path, spec: FeedSpec | None = None, ctx: JobContext | None = None,
               free_dims: dict[str, int] | None = None) -> dict:
    """The cost of the model at `path` on the input plan's shapes (see the module docstring)."""
    ctx = ctx or JobContext()
    found = inferred_types(path, spec, ctx, free_dims)
    inferred, types, weights = found["model"], found["types"], found["weights"]
    nodes = node_costs(inferred, types, weights)
    not_counted: dict[str, int] = {}
    for row in nodes:
        if not row["counted"]:
            key = f"{row['op_type']} ({row['why_not']})"
            not_counted[key] = not_counted.get(key, 0) + 1
    missing = [{"name": r["name"], "op_type": r["op_type"], "id": r["id"], "why": r["why_not"]}
               for r in nodes if not r["counted"] and r["in_total"]]
    missing += [{"name": r["name"], "op_type": r["op_type"], "id": r["id"], "why": r["note"]}
                for r in nodes if r.get("trip_count_known") is False]
    notes = [{"name": r["name"], "op_type": r["op_type"], "id": r["id"], "note": r["note"]}
             for r in nodes if r.get("note")]
    counted = [r for r in nodes if r["in_total"]]
    ctx.progress(1.0, "done")
    return {
        "macs": sum(r["macs"] * r["times"] for r in counted),
        "flops": sum(r["flops"] * r["times"] for r in counted),
        "macs_is_lower_bound": bool(missing),
        "not_counted_nodes": missing,
        "control_flow": notes,
        "activation_bytes": sum(r["activation_bytes"] for r in nodes),
        "peak_activation_bytes": peak_activation_bytes(inferred.graph, types, weights),
        "counted_nodes": sum(r["counted"] for r in nodes),
        "not_counted": not_counted,
        "inference_note": found["note"],
        "inputs": found["inputs"],
        "nodes": nodes,
    }


def count_text(value: float) -> str:
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= size:
            return f"{value / size:.2f} {unit}"
    return f"{value:.0f} "


def totals_text(summary: dict) -> str:
    """One line of a summary's cost totals (or why there are none), for the window and the CLI."""
    from app.core.formatting import human_bytes

    if summary.get("macs") is None:
        return f"not counted: {summary.get('cost', {}).get('error', 'no shapes')}"
    cost = summary["cost"]
    shapes = ", ".join(f"{i['name']} {i['shape']}" for i in cost.get("inputs", []))
    text = ("at least " if cost.get("macs_is_lower_bound") else "") + (f"{count_text(summary['macs'])}MACs, {count_text(summary['flops'])}FLOPs, activations "
            f"{human_bytes(summary['activation_bytes'])} (peak ~{human_bytes(summary['peak_activation_bytes'])})")
    if shapes:
        text += f" for {shapes}"
    if cost.get("not_counted"):
        text += f"; not counted: {', '.join(f'{k} x{n}' for k, n in cost['not_counted'].items())}"
    return text
