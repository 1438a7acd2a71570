"""A comparison fed from a data folder scores every model on all its samples."""

import numpy as np
import onnxruntime as ort
import pytest

from app.core.bench.jobs import COMPARE
from app.core.jobs.protocol import JobContext
from tests import models


def test_compare_scores_each_model_against_labels_expected_outputs_and_the_reference(tmp_path):
    from onnxconverter_common import float16

    source = models.mlp(width=8, depth=2)
    first = models.save(source, tmp_path / "mlp.onnx")
    second = models.save(float16.convert_float_to_float16(source, keep_io_types=True), tmp_path / "mlp16.onnx")
    data = tmp_path / "data"
    (data / "expected").mkdir(parents=True)
    session = ort.InferenceSession(str(first), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(4)
    labels = []
    for index in range(5):
        x = rng.standard_normal((1, 8)).astype(np.float32)
        np.savez(data / f"s{index}.npz", x=x)
        y = session.run(None, {"x": x})[0]
        np.save(data / "expected" / f"s{index}.npy", y)
        labels.append(int(y.argmax()) if index < 4 else (int(y.argmax()) + 1) % 8)   # the last one is wrong
    (data / "labels.csv").write_text("".join(f"s{i}.npz,{label}\n" for i, label in enumerate(labels)))
    result = COMPARE({"models": [{"path": str(first), "label": "fp32"}, {"path": str(second), "label": "fp16"}],
                      "session": {"inputs": {"data": str(data)}}, "run": {"warmup": 1, "iterations": 20},
                      "record": False, "max_seconds": 1}, JobContext())     # accuracy, not speed
    reference, variant = (row["accuracy"] for row in result["models"])
    assert reference["samples"] == variant["samples"] == 5 and reference["labelled"] == 5
    assert reference["label_accuracy"] == pytest.approx(0.8)
    assert reference["against_expected"] == {"mean_abs_error": 0.0, "argmax_agreement": 1.0}
    assert reference["against_reference"] is None
    assert 0 < variant["against_reference"]["mean_abs_error"] < 1e-2
    assert variant["against_reference"]["mean_abs_error"] == pytest.approx(
        variant["against_expected"]["mean_abs_error"], rel=1e-6)
    assert result["models"][0]["inputs"][0]["reason"] == "sample s0.npz of your data folder"
