"""Compare's text and JSON. A model whose outputs are strings has no cosine nor relative difference: compare's text
report says the exact difference and leaves the cosine out instead of failing."""

import onnx
from onnx import TensorProto, helper

from app.cli.compare import fidelity_text


def _string_identity(path):
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "strings",
                              [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.STRING, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_a_fidelity_without_a_cosine_is_written_without_it():
    assert fidelity_text({"max_abs_diff": 0.0, "min_cosine": None, "nonfinite": 0}) == "max |Δ| 0"


def test_compare_of_a_model_with_string_outputs_prints_its_report(ortune, tmp_path):
    model = _string_identity(tmp_path / "s.onnx")
    done = ortune("compare", model, model, "--iterations", "10", "--max-seconds", "5", cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert "max |Δ| 0" in done.stdout and "internal error" not in done.stderr


def test_compare_says_the_other_models_ran_on_the_references_generated_inputs(ortune, tmp_path):
    from tests import models

    first = models.save(models.mlp(), tmp_path / "a.onnx")
    second = models.save(models.mlp(seed=1), tmp_path / "b.onnx")
    done = ortune("compare", first, second, "--iterations", "10", "--max-seconds", "5", "--json", "--no-history", cwd=tmp_path)
    assert done.code == 0, done.stderr
    rows = [row["inputs"][0] for row in done.json()["models"]]
    assert rows[0]["source"] == rows[1]["source"] != "file"
    assert rows[1]["values"] == rows[0]["values"] != "yours" and "your file" not in rows[1]["reason"]
    text = ortune("compare", first, second, "--iterations", "10", "--max-seconds", "5", "--no-history", cwd=tmp_path).stdout
    assert "inputs:" in text and "your file" not in text
