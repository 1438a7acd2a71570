"""One fact measured twice in a sitting is kept once with both figures, keyed by the model's
bytes, the inputs and the settings."""

from app.core.facts import FactBook, Figure, figures_text
from tests import models

PLAN = [{"name": "x", "dtype": "float32", "shape": [1, 64]}]


def test_the_same_model_inputs_and_settings_gather_their_figures(tmp_path):
    path = models.save(models.mlp(), tmp_path / "m.onnx")
    copy = tmp_path / "copy.onnx"
    copy.write_bytes(path.read_bytes())
    book = FactBook()
    bench = Figure("Benchmark", "alone", 1.36, 100.0)
    assert book.add(path, PLAN, {"intra_op_num_threads": 1}, bench) == []
    assert book.add(path, PLAN, {"intra_op_num_threads": 1}, bench) == [], "a result shown again adds nothing"
    compare = Figure("Compare", "in alternation", 1.48, 160.0)
    # a byte-identical copy is the same model; settings written out in full are the same settings
    from app.core.session.config import SessionConfig
    full = SessionConfig.from_dict({"intra_op_num_threads": 1}).to_dict()
    assert book.add(copy, PLAN, full, compare) == [bench]
    text = figures_text([bench])
    assert "Benchmark 1.36 ms (alone" in text and "same model, inputs and settings" in text


def test_other_inputs_settings_or_bytes_are_other_facts(tmp_path):
    path = models.save(models.mlp(), tmp_path / "m.onnx")
    other = models.save(models.mlp(seed=3), tmp_path / "other.onnx")
    book = FactBook()
    book.add(path, PLAN, {}, Figure("Benchmark", "alone", 1.0, 1.0))
    assert book.add(path, [{**PLAN[0], "shape": [8, 64]}], {}, Figure("Compare", "x", 2.0, 2.0)) == []
    assert book.add(path, PLAN, {"intra_op_num_threads": 2}, Figure("Compare", "x", 2.0, 3.0)) == []
    assert book.add(other, PLAN, {}, Figure("Compare", "x", 2.0, 4.0)) == []
    assert book.add(tmp_path / "gone.onnx", PLAN, {}, Figure("Compare", "x", 2.0, 5.0)) == []
    assert figures_text([]) == ""
