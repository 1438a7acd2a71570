import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from app.core.jobs.errors import JobCancelled, UserError
from app.core.iobinding.iobinding import binding_obstacle, max_abs_diff, measure_transfers, run_iobinding
from app.core.iobinding.modes import (BIND_EACH_RUN, DEVICE_ONCE, NUMPY, PREALLOCATED, bytes_per_run, copy_ms,
                                      device_id_of, device_name, plan_modes, provider_note, session_config_for)
from app.core.jobs.protocol import JobContext
from app.core.session.config import ProviderSpec, SessionConfig
from tests import models
from app.core.iobinding.jobs import IOBINDING

NAMES = ["plain", "bind-inputs-each-run", "device-inputs", "preallocated-outputs", "cuda-graph"]


# the plan: pure, so CUDA's and DirectML's logic is checked here on the CPU ---------------------

@pytest.mark.parametrize("provider, device", [("cpu", "cpu"), ("CUDA", "cuda"), ("DmlExecutionProvider", "dml")])
def test_every_provider_gets_the_five_modes_in_order_on_its_device(provider, device):
    plans = plan_modes(provider, device_id=1)
    assert [p.name for p in plans] == NAMES
    assert {p.device for p in plans} == {device}
    assert {p.device_id for p in plans} == {1}
    assert [(p.inputs, p.outputs) for p in plans] == [
        (NUMPY, NUMPY), (BIND_EACH_RUN, "device"), (DEVICE_ONCE, "device"), (DEVICE_ONCE, PREALLOCATED),
        (DEVICE_ONCE, PREALLOCATED)]
    assert all(p.explanation for p in plans)
    assert [p.binds for p in plans] == [False, True, True, True, True]


def test_only_cuda_offers_a_cuda_graph():
    graph = {provider: plan_modes(provider)[-1] for provider in ("cpu", "cuda", "dml")}
    assert graph["cuda"].available and graph["cuda"].provider_options == {"enable_cuda_graph": "1"}
    assert graph["cuda"].min_warmup >= 2
    for provider in ("cpu", "dml"):
        assert not graph[provider].available
        assert "CUDA" in graph[provider].skipped_reason
        assert graph[provider].provider_options == {}
    for provider in ("cpu", "cuda", "dml"):
        assert all(p.available and not p.provider_options for p in plan_modes(provider)[:4])


@pytest.mark.parametrize("provider", ["tensorrt", "openvino", "NoSuchProvider"])
def test_other_providers_are_refused_by_name(provider):
    with pytest.raises(UserError) as info:
        device_name(provider)
    assert info.value.kind == "bad-option"
    assert provider.lower() in info.value.message.lower()


def test_cuda_sessions_keep_the_users_options_but_only_the_graph_mode_captures():
    base = SessionConfig(providers=[ProviderSpec("CUDAExecutionProvider", {"device_id": "1",
                                                                          "enable_cuda_graph": "1"}),
                                    ProviderSpec("CPUExecutionProvider")], intra_op_num_threads=2)
    assert device_id_of(base, "cuda") == 1
    plans = plan_modes("cuda", device_id_of(base, "cuda"))
    plain = session_config_for(base, "cuda", plans[0])
    graph = session_config_for(base, "cuda", plans[-1])
    assert plain.providers == [ProviderSpec("CUDAExecutionProvider", {"device_id": "1"})]
    assert graph.providers == [ProviderSpec("CUDAExecutionProvider", {"device_id": "1", "enable_cuda_graph": "1"})]
    assert plain.intra_op_num_threads == graph.intra_op_num_threads == 2
    assert not plain.io_binding and graph.io_binding
    assert base.providers[0].options["enable_cuda_graph"] == "1"     # the user's preset is left alone


def test_directml_sessions_turn_memory_patterns_off_and_run_sequentially():
    base = SessionConfig(providers=[ProviderSpec("CPUExecutionProvider")], execution_mode="parallel")
    for plan in plan_modes("dml"):
        config = session_config_for(base, "dml", plan)
        assert config.providers == [ProviderSpec("DmlExecutionProvider", {})]
        assert config.enable_mem_pattern is False and config.execution_mode == "sequential"
    cpu = session_config_for(base, "cpu", plan_modes("cpu")[0])
    assert cpu.enable_mem_pattern is True and cpu.execution_mode == "parallel"
    assert device_id_of(base, "dml") == 0


@pytest.mark.parametrize("provider", ["cuda", "dml"])
def test_bytes_per_run_follow_where_the_data_lives(provider):
    moved = [bytes_per_run(p, 3000, 40) for p in plan_modes(provider)]
    assert moved == [(3000, 40), (3000, 0), (0, 0), (0, 0), (0, 0)]


