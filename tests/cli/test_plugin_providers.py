"""The command line with the OpenVINO plugin package installed: `ortune devices` lists it and
its devices, and the session flags use it (--provider openvino, its typed options,
--device-policy, --ep-library) in bench, compare and placement."""

import onnx
from onnx import TensorProto, helper

from tests.openvino_plugin import openvino_plugin  # noqa: F401 (a fixture)

OPENVINO = "OpenVINOExecutionProvider"


def test_devices_lists_the_plugin_available_with_its_devices(ortune, openvino_plugin):
    result = ortune("devices", "--json")
    assert result.code == 0, result.stderr
    info = result.json()
    openvino = next(p for p in info["providers"] if p["name"] == OPENVINO)
    assert openvino["available"] is True and openvino["reason"] == ""
    assert openvino["plugin"]["package"] == "onnxruntime-ep-openvino"
    plugin = next(p for p in info["plugins"] if p["package"] == "onnxruntime-ep-openvino")
    assert plugin["error"] == "" and OPENVINO in plugin["providers"]
    devices = [d for d in info["devices"] if d["provider"] == OPENVINO]
    assert devices and all(d["available"] for d in devices)
    assert {"type", "vendor", "vendor_id", "device_id", "metadata"} <= set(devices[0])
    assert devices[0]["metadata"]["ov_device"] == "CPU"
    text = ortune("devices").stdout
    assert "onnxruntime-ep-openvino" in text and "ov_device=CPU" in text


def test_devices_names_a_library_that_does_not_load(ortune, tmp_path):
    fake = tmp_path / "libfake.so"
    fake.write_bytes(b"\x7fELF not really")
    result = ortune("devices", "--ep-library", f"fake={fake}", "--json")
    assert result.code == 0, result.stderr
    plugin = next(p for p in result.json()["plugins"] if p["registration"] == "fake")
    assert plugin["error"].startswith("ONNX Runtime could not load it")


def test_bench_on_the_plugin_records_it_in_the_preset(ortune, demo_model, tmp_path, openvino_plugin):
    result = ortune("bench", demo_model, "--provider", "openvino", "--provider-option", "precision=FP32",
                    "--iterations", "20", "--warmup", "2", "--json")
    assert result.code == 0, result.stderr
    report = result.json()
    assert report["providers"][0] == OPENVINO
    assert report["session"]["providers"][0]["plugin"]["package"] == "onnxruntime-ep-openvino"
    assert report["session"]["providers"][0]["options"] == {"precision": "FP32"}
    assert OPENVINO in {d["provider"] for d in report["devices"]}


def test_a_device_policy_names_the_devices_it_picked(ortune, demo_model, openvino_plugin):
    result = ortune("bench", demo_model, "--device-policy", "max-performance", "--iterations", "20",
                    "--warmup", "2")
    assert result.code == 0, result.stderr
    picked = next(line for line in result.stdout.splitlines() if line.startswith("the device policy"))
    assert picked.startswith("the device policy max-performance picked: ") and "CPU" in picked


def test_wrong_plugin_settings_get_one_line_and_exit_2(ortune, demo_model, tmp_path):
    for args, words in ((["--provider", "openvino", "--provider-option", "precision=FP8"], "precision must be one of"),
                        (["--ep-library", f"mine={tmp_path / 'none.so'}"], "execution provider library mine"),
                        (["--device-policy", "min-power", "--provider", "openvino"], "picks the providers itself")):
        result = ortune("bench", demo_model, *args, "--iterations", "5")
        assert result.code == 2, (args, result.stdout, result.stderr)
        assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_compare_runs_both_models_on_the_plugin(ortune, demo_model, openvino_plugin):
    result = ortune("compare", demo_model, demo_model, "--provider", "openvino", "--duration", "0.3", "--pairs", "1",
                    "--max-seconds", "2", "--no-history", "--json")
    assert result.code == 0, result.stderr
    rows = result.json()["models"]
    assert len(rows) == 2 and rows[1]["fidelity"]["passed"]


def test_placement_shows_what_fell_back_from_the_plugin(ortune, tmp_path, openvino_plugin):
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Inverse", ["r"], ["i"], domain="com.microsoft"),
         helper.make_node("Relu", ["i"], ["y"])], "fallback",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "fallback.onnx")
    result = ortune("placement", tmp_path / "fallback.onnx", "--provider", "openvino", "--json")
    assert result.code == 0, result.stderr
    placed = {node["op_type"]: node["provider"] for node in result.json()["nodes"]}
    assert placed["Inverse"] == "CPUExecutionProvider"
    assert "CPU: 1 node: Inverse" in result.json()["summary"]
