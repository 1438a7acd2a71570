"""The shapes a model's cost is counted on: onnx's own shape inference (with data
propagation), then ONNX Runtime's symbolic shape inference where onnx's stops.

onnx's inference is the reference for the standard operators, but it stops at the first
shape that flows through a value (a Reshape fed by a Shape -> Gather -> Concat chain, as
every transformer export has) and knows no com.microsoft operator, so everything after
goes unknown. ORT's symbolic inference (`onnxruntime.tools.symbolic_shape_infer`) follows
those chains and knows the contrib operators; a value's shape is taken from it only where
onnx left it unknown. Both run on the model with the input plan's concrete dims in place
of the declared symbolic ones."""

from __future__ import annotations


def concrete(value_type) -> tuple[list[int] | None, int]:
    """(dims if every one is known, else None; element type) of a value's type."""
    if not value_type.HasField("tensor_type"):
        return None, 0
    tensor = value_type.tensor_type
    if not tensor.HasField("shape"):
        return None, tensor.elem_type
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
    return (None if None in dims else dims), tensor.elem_type


def fix_inputs(model, shapes: dict[str, list[int]]) -> None:
    """Replace the declared shape of each planned input by the plan's concrete one, in place;
    a symbolic dim the inputs declare takes the plan's size wherever else the model types a
    value with it (an .ort file's saved types, an exporter's value_info)."""
    from app.core.model.intake import iter_graphs

    sizes: dict[str, int] = {}
    for value in model.graph.input:
        if value.name not in shapes or not value.type.HasField("tensor_type"):
            continue
        shape = value.type.tensor_type.shape
        if len(shape.dim) == len(shapes[value.name]):
            sizes.update({d.dim_param: int(size) for d, size in zip(shape.dim, shapes[value.name]) if d.dim_param})
        shape.ClearField("dim")
        for size in shapes[value.name]:
            shape.dim.add().dim_value = int(size)
    if not sizes:
        return
    for graph in iter_graphs(model.graph):
        for value in list(graph.value_info) + list(graph.output):
            if value.type.HasField("tensor_type"):
                for dim in value.type.tensor_type.shape.dim:
                    if dim.dim_param in sizes:
                        dim.dim_value = sizes[dim.dim_param]


def onnx_inferred(model) -> tuple[object, str]:
    """The model with onnx's inferred value_info, and a note where inference gave up."""
    import onnx
    try:
        return onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True), ""
    except Exception as exc:  # onnx raises its own InferenceError and plain RuntimeErrors
        return model, f"shape inference stopped: {str(exc).splitlines()[0][:200]}"


def symbolic_inferred(model) -> tuple[object | None, str]:
    """The model with ORT's symbolic shape inference, or None and why it could not run."""
    import logging

    try:
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
    except ImportError as exc:
        return None, f"ONNX Runtime's symbolic shape inference is not available: {exc}"
    # it logs each operator it cannot follow as a warning: that shows as unknown shapes instead
    logger = logging.getLogger("onnxruntime.tools.symbolic_shape_infer")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return SymbolicShapeInference.infer_shapes(model, auto_merge=True, guess_output_rank=True), ""
    except Exception as exc:  # it raises whatever its operator handlers raise
        return None, f"symbolic shape inference stopped: {str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}"
    finally:
        logger.setLevel(level)


def value_types(graph_values) -> dict[str, tuple]:
    """name -> (dims or None, elem type) of the ValueInfoProtos given."""
    return {value.name: concrete(value.type) for value in graph_values}


def infer(model) -> tuple[object, dict[str, tuple], str]:
    """(onnx's inferred model, name -> (dims or None, elem type) from the symbolic inference
    where onnx's left a tensor unknown, a note on what stopped)."""
    from app.core.model.intake import iter_graphs

    inferred, note = onnx_inferred(model)
    known = {}
    for graph in iter_graphs(inferred.graph):
        known.update(value_types(list(graph.input) + list(graph.value_info) + list(graph.output)))
    produced = [name for graph in iter_graphs(inferred.graph) for node in graph.node for name in node.output if name]
    if all(known.get(name, (None, 0))[0] is not None for name in produced):
        return inferred, {}, note
    symbolic, why = symbolic_inferred(model)
    if symbolic is None:
        return inferred, {}, "; ".join(n for n in (note, why) if n)
    extra = {}
    for graph in iter_graphs(symbolic.graph):
        for name, found in value_types(list(graph.value_info) + list(graph.output)).items():
            if found[0] is not None and known.get(name, (None, 0))[0] is None:
                extra[name] = found
    return inferred, extra, note
