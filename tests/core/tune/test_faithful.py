"""Tune's output check: each setting's outputs against the user's session's, under the
fidelity policy of the pair; a faster setting that gives other answers is never offered."""

import numpy as np
import pytest

from app.core.jobs.protocol import JobContext
from app.core.session.config import ProviderSpec, SessionConfig
from app.core.session.create import create_session
from app.core.session.fidelity_policy import FLOAT16, FLOAT32, INT8
from app.core.tune import tune as tune_module
from app.core.tune.confirm import NOTHING_FASTER_LABEL, judge
from app.core.tune.faithful import Unfaithful, check_outputs, policy_of
from app.core.tune.jobs import TuneParams
from app.core.tune.space import SearchLimits, apply_candidate, build_space
from tests import models
from tests.core.tune.test_confirm import _alternation, _race, _trial
from tests.core.tune.test_tune import _candidate
from tests.openvino_plugin import openvino_plugin  # noqa: F401 (a fixture)

OPENVINO = "OpenVINOExecutionProvider"


def _openvino(precision=""):
    return SessionConfig(providers=[ProviderSpec(OPENVINO, {"precision": precision} if precision else {})])


def test_the_policy_follows_the_precision_either_side_computes_in():
    cpu = SessionConfig()
    assert policy_of(cpu, cpu) is FLOAT32
    assert policy_of(_openvino("FP32"), cpu) is FLOAT32
    assert policy_of(_openvino(), cpu) is FLOAT16               # its default: bf16 on CPUs with AMX
    assert policy_of(cpu, _openvino("BF16")) is FLOAT16         # your own session computes in bf16
    assert policy_of(_openvino("FP32"), cpu, "int8") is INT8    # a quantised model keeps its own


def test_openvino_is_searched_at_its_default_precision_and_in_float32():
    space = build_space(SearchLimits(providers=[OPENVINO, "CPUExecutionProvider"], max_threads=1,
                                     opt_levels=("all",), execution_modes=("sequential",)), cores=1)
    assert [c.get("precision") for c in space] == ["", "FP32", None]
    base = _openvino()
    assert apply_candidate(base, space[0]).providers[0].options == {}
    assert apply_candidate(base, space[1]).providers[0].options == {"precision": "FP32"}
    pinned = _openvino("BF16")                                  # a precision you set is kept
    assert [apply_candidate(pinned, c).providers[0].options for c in space[:2]] == [{"precision": "BF16"}] * 2
    assert not any("precision" in c for c in build_space(SearchLimits(providers=[OPENVINO], try_precision=False), 2))


def test_outputs_outside_the_policy_are_refused_with_where_they_drift(tmp_path):
    path = str(models.save(models.mlp(width=16, depth=2), tmp_path / "mlp.onnx"))
    session = create_session(path, SessionConfig())
    feeds = {session.get_inputs()[0].name: np.random.default_rng(0).random((1, 16), np.float32)}
    name = session.get_outputs()[0].name
    reference = {name: session.run(None, feeds)[0]}
    assert check_outputs(session, feeds, reference, FLOAT32)["passed"] is True
    with pytest.raises(Unfaithful) as refused:
        check_outputs(session, feeds, {name: reference[name] + 0.05}, FLOAT32)
    assert "beyond the float32 policy" in refused.value.message and name in refused.value.message


def test_the_race_drops_a_setting_whose_outputs_drift_and_never_makes_it_a_finalist(tmp_path, monkeypatch):
    path = str(models.save(models.foldable(), tmp_path / "foldable.onnx"))
    real = tune_module.check_outputs

    def drifting_when_unoptimised(session, feeds, reference, policy):
        if session.get_session_options().graph_optimization_level.name == "ORT_DISABLE_ALL":
            reference = {name: value + 1.0 for name, value in reference.items()}    # other answers
        return real(session, feeds, reference, policy)

    monkeypatch.setattr(tune_module, "check_outputs", drifting_when_unoptimised)
    params = TuneParams.from_dict({"path": path, "session": {"intra_op_num_threads": 1},
                                   "candidates": [_candidate(level="disable"), _candidate(level="basic")],
                                   "strategy": "grid", "grid_blocks": 2, "block_runs": 3, "warmup": 1})
    result = tune_module.Race(params, JobContext()).run()
    assert [t["label"] for t in result["trials"]] == ["basic optimisation"]
    assert result["trials"][0]["fidelity"]["passed"] is True
    assert result["trials"][0]["fidelity"]["policy"] == "float32"
    (failed,) = result["failed"]
    assert failed["label"].startswith("no graph optimisation") and "beyond the float32 policy" in failed["error"]
    assert failed["unfaithful"] is True


def test_a_finalist_faster_alone_but_with_other_answers_is_not_offered():
    trials = [_trial("a", 0.8)]
    alternation = _alternation(10.0, 8.0)
    alternation.reports[1]["fidelity"] = {"passed": False}
    result = judge(_race(trials), SessionConfig(), [0], alternation)
    assert result["trials"][0]["verdict"] == "faster" and result["trials"][0]["outputs_match"] is False
    assert result["best"]["label"] == NOTHING_FASTER_LABEL and not result["clearly_faster"]
    assert "its outputs drift from your settings'" in result["note"]


def test_openvino_precisions_are_raced_each_under_its_policy(openvino_plugin, tmp_path):  # noqa: F811
    path = str(models.save(models.mlp(width=32, depth=2), tmp_path / "mlp.onnx"))
    candidates = [_candidate(provider=OPENVINO, precision=""), _candidate(provider=OPENVINO, precision="FP32")]
    params = TuneParams.from_dict({"path": path, "session": {"intra_op_num_threads": 1}, "candidates": candidates,
                                   "strategy": "grid", "grid_blocks": 1, "block_runs": 3, "warmup": 1})
    result = tune_module.Race(params, JobContext()).run()
    rows = {t["session"]["providers"][0].get("options", {}).get("precision", ""): t
            for t in result["trials"]} | {"failed": result["failed"]}
    fp32 = rows["FP32"]
    assert fp32["fidelity"] == {**fp32["fidelity"], "passed": True, "policy": "float32"}
    # its default precision is held to float16's policy: raced where it meets it, else out with where it drifts
    if "" in rows:
        assert rows[""]["fidelity"]["policy"] == "float16"
    else:
        assert any("beyond the float16 policy" in f["error"] for f in result["failed"])
