"""Reading a model file safely: recognise what a file is, refuse what cannot work,
and never read outside the model's own folder.

Every refusal is a `UserError` whose message names the file and the problem."""

from __future__ import annotations

import os
import re
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.units import first_line

ORT_FORMAT_MAGIC = b"ORTM"       # flatbuffer file identifier at offset 4
MIN_IR_VERSION = 3               # ONNX Runtime refuses older models
MIN_OPSET = 7                    # the oldest ai.onnx opset ONNX Runtime runs
MAX_DECLARED_BYTES = 1 << 40     # a declared input larger than 1 TiB is a broken shape

_SIGNATURES = [
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\x93NUMPY", "a NumPy array file"),
]


def _problem(path: Path, kind: str, text: str) -> UserError:
    return UserError(kind, f"{path.name}: {text}")


def check_readable(path: str | os.PathLike) -> Path:
    """The path names a non-empty regular file we can open."""
    path = Path(path)
    if not path.exists():
        raise UserError("not-found", f"{path}: no such file")
    if not path.is_file():
        raise UserError("not-a-file", f"{path}: is a folder, not a model file")
    try:
        size = path.stat().st_size
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise UserError("unreadable", f"{path}: cannot be read ({exc.strerror})") from None
    if size == 0:
        raise _problem(path, "empty-file", "the file is empty")
    return path


def sniff(path: Path) -> str:
    """'onnx', 'ort', or raise a UserError saying what the file really is."""
    with open(path, "rb") as handle:
        head = handle.read(64)
    if head[4:8] == ORT_FORMAT_MAGIC:
        return "ort"
    for magic, what in _SIGNATURES:
        if head.startswith(magic):
            raise _problem(path, "not-a-model", f"this is {what}, not an ONNX model")
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        raise _problem(path, "not-a-model", "this is a JSON or text file, not an ONNX model")
    if path.suffix.lower() == ".ort":
        raise _problem(path, "not-a-model", "the file has no ORT-format header; it is not an ORT model")
    return "onnx"


def load_onnx(path: Path, weights: bool = True):
    """Parse the protobuf without external data; refuse what is not a model.

    Without `weights`, the top-level initializers come without their data (see
    proto_scan): much faster on a large model, for code that only reads the structure."""
    import onnx
    from google.protobuf.message import DecodeError

    try:
        model = None if weights else _structure_or_none(path)
        if model is None:
            model = onnx.load(str(path), load_external_data=False)
    except (DecodeError, RuntimeError, ValueError, UnicodeDecodeError) as exc:
        raise _problem(path, "not-a-model",
                       "the file could not be read as an ONNX model; it is damaged, "
                       f"truncated or of another kind ({first_line(exc, 120)})") from None
    except MemoryError:
        raise _problem(path, "too-large", "not enough memory to read this model") from None
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise _problem(path, "not-a-model",
                       "the file holds no graph; it is damaged, truncated or not an ONNX model")
    return model


def _structure_or_none(path: Path):
    """The weightless structure, or None where the quick walk cannot read the file (the
    full parse then says why)."""
    from app.core.model.proto_scan import load_structure

    try:
        return load_structure(path)
    except (OSError, ValueError):  # ScanError is a ValueError
        return None


