"""What a graph value holds, in words: `tensor(float)`, `sequence(map(int64, float))`,
`optional(tensor(float))`, `sparse_tensor(float)`.

ONNX's TypeProto, ONNX Runtime's type strings ('seq(map(int64,tensor(float)))') and an
.ort file's type table each say it their own way; all of them are shown through
`type_text`, so a value reads the same in inspect, the Overview and every refusal."""

from __future__ import annotations

import re

from app.core.formatting import shape_text

_ORT_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|[(),])")


def element_name(elem_type: int) -> str:
    """ONNX's name of a tensor element type in lower case: 'float', 'int64', 'string'."""
    import onnx
    try:
        return onnx.helper.tensor_dtype_to_string(elem_type).replace("TensorProto.", "").lower()
    except (KeyError, ValueError):
        return f"type{elem_type}"


def type_text(type_proto) -> str:
    """The whole type of a value, nested types included.

    A map's values are written by their element type when they are tensors (ZipMap's
    `map(int64, float)`: one number per key); everywhere else a tensor is `tensor(T)`."""
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return f"tensor({element_name(type_proto.tensor_type.elem_type)})"
    if kind == "sparse_tensor_type":
        return f"sparse_tensor({element_name(type_proto.sparse_tensor_type.elem_type)})"
    if kind == "sequence_type":
        return f"sequence({type_text(type_proto.sequence_type.elem_type)})"
    if kind == "optional_type":
        return f"optional({type_text(type_proto.optional_type.elem_type)})"
    if kind == "map_type":
        value = type_proto.map_type.value_type
        shown = (element_name(value.tensor_type.elem_type) if value.WhichOneof("value") == "tensor_type"
                 else type_text(value))
        return f"map({element_name(type_proto.map_type.key_type)}, {shown})"
    return "opaque" if kind == "opaque_type" else "undeclared"


def describe_value(value) -> dict:
    """name, kind, dtype and shape of a graph input or output; symbolic dims keep their names.

    A tensor's dtype is its element type ('float'); any other kind's is its whole type
    ('sequence(map(int64, float))'), and only tensors and sparse tensors have a shape."""
    kind = value.type.WhichOneof("value")
    if kind not in ("tensor_type", "sparse_tensor_type"):
        return {"name": value.name, "kind": (kind or "unknown").removesuffix("_type"),
                "dtype": type_text(value.type), "shape": None}
    tensor_type = getattr(value.type, kind)
    shape = None
    if tensor_type.HasField("shape"):
        shape = []
        for dim in tensor_type.shape.dim:
            if dim.HasField("dim_value") and dim.dim_value >= 0:
                shape.append(int(dim.dim_value))
            else:
                shape.append(dim.dim_param or "?")
    if kind == "sparse_tensor_type":
        return {"name": value.name, "kind": "sparse_tensor", "dtype": type_text(value.type), "shape": shape}
    return {"name": value.name, "kind": "tensor", "dtype": element_name(tensor_type.elem_type), "shape": shape}


def io_rows(summary: dict) -> list[list]:
    """The inputs and outputs as table rows: direction, name, type, shape."""
    rows = []
    for direction, key in (("input", "inputs"), ("output", "outputs")):
        for value in summary[key]:
            shaped = value.get("kind", "tensor") in ("tensor", "sparse_tensor")
            rows.append([direction, value["name"], value["dtype"], shape_text(value["shape"]) if shaped else "–"])
    return rows


def ort_type_text(text: str) -> str:
    """ONNX Runtime's type string in ORTune's words ('seq(tensor(float))' ->
    'sequence(tensor(float))'); a string this does not follow comes back as it is."""
    try:
        tokens = _ORT_TOKEN.findall(text)
        if "".join(tokens) != "".join(text.split()):
            return text
        proto, rest = _parse_ort(tokens)
    except (ValueError, IndexError):
        return text
    return type_text(proto) if not rest else text


def _parse_ort(tokens: list[str]):
    """(TypeProto, tokens left) of the type at the start of `tokens`."""
    import onnx

    name, tokens = tokens[0], tokens[1:]
    if tokens[0] != "(":
        raise ValueError(name)
    proto = onnx.TypeProto()
    if name in ("tensor", "sparse_tensor"):
        field = proto.tensor_type if name == "tensor" else proto.sparse_tensor_type
        field.elem_type = _element_type(tokens[1])
        rest = tokens[2:]
    elif name == "map":
        proto.map_type.key_type = _element_type(tokens[1])
        if tokens[2] != ",":
            raise ValueError(tokens[2])
        value, rest = _parse_ort(tokens[3:])
        proto.map_type.value_type.CopyFrom(value)
    elif name in ("seq", "optional"):
        inner, rest = _parse_ort(tokens[1:])
        (proto.sequence_type if name == "seq" else proto.optional_type).elem_type.CopyFrom(inner)
    else:
        raise ValueError(name)
    if rest[0] != ")":
        raise ValueError(rest[0])
    return proto, rest[1:]


def _element_type(name: str) -> int:
    import onnx
    return onnx.TensorProto.DataType.Value(name.upper())
