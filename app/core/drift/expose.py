"""A copy of a model with every intermediate float tensor added as a graph output, so one
run returns them all (Polygraphy's `--onnx-outputs mark all`).

The copy goes to a scratch folder; a model with external data gets its copy beside it, in
its own folder, so the data's relative locations still resolve (and nothing is copied)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

FLOAT_TYPES = (1, 10, 11, 16)       # onnx.TensorProto FLOAT, FLOAT16, DOUBLE, BFLOAT16


def producers(model) -> dict[str, object]:
    """tensor name -> the node of the top-level graph that makes it, in graph (topological) order."""
    return {name: node for node in model.graph.node for name in node.output if name}


def _inferred_types(model) -> dict[str, object]:
    """name -> ValueInfoProto from ONNX shape inference ({} where it cannot run, e.g. past 2 GB)."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except (onnx.onnx_cpp2py_export.shape_inference.InferenceError, ValueError, RuntimeError):
        return {}
    return {info.name: info for info in (*inferred.graph.value_info, *inferred.graph.output)}


def expose_all(model) -> list[str]:
    """Add every float (or untyped) node output of the top-level graph as a graph output of
    `model`, in place; returns the names added."""
    import onnx

    types = _inferred_types(model)
    present = {output.name for output in model.graph.output}
    added = []
    for name in producers(model):
        if name in present:
            continue
        info = types.get(name)
        if info is not None and info.type.HasField("tensor_type"):
            if info.type.tensor_type.elem_type not in FLOAT_TYPES:
                continue
            model.graph.output.append(info)
        elif info is None:
            model.graph.output.append(onnx.ValueInfoProto(name=name))
        else:
            continue                                      # sequences, maps: not compared
        added.append(name)
    return added


@contextlib.contextmanager
def exposed_copy(path: Path, model):
    """Save `model` (already exposed) where ONNX Runtime can load it with its weights; yields
    the copy's path and removes it afterwards."""
    import onnx

    from app.core.model.intake import check_external_data

    beside = bool(check_external_data(path, model))
    folder = path.parent if beside else Path(tempfile.mkdtemp(prefix="ortune-drift-"))
    handle, name = tempfile.mkstemp(prefix=".ortune-drift-", suffix=".onnx", dir=folder)
    os.close(handle)
    copy = Path(name)
    try:
        onnx.save_model(model, str(copy))
        yield copy
    finally:
        copy.unlink(missing_ok=True)
        if not beside:
            with contextlib.suppress(OSError):
                folder.rmdir()