def test_nothing_moves_between_memories_on_the_cpu():
    assert {bytes_per_run(p, 3000, 40) for p in plan_modes("cpu")} == {(0, 0)}
    assert "CPU" in provider_note("cpu") and "Windows" in provider_note("dml")


def test_copy_cost_uses_the_measured_rates():
    rates = {"to_device_bytes_per_s": 1e9, "to_host_bytes_per_s": 5e8}
    assert copy_ms(1_000_000, 0, rates) == pytest.approx(1.0)
    assert copy_ms(1_000_000, 1_000_000, rates) == pytest.approx(3.0)
    assert copy_ms(0, 0, None) == 0.0
    assert copy_ms(10, 0, None) is None
    assert copy_ms(0, 10, {"to_device_bytes_per_s": 1e9, "to_host_bytes_per_s": None}) is None


# measuring on the CPU ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def mlp_path(tmp_path_factory):
    return models.save(models.mlp(), tmp_path_factory.mktemp("iob") / "mlp.onnx")


def test_cpu_run_measures_four_modes_and_they_agree(mlp_path):
    config = SessionConfig()
    config.inputs.dims["batch"] = 3
    result = run_iobinding(str(mlp_path), config, "cpu", iterations=12, warmup=1)
    assert result["provider"] == "CPUExecutionProvider" and result["device"] == "cpu"
    assert result["inputs"] == [{"name": "x", "dtype": "float32", "shape": [3, 64], "bytes": 3 * 64 * 4,
                                 "source": "user", "reason": "your batch", "values": "random normal, seed 0"}]
    assert result["transfer"] is None and result["device_memory"] is None
    modes = {m["name"]: m for m in result["modes"]}
    assert list(modes) == NAMES
    for name in NAMES[:4]:
        mode = modes[name]
        assert mode["status"] == "measured", mode
        assert mode["iterations"] == 12
        assert set(mode["latency_ms"]) >= {"mean", "p50", "p90", "p95", "p99", "min", "max", "std"}
        assert mode["latency_ms"]["min"] > 0
        assert mode["bytes_copied_per_run"] == 0 and mode["copy_ms_per_run"] == 0.0
        assert mode["max_abs_diff"] == 0.0
        assert mode["speedup_vs_plain"] > 0
        assert mode["speedup_vs_plain"] == pytest.approx(modes["plain"]["latency_ms"]["p50"] / mode["latency_ms"]["p50"])
        low, high = mode["speedup_ci"]
        assert low <= mode["speedup_vs_plain"] <= high, "each ratio with its interval"
        assert mode["verdict"] in (("reference",) if name == "plain" else ("faster", "slower", "no-difference", "could-not-tell"))
    assert result["alternation"]["rounds_run"] == 12 and "rotated order" in result["speedup_definition"]
    assert modes["cuda-graph"]["status"] == "skipped" and modes["cuda-graph"]["latency_ms"] is None
    assert modes["cuda-graph"]["verdict"] is None and modes["cuda-graph"]["speedup_ci"] is None
    assert result["session"]["providers"][0]["name"] == "CPUExecutionProvider"


def test_the_job_runs_in_a_child_process(mlp_path):
    from app.core.runner.process import run_job

    events = []
    result = run_job(IOBINDING,
                     {"path": str(mlp_path), "session": SessionConfig().to_dict(), "provider": "cpu",
                      "iterations": 5, "warmup": 0}, on_event=lambda kind, payload: events.append(kind))
    assert [m["status"] for m in result["modes"]] == ["measured"] * 4 + ["skipped"]
    assert "progress" in events


def test_cancel_stops_the_measurement(mlp_path):
    ctx = JobContext(lambda kind, payload: ctx.cancel() if "measured" in payload.get("message", "") else None)
    with pytest.raises(JobCancelled):
        run_iobinding(str(mlp_path), SessionConfig(), "cpu", iterations=100_000, warmup=0, ctx=ctx)


