"""A variant leaves the converters without their value_info.

The converters rewrite types and names but not always the value_info that described the
old ones: onnxconverter-common's fp16 turns a value_info entry of a graph output to float16
and keeps the output itself float, so the file says two things of one tensor. onnx's
checker passes it and ORT ignores it, until a tool exposes that tensor (Polygraphy's
`--onnx-outputs mark all`, ORTune's drift) and ORT refuses the type. value_info is only a
cache of shape inference, which ORT and every tool redo, so the variant keeps none."""

from __future__ import annotations

from pathlib import Path


def drop_value_info(path: Path) -> int:
    """Remove every value_info entry of the .onnx model at `path` (subgraphs too), rewriting
    the file only when there is one; its external data is left where it is. Returns how
    many were removed."""
    import onnx

    from app.core.model.intake import iter_graphs

    if path.suffix != ".onnx":
        return 0
    model = onnx.load(str(path), load_external_data=False)
    removed = 0
    for graph in iter_graphs(model.graph):
        removed += len(graph.value_info)
        graph.ClearField("value_info")
    if removed:
        onnx.save_model(model, str(path))
    return removed
