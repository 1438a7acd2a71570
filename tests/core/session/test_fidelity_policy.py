"""One fidelity policy: each kind of variant is held to one declared policy, named in every
verdict, and the gate picks the policy of the variant it is given."""

import json

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from app.core.jobs.errors import UserError
from app.core.session import fidelity_policy as policy
from app.core.session.outputs import Tolerance, compare_values
from tests import models


def test_every_conversion_kind_has_its_policy():
    from app.core.convert.options import KINDS, default_tolerance

    assert set(policy.KIND_POLICY) == set(KINDS)
    assert default_tolerance("fp16", {})["policy"] == "float16"
    assert default_tolerance("transformers", {"fp16": True})["policy"] == "float16"
    assert default_tolerance("transformers", {})["policy"] == "float32"
    assert default_tolerance("int4", {})["policy"] == "int4"


def _with_op(op_type: str) -> onnx.ModelProto:
    model = models.mlp(width=8, depth=1)
    model.graph.node.append(helper.make_node(op_type, ["y"], ["unused"], name="marker"))
    return model


def test_the_pair_policy_follows_the_variants_precision():
    source = models.mlp(width=8, depth=1)
    half = models.mlp(width=8, depth=1)
    half.graph.initializer.append(numpy_helper.from_array(np.zeros(2, np.float16), "h"))
    assert policy.model_precision(source) == "float32"
    assert policy.model_precision(half) == "float16"
    assert policy.model_precision(_with_op("DequantizeLinear")) == "int8"
    assert policy.model_precision(_with_op("MatMulNBits")) == "int4"
    assert policy.for_pair(source, half)[0] is policy.FLOAT16
    assert policy.for_pair(source, _with_op("MatMulNBits"))[0] is policy.INT4
    chosen, why = policy.for_pair(source, source)
    assert chosen is policy.FLOAT32 and "both models compute in float32" in why
    assert policy.for_pair(half, source)[0] is policy.FLOAT32       # the new one is no lower: the strict one


def test_a_file_that_cannot_be_read_gets_the_strict_policy(tmp_path):
    (tmp_path / "a.ort").write_bytes(b"ORTM not a protobuf")
    chosen, why = policy.for_paths(str(tmp_path / "a.ort"), str(tmp_path / "a.ort"))
    assert chosen is policy.FLOAT32 and "could not be read" in why


def test_every_verdict_names_its_policy():
    text = policy.policy_text(policy.FLOAT16.tolerance())
    assert text == "the float16 policy (|Δ| ≤ 0.01 + 0.01·|source|, cosine ≥ 0.999, top-1 agreement ≥ 99%)"
    assert policy.policy_text({"atol": 1e-4, "rtol": 1e-3, "min_cosine": 0.9999}).startswith("the float32 policy")


def _scores(rows: int, classes: int = 5, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(rows, classes))


def test_the_top1_agreement_is_reported_and_required_once_it_is_a_rate():
    source = _scores(40)
    flipped = source.copy()
    for row in range(4):        # 4 of 40 rows now name another class
        top = flipped[row].argmax()
        flipped[row, (top + 1) % 5] = flipped[row, top] + 0.01
    int8 = Tolerance.from_dict({**policy.INT8.tolerance(), "atol": 10, "rtol": 10, "min_cosine": 0})
    row = compare_values("scores", source, flipped, int8)
    assert row["top1_agreement"] == pytest.approx(0.9) and row["top1_rows"] == 40
    assert row["passed"] is False and "top-1 agrees on 90.0% of 40 rows, below 95%" in row["problem"]
    few = compare_values("scores", source[:3], flipped[:3], int8)          # 3 rows: a coin, not a rate
    assert few["top1_agreement"] == 0.0 and few["passed"] is True
    detector = compare_values("boxes", source.reshape(1, 8, 25), flipped.reshape(1, 8, 25), int8)
    assert "top1_agreement" not in detector      # not class scores: no top-1 asked
    hidden = compare_values("y", source, flipped, int8)
    assert "top1_agreement" not in hidden        # neither probabilities nor named as scores


