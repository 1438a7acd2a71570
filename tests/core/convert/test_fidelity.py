import numpy as np
import onnxruntime as ort
import pytest

from app.core.jobs.errors import UserError
from app.core.session.inputs import FeedSpec
from app.core.convert.fidelity import compare_outputs
from app.core.session.outputs import Tolerance, as_array, compare_values
from tests import convert_models, models


def run(path, feeds):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def test_a_model_against_itself_has_no_difference(tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    report = compare_outputs(path, path, FeedSpec(seed=3), Tolerance())
    row = report["outputs"][0]
    assert report["passed"] is True
    assert row["max_abs_diff"] == 0 and row["max_rel_diff"] == 0
    assert row["cosine"] == pytest.approx(1.0)
    assert report["dims_used"] == {"batch": 1}


def test_a_broken_variant_fails_with_the_numbers_of_real_runs(tmp_path):
    source = models.save(models.mlp(width=16, depth=2), tmp_path / "mlp.onnx")
    broken = models.save(convert_models.with_changed_weight(models.mlp(width=16, depth=2), "b1", 0.5),
                         tmp_path / "broken.onnx")
    report = compare_outputs(source, broken, FeedSpec(seed=0, dims={"batch": 4}), Tolerance())
    rng_feeds = {"x": np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)}
    expected = np.abs(run(source, rng_feeds).astype(np.float64) - run(broken, rng_feeds)).max()
    row = report["outputs"][0]
    assert report["passed"] is False
    assert row["passed"] is False and "differences above" in row["problem"]
    assert row["max_abs_diff"] == pytest.approx(expected, rel=1e-6)
    assert report["max_abs_diff"] == row["max_abs_diff"]
    assert report["dims_used"] == {"batch": 4}


def test_nan_in_the_variant_fails_and_is_counted():
    tolerance = Tolerance(atol=10, rtol=10, min_cosine=-1)
    expected = np.array([1.0, 2.0, 3.0], np.float32)
    row = compare_values("y", expected, np.array([1.0, np.nan, np.inf], np.float32), tolerance)
    assert row["nonfinite"] == 2 and row["source_nonfinite"] == 0
    assert row["passed"] is False and "NaN/Inf" in row["problem"]


def test_nan_where_the_source_has_nan_is_not_a_difference():
    values = np.array([np.nan, 1.0], np.float32)
    row = compare_values("y", values, values.copy(), Tolerance())
    assert row["passed"] is True and row["source_nonfinite"] == 1


def test_shape_mismatch_fails():
    row = compare_values("y", np.zeros((2, 3)), np.zeros((3, 2)), Tolerance())
    assert row["passed"] is False and "shape" in row["problem"]


def test_cosine_and_relative_difference():
    row = compare_values("y", np.array([1.0, 0.0]), np.array([0.0, 1.0]), Tolerance(atol=5, rtol=0, min_cosine=0.5))
    assert row["cosine"] == pytest.approx(0.0)
    assert row["max_rel_diff"] == pytest.approx(1.0)
    assert row["passed"] is False and "cosine" in row["problem"]


def test_an_output_of_zeros_has_no_cosine_and_passes_within_the_bound():
    """fp16 of a detector at a 1×1 input: the source's map is all zeros, the variant's within
    2e-07 of it. A zero vector has no direction: the cosine is undefined, not 0, and the
    element-wise bound judges the output."""
    source, variant = np.zeros((1, 1, 4, 4)), np.full((1, 1, 4, 4), 2.09e-07)
    row = compare_values("map", source, variant, Tolerance(atol=1e-3, rtol=1e-3, min_cosine=0.999))
    assert row["cosine"] is None and row["passed"] is True and row["problem"] == ""
    assert compare_values("map", source, source, Tolerance())["cosine"] == 1.0
    far = compare_values("map", source, np.ones((1, 1, 4, 4)), Tolerance())
    assert far["cosine"] is None and far["passed"] is False and "differences above" in far["problem"]
    # the other way round the cosine is 0 and the problem says why: the variant lost the output
    lost = compare_values("map", np.ones((1, 1, 4, 4)), source, Tolerance())
    assert lost["cosine"] == 0.0 and lost["problem"].startswith("all zeros where the source's are not")


def test_class_probability_maps_are_compared_as_rows():
    maps = [{0: 0.25, 1: 0.75}, {0: 0.5, 1: 0.5}]
    assert as_array(maps).tolist() == [[0.25, 0.75], [0.5, 0.5]]
    assert as_array([{"a": 1}, {"b": 2}]) is None


def test_a_float16_variant_gets_float16_inputs(tmp_path):
    from onnxconverter_common import float16

    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    half = models.save(float16.convert_float_to_float16(models.mlp(), keep_io_types=False), tmp_path / "half.onnx")
    report = compare_outputs(source, half, None, Tolerance(atol=1e-2, rtol=1e-2, min_cosine=0.999))
    assert report["passed"] is True
    assert 0 < report["max_abs_diff"] < 1e-2


def test_a_variant_that_cannot_load_fails_the_check(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    other = models.save(models.cnn(), tmp_path / "cnn.onnx")
    report = compare_outputs(source, other, None, None)
    assert report["passed"] is False


def test_bad_tolerances_are_refused():
    with pytest.raises(UserError):
        Tolerance.from_dict({"atol": -1})
    with pytest.raises(UserError):
        Tolerance.from_dict({"cosine": 0.9})
    with pytest.raises(UserError, match="must be numbers"):
        Tolerance.from_dict({"atol": "tiny"})


def test_the_check_message_writes_its_cosine_as_every_panel_does():
    """The failed check's message and the Drift panel write one cosine the same way (app.core.formatting)."""
    from app.core.formatting import cosine_text
    c = 0.0267663
    row = compare_values("y", np.array([1.0, 0.0]), np.array([c, (1 - c * c) ** 0.5]),
                         Tolerance(atol=10, rtol=0, min_cosine=0.5))
    assert cosine_text(row["cosine"]) == "0.0267663"
    assert "cosine 0.0267663 below 0.5" in row["problem"]
