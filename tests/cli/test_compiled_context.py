"""`ortune convert compiled MODEL --provider openvino`: the EP context model, what it was
compiled for, its session start timed against the source's, and the one-line refusal on
another provider."""

import json

import onnx

from tests.openvino_plugin import openvino_plugin  # noqa: F401 (a fixture)


def test_a_compiled_model_records_its_provider_starts_and_matches(ortune, demo_model, tmp_path, openvino_plugin):
    output = tmp_path / "demo.compiled.onnx"
    result = ortune("convert", "compiled", demo_model, "-o", output, "--provider", "openvino",
                    "--provider-option", "precision=FP32", "--json")
    assert result.code == 0, result.stderr
    report = result.json()
    assert report["fidelity"]["passed"] is True
    record = report["compiled_for"]
    assert record["provider"] == "OpenVINOExecutionProvider" and record["options"] == {"precision": "FP32"}
    assert record["plugin"]["package"] == "onnxruntime-ep-openvino" and record["devices"][0]["type"] == "CPU"
    start = report["session_create"]
    assert len(start["source_ms"]) == len(start["compiled_ms"]) == start["rounds"] > 1
    assert start["speedup_range"][0] <= start["speedup"] <= start["speedup_range"][1]
    model = onnx.load(output)
    assert [node.op_type for node in model.graph.node] == ["EPContext"]
    stored = {entry.key: entry.value for entry in model.metadata_props}
    assert json.loads(stored["ortune.compiled_for"]) == record
    text = ortune("bench", output, "--provider", "openvino", "--iterations", "5", "--warmup", "1")
    assert text.code == 0, text.stderr


def test_another_provider_is_refused_in_one_line(ortune, demo_model, tmp_path, openvino_plugin):
    output = tmp_path / "demo.compiled.onnx"
    assert ortune("convert", "compiled", demo_model, "-o", output, "--provider", "openvino", "--no-fidelity").code == 0
    result = ortune("bench", output, "--iterations", "5")
    assert result.code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("ortune: demo.compiled.onnx was compiled for OpenVINOExecutionProvider "
                           "(onnxruntime-ep-openvino ")
    assert line.endswith("and runs only there; this session has CPUExecutionProvider: use --provider openvino")


def test_compiling_needs_a_provider(ortune, demo_model, tmp_path):
    result = ortune("convert", "compiled", demo_model, "-o", tmp_path / "x.onnx")
    assert result.code == 2 and "name it with --provider" in result.stderr
    assert not (tmp_path / "x.onnx").exists()