def test_string_values_skip_the_binding_modes_with_the_reason(tmp_path):
    graph = helper.make_graph([helper.make_node("Identity", ["text"], ["same"])], "strings",
                              [helper.make_tensor_value_info("text", TensorProto.STRING, [2])],
                              [helper.make_tensor_value_info("same", TensorProto.STRING, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "strings.onnx"
    onnx.save(model, str(path))
    result = run_iobinding(str(path), SessionConfig(), "cpu", iterations=3, warmup=0)
    statuses = [(m["status"], m["skipped_reason"]) for m in result["modes"]]
    assert statuses[0] == ("measured", "")
    assert result["modes"][0]["max_abs_diff"] == 0.0
    for status, reason in statuses[1:4]:
        assert status == "skipped" and "'text'" in reason and "tensor(string)" in reason


def test_a_provider_missing_from_the_build_is_a_user_error(mlp_path):
    if sys.platform == "win32":
        pytest.skip("DirectML may be in this build on Windows")
    with pytest.raises(UserError) as info:
        run_iobinding(str(mlp_path), SessionConfig(), "dml", iterations=1)
    assert info.value.kind == "provider-unavailable"


@pytest.mark.parametrize("iterations, warmup", [(0, 1), (5, -1)])
def test_bad_counts_are_user_errors(mlp_path, iterations, warmup):
    with pytest.raises(UserError):
        run_iobinding(str(mlp_path), SessionConfig(), "cpu", iterations=iterations, warmup=warmup)


def test_a_missing_model_is_named(tmp_path):
    with pytest.raises(UserError) as info:
        run_iobinding(str(tmp_path / "gone.onnx"), SessionConfig(), "cpu")
    assert "gone.onnx" in info.value.message


def test_transfers_are_timed_with_the_given_arrays():
    inputs = [np.ones((256, 256), np.float32), np.zeros(10, np.int64)]
    outputs = [np.ones((64, 64), np.float32)]
    transfer = measure_transfers(inputs, outputs, "cpu", repeats=3)
    assert transfer["to_device_bytes"] == 256 * 256 * 4 + 80
    assert transfer["to_host_bytes"] == 64 * 64 * 4
    assert transfer["to_device_ms"] > 0 and transfer["to_host_ms"] > 0
    assert transfer["to_device_bytes_per_s"] == pytest.approx(
        transfer["to_device_bytes"] / (transfer["to_device_ms"] / 1000))


def test_binding_obstacle_accepts_numeric_tensors(mlp_path):
    import onnxruntime as ort

    session = ort.InferenceSession(str(mlp_path), providers=["CPUExecutionProvider"])
    assert binding_obstacle(session) == ""


def test_max_abs_diff():
    a = [np.array([1.0, 2.0], np.float32)]
    assert max_abs_diff(a, [np.array([1.0, 2.5], np.float32)]) == pytest.approx(0.5)
    assert max_abs_diff(a, [np.array([1.0], np.float32)]) == float("inf")
    assert max_abs_diff([np.array(["a"], object)], [np.array(["b"], object)]) == float("inf")


def test_a_mode_that_cannot_start_is_marked_failed_and_the_others_go_on(mlp_path):
    import dataclasses

    import onnxruntime as ort

    from app.core.iobinding.iobinding import ModeRun, start_mode

    session = ort.InferenceSession(str(mlp_path), providers=["CPUExecutionProvider"])
    feeds = {"x": np.ones((1, 64), np.float32)}
    references = session.run(None, feeds)
    plans = plan_modes("cpu")

    def refuse(plan):
        raise UserError("session-failed", "this model cannot be captured")

    graph = ModeRun(dataclasses.replace(plans[3], provider_options={"enable_cuda_graph": "1"}))
    start_mode(graph, session, refuse, feeds, references, None, 1, JobContext())
    assert graph.error == "this model cannot be captured" and graph.step is None
    nowhere = ModeRun(dataclasses.replace(plans[2], device="nowhere"))
    start_mode(nowhere, session, refuse, feeds, references, None, 1, JobContext())
    assert "nowhere" in nowhere.error
    fine = ModeRun(plans[2])
    start_mode(fine, session, refuse, feeds, references, None, 1, JobContext())
    assert not fine.error
    np.testing.assert_array_equal(fine.fetch()[0], references[0])


def test_modes_are_judged_as_a_comparison_judges_its_models():
    from app.core.iobinding.iobinding import ModeRun, judge_modes
    from app.core.iobinding.modes import plan_modes

    plans = plan_modes("cpu")
    plain, bound, placed, failed = (ModeRun(plan) for plan in plans[:4])
    plain.blocks = [[2.0, 2.1, 1.9]] * 12
    bound.blocks = [[1.0, 1.05, 0.95]] * 12                       # twice as fast in every round
    placed.blocks = [[2.0, 2.1, 1.9]] * 12                        # the same
    failed.blocks, failed.error = [[0.1]], "it could not run"
    judged, rounds = judge_modes([plain, bound, placed, failed], 3)
    assert judged[0]["verdict"] == "reference" and 3 not in judged, "a failed mode has no ratio"
    assert judged[1]["speedup"] == pytest.approx(2.0) and judged[1]["verdict"] == "faster"
    assert judged[2]["verdict"] == "no-difference" and judged[2]["speedup_ci"] == [pytest.approx(1.0)] * 2
    assert rounds.describe()["rounds_run"] == 12
