"""int4 packs the weights of linear layers that exporters write as Gemm (GPT-2's Conv1D through
TorchScript), by rewriting each as MatMul + Add first: they stayed float, and a GPT-2 export got
one MatMulNBits (its head) of seventeen."""

import numpy as np
import onnx
import onnxruntime as ort

from app.core.convert.int4 import gemm_as_matmul
from app.core.convert.jobs import MAKE
from tests import models
from tests.convert_models import gemm_layers


def _run(model, x):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_the_rewrite_computes_what_the_gemms_did():
    model = gemm_layers()
    x = np.random.default_rng(1).normal(size=(3, 64)).astype(np.float32)
    before = _run(model, x)
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    assert gemm_as_matmul(rewritten.graph) == 2
    ops = [node.op_type for node in rewritten.graph.node]
    assert ops.count("MatMul") == 2 and ops.count("Gemm") == 1 and ops.count("Add") == 1
    names = {tensor.name for tensor in rewritten.graph.initializer}
    assert "w1_transposed" in names and "w1" not in names, "the transposed copy replaces a weight read once"
    onnx.checker.check_model(rewritten)
    np.testing.assert_allclose(_run(rewritten, x), before, rtol=1e-5, atol=1e-4)


def test_int4_packs_the_gemm_layers_and_says_so(tmp_path):
    source = models.save(gemm_layers(), tmp_path / "gemms.onnx")
    report = MAKE({"kind": "int4", "input": str(source), "output": str(tmp_path / "int4.onnx")}, None)
    assert report["gemm_as_matmul"] == 2
    assert report["op_changes"]["added"].get("com.microsoft.MatMulNBits") == 2
    ops = [node.op_type for node in onnx.load(str(tmp_path / "int4.onnx")).graph.node]
    assert ops.count("Gemm") == 1 and ops.count("MatMulNBits") == 2

