"""The model as boxes and arrows: every node (inside control-flow bodies too), the graph's
inputs and outputs, and, for a chosen set of expanded control-flow nodes, the arrows
between what is drawn.

Initializers are not drawn (a node's panel lists them). A tensor becomes one arrow per
reader from the node that writes it. A body (If's branches, a Loop's or Scan's body) is
drawn only while its node is expanded; a collapsed control-flow node then stands for
its bodies, so the outer tensors they read arrive at it.

Ids are stable across runs of the same file: a top-level node's index ("12"), a graph
input or output ("in:x", "out:y"), and below a control-flow node its id, the attribute
and the body's own id ("12/then_branch/0")."""

from __future__ import annotations

from typing import Iterator

CONTROL_FLOW = frozenset({"If", "Loop", "Scan"})


def display_name(node, index: int) -> str:
    """The node's name, or the one cost and diff give a node without a name."""
    return node.name or f"{node.op_type}_{index}"


def _bodies(node) -> list[tuple[str, object]]:
    found = []
    for attr in node.attribute:
        if attr.HasField("g"):
            found.append((attr.name, attr.g))
        for number, sub in enumerate(attr.graphs):
            found.append((f"{attr.name}[{number}]", sub))
    return found


def walk(graph, owner: str = "", prefix: str = "") -> Iterator[tuple[str, str, object, int, object]]:
    """(id, owner id, node, index, graph) for every node, depth first, bodies after their node."""
    for index, node in enumerate(graph.node):
        node_id = f"{prefix}{index}"
        yield node_id, owner, node, index, graph
        for attr, body in _bodies(node):
            yield from walk(body, node_id, f"{node_id}/{attr}/")


def read_structure(model) -> dict:
    """nodes: [{id, name, op_type, domain, kind, owner, body, inputs, outputs, bodies}], where
    kind is op, input or output; owner the id of the control-flow node whose body holds it
    ("" at the top) and body that body's prefix; bodies, on a control-flow node, its body
    prefixes. scopes: body prefix -> its initializers' names ("" for the top level)."""
    initializers = {t.name for t in model.graph.initializer}
    nodes: list[dict] = []
    scopes: dict[str, list[str]] = {"": sorted(initializers)}

    def values(graph, kind: str, owner: str, body: str, skip: set[str]) -> None:
        tag = "in" if kind == "input" else "out"
        for value in (graph.input if kind == "input" else graph.output):
            if value.name in skip:
                continue
            nodes.append({"id": f"{body}{tag}:{value.name}", "name": value.name,
                          "op_type": kind, "domain": "", "kind": kind, "owner": owner, "body": body,
                          "inputs": [value.name] if kind == "output" else [],
                          "outputs": [value.name] if kind == "input" else [], "bodies": []})

    values(model.graph, "input", "", "", initializers)
    for node_id, owner, node, index, _graph in walk(model.graph):
        body = node_id.rsplit("/", 1)[0] + "/" if owner else ""
        bodies = []
        for attr, sub in _bodies(node):
            prefix = f"{node_id}/{attr}/"
            bodies.append(prefix)
            scopes[prefix] = sorted(t.name for t in sub.initializer)
            values(sub, "input", node_id, prefix, set(scopes[prefix]))
            values(sub, "output", node_id, prefix, set())
        nodes.append({"id": node_id, "name": display_name(node, index), "op_type": node.op_type,
                      "domain": node.domain, "kind": "op", "owner": owner, "body": body,
                      "inputs": list(node.input), "outputs": [n for n in node.output if n], "bodies": bodies})
    values(model.graph, "output", "", "", set())
    return {"nodes": nodes, "scopes": scopes}


