"""Reading a model file safely, the one way every command and the window do it: recognise
what a file is, refuse only what ONNX Runtime would refuse or what cannot be read safely,
and never read outside the model's own folder.

The rules:
- a model given by a symbolic link is the file the link points to: its external data is
  looked for, and must stay, in that file's folder, and ONNX Runtime is given that file;
- external data must be a regular file of the model's folder with a single name: a
  location that escapes the folder, a symbolic link or a hard link is refused (ONNX's own
  loader refuses a hard-linked data file too, so no conversion could read it);
- the onnx checker's stricter complaints are warnings when ONNX Runtime loads the model
  all the same; what ONNX Runtime refuses is refused with its own reason.

Every refusal is a `UserError` whose message names the file and the problem, in one line."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.model.genai import model_file
from app.core.model.ort_verdict import runtime_load_refusal, runtime_version_refusal

ORT_FORMAT_MAGIC = b"ORTM"       # flatbuffer file identifier at offset 4
OLDEST_PROMISED_OPSET = 7        # ONNX Runtime runs older ai.onnx opsets only as far as it kept their kernels
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


def one_line(text) -> str:
    """A message on one line, whole."""
    return " ".join(str(text).split())


@dataclass
class Admitted:
    """A model the intake let in."""
    path: Path                      # the file itself, links followed: what ONNX Runtime is given
    format: str                     # "onnx" or "ort"
    model: object = None            # the parsed ModelProto (external data not loaded); None for .ort
    external_files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def admit(path: str | os.PathLike, weights: bool = False, checker: bool = False, onnx_only: str = "") -> Admitted:
    """The intake of every command: the file, its kind, its external data and its versions
    checked, and with `checker` ONNX's checker run (its complaints as warnings).

    Without `weights` the model comes without its top-level weights' data (see load_onnx);
    the checker needs them, so `checker` reads them. `onnx_only` says why an .ort file
    will not do, for a command that needs the ONNX graph."""
    path = check_readable(path)
    if sniff(path) == "ort":
        if onnx_only:
            raise _problem(path, "bad-input", f"is an ORT-format model; {onnx_only}")
        return Admitted(path, "ort")
    model = load_onnx(path, weights=weights or checker)
    files = check_external_data(path, model)
    warnings = check_versions(path, model) + check_declared_shapes(path, model)
    if checker:
        warnings += check_graph(path, model, bool(files))
    return Admitted(path, "onnx", model, files, warnings)


def file_kind(mode: int) -> str:
    """'' for a regular file, else what it is: 'a folder', 'a FIFO (named pipe)' …"""
    for test, kind in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "" if stat.S_ISREG(mode) else "not a regular file"


def check_name(path: str | os.PathLike) -> None:
    """Refuse a path that is not valid UTF-8 (Python keeps its bytes as lone surrogates):
    ONNX Runtime and onnx take a path only as UTF-8 text, and say so in a dump of their
    bindings' signatures."""
    try:
        os.fspath(path).encode("utf-8")
    except UnicodeEncodeError:
        raise UserError("bad-input", f"{path}: the file name is not valid UTF-8, and ONNX Runtime opens only "
                                     "UTF-8 names; rename the file (or a folder above it)") from None