def test_int4_is_judged_by_its_answer_with_the_bounds_beside_it():
    logits = _scores(64, classes=50).reshape(1, 64, 50)
    noisy = logits + np.random.default_rng(1).normal(0, 0.05, logits.shape)     # cosine ~0.999, |Δ| ~0.2
    int4 = Tolerance.from_dict(policy.INT4.tolerance())
    row = compare_values("logits", logits, noisy, int4)
    assert row["top1_agreement"] > 0.9 and row["passed"] is True
    assert "differences above" in row["beside"]
    float16 = compare_values("logits", logits, noisy, Tolerance.from_dict(policy.FLOAT16.tolerance()))
    assert float16["passed"] is False         # float16's bounds decide: the same figures fail them


def test_int8_is_judged_by_the_outputs_direction_with_the_element_wise_figure_beside_it():
    hidden = np.random.default_rng(2).normal(0, 4, size=(8, 512))
    moved = hidden + np.random.default_rng(3).normal(0, 0.3, hidden.shape)       # |Δ| past 1, cosine 0.997
    int8 = Tolerance.from_dict(policy.INT8.tolerance())
    row = compare_values("y", hidden, moved, int8)
    assert row["cosine"] > 0.99 and row["passed"] is True and "differences above" in row["beside"]
    assert "top1_agreement" not in row          # a hidden state: no classes to agree on
    turned = compare_values("y", hidden, -hidden, int8)
    assert turned["passed"] is False and "cosine" in turned["problem"]


def test_an_unknown_policy_is_refused_in_one_line():
    with pytest.raises(UserError, match="no fidelity policy is called 'float8'"):
        Tolerance.from_dict({"policy": "float8"})


def test_an_output_near_zero_everywhere_is_judged_by_the_absolute_bound_and_says_so():
    rng = np.random.default_rng(4)
    # a text detector's map on an image without text: every value all but zero
    quiet = rng.uniform(0, 5e-5, size=(1, 1, 64, 64))
    rounded = quiet * (1 + rng.normal(0, 0.05, quiet.shape))          # cosine ~0.998, |Δ| ~1e-5
    float32 = Tolerance.from_dict(policy.FLOAT32.tolerance())
    row = compare_values("maps", quiet, rounded, float32)
    assert row["cosine"] < float32.min_cosine
    assert row["passed"] is True and "near zero everywhere" in row["note"] and "not used" in row["note"]
    lit = rounded.copy()
    lit[0, 0, 3, 3] = 0.5                                               # a text the source does not see
    row = compare_values("maps", quiet, lit, float32)
    assert row["passed"] is False and "differences above" in row["problem"]


def test_a_small_valued_output_with_a_direction_keeps_its_cosine():
    rng = np.random.default_rng(5)
    embedding = rng.normal(size=(4, 512))
    embedding /= np.linalg.norm(embedding, axis=1, keepdims=True)      # elements about 0.04, under int8's 0.1
    other = rng.normal(size=(4, 512))
    other /= np.linalg.norm(other, axis=1, keepdims=True)
    row = compare_values("embedding", embedding, other, Tolerance.from_dict(policy.INT8.tolerance()))
    assert "note" not in row and row["passed"] is False and "cosine" in row["problem"]


def test_given_bounds_say_only_what_the_user_set_and_read_over_a_policy():
    given = policy.GivenTolerance.from_dict({"atol": 0.5})
    assert given.to_dict() == {"atol": 0.5} and json.loads(json.dumps(given.to_dict())) == {"atol": 0.5}
    assert {**policy.FLOAT16.tolerance(), **given} == {**policy.FLOAT16.tolerance(), "atol": 0.5}
    assert not policy.GivenTolerance() and policy.GivenTolerance().to_dict() == {}
    with pytest.raises(UserError, match="min_cosine must be at most 1"):
        policy.GivenTolerance.from_dict({"min_cosine": 2})
    with pytest.raises(UserError, match="no fidelity policy is called 'int3'"):
        policy.GivenTolerance.from_dict({"policy": "int3"})