def iter_graphs(graph):
    """The graph and every subgraph nested in it (If/Loop/Scan bodies), depth first."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("g"):
                yield from iter_graphs(attr.g)
            for sub in attr.graphs:
                yield from iter_graphs(sub)


def iter_tensors(model):
    """Every initializer and Constant-node tensor, subgraphs included."""
    for graph in iter_graphs(model.graph):
        yield from graph.initializer
        for node in graph.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                for attr in node.attribute:
                    if attr.HasField("t"):
                        yield attr.t


def external_data_info(tensor) -> dict:
    return {entry.key: entry.value for entry in tensor.external_data}


def check_external_data(path: Path, model) -> list[str]:
    """Check every external-data reference stays inside the model's folder and exists.

    Returns the distinct data files the model uses."""
    import onnx

    base = path.resolve().parent
    files: dict[str, int] = {}
    for tensor in iter_tensors(model):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = external_data_info(tensor)
        location = info.get("location", "")
        where = f"tensor '{tensor.name}' keeps its data in '{location}'"
        if not location:
            raise _problem(path, "bad-external-data", f"tensor '{tensor.name}' says its data is external but names no file")
        if os.path.isabs(location) or location.startswith(("/", "\\")) or ":" in location:
            raise _problem(path, "unsafe-external-data",
                           f"{where}, an absolute path; external data must sit in the model's folder")
        parts = Path(location.replace("\\", "/")).parts
        if ".." in parts:
            raise _problem(path, "unsafe-external-data",
                           f"{where}, which points outside the model's folder; refused")
        target = base / Path(*parts)
        if target.is_symlink() or any(p.is_symlink() for p in target.parents if base in p.parents):
            raise _problem(path, "unsafe-external-data",
                           f"{where}, which is a symbolic link; refused")
        resolved = target.resolve()
        if base != resolved.parent and base not in resolved.parents:
            raise _problem(path, "unsafe-external-data",
                           f"{where}, which resolves outside the model's folder; refused")
        if not resolved.is_file():
            raise _problem(path, "missing-external-data", f"{where}, but that file is missing")
        size = files.get(location)
        if size is None:
            size = files[location] = resolved.stat().st_size
        try:
            offset = int(info.get("offset", 0) or 0)
            length = int(info["length"]) if "length" in info else None
        except ValueError:
            raise _problem(path, "bad-external-data", f"{where} with an offset or length that is not a number") from None
        if offset < 0 or offset > size or (length is not None and (length < 0 or offset + length > size)):
            raise _problem(path, "missing-external-data",
                           f"{where}, but that file is shorter than the model says "
                           f"(needs {offset + (length or 0):,} bytes, has {size:,}); it is truncated")
    return sorted(files)


def check_versions(path: Path, model) -> None:
    import onnx

    newest_ir = onnx.IR_VERSION
    if model.ir_version < MIN_IR_VERSION:
        raise _problem(path, "unsupported-version",
                       f"IR version {model.ir_version} is too old; ONNX Runtime needs {MIN_IR_VERSION} or newer "
                       "(re-export the model or upgrade it with onnx.version_converter)")
    if model.ir_version > newest_ir:
        raise _problem(path, "unsupported-version",
                       f"IR version {model.ir_version} is newer than this installation understands "
                       f"(up to {newest_ir}); upgrade the onnx and onnxruntime packages")
    newest_opset = onnx.defs.onnx_opset_version()
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            if opset.version < MIN_OPSET:
                raise _problem(path, "unsupported-version",
                               f"opset {opset.version} is too old; ONNX Runtime runs opset {MIN_OPSET} and newer "
                               "(convert it with onnx.version_converter)")
            if opset.version > newest_opset:
                raise _problem(path, "unsupported-version",
                               f"opset {opset.version} is newer than this installation knows (up to {newest_opset}); "
                               "upgrade the onnx and onnxruntime packages")


def check_graph(path: Path, model, has_external: bool) -> None:
    """Run ONNX's own checker; its first line says what is wrong."""
    import onnx

    try:
        if has_external:
            onnx.checker.check_model(str(path))
        else:
            onnx.checker.check_model(model)
    except (onnx.checker.ValidationError, RuntimeError, ValueError) as exc:
        raise _problem(path, "invalid-model", f"the model is invalid: {checker_message(str(exc))}") from None


def checker_message(text: str) -> str:
    """ONNX checker messages span lines; say the same in one."""
    match = re.search(r"topologically sorted, however input '([^']*)' of node:\s*name: (\S*) OpType: (\S+)", text)
    if match:
        value, node, op = match.groups()
        return (f"input '{value}' of node '{node or '(unnamed)'}' ({op}) is not made by any earlier node; "
                "the graph has a cycle or an undefined input")
    return first_line(" ".join(text.split()))


def check_declared_shapes(path: Path, model) -> None:
    import onnx
    import numpy as np

    for value in list(model.graph.input) + list(model.graph.output):
        if not value.type.HasField("tensor_type"):
            continue
        tensor_type = value.type.tensor_type
        count = 1
        for dim in tensor_type.shape.dim:
            if dim.HasField("dim_value"):
                if dim.dim_value == -1:
                    continue  # some exporters (Paddle) write -1 for a dynamic dimension
                if dim.dim_value < 0:
                    raise _problem(path, "invalid-shape",
                                   f"'{value.name}' declares a negative dimension ({dim.dim_value})")
                count *= dim.dim_value
        try:
            itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)).itemsize
        except (KeyError, TypeError, ValueError):
            itemsize = 1
        if count * itemsize > MAX_DECLARED_BYTES:
            raise _problem(path, "invalid-shape",
                           f"'{value.name}' declares a shape of {count:,} elements "
                           f"({count * itemsize / 2**40:,.0f} TiB); the shape is broken")
