"""Drift names the node where a variant's values start to part from its source's."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from app.core.convert.jobs import CONVERT
from app.core.drift.jobs import DRIFT
from app.core.drift.metrics import sqnr_db
from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from tests import drift_models, models


def _convert(source, kind, tmp_path, **options):
    out = tmp_path / f"{source.stem}_{kind}.onnx"
    result = CONVERT({"kind": kind, "input": str(source), "output": str(out), "options": options}, JobContext())
    return out, result


def test_fp16_drift_starts_at_the_matmul_whose_weights_the_converter_clips(tmp_path):
    source = models.save(drift_models.fp16_clip_trap(), tmp_path / "trap.onnx")
    variant, converted = _convert(source, "fp16", tmp_path)
    assert converted["check"] == "failed"
    result = DRIFT({"source": str(source), "variant": str(variant)}, JobContext())
    assert result["variant_precision"] == "float16"
    assert result["first_drift"]["node"] == "layer2" and result["first_drift"]["op_type"] == "MatMul"
    assert result["first_nonfinite"] is None
    names = [row["name"] for row in result["tensors"]]
    assert names == ["mm0", "h0", "mm1", "h1", "mm2", "h2", "mm3", "y"]        # graph order
    rows = {row["name"]: row for row in result["tensors"]}
    assert all(rows[n]["passed"] for n in ("mm0", "h0", "mm1", "h1"))
    assert rows["mm2"]["sqnr_loss_db"] > 40 > rows["mm1"]["sqnr_loss_db"]
    assert rows["mm2"]["fp16_fraction"] > 1 and rows["mm2"]["fp16_overflow"] > 0   # past 65504 in the source
    assert result["inputs"][0]["name"] == "x"


def test_int8_drift_names_the_layer_whose_wide_weights_dominate_the_error(tmp_path):
    source = models.save(drift_models.int8_wide_layer(), tmp_path / "wide.onnx")
    variant, _ = _convert(source, "int8-static", tmp_path)
    result = DRIFT({"source": str(source), "variant": str(variant)}, JobContext())
    assert result["variant_precision"] == "int8"
    assert result["first_drift"]["node"] == "act1"        # layer 1's output (its MatMul's Relu)
    losses = {row["node"]: row["sqnr_loss_db"] for row in result["tensors"] if row["sqnr_loss_db"] is not None}
    assert max(losses, key=losses.get) == "act1"
    assert all(row["quantized"] for row in result["tensors"])   # QDQ: compared after dequantization


def test_an_identical_variant_has_no_drift_and_a_given_tolerance_is_used(tmp_path):
    source = models.save(models.mlp(width=8, depth=2), tmp_path / "mlp.onnx")
    result = DRIFT({"source": str(source), "variant": str(source), "tolerance": {"atol": 0.5}}, JobContext())
    assert result["first_drift"] is None and result["tolerance"]["atol"] == 0.5
    assert all(row["max_abs_diff"] == 0 and row["sqnr_db"] is None for row in result["tensors"])


def test_a_variant_that_shares_no_tensor_or_cannot_run_is_refused(tmp_path):
    source = models.save(models.mlp(width=4, depth=2), tmp_path / "mlp.onnx")
    graph = helper.make_graph([helper.make_node("Neg", ["x"], ["z"], name="neg")], "other",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 4])])
    other = models.save(models._model(graph), tmp_path / "other.onnx")
    with pytest.raises(UserError, match="shares no float tensor"):
        DRIFT({"source": str(source), "variant": str(other)}, JobContext())
    wider = models.save(models.mlp(width=8, depth=2), tmp_path / "wider.onnx")
    with pytest.raises(UserError, match="could not run on the source's inputs"):
        DRIFT({"source": str(source), "variant": str(wider)}, JobContext())


def test_sqnr_is_ten_log_signal_over_noise():
    a = np.array([3.0, 4.0])
    assert sqnr_db(a, a + np.array([0.3, 0.4])) == pytest.approx(20.0)
    assert sqnr_db(a, a) is None