def _captured(structure: dict) -> dict[str, set[str]]:
    """control-flow node id -> the outer tensors its bodies (nested ones too) read."""
    by_body: dict[str, list[dict]] = {}
    for node in structure["nodes"]:
        if node["owner"]:
            by_body.setdefault(node["owner"], []).append(node)
    memo: dict[str, set[str]] = {}

    def reads(node_id: str) -> set[str]:
        if node_id not in memo:
            inner = by_body.get(node_id, [])
            made = {t for n in inner for t in n["outputs"]}
            local = {t for n in inner if n["body"] for t in structure["scopes"].get(n["body"], [])}
            wanted = {t for n in inner if n["kind"] != "input" for t in n["inputs"] if t}
            for n in inner:
                wanted |= reads(n["id"]) if n["bodies"] else set()
            memo[node_id] = wanted - made - local
        return memo[node_id]

    return {n["id"]: reads(n["id"]) for n in structure["nodes"] if n["bodies"]}


def visible(structure: dict, expanded: set[str]) -> list[dict]:
    """The nodes drawn when the control-flow nodes in `expanded` are open (and their owners)."""
    by_id = {n["id"]: n for n in structure["nodes"]}

    def shown(node: dict) -> bool:
        owner = node["owner"]
        while owner:
            if owner not in expanded:
                return False
            owner = by_id[owner]["owner"]
        return True

    return [n for n in structure["nodes"] if shown(n)]


def arrows(structure: dict, shown: list[dict], expanded: set[str]) -> list[dict]:
    """One arrow per (writer, reader) pair among the drawn nodes, with the tensors it carries;
    kind "body" joins an expanded control-flow node to the first nodes of each body."""
    captured = _captured(structure)
    writers: dict[str, dict[str, str]] = {}          # scope prefix -> tensor -> writer id
    for node in shown:
        for tensor in node["outputs"]:
            writers.setdefault(node["body"], {})[tensor] = node["id"]
    found: dict[tuple[str, str], dict] = {}

    def scopes_of(body: str) -> list[str]:
        chain = [body]
        while body:
            body = body.rstrip("/").rsplit("/", 2)[0] + "/" if body.count("/") > 2 else ""
            chain.append(body)
        return chain

    for node in shown:
        reads = [t for t in node["inputs"] if t]
        if node["bodies"] and node["id"] not in expanded:
            reads += sorted(captured.get(node["id"], ()))
        chain = scopes_of(node["body"])
        for tensor in reads:
            writer = next((writers[s][tensor] for s in chain if tensor in writers.get(s, {})), None)
            if writer is None or writer == node["id"]:
                continue
            arrow = found.setdefault((writer, node["id"]), {"tail": writer, "head": node["id"], "tensors": [],
                                                            "kind": "data"})
            if tensor not in arrow["tensors"]:
                arrow["tensors"].append(tensor)
    body_of = {n["id"]: n["body"] for n in shown}
    fed_inside = {a["head"] for a in found.values() if body_of[a["tail"]] == body_of[a["head"]]}
    for node in shown:
        if node["id"] not in expanded:
            continue
        for body in node["bodies"]:
            inner = [n for n in shown if n["body"] == body]
            entries = ([n for n in inner if n["kind"] == "input"]
                       or [n for n in inner if n["id"] not in fed_inside and n["op_type"] != "Constant"] or inner[:1])
            for first in entries:
                found.setdefault((node["id"], first["id"]), {"tail": node["id"], "head": first["id"], "tensors": [],
                                                             "kind": "body"})
    return list(found.values())


def search(nodes: list[dict], text: str) -> list[str]:
    """Ids of the nodes whose name or operator holds `text` (any case), then of those that
    read or write a tensor whose name holds it, each group in the nodes' order."""
    needle = text.strip().lower()
    if not needle:
        return []
    direct = [n["id"] for n in nodes if needle in n["name"].lower() or needle in n["op_type"].lower()]
    chosen = set(direct)
    by_tensor = [n["id"] for n in nodes if n["id"] not in chosen
                 and any(needle in t.lower() for t in n["inputs"] + n["outputs"])]
    return direct + by_tensor
