"""OpenVINO's typed options: checked before a run, and turned into the plugin's load_config
(the plugin ignores them as plain provider options)."""

import json

import pytest

from app.core.jobs.errors import UserError
from app.core.session import openvino
from app.core.session.config import SessionConfig


def _config(**options):
    return SessionConfig.from_dict({"providers": [{"name": "openvino", "options": options}]})


def test_typed_options_become_properties_of_the_device_they_are_for():
    given = {"device_type": "CPU", "precision": "FP32", "num_of_threads": "2", "num_streams": "1",
             "cache_dir": "/tmp/ov", "enable_qdq_optimizer": "1"}
    config = json.loads(openvino.plugin_options(given)["load_config"])
    assert config == {"CPU": {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": "2", "NUM_STREAMS": "1",
                              "CACHE_DIR": "/tmp/ov"},
                      "NPU": {"NPU_QDQ_OPTIMIZATION": "YES"}}
    assert json.loads(openvino.plugin_options({"precision": "ACCURACY"})["load_config"]) == {
        "CPU": {"EXECUTION_MODE_HINT": "ACCURACY"}}
    assert openvino.plugin_options({}) == {} and openvino.plugin_options({"num_streams": "0"}) == {}


def test_the_users_load_config_wins_over_a_typed_option():
    given = {"precision": "BF16", "load_config": '{"CPU": {"INFERENCE_PRECISION_HINT": "f32", "PERF_COUNT": true}}'}
    assert json.loads(openvino.plugin_options(given)["load_config"]) == {
        "CPU": {"INFERENCE_PRECISION_HINT": "f32", "PERF_COUNT": "True"}}


@pytest.mark.parametrize("options, words", [
    ({"precision": "FP8"}, "precision must be one of (empty), FP32, FP16, BF16, ACCURACY, not 'FP8'"),
    ({"device_type": "TPU"}, "device_type must be one of CPU, GPU, NPU, AUTO"),
    ({"num_of_threads": "two"}, "num_of_threads must be a whole number"),
    ({"num_streams": "-1"}, "num_streams must be 0 or more"),
    ({"enable_qdq_optimizer": "yes"}, "enable_qdq_optimizer must be 0/1"),
    ({"load_config": "{not json"}, "load_config is not valid JSON"),
    ({"load_config": '{"CPU": 1}'}, "load_config must be a JSON object of devices"),
    ({"load_config": '{"CPU": {"A": [1]}}'}, "load_config: CPU.A must be a single value"),
    ({"turbo": "1"}, "has no option 'turbo'"),
])
def test_a_wrong_option_is_refused_before_a_run_in_one_line(options, words):
    with pytest.raises(UserError) as caught:
        _config(**options)
    assert words in caught.value.message and "\n" not in caught.value.message


def test_a_device_policy_with_named_providers_is_refused():
    with pytest.raises(UserError, match="picks the providers itself: leave out OpenVINOExecutionProvider"):
        SessionConfig.from_dict({"device_policy": "prefer-npu", "providers": ["openvino"]})
    assert SessionConfig.from_dict({"device_policy": "min-power"}).device_policy == "min-power"
