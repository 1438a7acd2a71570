"""Broken model files, one per way a file can be wrong. Each maker writes into a
folder and returns the path plus the error kind the intake must report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests import models


def _write(model, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


def empty(folder):
    path = folder / "empty.onnx"
    path.write_bytes(b"")
    return path, "empty-file"


def random_bytes(folder):
    path = folder / "random.onnx"
    path.write_bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    return path, "not-a-model"


def truncated(folder):
    data = models.cnn().SerializeToString()
    path = folder / "truncated.onnx"
    path.write_bytes(data[: len(data) // 2])
    return path, "not-a-model"


def png(folder):
    path = folder / "picture.onnx"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    return path, "not-a-model"


def json_file(folder):
    path = folder / "config.onnx"
    path.write_text(json.dumps({"model": "not really"}))
    return path, "not-a-model"


def fake_ort(folder):
    path = folder / "fake.ort"
    path.write_bytes(b"this is no flatbuffer" * 10)
    return path, "not-a-model"


def _external(folder, location: str, name: str):
    model = models.mlp(width=8, depth=1)
    tensor = model.graph.initializer[0]
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "256")):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return _write(model, folder / name)


def external_missing(folder):
    return _external(folder, "weights.bin", "missing_data.onnx"), "missing-external-data"


def external_escaping(folder):
    sub = folder / "inner"
    sub.mkdir(exist_ok=True)
    (folder / "secret.bin").write_bytes(b"\0" * 256)
    return _external(sub, "../secret.bin", "escaping.onnx"), "unsafe-external-data"


def external_absolute(folder):
    (folder / "abs.bin").write_bytes(b"\0" * 256)
    return _external(folder, str((folder / "abs.bin").resolve()), "absolute.onnx"), "unsafe-external-data"


def external_symlink(folder):
    outside = folder.parent / f"{folder.name}-outside.bin"
    outside.write_bytes(b"\0" * 256)
    link = folder / "link.bin"
    if not link.exists():
        os.symlink(outside, link)
    return _external(folder, "link.bin", "symlinked.onnx"), "unsafe-external-data"


def external_hard_link(folder):
    """A data file that is also another file (ORT would read it; ONNX's loader calls it an attack)."""
    (folder / "elsewhere.bin").write_bytes(b"\0" * 256)
    os.link(folder / "elsewhere.bin", folder / "hard.bin")
    return _external(folder, "hard.bin", "hard_linked.onnx"), "unsafe-external-data"


def external_short(folder):
    (folder / "short.bin").write_bytes(b"\0" * 10)
    return _external(folder, "short.bin", "short_data.onnx"), "missing-external-data"


def unknown_operator(folder):
    model = models.tiny_add()
    model.graph.node[0].op_type = "FrobnicateTensor"
    return _write(model, folder / "unknown_op.onnx"), "invalid-model"


def opset_too_new(folder):
    model = models.tiny_add()
    model.opset_import[0].version = 999
    return _write(model, folder / "new_opset.onnx"), "unsupported-version"


def ir_too_new(folder):
    model = models.tiny_add()
    model.ir_version = 99
    return _write(model, folder / "new_ir.onnx"), "unsupported-version"


def cycle(folder):
    nodes = [helper.make_node("Relu", ["b"], ["a"], name="first"), helper.make_node("Relu", ["a"], ["b"], name="second"),
             helper.make_node("Add", ["x", "a"], ["y"], name="out")]
    graph = helper.make_graph(nodes, "cycle", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return _write(model, folder / "cycle.onnx"), "invalid-model"


def undefined_input(folder):
    nodes = [helper.make_node("Add", ["x", "ghost"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "undefined", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return _write(model, folder / "undefined.onnx"), "invalid-model"


def absurd_shape(folder):
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "huge",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10**6, 10**6, 10**6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [10**6, 10**6, 10**6])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return _write(model, folder / "absurd.onnx"), "invalid-shape"


ALL = [empty, random_bytes, truncated, png, json_file, fake_ort, external_missing, external_escaping,
       external_absolute, external_symlink, external_hard_link, external_short, unknown_operator, opset_too_new,
       ir_too_new, cycle, undefined_input, absurd_shape]


def external_ok(folder: Path) -> Path:
    """A valid model whose weights live in a file beside it."""
    model = models.mlp(width=16, depth=2)
    path = folder / "external.onnx"
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
              location="external.onnx.data", size_threshold=0)
    return path


__all__ = ["ALL", "external_ok", "numpy_helper"]
