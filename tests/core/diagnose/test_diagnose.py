import psutil
import pytest

from app.core.diagnose.jobs import DIAGNOSE, GATHER
from app.core.jobs.protocol import JobContext
from app.core.session.machine_cpu import cpu_description, int8_acceleration
from tests import models

STABLE_IDS = {"busy-machine", "cpu-fallback", "memcpy-nodes", "quantized-on-cuda", "int8-without-vnni", "fp16-on-cpu",
              "initializers-as-inputs", "symbolic-dims", "high-variance", "threads-over-cores", "spinning",
              "hot-op-types"}
QUICK = {"runs": 3, "timing_runs": 30, "timing_s": 1.0}


class _Watch:
    """A LoadWatch that reports the load a test chose (a shared test machine is busy at times)."""
    other_cores = 0.0

    def stop(self):
        from app.core.session.load import Load
        return Load(5.0, self.other_cores, 1.0, 4)


@pytest.fixture(autouse=True)
def quiet_machine(monkeypatch):
    monkeypatch.setattr("app.core.diagnose.diagnose.LoadWatch", _Watch)
    monkeypatch.setattr(_Watch, "other_cores", 0.0)
    return _Watch


def ids(result):
    return {f["id"] for f in result["findings"]}


def test_findings_have_stable_ids_and_evidence(tmp_path):
    path = models.save(models.mlp(width=64, depth=3), tmp_path / "mlp.onnx")
    result = GATHER({"path": str(path), **QUICK}, JobContext())
    assert ids(result) <= STABLE_IDS
    for finding in result["findings"]:
        assert finding["evidence"] and finding["fix"] and finding["title"]
    assert result["evidence"]["profile"]["runs"] >= 3
    assert "hot-op-types" in ids(result)


def test_initializers_listed_as_inputs(tmp_path):
    model = models.mlp(width=16, depth=1)
    from onnx import helper
    model.graph.input.append(helper.make_tensor_value_info("w0", 1, [16, 16]))
    result = GATHER({"path": str(models.save(model, tmp_path / "m.onnx")), **QUICK}, JobContext())
    finding = next(f for f in result["findings"] if f["id"] == "initializers-as-inputs")
    assert "w0" in finding["evidence"]


def _measured(verdict, calls):
    def measure(path, config, overrides, ctx, start, share, seconds):
        calls.append((overrides, dict(config.free_dimension_overrides)))
        return {"speedup": 1.3, "speedup_ci": [1.2, 1.4] if verdict == "faster" else [0.9, 1.4], "verdict": verdict,
                "rounds": 10, "latency_symbolic_ms": 1.3, "latency_fixed_ms": 1.0, "alternation": {}}
    return measure


@pytest.mark.parametrize("verdict", ["faster", "no-difference"])
def test_fixed_dims_are_offered_only_when_their_alternating_measurement_is_faster(tmp_path, monkeypatch, verdict):
    calls = []
    monkeypatch.setattr("app.core.diagnose.diagnose.measure_overrides", _measured(verdict, calls))
    path = models.save(models.shape_dependent(), tmp_path / "shape.onnx")
    result = DIAGNOSE({"path": str(path), **QUICK}, JobContext())
    probe = result["evidence"]["probes"]["symbolic"]
    assert probe["nodes_fixed"] < probe["nodes_symbolic"], "ORT folds the Shape chain once batch is fixed"
    assert calls == [({"batch": 1}, {})], "the plan's concrete size, against the session as it is"
    found = [f for f in result["findings"] if f["id"] == "symbolic-dims"]
    if verdict == "faster":
        assert found[0]["setting"] == {"free_dimension_overrides": {"batch": 1}}
        assert "95 % interval 1.20–1.40" in found[0]["evidence"]
    else:
        assert found == [], "a smaller graph that is not measurably faster is no finding"


