"""No conversion leaves a stale value_info: every kind's variant, with every tensor exposed
as a graph output (as Polygraphy's `--onnx-outputs mark all` does), loads and runs in ORT."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from app.core.convert.jobs import MAKE
from app.core.drift.expose import expose_all
from tests import models

KINDS = [("fp16", "cnn", {}), ("int8-dynamic", "mlp", {}), ("int8-static", "cnn", {}),
         ("int4", "mlp", {}), ("optimize", "cnn", {}), ("transformers", "transformer_block", {}),
         ("transformers", "transformer_block", {"fp16": True})]
#: the kinds that need a GPU: tests/gpu/test_cuda_clean_variants.py checks them
GPU_KINDS = [("mixed", "cnn", {})]
#: a compiled EP context model is EPContext nodes only: no inner tensor to expose, and only the provider that
#: compiled it runs it (tests/cli/test_compiled_context.py checks it)
NOTHING_TO_EXPOSE = {"compiled"}


def _runs_exposed(path) -> None:
    model = onnx.load(str(path))
    expose_all(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {}
    for value in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in value.shape]
        feeds[value.name] = (np.zeros(shape, np.int64) if "int64" in value.type
                             else np.zeros(shape, np.float16 if "float16" in value.type else np.float32))
    session.run(None, feeds)


def test_every_kind_writing_an_onnx_model_is_checked():
    from app.core.convert.options import KINDS as ALL_KINDS
    assert ({name for name, kind in ALL_KINDS.items() if kind.suffix == ".onnx"}
            == {kind for kind, _, _ in KINDS + GPU_KINDS} | NOTHING_TO_EXPOSE)
    assert all(ALL_KINDS[kind].needs_gpu for kind, _, _ in GPU_KINDS)


def check_variant(tmp_path, kind: str, maker: str, options: dict) -> None:
    source = models.save(getattr(models, maker)(), tmp_path / f"{maker}.onnx")
    output = tmp_path / f"{maker}.{kind}.onnx"
    MAKE({"kind": kind, "input": str(source), "output": str(output), "speed_s": 0, "options": options}, None)
    _runs_exposed(output)
    variant = onnx.load(str(output), load_external_data=False)
    outputs = {v.name for v in variant.graph.output} | {v.name for v in variant.graph.input}
    assert not [v.name for v in variant.graph.value_info if v.name in outputs]


@pytest.mark.parametrize("kind, maker, options", KINDS)
def test_every_kinds_variant_runs_with_all_its_tensors_exposed(tmp_path, kind, maker, options):
    check_variant(tmp_path, kind, maker, options)


def test_fp16_leaves_no_float16_value_info_for_a_float_output(tmp_path):
    """A source whose value_info also types its graph output (as some exporters write):
    onnxconverter-common turns that entry to float16 and keeps the output float."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Sigmoid", ["r"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        value_info=[helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 8]),
                    helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])])
    source = models.save(helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 17)]),
                         tmp_path / "small.onnx")
    output = tmp_path / "small.fp16.onnx"
    MAKE({"kind": "fp16", "input": str(source), "output": str(output), "speed_s": 0}, None)
    _runs_exposed(output)
    variant = onnx.load(str(output))
    declared = {v.name: v.type.tensor_type.elem_type for v in variant.graph.output}
    assert all(declared.get(v.name, v.type.tensor_type.elem_type) == v.type.tensor_type.elem_type
               for v in variant.graph.value_info)
