"""The float16 converter's block lists, made to do what they say.

Block lists address nodes by name, so unnamed nodes get one (the same names in every
conversion of a model, and in `ortune drift`, which reports them). And a node kept in
float32 should hand float32 to a neighbour kept in float32 too: the converter puts a Cast
to float16 after every kept node and a Cast back before every kept node, and removes such
a pair only where the value does not come from a Constant node — so a weight made by a
Constant and kept because float16 cannot hold it (a BatchNormalization variance of 1e8)
still passes through float16 and reaches its kept consumer as infinity."""

from __future__ import annotations

import re

FLOAT, FLOAT16 = 1, 10
#: the names the converter gives the casts it puts after and before the nodes it keeps
_AFTER_KEPT = re.compile(r"_output_cast\d+$")
_BEFORE_KEPT = re.compile(r"_input_cast\d+$")


def name_unnamed_nodes(model) -> None:
    """Give every unnamed node of every graph a name ('{op_type}_{n}'), in graph order."""
    from app.core.model.intake import iter_graphs

    taken = {n.name for g in iter_graphs(model.graph) for n in g.node if n.name}
    counter = 0
    for graph in iter_graphs(model.graph):
        for node in graph.node:
            if not node.name:
                while f"{node.op_type}_{counter}" in taken:
                    counter += 1
                node.name = f"{node.op_type}_{counter}"
                taken.add(node.name)


def _cast_to(node) -> int | None:
    return next((a.i for a in node.attribute if a.name == "to"), None) if node.op_type == "Cast" else None


def join_kept_neighbours(graph) -> int:
    """Connect kept nodes directly where the converter routes a value from one to the next
    through float16 and back (its own casts, known by their names); returns how many casts
    went. A float16 cast that something else still reads stays; one that nobody reads goes,
    and the kept node's output takes back the value's name (so drift still finds it)."""
    producer = {out: node for node in graph.node for out in node.output}
    outputs = {o.name for o in graph.output}
    bypass = {}                  # a cast-back's output -> the float32 value before the cast to float16
    for node in graph.node:
        first = producer.get(node.input[0]) if node.input else None
        if (_cast_to(node) == FLOAT and _BEFORE_KEPT.search(node.name) and node.output[0] not in outputs
                and first is not None and _cast_to(first) == FLOAT16 and _AFTER_KEPT.search(first.name)):
            bypass[node.output[0]] = first.input[0]
    if not bypass:
        return 0
    for node in graph.node:
        node.input[:] = [bypass.get(name, name) for name in node.input]
    gone = [n for n in graph.node if n.output and n.output[0] in bypass]
    read = {name for node in graph.node if not (node.output and node.output[0] in bypass)
            for name in node.input} | outputs
    unread = [n for n in graph.node if _cast_to(n) == FLOAT16 and _AFTER_KEPT.search(n.name)
              and n.output[0] not in read]
    renames = {n.input[0]: n.output[0] for n in unread}
    for node in gone + unread:
        graph.node.remove(node)
    for node in graph.node:
        node.input[:] = [renames.get(name, name) for name in node.input]
        node.output[:] = [renames.get(name, name) for name in node.output]
    infos = {info.name: info for info in graph.value_info}
    for old, new in renames.items():
        if new in infos:
            graph.value_info.remove(infos[new])
        if old in infos:
            infos[old].name = new
    return len(gone) + len(unread)
