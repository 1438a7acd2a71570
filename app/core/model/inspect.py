"""Inspecting a model: what is inside, without running it."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from app.core.jobs.protocol import JobContext
from app.core.model.intake import admit, iter_graphs, iter_tensors
from app.core.model.value_type import describe_value


#: INT4, UINT4, FLOAT4E2M1: two values a byte, the last byte padded
_PACKED_TYPES = {21, 22, 23}


def _tensor_bytes(tensor) -> int:
    import onnx
    from app.core.model.intake import external_data_info
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        info = external_data_info(tensor)
        if "length" in info:
            return int(info["length"])
    # Sizes come from the dims: reading raw_data would copy every weight into Python (and
    # a conversion's intake reads the model without its weights' data).
    count = 1
    for dim in tensor.dims:
        count *= dim
    if tensor.data_type in _PACKED_TYPES:
        return (count + 1) // 2
    try:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except (KeyError, TypeError):
        itemsize = 1
    return count * itemsize


def summarise_onnx(path: Path, model, external_files: list[str]) -> dict:
    op_counts: Counter = Counter()
    graphs = list(iter_graphs(model.graph))
    for graph in graphs:
        for node in graph.node:
            op_counts[node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"] += 1
    parameters = initializer_bytes = 0
    for tensor in iter_tensors(model):
        count = 1
        for dim in tensor.dims:
            count *= dim
        parameters += count
        initializer_bytes += _tensor_bytes(tensor)
    initializer_names = {t.name for t in model.graph.initializer}
    return {
        "format": "onnx",
        "ir_version": int(model.ir_version),
        "opsets": {(o.domain or "ai.onnx"): int(o.version) for o in model.opset_import},
        "producer": model.producer_name,
        "producer_version": model.producer_version,
        "domain": model.domain,
        "model_version": int(model.model_version),
        "doc_string": model.doc_string,
        "metadata": {p.key: p.value for p in model.metadata_props},
        "inputs": [describe_value(v) for v in model.graph.input if v.name not in initializer_names],
        "outputs": [describe_value(v) for v in model.graph.output],
        "initializers_as_inputs": sorted(v.name for v in model.graph.input if v.name in initializer_names),
        "node_count": sum(op_counts.values()),
        "top_level_node_count": len(model.graph.node),
        "subgraph_count": len(graphs) - 1,
        "op_counts": dict(op_counts.most_common()),
        "parameters": parameters,
        "initializer_bytes": initializer_bytes,
        "external_data": bool(external_files),
        "external_data_files": external_files,
    }


def inspect_model(path: str | os.PathLike, ctx: JobContext | None = None) -> dict:
    """Read a model file and describe it; bad files raise a UserError naming the problem.
    `warnings` holds what is odd about a model ONNX Runtime loads all the same."""
    ctx = ctx or JobContext()
    ctx.progress(0.1, "reading the model")
    admitted = admit(path, checker=True)
    path = admitted.path
    ctx.check_cancel()
    if admitted.format == "ort":
        from app.core.model.ort_format import read_ort_model
        summary = read_ort_model(path)
    else:
        summary = summarise_onnx(path, admitted.model, admitted.external_files)
    size = path.stat().st_size
    external_bytes = sum((path.parent / f).stat().st_size for f in summary["external_data_files"])
    ctx.progress(1.0, "done")
    return {"path": str(path), "size_bytes": size, "total_bytes": size + external_bytes, **summary,
            "warnings": admitted.warnings}
