"""`ortune diff A B`: text and JSON."""

import copy

from onnxconverter_common import float16

from tests import models


def test_diff_of_a_model_and_its_fp16_variant(ortune, tmp_path):
    source = models.cnn()
    a = models.save(source, tmp_path / "a.onnx")
    b = models.save(float16.convert_float_to_float16(copy.deepcopy(source), keep_io_types=True), tmp_path / "b.onnx")
    result = ortune("diff", a, b, "--json")
    assert result.code == 0, result.stderr
    info = result.json()
    assert len(info["added"]) == 2 and info["removed"] == [] and {n["name"] for n in info["changed"]} == {
        "conv1", "conv2", "fc"}
    text = ortune("diff", a, b).stdout
    assert "2 added, 0 removed, 3 changed" in text and "c2.w: dtype float -> float16" in text


def test_diff_of_a_missing_file_is_a_user_error(ortune, tmp_path):
    result = ortune("diff", tmp_path / "none.onnx", tmp_path / "none.onnx")
    assert result.code == 2 and "none.onnx" in result.stderr
