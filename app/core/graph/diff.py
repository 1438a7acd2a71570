"""How two models differ, node by node: which nodes one has that the other lacks, and for
those both have, what changed (operator, domain, attributes, the tensors wired in and out,
and the initializers they read: dtype, shape and, where weights are read, a hash of the
values).

Nodes are matched by name first (a name both graphs hold exactly once), then by
structure: the same operator writing the same output tensors, then the same operator
reading the same input tensors, then any operator writing the same tensors, and last the same operator at the same place among the
still unmatched nodes of its type (graph order). Converters keep names and tensor names,
so a variant's inserted Casts show as added and everything else lines up."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from app.core.jobs.protocol import JobContext


def _load(path: Path, weights: bool):
    from app.core.model.intake import admit
    return admit(path, weights=weights, onnx_only="diff compares the graphs of .onnx models").model


def _attribute_text(attr) -> str:
    from onnx import helper
    if attr.HasField("g") or attr.graphs:
        return f"graph ({len(attr.g.node)} nodes)" if attr.HasField("g") else f"{len(attr.graphs)} graphs"
    value = helper.get_attribute_value(attr)
    if hasattr(value, "dims"):                          # a TensorProto attribute
        return f"tensor {list(value.dims)} #{hashlib.sha256(value.SerializeToString()).hexdigest()[:12]}"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return repr(value)


def _tensor_facts(tensor, weights: bool) -> dict:
    from onnx import helper
    facts = {"dtype": helper.tensor_dtype_to_string(tensor.data_type).replace("TensorProto.", "").lower(),
             "shape": list(tensor.dims)}
    if weights:
        digest = hashlib.sha256()
        for field in ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
            data = getattr(tensor, field)
            digest.update(data if isinstance(data, bytes) else repr(list(data)).encode())
        digest.update(repr([(e.key, e.value) for e in tensor.external_data]).encode())
        facts["hash"] = digest.hexdigest()[:16]
    return facts


def _match(nodes_a: list, nodes_b: list) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Pairs of node indices (a, b), and the indices left in each."""
    left_a, left_b = set(range(len(nodes_a))), set(range(len(nodes_b)))
    pairs: list[tuple[int, int]] = []

    def pair_by(key) -> None:
        keys_a = Counter(key(nodes_a[i]) for i in left_a)
        keys_b = Counter(key(nodes_b[j]) for j in left_b)
        where_b = {key(nodes_b[j]): j for j in left_b if keys_b[key(nodes_b[j])] == 1}
        for i in sorted(left_a):
            k = key(nodes_a[i])
            if k is not None and keys_a[k] == 1 and k in where_b:
                pairs.append((i, where_b[k]))
                left_a.discard(i)
                left_b.discard(where_b[k])

    pair_by(lambda n: n.name or None)
    pair_by(lambda n: (n.domain, n.op_type, tuple(n.output)))
    pair_by(lambda n: (n.domain, n.op_type, tuple(n.input)))
    pair_by(lambda n: tuple(n.output) or None)          # same tensors written: its operator changed
    by_type_b: dict[tuple, list[int]] = {}
    for j in sorted(left_b):
        by_type_b.setdefault((nodes_b[j].domain, nodes_b[j].op_type), []).append(j)
    for i in sorted(left_a):
        queue = by_type_b.get((nodes_a[i].domain, nodes_a[i].op_type))
        if queue:
            j = queue.pop(0)
            pairs.append((i, j))
            left_a.discard(i)
            left_b.discard(j)
    return sorted(pairs), sorted(left_a), sorted(left_b)


def _node_changes(a, b, inits_a: dict, inits_b: dict) -> list[dict]:
    changes = []
    for what in ("op_type", "domain"):
        if getattr(a, what) != getattr(b, what):
            changes.append({"what": what, "a": getattr(a, what), "b": getattr(b, what)})
    attrs_a = {x.name: _attribute_text(x) for x in a.attribute}
    attrs_b = {x.name: _attribute_text(x) for x in b.attribute}
    for name in sorted(set(attrs_a) | set(attrs_b)):
        if attrs_a.get(name) != attrs_b.get(name):
            changes.append({"what": "attribute", "name": name, "a": attrs_a.get(name), "b": attrs_b.get(name)})
    for what in ("input", "output"):
        wired_a, wired_b = list(getattr(a, what)), list(getattr(b, what))
        if wired_a != wired_b:
            changes.append({"what": f"{what}s", "a": wired_a, "b": wired_b})
    for slot, (name_a, name_b) in enumerate(zip(a.input, b.input)):
        facts_a, facts_b = inits_a.get(name_a), inits_b.get(name_b)
        if (facts_a or facts_b) and facts_a != facts_b:
            changes.append({"what": "initializer", "slot": slot, "name": name_b or name_a, "a": facts_a, "b": facts_b})
    return changes


def _describe(node, index: int) -> dict:
    return {"name": node.name or f"{node.op_type}_{index}", "op_type": node.op_type, "domain": node.domain}


def _io(values) -> dict:
    from app.core.model.inspect import describe_value
    return {v.name: describe_value(v) for v in values}


def diff_models(path_a: str | Path, path_b: str | Path, weights: bool = True,
                ctx: JobContext | None = None) -> dict:
    """added (in B only), removed (in A only) and changed nodes of the top-level graphs,
    and the graph inputs and outputs whose dtype or shape changed."""
    ctx = ctx or JobContext()
    a, b = _load(Path(path_a), weights), _load(Path(path_b), weights)
    ctx.progress(0.5, "matching nodes")
    inits_a = {t.name: _tensor_facts(t, weights) for t in a.graph.initializer}
    inits_b = {t.name: _tensor_facts(t, weights) for t in b.graph.initializer}
    nodes_a, nodes_b = list(a.graph.node), list(b.graph.node)
    pairs, only_a, only_b = _match(nodes_a, nodes_b)
    changed = []
    for i, j in pairs:
        changes = _node_changes(nodes_a[i], nodes_b[j], inits_a, inits_b)
        if changes:
            changed.append({**_describe(nodes_b[j], j), "a_name": _describe(nodes_a[i], i)["name"],
                            "changes": changes})
    io_changes = []
    for kind, values_a, values_b in (("input", a.graph.input, b.graph.input), ("output", a.graph.output, b.graph.output)):
        io_a, io_b = _io(values_a), _io(values_b)
        for name in sorted(set(io_a) | set(io_b)):
            if name not in inits_a and name not in inits_b and io_a.get(name) != io_b.get(name):
                io_changes.append({"kind": kind, "name": name, "a": io_a.get(name), "b": io_b.get(name)})
    ctx.progress(1.0, "done")
    return {
        "a": str(Path(path_a).resolve()), "b": str(Path(path_b).resolve()), "values_compared": weights,
        "matched": len(pairs),
        "added": [_describe(nodes_b[j], j) for j in only_b],
        "removed": [_describe(nodes_a[i], i) for i in only_a],
        "changed": changed,
        "graph_io": io_changes,
    }
