"""An ORT-format (.ort) model's graph as an ONNX ModelProto, so that what works on an ONNX
model's structure (its cost, its shapes) works on an .ort file the same way.

The graph is the one ONNX Runtime saved: nodes (with their attributes and subgraphs),
initializers, inputs, outputs and the types it knew for every value. It is the graph after
the optimisations the conversion applied (basic ones at least, fusions and layout changes
where the conversion asked for them), so it may hold ONNX Runtime's own operators
(com.microsoft, com.microsoft.nchwc). Weights keep their data only below `keep_below`
bytes, as app.core.model.proto_scan keeps them: shape inference reads small constants."""

from __future__ import annotations

from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.model.ort_format import _text, _type_proto

#: an ONNX model read from a flatbuffer says this IR version when its own is older
_LOWEST_IR = 3


def _domain(value) -> str:
    """ONNX's own operators under the name ONNX uses for them ("", not "ai.onnx")."""
    text = _text(value)
    return "" if text == "ai.onnx" else text


def _tensor(fbs_tensor, keep_below: int):
    import onnx

    tensor = onnx.TensorProto(name=_text(fbs_tensor.Name()), data_type=fbs_tensor.DataType())
    tensor.dims.extend(fbs_tensor.Dims(k) for k in range(fbs_tensor.DimsLength()))
    if 0 < fbs_tensor.RawDataLength() < keep_below:
        tensor.raw_data = fbs_tensor.RawDataAsNumpy().tobytes()
    elif fbs_tensor.StringDataLength() and fbs_tensor.StringDataLength() * 8 < keep_below:
        tensor.string_data.extend(fbs_tensor.StringData(k) for k in range(fbs_tensor.StringDataLength()))
    return tensor


def _attribute(fbs, attribute, keep_below: int):
    import onnx

    kinds = fbs.AttributeType.AttributeType
    proto = onnx.AttributeProto(name=_text(attribute.Name()), type=attribute.Type())
    kind = attribute.Type()
    if kind == kinds.FLOAT:
        proto.f = attribute.F()
    elif kind == kinds.INT:
        proto.i = attribute.I()
    elif kind == kinds.STRING:
        proto.s = attribute.S() or b""
    elif kind == kinds.TENSOR and attribute.T() is not None:
        # a Constant's value: its data is kept whatever its size only where small enough to matter
        proto.t.CopyFrom(_tensor(attribute.T(), keep_below))
    elif kind == kinds.GRAPH and attribute.G() is not None:
        proto.g.CopyFrom(_graph(fbs, attribute.G(), keep_below))
    elif kind == kinds.FLOATS:
        proto.floats.extend(attribute.Floats(k) for k in range(attribute.FloatsLength()))
    elif kind == kinds.INTS:
        proto.ints.extend(attribute.Ints(k) for k in range(attribute.IntsLength()))
    elif kind == kinds.STRINGS:
        proto.strings.extend(attribute.Strings(k) for k in range(attribute.StringsLength()))
    elif kind == kinds.TENSORS:
        proto.tensors.extend(_tensor(attribute.Tensors(k), keep_below) for k in range(attribute.TensorsLength()))
    elif kind == kinds.GRAPHS:
        proto.graphs.extend(_graph(fbs, attribute.Graphs(k), keep_below) for k in range(attribute.GraphsLength()))
    return proto