def check_readable(path: str | os.PathLike) -> Path:
    """The path names a non-empty regular file we can open; returns that file's own path
    (links followed). A FIFO or device is never opened: opening one can block or consume it.
    An onnxruntime-genai folder is its decoder file (app.core.model.genai)."""
    check_name(path)
    path = model_file(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise UserError("not-found", f"{path}: is a symbolic link to a missing file") from None
        raise UserError("not-found", f"{path}: no such file") from None
    except OSError as exc:
        raise UserError("unreadable", f"{path}: cannot be read ({exc.strerror})") from None
    kind = file_kind(info.st_mode)
    if kind == "a folder":
        raise UserError("not-a-file", f"{path}: is a folder, not a model file (nor a model folder with a "
                                      "genai_config.json naming its decoder)")
    if kind:
        raise UserError("not-a-file", f"{path}: is {kind}, not a regular file; a model must be a file")
    try:   # without blocking, should a FIFO have taken the file's place since
        os.close(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
    except OSError as exc:
        raise UserError("unreadable", f"{path}: cannot be read ({exc.strerror})") from None
    if info.st_size == 0:
        raise _problem(path, "empty-file", "the file is empty")
    return path.resolve()


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
                       f"truncated or of another kind ({one_line(exc)})") from None
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
        try:
            os.lstat(target)                          # a name the system cannot take fails here
        except FileNotFoundError:
            pass                                      # said below, once links are ruled out
        except (OSError, ValueError) as exc:
            shown = location if len(location) <= 80 else location[:77] + "…"
            raise _problem(path, "bad-external-data", f"tensor '{tensor.name}' names its data file '{shown}', "
                                                      f"which is not a usable file name "
                                                      f"({getattr(exc, 'strerror', None) or exc})") from None
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
            facts = resolved.stat()
            if facts.st_nlink > 1:
                raise _problem(path, "unsafe-external-data",
                               f"{where}, a file with {facts.st_nlink} hard links; a hard-linked data file can "
                               "be any file of the disk under a harmless name, so it is refused (copy the "
                               "file instead of linking it)")
            size = files[location] = facts.st_size
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


def check_versions(path: Path, model) -> list[str]:
    """Refuse the IR version and opsets this ONNX Runtime refuses, with its reason; warn
    about ai.onnx opsets older than the oldest it promises to run."""
    opsets = tuple((o.domain, int(o.version)) for o in model.opset_import)
    refusal = runtime_version_refusal(int(model.ir_version), opsets)
    if refusal:
        raise _problem(path, "unsupported-version", f"ONNX Runtime refuses its versions: {refusal}")
    return [f"opset {version} is older than {OLDEST_PROMISED_OPSET}, the oldest ONNX Runtime promises to run; "
            "it runs the operators it still has kernels for, and says which it lacks"
            for domain, version in opsets if domain in ("", "ai.onnx") and version < OLDEST_PROMISED_OPSET]


def check_graph(path: Path, model, has_external: bool) -> list[str]:
    """ONNX's checker, judged by ONNX Runtime: a complaint about a model ONNX Runtime loads
    becomes a warning; a model it refuses is refused with its reason."""
    complaint = checker_complaint(path, model, has_external)
    if not complaint:
        return []
    refusal = runtime_load_refusal(path)
    if refusal:
        raise _problem(path, "invalid-model", f"ONNX Runtime cannot load it: {refusal}")
    return [f"the onnx checker says: {complaint.rstrip('.')}; ONNX Runtime loads the model all the same"]


def checker_complaint(path: Path, model, has_external: bool) -> str:
    """What ONNX's checker finds wrong, in one line, or ''."""
    import onnx

    try:
        if has_external:
            onnx.checker.check_model(str(path))
        else:
            onnx.checker.check_model(model)
    except (onnx.checker.ValidationError, RuntimeError, ValueError) as exc:
        return checker_message(str(exc))
    return ""


def checker_message(text: str) -> str:
    """ONNX checker messages span lines; say the same in one, the node it names last."""
    match = re.search(r"topologically sorted, however input '([^']*)' of node:\s*name: (\S*) OpType: (\S+)", text)
    if match:
        value, node, op = match.groups()
        return (f"input '{value}' of node '{node or '(unnamed)'}' ({op}) is not made by any earlier node; "
                "the graph has a cycle or an undefined input")
    reason, _, context = text.partition("==> Context:")
    node = re.search(r"Name: (\S*) OpType: (\S+)", context)
    where = f" (node '{node.group(1) or '(unnamed)'}', {node.group(2)})" if node else ""
    return one_line(reason) + where


def check_declared_shapes(path: Path, model) -> list[str]:
    """Refuse a declared input or output too large to ever exist (its feeds could not be
    made); warn about negative dimensions, which ONNX Runtime reads as unknown sizes."""
    import onnx
    import numpy as np

    warnings = []
    for value in list(model.graph.input) + list(model.graph.output):
        if not value.type.HasField("tensor_type"):
            continue
        tensor_type = value.type.tensor_type
        count = 1
        for dim in tensor_type.shape.dim:
            if dim.HasField("dim_value"):
                if dim.dim_value < -1:        # some exporters (Paddle) write -1 for a dynamic dimension
                    warnings.append(f"'{value.name}' declares a negative dimension ({dim.dim_value}); "
                                    "ONNX Runtime reads it as an unknown size")
                count *= dim.dim_value if dim.dim_value >= 0 else 1
        try:
            itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)).itemsize
        except (KeyError, TypeError, ValueError):
            itemsize = 1
        if count * itemsize > MAX_DECLARED_BYTES:
            raise _problem(path, "invalid-shape",
                           f"'{value.name}' declares a shape of {count:,} elements "
                           f"({count * itemsize / 2**40:,.0f} TiB); the shape is broken")
    return warnings
