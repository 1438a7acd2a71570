"""`ortune optimize --kinds` takes the execution provider candidates: OpenVINO through its
plugin, measured against the CPU provider (skipped with the reason where it cannot load)."""

from tests import models
from tests.openvino_plugin import openvino_plugin  # noqa: F401 (a fixture)


def test_optimize_tries_openvino_and_says_what_to_ship(ortune, tmp_path, openvino_plugin):
    model = models.save(models.cnn(channels=8, size=32), tmp_path / "cnn.onnx")
    out = tmp_path / "ship"
    done = ortune("optimize", model, "-o", out, "--kinds", "openvino-fp32", "--no-tune", "--budget-seconds", "20",
                  "--screen-seconds", "0.3", "--threads", "1", "--json")
    assert done.code == 0, done.stderr
    result = done.json()
    row = next(r for r in result["candidates"] if r["kind"] == "openvino-fp32")
    assert row["status"] == "passed" and row["provider"] == "OpenVINOExecutionProvider", row["reason"]
    assert row["fidelity"]["tolerance"]["policy"] == "float32"
    choice = result["choice"]
    assert choice["kind"] in ("source", "openvino-fp32")
    shipped = "OpenVINOExecutionProvider" if choice["kind"] == "openvino-fp32" else "CPUExecutionProvider"
    assert choice["settings"]["providers"][0]["name"] == shipped
    text = ortune("optimize", model, "-o", tmp_path / "again", "--kinds", "openvino-fp32,cuda", "--no-tune",
                  "--budget-seconds", "15", "--screen-seconds", "0.3", "--threads", "1")
    assert text.code == 0, text.stderr
    answer = next(line for line in text.stdout.splitlines() if line.startswith("answer: "))
    assert answer.startswith(("answer: openvino-fp32 — ship the source model on OpenVINOExecutionProvider with "
                              "precision FP32", "answer: keep the source")), answer
    cuda = next(line for line in text.stdout.splitlines() if line.lstrip(" *").startswith("cuda "))
    # where CUDA does not start (no NVIDIA driver), the row says so; where it does, it is measured
    assert "does not start here" in cuda or " passed " in cuda or "failed-check" in cuda, cuda
