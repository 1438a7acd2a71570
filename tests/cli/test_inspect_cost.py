"""`ortune inspect` reports the model's cost totals, in JSON and in text."""

from tests import models


def test_inspect_reports_macs_flops_and_activation_memory(ortune, tmp_path):
    path = models.save(models.cnn(), tmp_path / "cnn.onnx")
    info = ortune("inspect", path, "--json").json()
    assert info["macs"] == 8 * 32 * 32 * 27 + 8 * 32 * 32 * 72 + 80
    assert info["flops"] > 2 * info["macs"]
    assert info["peak_activation_bytes"] == 2 * 8 * 32 * 32 * 4 < info["activation_bytes"]
    assert info["cost"]["inputs"][0]["shape"] == [1, 3, 32, 32]
    text = ortune("inspect", path).stdout
    assert "811.09 kMACs" in text and "x [1, 3, 32, 32]" in text
