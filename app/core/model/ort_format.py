"""Reading the summary of an ORT-format (.ort) model from its flatbuffer.

ONNX Runtime ships the flatbuffer bindings inside `onnxruntime.tools`; importing
`ort_format_model` puts them on the path."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.model.value_type import describe_value

_ELEMENT_BYTES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2}


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else (value or "")


def _type_proto(fbs, type_info):
    """The flatbuffer's TypeInfo as ONNX's TypeProto, so it is described as an ONNX model's
    values are (an empty one where the file declares no type)."""
    import onnx

    proto = onnx.TypeProto()
    if type_info is None:
        return proto
    kind, table = type_info.ValueType(), type_info.Value()
    values = fbs.TypeInfoValue.TypeInfoValue
    if kind == values.tensor_type:
        tensor = fbs.TensorTypeAndShape.TensorTypeAndShape()
        tensor.Init(table.Bytes, table.Pos)
        proto.tensor_type.elem_type = tensor.ElemType()
        shape = tensor.Shape()
        if shape is not None:
            proto.tensor_type.shape.SetInParent()
            for j in range(shape.DimLength()):
                value, dim = shape.Dim(j).Value(), proto.tensor_type.shape.dim.add()
                if value is not None and value.DimType() == fbs.DimensionValueType.DimensionValueType.VALUE:
                    dim.dim_value = int(value.DimValue())
                elif value is not None and _text(value.DimParam()):
                    dim.dim_param = _text(value.DimParam())
    elif kind == values.sequence_type:
        sequence = fbs.SequenceType.SequenceType()
        sequence.Init(table.Bytes, table.Pos)
        proto.sequence_type.elem_type.CopyFrom(_type_proto(fbs, sequence.ElemType()))
    elif kind == values.map_type:
        mapping = fbs.MapType.MapType()
        mapping.Init(table.Bytes, table.Pos)
        proto.map_type.key_type = mapping.KeyType()
        proto.map_type.value_type.CopyFrom(_type_proto(fbs, mapping.ValueType()))
    return proto


def read_ort_model(path: Path) -> dict:
    """The same fields as an ONNX inspection, read from an .ort file."""
    import onnx
    from onnxruntime.tools import ort_format_model  # noqa: F401  (adds the bindings to sys.path)
    import ort_flatbuffers_py.fbs as fbs

    buffer = bytearray(path.read_bytes())
    try:
        if not fbs.InferenceSession.InferenceSession.InferenceSessionBufferHasIdentifier(buffer, 0):
            raise ValueError("no ORT-format identifier")
        model = fbs.InferenceSession.InferenceSession.GetRootAsInferenceSession(buffer, 0).Model()
        graph = model.Graph()
        if graph is None:
            raise ValueError("no graph")

        values = {}
        op_counts: Counter = Counter()
        parameters = initializer_bytes = subgraphs = 0

        def walk(g) -> None:
            nonlocal parameters, initializer_bytes, subgraphs
            for j in range(g.NodeArgsLength()):
                arg = g.NodeArgs(j)
                values.setdefault(_text(arg.Name()), arg.Type())
            for j in range(g.InitializersLength()):
                tensor = g.Initializers(j)
                count = 1
                for k in range(tensor.DimsLength()):
                    count *= tensor.Dims(k)
                parameters += count
                initializer_bytes += tensor.RawDataLength() or count * _ELEMENT_BYTES.get(tensor.DataType(), 1)
            for j in range(g.NodesLength()):
                node = g.Nodes(j)
                op_counts[_op_key(_text(node.Domain()), _text(node.OpType()))] += 1
                for k in range(node.AttributesLength()):
                    attribute = node.Attributes(k)
                    if attribute.G() is not None:
                        subgraphs += 1
                        walk(attribute.G())

        walk(graph)

        def describe(name: str) -> dict:
            return describe_value(onnx.helper.make_value_info(name, _type_proto(fbs, values.get(name))))

        initializer_names = {_text(graph.Initializers(j).Name()) for j in range(graph.InitializersLength())}
        inputs = [_text(graph.Inputs(j)) for j in range(graph.InputsLength())]
        result = {
            "format": "ort",
            "ir_version": int(model.IrVersion()),
            "opsets": {(_text(model.OpsetImport(j).Domain()) or "ai.onnx"): int(model.OpsetImport(j).Version())
                       for j in range(model.OpsetImportLength())},
            "producer": _text(model.ProducerName()),
            "producer_version": _text(model.ProducerVersion()),
            "domain": _text(model.Domain()),
            "model_version": int(model.ModelVersion()),
            "doc_string": _text(model.DocString()),
            "metadata": {_text(model.MetadataProps(j).Key()): _text(model.MetadataProps(j).Value())
                         for j in range(model.MetadataPropsLength())},
            "inputs": [describe(n) for n in inputs if n not in initializer_names],
            "outputs": [describe(_text(graph.Outputs(j))) for j in range(graph.OutputsLength())],
            "initializers_as_inputs": sorted(set(inputs) & initializer_names),
            "node_count": sum(op_counts.values()),
            "top_level_node_count": graph.NodesLength(),
            "subgraph_count": subgraphs,
            "op_counts": dict(op_counts.most_common()),
            "parameters": parameters,
            "initializer_bytes": initializer_bytes,
            "external_data": False,
            "external_data_files": [],
        }
    except (ValueError, IndexError, TypeError, AttributeError) as exc:
        raise UserError("not-a-model", f"{path.name}: the ORT-format file is damaged or truncated ({exc})") from None
    return result


def _op_key(domain: str, op_type: str) -> str:
    return op_type if domain in ("", "ai.onnx") else f"{domain}.{op_type}"
