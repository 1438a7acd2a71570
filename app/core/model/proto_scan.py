"""Reading a model's structure without its weights.

A conversion's intake needs the graph, the shapes, the opsets and each initializer's
type and dimensions, but not the weights themselves, and on a large model parsing the
weights costs more than everything else the intake does. This walks the protobuf wire
format of the memory-mapped file, copies every field except the data of the top-level
graph's initializers, and parses what is left: the weights' pages are never even read.

The result is a ModelProto whose top-level initializers have no data; it is for reading
only. Anything the walk does not understand raises `ScanError`, and the caller falls back
to parsing the whole file (which then names the problem properly)."""

from __future__ import annotations

import mmap
from pathlib import Path

_MODEL_GRAPH = 7            # ModelProto.graph
_GRAPH_INITIALIZER = 5      # GraphProto.initializer
#: TensorProto's data fields: float_data, int32_data, int64_data, raw_data, double_data, uint64_data
_TENSOR_DATA = frozenset({4, 5, 7, 9, 10, 11})
_LENGTH_DELIMITED = 2
#: what a rewrite rule returns for a field it leaves as it is, or leaves out
KEEP, DROP = None, False


class ScanError(ValueError):
    """The bytes are not a protobuf message this walk understands."""


def _varint(buf, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ScanError("truncated or overlong varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _fields(buf, start: int, end: int):
    """(field number, wire type, field start, value start, value end) of each field."""
    pos = start
    while pos < end:
        field_start = pos
        key, pos = _varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ScanError("field number 0")
        if wire == 0:
            _, value_end = _varint(buf, pos, end)
        elif wire == 1:
            value_end = pos + 8
        elif wire == _LENGTH_DELIMITED:
            length, pos = _varint(buf, pos, end)
            value_end = pos + length
        elif wire == 5:
            value_end = pos + 4
        else:
            raise ScanError(f"wire type {wire}")
        if value_end > end:
            raise ScanError("a field runs past its message")
        yield number, wire, field_start, pos, value_end
        pos = value_end


def _rewrite(buf, start: int, end: int, rule) -> bytes:
    """The message at buf[start:end] with each field as rule(number, wire, value start,
    value end) says: KEEP it as it is, DROP it, or bytes to replace its (length-delimited)
    value with. Runs of kept fields are copied in one slice."""
    parts: list[bytes] = []
    kept_from = start
    for number, wire, field_start, value_start, value_end in _fields(buf, start, end):
        replacement = rule(number, wire, value_start, value_end)
        if replacement is KEEP:
            continue
        parts.append(buf[kept_from:field_start])
        if replacement is not DROP:
            parts.append(_encode_varint(number << 3 | _LENGTH_DELIMITED))
            parts.append(_encode_varint(len(replacement)))
            parts.append(replacement)
        kept_from = value_end
    parts.append(buf[kept_from:end])
    return b"".join(parts)


def _tensor_rule(number: int, wire: int, start: int, end: int):
    return DROP if number in _TENSOR_DATA else KEEP


def structure_bytes(buf, keep_below: int = 0) -> bytes:
    """The serialised model in `buf` without its top-level initializers' data, except
    those whose whole message is under `keep_below` bytes (shape inference reads small
    constants such as a Reshape's target shape)."""

    def graph_rule(number: int, wire: int, start: int, end: int):
        if number == _GRAPH_INITIALIZER and wire == _LENGTH_DELIMITED and end - start >= keep_below:
            return _rewrite(buf, start, end, _tensor_rule)
        return KEEP

    def model_rule(number: int, wire: int, start: int, end: int):
        if number == _MODEL_GRAPH and wire == _LENGTH_DELIMITED:
            return _rewrite(buf, start, end, graph_rule)
        return KEEP

    return _rewrite(buf, 0, len(buf), model_rule)


def load_structure(path: Path, keep_below: int = 0):
    """The model at `path` as a ModelProto without its top-level initializers' data
    (but for those under `keep_below` bytes, see structure_bytes)."""
    import onnx

    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
        data = structure_bytes(view, keep_below)
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as exc:  # protobuf's DecodeError and friends
        raise ScanError(str(exc)) from None
    return model
