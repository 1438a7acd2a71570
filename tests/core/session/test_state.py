"""The session state: one setup that tells its listeners once per real change."""

import pytest

from app.core.jobs.errors import UserError
from app.core.session.config import ProviderSpec, SessionConfig
from app.core.session.input_spec import FeedSpec
from app.core.session.state import FIELD_NAMES, SessionState


def recorder(state):
    heard = []
    state.subscribe(lambda source, changed: heard.append((source, changed)))
    return heard


def test_one_notice_per_change_naming_the_fields():
    state = SessionState()
    heard = recorder(state)
    state.set(intra_op_num_threads=4, execution_mode="parallel", **{"inputs.seed": 9})
    assert heard == [(state, frozenset({"intra_op_num_threads", "execution_mode", "inputs.seed"}))]
    assert state.get("intra_op_num_threads") == 4 and state.get("inputs.seed") == 9


def test_setting_the_same_value_is_no_change():
    state = SessionState(SessionConfig(intra_op_num_threads=2))
    heard = recorder(state)
    assert state.set(intra_op_num_threads=2) == frozenset()
    state.update(state.preset())
    assert heard == []


def test_a_preset_round_trips():
    preset = SessionConfig(providers=[ProviderSpec("CUDAExecutionProvider", {"device_id": "1"}),
                                      ProviderSpec("CPUExecutionProvider")],
                           graph_optimization_level="basic", inter_op_spin_duration_us=250,
                           config_entries={"session.disable_prepacking": "1"},
                           inputs=FeedSpec(mode="zeros", dims={"batch": 2}, shapes={"x": [1, 3]}))
    state = SessionState()
    heard = recorder(state)
    changed = state.update(preset)
    assert len(heard) == 1 and heard[0][1] == changed
    assert {"providers", "graph_optimization_level", "inputs.mode", "inputs.shapes"} <= changed
    assert "enable_mem_pattern" not in changed
    assert state.config().to_dict() == preset.to_dict()
    assert SessionState(SessionConfig.from_dict(state.config().to_dict())).preset() == preset


def test_callers_get_copies():
    state = SessionState()
    heard = recorder(state)
    state.preset().config_entries["a"] = "1"
    state.get("inputs.dims")["batch"] = 3
    state.config().providers.append(ProviderSpec("CUDAExecutionProvider"))
    assert state.preset() == SessionConfig() and heard == []


def test_unsubscribed_listeners_hear_nothing():
    state = SessionState()
    heard = []

    def listener(source, changed):
        heard.append(changed)

    state.subscribe(listener)
    state.subscribe(listener)
    state.set(dynamic_block_base=4)
    state.unsubscribe(listener)
    state.set(dynamic_block_base=8)
    assert heard == [frozenset({"dynamic_block_base"})]


def test_unknown_fields_are_refused():
    state = SessionState()
    with pytest.raises(KeyError):
        state.set(threads=4)
    with pytest.raises(KeyError):
        state.get("inputs.nothing")
    assert "inputs.vocab_size" in FIELD_NAMES and "inputs" not in FIELD_NAMES


def test_a_problem_blocks_jobs_until_the_field_is_set_again():
    state = SessionState()
    heard = recorder(state)
    state.report_problem("config_entries", "line 1: expected KEY=VALUE")
    with pytest.raises(UserError, match="line 1"):
        state.config()
    assert state.set(config_entries={}) == frozenset({"config_entries"}), "the form redraws the bad entry"
    assert state.config().config_entries == {} and len(heard) == 1


def test_an_invalid_value_is_refused_when_a_job_asks():
    state = SessionState()
    state.set(graph_optimization_level="fastest")
    with pytest.raises(UserError, match="graph_optimization_level must be one of"):
        state.config()


def test_input_sizes_belong_to_their_model():
    from app.core.session.state import SessionState
    state = SessionState()
    state.set(**{"inputs.dims": {"batch": 2}, "inputs.seed": 7})
    state.follow_model("/models/detector.onnx")            # the first model keeps what the setup had
    assert state.get("inputs.dims") == {"batch": 2}
    state.set(**{"inputs.dims": {"height": 640}, "inputs.probed": {"width": 640}})
    changed = state.follow_model("/models/recognizer.onnx")
    assert state.get("inputs.dims") == {} and state.get("inputs.probed") == {}
    assert "inputs.dims" in changed and state.get("inputs.seed") == 7    # not a per-model setting
    state.set(**{"inputs.shapes": {"x": [1, 3, 48, 320]}})
    state.follow_model("/models/detector.onnx")
    assert state.get("inputs.dims") == {"height": 640} and state.get("inputs.probed") == {"width": 640}
    assert state.get("inputs.shapes") == {}
    state.follow_model("/models/recognizer.onnx")
    assert state.get("inputs.shapes") == {"x": [1, 3, 48, 320]}
    assert state.follow_model(None) == frozenset() and state.get("inputs.shapes") == {"x": [1, 3, 48, 320]}


def test_a_job_on_another_model_gets_that_models_inputs():
    from app.core.session.state import SessionState
    state = SessionState()
    state.follow_model("/models/detector.onnx")
    state.set(**{"inputs.dims": {"height": 640}, "inputs.seed": 7, "intra_op_num_threads": 2})
    state.follow_model("/models/detector.fp16.onnx")
    source = state.config_for("/models/detector.onnx")
    assert source.inputs.dims == {"height": 640} and source.inputs.seed == 7 and source.intra_op_num_threads == 2
    assert state.config_for("/models/detector.fp16.onnx").inputs.dims == {} == state.config().inputs.dims
    assert state.config_for("/models/never-chosen.onnx").inputs.dims == {}
    assert state.get("inputs.dims") == {}, "reading another model's setup changes nothing"
