import shutil
import subprocess
import sys

import pytest

from app.core.jobs.errors import UserError
from app.core.model.inspect import inspect_model
from tests import bad_models, models


def test_demo_model_summary(demo_model):
    info = inspect_model(demo_model)
    assert info["format"] == "onnx"
    assert info["inputs"] == [{"name": "image", "kind": "tensor", "dtype": "float", "shape": ["batch", 3, 64, 64]}]
    assert info["outputs"][0]["shape"] == ["batch", 10]
    assert info["opsets"] == {"ai.onnx": 17}
    assert info["op_counts"]["Conv"] == 3
    assert info["node_count"] == sum(info["op_counts"].values()) == 12
    assert info["parameters"] == 16 * 27 + 16 + 32 * 144 + 32 + 64 * 288 + 64 + 640 + 10
    assert info["initializer_bytes"] == info["parameters"] * 4
    assert info["size_bytes"] == demo_model.stat().st_size
    assert info["external_data"] is False
    assert info["metadata"]["purpose"] == "demo"


def test_subgraphs_are_counted(tmp_path):
    path = models.save(models.with_if_subgraph(), tmp_path / "branch.onnx")
    info = inspect_model(path)
    assert info["subgraph_count"] == 2
    assert info["top_level_node_count"] == 4
    assert info["node_count"] == 7
    assert info["op_counts"]["Neg"] == 1 and info["op_counts"]["If"] == 1
    assert info["parameters"] == 1  # the Constant scalar


def test_custom_domain_ops_are_named_with_their_domain(tmp_path):
    path = models.save(models.transformer_block(), tmp_path / "block.onnx")
    info = inspect_model(path)
    assert info["op_counts"]["com.microsoft.Gelu"] == 1
    assert info["opsets"]["com.microsoft"] == 1
    assert info["inputs"][0]["shape"] == ["batch", "sequence", 32]


def test_external_data_is_followed_inside_the_folder(tmp_path):
    path = bad_models.external_ok(tmp_path)
    info = inspect_model(path)
    assert info["external_data"] is True
    assert info["external_data_files"] == ["external.onnx.data"]
    assert info["total_bytes"] == path.stat().st_size + (tmp_path / "external.onnx.data").stat().st_size
    assert info["initializer_bytes"] == info["parameters"] * 4


def test_unnamed_dims_and_initializers_as_inputs(tmp_path):
    model = models.mlp(width=8, depth=1)
    model.graph.input[0].type.tensor_type.shape.dim[0].Clear()
    from onnx import helper
    model.graph.input.append(helper.make_tensor_value_info("w0", 1, [8, 8]))
    info = inspect_model(models.save(model, tmp_path / "m.onnx"))
    assert info["inputs"] == [{"name": "x", "kind": "tensor", "dtype": "float", "shape": ["?", 8]}]
    assert info["initializers_as_inputs"] == ["w0"]


def test_minus_one_is_a_dynamic_dimension(tmp_path):
    model = models.mlp(width=8, depth=1)
    dim = model.graph.input[0].type.tensor_type.shape.dim[0]
    dim.Clear()
    dim.dim_value = -1
    info = inspect_model(models.save(model, tmp_path / "paddle_style.onnx"))
    assert info["inputs"][0]["shape"] == ["?", 8]


def test_ort_format_model_is_read(tmp_path):
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    subprocess.run([sys.executable, "-m", "onnxruntime.tools.convert_onnx_models_to_ort", str(source)],
                   check=True, capture_output=True, timeout=300)
    ort_path = tmp_path / "cnn.ort"
    info = inspect_model(ort_path)
    assert info["format"] == "ort"
    assert info["inputs"][0]["name"] == "x"
    assert info["inputs"][0]["shape"] == ["batch", 3, 32, 32]
    assert info["node_count"] > 0 and info["parameters"] > 0


@pytest.mark.parametrize("maker", bad_models.ALL, ids=lambda m: m.__name__)
def test_bad_files_are_refused_with_a_named_reason(tmp_path, maker):
    path, kind = maker(tmp_path)
    before = path.read_bytes()
    with pytest.raises(UserError) as info:
        inspect_model(path)
    assert info.value.kind == kind
    assert path.name in info.value.message
    assert "\n" not in info.value.message
    assert path.read_bytes() == before


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        inspect_model(tmp_path / "nothing.onnx")
    with pytest.raises(UserError, match="folder"):
        inspect_model(tmp_path)


def test_escaping_external_data_is_never_opened(tmp_path, monkeypatch):
    path, _ = bad_models.external_escaping(tmp_path)
    opened = []
    real_open = open

    def spy(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", spy)
    with pytest.raises(UserError):
        inspect_model(path)
    assert not any("secret.bin" in name for name in opened)
    shutil.rmtree(tmp_path / "inner")