def test_overrides_already_set_are_neither_measured_nor_suggested(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr("app.core.diagnose.diagnose.measure_overrides", _measured("faster", calls))
    path = models.save(models.shape_dependent(), tmp_path / "shape.onnx")
    result = DIAGNOSE({"path": str(path), "session": {"free_dimension_overrides": {"batch": 1}}, **QUICK},
                      JobContext())
    assert calls == [] and "symbolic" not in result["evidence"]["probes"]
    assert "symbolic-dims" not in ids(result)


def test_fixing_dims_is_measured_in_alternation_each_session_in_its_own_process(tmp_path):
    from app.core.diagnose.symbolic import measure_overrides
    from app.core.session.config import SessionConfig

    path = models.save(models.shape_dependent(), tmp_path / "shape.onnx")
    measured = measure_overrides(str(path), SessionConfig(), {"batch": 1}, JobContext(), seconds=0.1)
    low, high = measured["speedup_ci"]
    assert low <= measured["speedup"] <= high and measured["rounds"] >= 10
    assert measured["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")
    assert measured["latency_fixed_ms"] > 0 and measured["latency_symbolic_ms"] > 0


def test_threads_over_cores(tmp_path):
    path = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    cores = psutil.cpu_count(logical=False) or 1
    result = GATHER({"path": str(path), "session": {"intra_op_num_threads": cores + 2}, **QUICK}, JobContext())
    finding = next(f for f in result["findings"] if f["id"] == "threads-over-cores")
    assert finding["setting"] == {"intra_op_num_threads": cores}


def test_fp16_model_on_cpu(tmp_path):
    from onnxconverter_common import float16
    model = float16.convert_float_to_float16(models.mlp(width=32, depth=2), keep_io_types=True)
    result = GATHER({"path": str(models.save(model, tmp_path / "fp16.onnx")), **QUICK}, JobContext())
    assert "fp16-on-cpu" in ids(result)


def test_int8_finding_follows_this_cpu(tmp_path):
    from onnxruntime.quantization import quantize_dynamic
    source = models.save(models.mlp(width=64, depth=2), tmp_path / "mlp.onnx")
    quantize_dynamic(str(source), str(tmp_path / "int8.onnx"))
    result = GATHER({"path": str(tmp_path / "int8.onnx"), **QUICK}, JobContext())
    _, flags = cpu_description()
    expected = bool(flags) and not int8_acceleration(flags)
    assert ("int8-without-vnni" in ids(result)) == expected


def test_a_given_trace_is_used_instead_of_profiling(tmp_path):
    from app.core.profile.jobs import PROFILE
    path = models.save(models.cnn(), tmp_path / "cnn.onnx")
    trace = tmp_path / "t.json"
    PROFILE({"model": str(path), "runs": 4, "out": str(trace)}, JobContext())
    result = GATHER({"path": str(path), "trace": str(trace), **QUICK}, JobContext())
    assert result["evidence"]["profile"]["trace"] == str(trace)
    from app.core.profile.jobs import READ_TRACE
    shares = {row["op_type"]: row["percent"] for row in READ_TRACE({"trace": str(trace)}, JobContext())["by_op_type"]}
    hot = [f for f in result["findings"] if f["id"] == "hot-op-types"]
    assert hot and all(f"{shares[f['title'].split()[0]]:.1f}%" in f["title"] for f in hot), "the Profile tab's shares"


def test_on_a_busy_machine_no_operator_or_setting_is_blamed(tmp_path, quiet_machine):
    quiet_machine.other_cores = 1.8
    path = models.save(models.cnn(), tmp_path / "cnn.onnx")
    result = GATHER({"path": str(path), **QUICK}, JobContext())
    assert "busy-machine" in ids(result) and not ids(result) & {"hot-op-types", "high-variance"}
    assert result["evidence"]["load"]["busy"] is True


@pytest.mark.parametrize("bad", ["nothing.onnx"])
def test_missing_model_is_a_user_error(tmp_path, bad):
    from app.core.jobs.errors import UserError
    with pytest.raises(UserError):
        GATHER({"path": str(tmp_path / bad)}, JobContext())
