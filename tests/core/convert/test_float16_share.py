"""A float16 variant says how much of its weights really became float16, and warns when
little did (an If kept whole in float32, operators held back) though it passes its check."""

from app.core.convert.jobs import MAKE
from tests import convert_models, models


def half(source, output, **options):
    return MAKE({"kind": "fp16", "input": str(source), "output": str(output), "options": options}, None)


def test_a_whole_conversion_counts_every_weight(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    report = half(source, tmp_path / "half.onnx")
    weights = 3 * (64 * 64 + 64) * 4
    assert report["float16_weights"] == {"converted_bytes": weights, "kept_bytes": 0, "share": 1.0}
    assert not any("became float16" in w for w in report["warnings"])


def test_an_if_kept_whole_in_float32_is_said(tmp_path):
    source = models.save(convert_models.weights_in_a_branch(), tmp_path / "branch.onnx")
    report = half(source, tmp_path / "half.onnx", node_block_list="branch")
    share = report["float16_weights"]
    assert share["kept_bytes"] == 2 * 16 * 64 * 4 and share["share"] < 0.01
    assert report["fidelity"]["passed"] is True                  # it passes: only the share tells
    assert any(w.startswith("Only under 1% of the weights") for w in report["warnings"])


def test_held_back_operators_lower_the_share(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    report = half(source, tmp_path / "half.onnx", op_block_list="MatMul")
    share = report["float16_weights"]
    assert share["converted_bytes"] == 3 * 64 * 4 and share["kept_bytes"] == 3 * 64 * 64 * 4
    assert any(w.startswith("Only 2% of the weights") for w in report["warnings"])
