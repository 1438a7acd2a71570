"""A variant leaves the converters without the value_info entries that retype its graph's
inputs and outputs.

The converters rewrite types and names but not always the value_info that described the
old ones: onnxconverter-common's fp16 turns a value_info entry of a graph output to float16
and keeps the output itself float, so the file says two things of one tensor. onnx's
checker passes it and ORT ignores it, until a tool exposes that tensor (Polygraphy's
`--onnx-outputs mark all`, ORTune's drift) and ORT refuses the type. A graph's inputs and
outputs carry their own types, so a value_info entry of one says nothing or contradicts it:
it goes. (The other entries stay: the fp16 repairs read ORT's complaints about them.)"""

from __future__ import annotations

from pathlib import Path


def drop_stale_value_info(path: Path) -> int:
    """Remove the value_info entries of the .onnx model at `path` that name one of their
    graph's inputs or outputs (subgraphs too), rewriting the file only when there is one;
    its external data is left where it is. Returns how many were removed."""
    import onnx

    from app.core.model.intake import iter_graphs

    if path.suffix != ".onnx":
        return 0
    model = onnx.load(str(path), load_external_data=False)
    removed = 0
    for graph in iter_graphs(model.graph):
        ends = {v.name for v in graph.input} | {v.name for v in graph.output}
        kept = [v for v in graph.value_info if v.name not in ends]
        removed += len(graph.value_info) - len(kept)
        if len(kept) != len(graph.value_info):
            del graph.value_info[:]
            graph.value_info.extend(kept)
    if removed:
        onnx.save_model(model, str(path))
    return removed
