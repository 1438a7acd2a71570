"""How control flow enters a model's cost: an If counts its larger branch (the other is
listed, left out of the totals); a Loop or a Scan counts its body once per iteration, times
the trip count where it is known (a Loop's constant M, a Scan's sequence length), else once,
and then the total is a lower bound."""

from __future__ import annotations


def _constant_value(graph, name: str):
    """The value of a small constant `name` of `graph` (initializer or Constant node), or None."""
    from onnx import numpy_helper

    for tensor in graph.initializer:
        if tensor.name == name and (tensor.raw_data or tensor.int64_data or tensor.int32_data):
            return numpy_helper.to_array(tensor)
    for node in graph.node:
        if node.op_type == "Constant" and node.output and node.output[0] == name:
            for attr in node.attribute:
                if attr.name == "value":
                    return numpy_helper.to_array(attr.t)
    return None


def trip_count(node, graph, types: dict) -> int | None:
    """How many times a Loop or Scan runs its body, where the graph says."""
    attrs = {a.name: a for a in node.attribute}
    if node.op_type == "Loop":
        if not node.input or not node.input[0]:
            return None
        value = _constant_value(graph, node.input[0])
        return int(value.reshape(-1)[0]) if value is not None and value.size == 1 else None
    scans = attrs["num_scan_inputs"].i if "num_scan_inputs" in attrs else 0
    if not scans:
        return None
    axes = list(attrs["scan_input_axes"].ints) if "scan_input_axes" in attrs else [0] * scans
    first = node.input[len(node.input) - scans]
    dims = types.get(first, (None, 0))[0]
    axis = axes[0] if axes else 0
    return dims[axis] if dims is not None and -len(dims) <= axis < len(dims) else None


def apply(rows: list[dict], owners: dict[str, tuple[object, object]], types: dict) -> None:
    """Set each row's `times` (how often it runs) and `in_total`, and on control-flow rows a
    `note`, in place; `owners`: control-flow node id -> (node, the graph holding it)."""
    by_id = {row["id"]: row for row in rows}
    for row in rows:
        row.setdefault("times", 1)
        row.setdefault("in_total", True)
    for node_id, (node, graph) in owners.items():        # depth first: outer nodes come first
        row = by_id[node_id]
        inner = [r for r in rows if r["id"].startswith(f"{node_id}/")]
        if node.op_type == "If":
            branches: dict[str, list[dict]] = {}
            for r in inner:
                branches.setdefault(r["id"][len(node_id) + 1:].split("/", 1)[0], []).append(r)
            if len(branches) < 2:
                continue
            totals = {name: sum(r["macs"] + r["flops"] for r in members) for name, members in branches.items()}
            larger = max(totals, key=totals.get)
            for name, members in branches.items():
                for r in members:
                    if name != larger:
                        r["in_total"] = False
            row["note"] = f"the larger branch ({larger}) counted, the other left out"
        elif node.op_type in ("Loop", "Scan"):
            count = trip_count(node, graph, types)
            for r in inner:
                r["times"] *= count or 1
            row["note"] = (f"its body counted {count:,} times (the trip count)" if count is not None
                           else "its body counted once: the trip count is not known")
            row["trip_count_known"] = count is not None
