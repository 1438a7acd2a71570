"""The execution provider as a candidate of optimize: which are tried, on what session, held
to which policy, and what the answer ships."""

import pytest

from app.core.jobs.errors import UserError
from app.core.optimize.candidates import ALL_KINDS, plan
from app.core.optimize.params import OptimizeParams
from app.core.optimize.provider_kinds import PROVIDER_KINDS, pending_report, provider_row, session_for, skip_reason
from app.core.optimize.rows import answer, answer_text
from app.core.session.config import ProviderSpec, SessionConfig

CPU = SessionConfig(intra_op_num_threads=2)
OPENVINO = "OpenVINOExecutionProvider"
USABLE = {"CPUExecutionProvider": {"available": True, "reason": ""},
          OPENVINO: {"available": True, "reason": ""},
          "CUDAExecutionProvider": {"available": False, "reason": "no NVIDIA driver"}}
SHAPE = {"hidden_size": 0, "num_heads": 0}


def test_every_provider_kind_is_a_candidate_kind_and_named_by_its_provider():
    assert set(PROVIDER_KINDS) <= set(ALL_KINDS)
    assert ALL_KINDS.index("openvino") > ALL_KINDS.index("compiled"), "conversions first, then providers"
    assert PROVIDER_KINDS["openvino"].policy.name == "float16", "OpenVINO's default precision is bf16 on AMX"
    assert PROVIDER_KINDS["openvino-fp32"].policy.name == "float32"
    assert PROVIDER_KINDS["cuda"].policy.name == "float32"


def test_providers_that_start_here_are_tried_the_others_say_why_not():
    rows = dict(plan([], CPU, SHAPE, set(), usable=USABLE))
    assert rows["openvino"] == "" and rows["openvino-fp32"] == ""
    assert "does not start here: no NVIDIA driver" in rows["cuda"]
    assert "does not start here" in rows["tensorrt"]
    assert "already runs on it" in rows["cpu"], "the user's own provider is the baseline, not a candidate"
    unprobed = dict(plan([], CPU, SHAPE, set(), usable=None))
    assert "not probed" in unprobed["openvino"]
    narrowed = dict(plan(["openvino-fp32"], CPU, SHAPE, set(), usable=USABLE))
    assert narrowed["openvino-fp32"] == "" and "not asked for" in narrowed["openvino"]


def test_on_openvino_the_cpu_is_a_candidate_and_the_same_precision_is_not():
    on_openvino = SessionConfig(providers=[ProviderSpec(OPENVINO, {"precision": "FP32"})])
    assert skip_reason("cpu", on_openvino, USABLE) == ""
    assert "already runs on it" in skip_reason("openvino-fp32", on_openvino, USABLE)
    assert skip_reason("openvino", on_openvino, USABLE) == "", "its default precision is another candidate"


def test_a_provider_candidate_runs_on_the_users_session_with_its_provider():
    user = SessionConfig(intra_op_num_threads=2, graph_optimization_level="extended",
                         providers=[ProviderSpec("CPUExecutionProvider")])
    session = session_for("openvino-fp32", user)
    assert session.provider_names() == [OPENVINO]
    assert session.providers[0].options == {"precision": "FP32", "num_of_threads": "2"}, \
        "OpenVINO is judged on as many threads as the user's session runs"
    assert session.graph_optimization_level == "extended" and user.provider_names() == ["CPUExecutionProvider"]
    assert "num_of_threads" not in session_for("openvino", SessionConfig()).providers[0].options


def test_a_provider_from_a_plugin_package_is_recorded_as_such(monkeypatch):
    monkeypatch.setattr("app.core.session.plugins.package_source",
                        lambda name: {"package": "onnxruntime-ep-openvino", "version": "1.8.1"})
    session = session_for("openvino", CPU)
    assert session.providers[0].plugin == {"package": "onnxruntime-ep-openvino", "version": "1.8.1"}


def test_the_tolerance_is_the_kinds_policy_with_the_users_over_it():
    report = pending_report("openvino", "m.onnx", CPU, {"atol": 0.5})
    assert report["tolerance"]["policy"] == "float16" and report["tolerance"]["atol"] == 0.5
    assert report["output"] == "m.onnx", "the candidate ships the source model itself"


def _speed(providers, passed=True):
    output = {"name": "y", "max_abs_diff": 0.2 if not passed else 1e-6, "cosine": 0.98 if not passed else 1.0,
              "passed": passed}
    return {"ratio": 2.0, "ratio_ci": [1.8, 2.2], "verdict": "faster", "variant_p50_ms": 1.0, "source_p50_ms": 2.0,
            "providers": providers, "fidelity": {"outputs": [output], "passed": passed,
                                                 "tolerance": PROVIDER_KINDS["openvino"].policy.tolerance()}}


def test_a_faithful_provider_passes_and_one_that_drifts_is_reported_with_where():
    report = pending_report("openvino", "m.onnx", CPU, {})
    row = provider_row("openvino", report, _speed([OPENVINO, "CPUExecutionProvider"]), 100)
    assert row["status"] == "passed" and row["provider"] == OPENVINO and row["speedup"] == 2.0
    assert row["session"]["providers"][0]["name"] == OPENVINO
    drifted = provider_row("openvino", report, _speed([OPENVINO], passed=False), 100)
    assert drifted["status"] == "failed-check" and "y outside the tolerance" in drifted["reason"]
    assert "float16 policy" in drifted["reason"]


def test_a_provider_that_did_not_take_the_session_is_refused():
    report = pending_report("openvino", "m.onnx", CPU, {})
    row = provider_row("openvino", report, _speed(["CPUExecutionProvider"]), 100)
    assert row["status"] == "refused" and "did not take the session" in row["reason"]


def test_the_answer_ships_the_source_on_the_provider_with_its_session():
    report = pending_report("openvino-fp32", "m.onnx", CPU, {})
    row = provider_row("openvino-fp32", report, _speed([OPENVINO]), 100)
    choice = answer(row, {"skipped": True}, "model.onnx", "preset.json", CPU.to_dict())
    assert choice["settings"]["providers"][0]["name"] == OPENVINO and choice["provider"] == OPENVINO
    text = answer_text(choice)
    assert text.startswith("openvino-fp32 — ship the source model on OpenVINOExecutionProvider with precision FP32")
    assert "your provider's speed (faster)" in text
    default = answer(provider_row("openvino", pending_report("openvino", "m.onnx", SessionConfig(), {}),
                                  _speed([OPENVINO]), 100), {"skipped": True}, "m", "p", {})
    assert "at its default precision" in answer_text(default)


def test_optimize_takes_provider_kinds_and_refuses_unknown_ones_in_one_line():
    OptimizeParams(model="m.onnx", out_dir="o", kinds=["openvino", "ort"]).validate()
    with pytest.raises(UserError, match="unknown candidate kind 'nvidia'; choose among .*openvino-fp32"):
        OptimizeParams(model="m.onnx", out_dir="o", kinds=["nvidia"]).validate()
