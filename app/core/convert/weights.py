"""How much of a float16 variant's weights really are float16.

A converter keeps whole parts of a model in float32 when it must (an If subgraph that
broke, operators on its block list), and the variant still passes its check: only the
share of the weights that changed says whether it is the half-size model it claims to be."""

from __future__ import annotations

from pathlib import Path

#: below this share of the weights (by bytes) in float16, the report says the variant hardly changed
SMALL_SHARE = 0.5
_FLOAT, _FLOAT16 = 1, 10


def float16_share(path: Path) -> dict:
    """The variant's float weights (initializers and Constant tensors, subgraphs included),
    counted by what they held in float32: how many bytes are float16 now and how many are
    float32 still; share is None for a model without float weights."""
    import numpy as np
    import onnx

    from app.core.model.intake import iter_graphs

    model = onnx.load(str(path), load_external_data=False)
    elements = {_FLOAT: 0, _FLOAT16: 0}
    for graph in iter_graphs(model.graph):
        tensors = list(graph.initializer) + [a.t for n in graph.node if n.op_type == "Constant"
                                             for a in n.attribute if a.HasField("t")]
        for tensor in tensors:
            if tensor.data_type in elements:
                elements[tensor.data_type] += int(np.prod(tensor.dims, dtype=np.int64))
    converted, kept = 4 * elements[_FLOAT16], 4 * elements[_FLOAT]
    total = converted + kept
    return {"converted_bytes": converted, "kept_bytes": kept, "share": converted / total if total else None}


def share_text(share: float) -> str:
    """A share as a percentage that does not round a little down to nothing."""
    return "under 1%" if 0 < share < 0.01 else f"{share:.0%}"


def small_share_warning(share: dict) -> str:
    """The warning for a variant with little of its weights in float16, or ''."""
    if share["share"] is None or share["share"] >= SMALL_SHARE:
        return ""
    return (f"Only {share_text(share['share'])} of the weights (by their float32 bytes) became float16; the rest stayed "
            "float32 (see what was kept in float32), so this variant is little smaller, or faster, than its source.")
