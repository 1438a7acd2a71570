from pathlib import Path

import pytest

from app.core.convert.options import KINDS, default_output, options_for_flags, parse_options, unavailable_reason
from app.core.jobs.errors import UserError


def test_defaults_fill_every_option():
    for kind, info in KINDS.items():
        options = parse_options(kind, {})
        assert set(options) == {o.name for o in info.options}
        assert all(o.help for o in info.options), kind


def test_values_are_coerced_and_checked():
    options = parse_options("int8-dynamic", {"weight_type": "quint8", "per_channel": "yes",
                                             "op_types": "MatMul, Conv", "nodes_to_exclude": ["a", " b "]})
    assert options["weight_type"] == "QUInt8"
    assert options["per_channel"] is True
    assert options["op_types"] == ["MatMul", "Conv"]
    assert options["nodes_to_exclude"] == ["a", "b"]


@pytest.mark.parametrize("kind, given, words", [
    ("fp16", {"max_finite_val": "lots"}, "expects a number"),
    ("fp16", {"block_size": 32}, "not an option of fp16"),
    ("int4", {"block_size": 48}, "power of two"),
    ("int4", {"block_size": 8}, "at least 16"),
    ("int4", {"op_types": "MatMul,Conv"}, "unknown Conv"),
    ("int4", {"method": "gptq"}, "rtn, k_quant, hqq"),
    ("int4", {"method": "k_quant", "op_types": "MatMul,Gather"}, "packs MatMul weights only"),
    ("int8-static", {"calibrate_method": "Guess"}, "MinMax, Entropy, Percentile"),
    ("transformers", {"disable_fusions": "attention,teleport"}, "unknown teleport"),
    ("nonsense", {}, "unknown conversion"),
])
def test_bad_values_name_the_option(kind, given, words):
    with pytest.raises(UserError) as caught:
        parse_options(kind, given)
    assert words in caught.value.message


def test_mixed_precision_options():
    options = parse_options("mixed", {"rtol": "0.05", "atol": 1e-4, "keep_io_types": False})
    assert options == {"rtol": 0.05, "atol": 1e-4, "keep_io_types": False}
    with pytest.raises(UserError):
        parse_options("mixed", {"rtol": -1})


def test_mixed_precision_needs_a_gpu_provider():
    cpu_only = {"providers": [
        {"name": "CPUExecutionProvider", "available": True, "gpu": False, "in_build": True, "reason": ""},
        {"name": "CUDAExecutionProvider", "available": False, "gpu": True, "in_build": True,
         "reason": "libcudnn is missing"}]}
    with_gpu = {"providers": [dict(cpu_only["providers"][1], available=True, reason="")]}
    assert "libcudnn is missing" in unavailable_reason("mixed", cpu_only)
    assert unavailable_reason("mixed", with_gpu) == ""
    assert unavailable_reason("fp16", cpu_only) == ""
    assert "checking" in unavailable_reason("mixed", None)


def test_default_output_sits_beside_the_source():
    assert default_output("/m/model.onnx", "fp16") == Path("/m/model.fp16.onnx")
    assert default_output("/m/model.onnx", "ort") == Path("/m/model.ort")


def test_shared_flags_know_their_kinds():
    table = options_for_flags()
    assert {kind for kind, _ in table["keep_io_types"]} == {"fp16", "mixed"}
    assert {kind for kind, _ in table["per_channel"]} == {"int8-dynamic", "int8-static"}


def test_a_relative_calibration_folder_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options = parse_options("int8-static", {"calibration": "samples"})
    assert options["calibration"] == str(tmp_path / "samples")
    assert parse_options("int8-static", {})["calibration"] == ""