def _in_order(nodes: list) -> list:
    """The nodes so that each comes after those writing its inputs (shape inference reads
    them in order): an optimised graph's fused nodes have the highest indices, wherever
    they run. Ties, and what a cycle would leave, go by index."""
    nodes = sorted(nodes, key=lambda n: n.Index())
    writer = {}
    for position, node in enumerate(nodes):
        for k in range(node.OutputsLength()):
            writer[_text(node.Outputs(k))] = position
    placed, visiting, order = set(), set(), []

    def place(position: int) -> None:
        stack = [(position, False)]
        while stack:
            at, ready = stack.pop()
            if at in placed or (at in visiting and not ready):
                continue
            if ready:
                placed.add(at)
                order.append(nodes[at])
                continue
            stack.append((at, True))
            visiting.add(at)
            node = nodes[at]
            needs = [writer.get(_text(node.Inputs(k))) for k in range(node.InputsLength())]
            needs += [writer.get(_text(node.ImplicitInputs(k))) for k in range(node.ImplicitInputsLength())]
            stack.extend((need, False) for need in reversed(needs) if need is not None and need not in placed
                         and need != at)

    for position in range(len(nodes)):
        place(position)
    return order


def _graph(fbs, graph, keep_below: int):
    import onnx

    types = {}
    for j in range(graph.NodeArgsLength()):
        arg = graph.NodeArgs(j)
        types[_text(arg.Name())] = arg.Type()

    def value(name: str):
        return onnx.helper.make_value_info(name, _type_proto(fbs, types.get(name)))

    proto = onnx.GraphProto(name="ort_graph")
    proto.initializer.extend(_tensor(graph.Initializers(j), keep_below) for j in range(graph.InitializersLength()))
    weights = {t.name for t in proto.initializer}
    for node in _in_order([graph.Nodes(j) for j in range(graph.NodesLength())]):
        proto.node.append(onnx.helper.make_node(
            _text(node.OpType()),
            [_text(node.Inputs(k)) for k in range(node.InputsLength())],
            [_text(node.Outputs(k)) for k in range(node.OutputsLength())],
            name=_text(node.Name()), domain=_domain(node.Domain())))
        proto.node[-1].attribute.extend(_attribute(fbs, node.Attributes(k), keep_below)
                                        for k in range(node.AttributesLength()))
    inputs = [_text(graph.Inputs(j)) for j in range(graph.InputsLength())]
    outputs = [_text(graph.Outputs(j)) for j in range(graph.OutputsLength())]
    proto.input.extend(value(name) for name in inputs)
    proto.output.extend(value(name) for name in outputs)
    # the flatbuffer also keeps the values of nodes its optimisations removed
    produced = {name for node in proto.node for name in node.output}
    ends = set(inputs) | set(outputs) | weights
    proto.value_info.extend(value(name) for name in types
                            if name in produced and name not in ends and types[name] is not None)
    return proto


def ort_to_onnx(path: Path, keep_below: int = 0):
    """The .ort file's model as an ONNX ModelProto (weights' data kept below `keep_below`
    bytes); a damaged file raises a UserError."""
    import onnx
    from onnxruntime.tools import ort_format_model  # noqa: F401  (adds the bindings to sys.path)
    import ort_flatbuffers_py.fbs as fbs

    buffer = bytearray(Path(path).read_bytes())
    try:
        if not fbs.InferenceSession.InferenceSession.InferenceSessionBufferHasIdentifier(buffer, 0):
            raise ValueError("no ORT-format identifier")
        model = fbs.InferenceSession.InferenceSession.GetRootAsInferenceSession(buffer, 0).Model()
        if model is None or model.Graph() is None:
            raise ValueError("no graph")
        proto = onnx.ModelProto(ir_version=max(int(model.IrVersion()), _LOWEST_IR),
                                producer_name=_text(model.ProducerName()))
        for j in range(model.MetadataPropsLength()):
            entry = model.MetadataProps(j)
            proto.metadata_props.add(key=_text(entry.Key()), value=_text(entry.Value()))
        for j in range(model.OpsetImportLength()):
            opset = model.OpsetImport(j)
            proto.opset_import.add(domain=_domain(opset.Domain()), version=int(opset.Version()))
        proto.graph.CopyFrom(_graph(fbs, model.Graph(), keep_below))
    except (ValueError, IndexError, TypeError, AttributeError) as exc:
        raise UserError("not-a-model", f"{Path(path).name}: the ORT-format file is damaged or truncated ({exc})") from None
    return proto
