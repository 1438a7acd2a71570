"""Which node of the model each node of ONNX Runtime's optimised graph stands for.

A profile or a placement of an optimised session names the nodes ORT ran, and ORT's
optimiser fuses, rewrites and removes nodes. This traces such a name back to the drawn
(source) node it came from, and says of the source nodes it did not run whether ORT
fused them into another node or removed them:

- a node ORT kept under its own name, FusedConv (Conv + BatchNormalization + Relu at the
  'extended' level) included, is that node;
- a node the layout transformer rewrote is named after the tensor it writes plus "_nchwc".
  When the nodes after a Conv were fused into it, that tensor is the last fused node's
  output (Conv → BatchNormalization → Relu writes the Relu's tensor), so the name is walked
  back through the fusable nodes to the node of the event's own operator: the Conv;
- a fusion named "<kept>/<Name>Fusion/" is the node it kept;
- nodes ORT inserted (layout reorders, "..._token_N") stand for no source node.

A source node that ran under no name is "fused" into the timed node its data comes from
when it is of a kind ORT folds into the node before it (normalisation, activations, a
residual Add), else "removed" (constant folding, Identity and Dropout elimination …)."""

from __future__ import annotations

import re

_FUSED = re.compile(r"^(?P<kept>.+)/[A-Za-z0-9]*Fusion/?$")
_LAYOUT = "_nchwc"
#: the source operator a fused operator of ORT's stands for
BASE_OP = {"FusedConv": "Conv", "NhwcFusedConv": "Conv", "FusedGemm": "Gemm", "FusedMatMul": "MatMul",
           "QLinearConv": "Conv", "NhwcConv": "Conv"}
#: operators ORT folds into the node that writes their input (Conv, Gemm, MatMul …)
FOLDED = frozenset({"BatchNormalization", "Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "Tanh",
                    "HardSwish", "Add", "Sum", "Mul", "Div", "Sub", "Elu", "Selu", "Softplus", "Gelu"})
#: operators ORT fuses the folded ones into
FUSES_INTO = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul"})
#: how far back through folded nodes a rewritten name is traced
MOST_FOLDED = 6


def base_op(op_type: str) -> str:
    return BASE_OP.get(op_type, op_type)


class NodeNames:
    """Finds the drawn node an ORT node name means (see the module docstring)."""

    def __init__(self, nodes: list[dict]):
        ops = [n for n in nodes if n["kind"] == "op"]
        self.by_id = {n["id"]: n for n in ops}
        self.by_name = {n["name"]: n["id"] for n in ops}
        self.by_output = {t: n["id"] for n in ops for t in n["outputs"]}

    def writers(self, node_id: str) -> list[str]:
        """The drawn nodes that write the data inputs of `node_id` (initializers have none)."""
        return [self.by_output[t] for t in self.by_id[node_id]["inputs"] if t in self.by_output]

    def _back_to(self, node_id: str, op_type: str, taken: set[str]) -> str | None:
        """The nearest node of `op_type` upstream of `node_id` through folded nodes only."""
        frontier, seen = [node_id], {node_id}
        for _ in range(MOST_FOLDED):
            following = []
            for current in frontier:
                if self.by_id[current]["op_type"] not in FOLDED:
                    continue
                for writer in self.writers(current):
                    if writer in seen:
                        continue
                    seen.add(writer)
                    if self.by_id[writer]["op_type"] == op_type and writer not in taken:
                        return writer
                    following.append(writer)
            frontier = following
        return None

    def get(self, name: str, op_type: str = "", taken: set[str] = frozenset()) -> str | None:
        """The drawn node `name` (of ORT's operator `op_type`, where known) stands for;
        `taken`: nodes other events already name, so a walk back does not claim them."""
        if name in self.by_name:
            return self.by_name[name]
        if name.endswith(_LAYOUT) and name[:-len(_LAYOUT)] in self.by_output:
            writer = self.by_output[name[:-len(_LAYOUT)]]
            wanted = base_op(op_type)
            if wanted and self.by_id[writer]["op_type"] != wanted:
                return self._back_to(writer, wanted, taken) or writer
            return writer
        fused = _FUSED.match(name)
        return self.get(fused["kept"], op_type, taken) if fused else None

    def match(self, rows: list[dict]) -> list[str | None]:
        """The drawn node of each row ({name, op_type}): exact names first, so a rewritten
        name traced back never claims a node that ran under its own name."""
        found: list[str | None] = [self.by_name.get(row["name"]) for row in rows]
        taken = {node_id for node_id in found if node_id}
        for i, row in enumerate(rows):
            if found[i] is None:
                found[i] = self.get(row["name"], row.get("op_type", ""), taken)
                if found[i]:
                    taken.add(found[i])
        return found

    def absorbed(self, ran: set[str]) -> dict[str, str]:
        """Of the top-level drawn nodes not in `ran`: id -> the id of the node ORT fused it
        into, or "" where ORT removed it (a body's node that did not run may belong to a
        branch not taken, so it is left out)."""
        memo: dict[str, str] = {}

        def into(node_id: str, depth: int = 0) -> str:
            if node_id in memo:
                return memo[node_id]
            memo[node_id] = ""
            if self.by_id[node_id]["op_type"] in FOLDED and depth < MOST_FOLDED:
                for writer in self.writers(node_id):
                    if writer in ran:
                        kept = writer if self.by_id[writer]["op_type"] in FUSES_INTO else ""
                    else:
                        kept = into(writer, depth + 1)
                    if kept:
                        memo[node_id] = kept
                        break
            return memo[node_id]

        return {node_id: into(node_id) for node_id, node in self.by_id.items()
                if node_id not in ran and not node["owner"]}
