"""What a model's graph says about the inputs it needs: which node slot each input feeds,
the sizes of the axes it indexes, and the model's own metadata (such as an image size).

Read from the model's structure without its weights (an .ort file's from the graph it
holds); a model that cannot be read this way simply gives no hints."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from app.core.session.cache_dims import resolve_cache_dims


@dataclass
class Use:
    """One place an input is read: node `op_type`, slot `slot`, in node `node`."""
    op_type: str
    slot: int
    node: str
    attributes: dict
    others: list[str]          # the node's other inputs, by slot ("" where absent); shared, read only


@dataclass
class GraphHints:
    uses: dict[str, list[Use]] = field(default_factory=dict)          # input name -> where it is read
    shapes: dict[str, list] = field(default_factory=dict)             # tensor name -> dims it is known to have
    metadata: dict[str, str] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)                  # the graph's outputs, in order

    def static_shape(self, name: str) -> list[int] | None:
        dims = self.shapes.get(name)
        if dims is None or not all(isinstance(d, int) and d >= 0 for d in dims):
            return None
        return dims

    def image_size(self) -> tuple[int, int] | None:
        """(height, width) the model was exported for, where its metadata says (Ultralytics' imgsz)."""
        text = self.metadata.get("imgsz")
        if not text:
            return None
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return None
        if isinstance(value, int):
            value = [value, value]
        if (isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) and 0 < v <= 8192
                                                                           for v in value)):
            return int(value[0]), int(value[1])
        return None


def _dims(value_type) -> list | None:
    tensor = value_type.tensor_type
    if not value_type.HasField("tensor_type") or not tensor.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tensor.shape.dim]


def _attributes(node) -> dict:
    from onnx import helper

    values = {}
    for attribute in node.attribute:
        try:
            value = helper.get_attribute_value(attribute)
        except Exception:  # an attribute type this reader does not need
            continue
        if isinstance(value, (int, float, bytes, list)):
            values[attribute.name] = value
    return values


def read_hints(path: str | Path) -> GraphHints:
    """The hints of the model at `path`, an .onnx or .ort file (empty when its graph cannot
    be read; an onnxruntime-genai folder's are its decoder's)."""
    from app.core.jobs.errors import UserError
    from app.core.model.genai import model_file
    from app.core.model.intake import sniff
    from app.core.model.ort_graph import ort_to_onnx
    from app.core.model.proto_scan import ScanError, load_structure

    path = model_file(path)
    try:
        model = ort_to_onnx(path) if sniff(path) == "ort" else load_structure(path)
    except (ScanError, OSError, ValueError, UserError):
        return GraphHints()
    graph = model.graph
    hints = GraphHints(metadata={p.key: p.value for p in model.metadata_props})
    initializer_names = set()
    for tensor in graph.initializer:
        hints.shapes[tensor.name] = list(tensor.dims)
        initializer_names.add(tensor.name)
    for value in list(graph.input) + list(graph.value_info) + list(graph.output):
        dims = _dims(value.type)
        if dims is not None and value.name not in hints.shapes:
            hints.shapes[value.name] = dims
    inputs = {v.name for v in graph.input if v.name not in initializer_names}
    hints.outputs = [v.name for v in graph.output]
    resolve_cache_dims(path, hints)
    for node in graph.node:
        if node.op_type == "Constant":
            continue
        # one list of inputs and one of attributes per node, shared by its uses: a copy per use
        # made a node of N graph inputs (a Sum of 5,000) cost N² memory
        others = attributes = None
        for slot, name in enumerate(node.input):
            if name in inputs:
                if others is None:
                    others, attributes = list(node.input), _attributes(node)
                hints.uses.setdefault(name, []).append(Use(node.op_type, slot, node.name or node.op_type,
                                                           attributes, others))
    return hints
