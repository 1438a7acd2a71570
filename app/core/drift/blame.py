"""Which node to keep in float32 next, from a drift result: the repair loop's choice.

The error that first carries a tensor past the tolerance was added somewhere on the way
to it. Each tensor's share is the noise its node added: its relative noise power
(10^(-SQNR/10)) less the worst its compared inputs already carried, which is scale-free,
so tensors of any size compare. Among the tensors up to the first drift (or the outputs,
where no tensor inside drifts), the one whose node added the most is blamed; a new NaN/Inf
outweighs any noise.

What is kept for a blamed tensor: the nodes that made it since the last compared tensors
(a quantized variant computes a MatMul and its Relu as one, so only the Relu's output is
compared), and where a QDQ variant quantizes the tensor, its readers too: the quantizer puts
a Q/DQ pair on any tensor whose maker or one of whose readers it quantizes, so keeping the
makers alone leaves the tensor as it was. Where all those are kept already and the tensor
still arrives changed, the error came from outside them: through a quantized input, which a
QDQ variant dequantizes on the way into a node it left in float32, so that input's maker and
other readers are kept next; else its readers (a float16 variant casts the kept value back
for them)."""

from __future__ import annotations

import math

from app.core.drift.expose import producers


def _noise(sqnr_db: float | None) -> float:
    return 0.0 if sqnr_db is None else 10 ** (-sqnr_db / 10)


def added_noise(row: dict) -> float:
    """The relative noise power this tensor's node added to what its inputs carried."""
    if row["nonfinite"] > row["source_nonfinite"]:
        return math.inf
    before = None if row["sqnr_loss_db"] is None or row["sqnr_db"] is None else row["sqnr_db"] + row["sqnr_loss_db"]
    return _noise(row["sqnr_db"]) - _noise(before)


def _in_graph_order(model, names) -> list[str]:
    order = {node.name: i for i, node in enumerate(model.graph.node)}
    return sorted(names, key=order.get)


def _makers(model, tensor: str, compared: set[str]) -> list[str]:
    """The nodes that made `tensor` since the last compared tensors (Constant nodes aside: a
    weight is kept with the node that reads it), in graph order."""
    producer = producers(model)
    found, todo = [], [tensor]
    while todo:
        node = producer.get(todo.pop())
        if node is None or node.name in found or node.op_type == "Constant" and node.output[0] != tensor:
            continue
        found.append(node.name)
        todo.extend(name for name in node.input if name and name not in compared)
    return _in_graph_order(model, found)


def _readers(model, tensor: str) -> list[str]:
    return [node.name for node in model.graph.node if tensor in node.input]


def _quantized_inputs(model, makers: list[str], quantized: set[str]) -> list[str]:
    """The quantized tensors the `makers` read (a QDQ variant dequantizes them on the way in)."""
    return list(dict.fromkeys(name for node in model.graph.node if node.name in makers
                              for name in node.input if name in quantized))


def _kept_yet_changed(model, row: dict, makers: list[str], quantized: set[str], wanted) -> tuple[list[str], str]:
    """What to keep when every maker of `row`'s tensor (and, were it quantized, every reader)
    is kept already, and why: the makers and other readers of the quantized inputs the makers
    read; without any, the tensor's readers (float16 casts the value back for them)."""
    held = f"{', '.join(makers)} kept already, yet {row['name']} still arrives changed ({_share(row)})"
    inputs = _quantized_inputs(model, makers, quantized)
    made_by = producers(model)
    names = [name for tensor in inputs
             for name in ([made_by[tensor].name] if tensor in made_by else []) + _readers(model, tensor)]
    new = _in_graph_order(model, wanted(names))
    if new:
        return new, f"{held}: it reads {', '.join(inputs)} quantized"
    return wanted(_readers(model, row["name"])), held


def next_to_keep(result: dict, model, kept: list[str], changes: frozenset[str] | None = None) -> dict | None:
    """{nodes, tensor, why}: what to keep next for the drift `result` of a variant of
    `model` (its unnamed nodes named as drift names them), given the nodes already `kept`;
    None when every blamable node is kept already. `changes`: the operator types the
    conversion changes (None: all of them): keeping a node it never touches changes nothing,
    so such a node is not blamed, and the drift is looked for further up."""
    rows = result["tensors"]
    first = [row["index"] for row in (result["first_drift"], result["first_nonfinite"]) if row is not None]
    limit = min(first) if first else len(rows) - 1
    compared = {row["name"] for row in rows}
    suspects = sorted((row for row in rows[:limit + 1] if added_noise(row) > 0), key=added_noise, reverse=True)
    op_of = {node.name: node.op_type for node in model.graph.node}
    touched = (lambda name: True) if changes is None else (lambda name: op_of.get(name) in changes)
    quantized = {row["name"] for row in rows if row.get("quantized")}

    def wanted(names: list[str]) -> list[str]:
        return [name for name in dict.fromkeys(names) if name not in kept and touched(name)]

    for row in suspects:
        makers = [name for name in _makers(model, row["name"], compared) if touched(name)]
        if not makers:
            continue
        # a QDQ variant quantizes a tensor whose maker or any reader it quantizes: all are kept at once
        new = wanted(makers + (_readers(model, row["name"]) if row.get("quantized") else []))
        why = f"its node added the most error up to the first drift ({_share(row)})"
        if not new:
            new, why = _kept_yet_changed(model, row, makers, quantized, wanted)
        if new:
            return {"nodes": new, "tensor": row["name"], "why": why}
    return None


def _share(row: dict) -> str:
    if row["nonfinite"] > row["source_nonfinite"]:
        return f"{row['nonfinite'] - row['source_nonfinite']} new NaN/Inf"
    lost = "" if row["sqnr_loss_db"] is None else f", {row['sqnr_loss_db']:.1f} dB lost there"
    return f"SQNR {row['sqnr_db']:.1f} dB{lost}"
