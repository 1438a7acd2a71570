"""The sizes a decoder's cache outputs leave open (a head-size axis named kv_cache_dim), as
the graph's shape inference or onnxruntime-genai's config beside the model says them: read
with the graph's hints (app.core.session.graph_hints), used by app.core.session.decoder."""

from __future__ import annotations

import json
from pathlib import Path

from app.core.model.genai import GENAI_CONFIG


def resolve_cache_dims(path: Path, hints) -> None:
    """Where a cache output leaves a size of the model's open (a head-size axis named
    kv_cache_dim), put in hints.shapes what the graph's shape inference, else the
    genai_config.json beside the model, says; and the config's context length in
    hints.metadata (as "genai.context_length")."""
    config = _genai_config(path.parent / GENAI_CONFIG)
    if config.get("context_length"):
        hints.metadata["genai.context_length"] = str(config["context_length"])
    open_outputs = [name for name in hints.outputs if "present" in name.lower() and _sizes_open(hints.shapes.get(name))]
    if not open_outputs:
        return
    inferred = _inferred_shapes(path, open_outputs)
    for name in open_outputs:
        dims = list(hints.shapes[name])
        found = inferred.get(name) or []
        for axis, dim in enumerate(dims):
            if isinstance(dim, int):
                continue
            if axis < len(found) and isinstance(found[axis], int) and found[axis] > 0:
                dims[axis] = found[axis]
            elif len(dims) == 4 and axis == 3 and config.get("head_size"):
                dims[axis] = int(config["head_size"])
            elif len(dims) == 4 and axis == 1 and config.get("num_key_value_heads"):
                dims[axis] = int(config["num_key_value_heads"])
        hints.shapes[name] = dims


def _sizes_open(dims: list | None) -> bool:
    """Does a [.., heads, length, head size] cache leave its heads or head size open? (Its
    batch and length are open in every export that generates: they need no reading.)"""
    if not dims or len(dims) < 4:
        return False
    return not (isinstance(dims[-3], int) and isinstance(dims[-1], int))


def _genai_config(path: Path) -> dict:
    """The decoder's sizes in onnxruntime-genai's config (empty where there is none)."""
    try:
        text = json.loads(path.read_text(encoding="utf-8"))
        model = text.get("model", {})
        sizes = dict(model.get("decoder", {}))
        sizes["context_length"] = model.get("context_length")
        return {k: v for k, v in sizes.items() if isinstance(v, int) and not isinstance(v, bool) and v > 0}
    except (OSError, ValueError, AttributeError):
        return {}


def _inferred_shapes(path: Path, names: list[str]) -> dict[str, list]:
    """The shapes ONNX's shape inference gives `names`, with the graph's small constants."""
    import onnx

    from app.core.model.proto_scan import ScanError, load_structure

    try:
        model = onnx.shape_inference.infer_shapes(load_structure(path, keep_below=1 << 16), data_prop=True)
    except (ScanError, OSError, ValueError, onnx.onnx_cpp2py_export.shape_inference.InferenceError):
        return {}
    shapes = {}
    for value in list(model.graph.output) + list(model.graph.value_info):
        if value.name in names and value.type.tensor_type.HasField("shape"):
            shapes[value.name] = [d.dim_value if d.HasField("dim_value") else d.dim_param
                                  for d in value.type.tensor_type.shape.dim]
    return shapes
