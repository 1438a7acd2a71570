"""A conversion's speed against its source: measured in alternation, reported, or skipped
with the reason, and never failing the conversion."""

import numpy as np
import pytest

from app.core.convert.jobs import CONVERT, ConvertParams
from app.core.convert.options import THIS_PLATFORM
from app.core.convert.speed import SPEED_ROUNDS, measure_speed, slower_hint, speed_sentence, variant_speed
from app.core.jobs.errors import JobCancelled
from app.core.jobs.protocol import JobContext
from app.core.session.config import SessionConfig
from tests import models

FIELDS = {"ratio", "ratio_ci", "verdict", "source_p50_ms", "variant_p50_ms", "rounds"}
ONE_THREAD = {"intra_op_num_threads": 1, "inputs": {"dims": {"batch": 32}}}


def test_a_variant_doing_twice_the_work_is_slower(tmp_path):
    source = models.save(models.mlp(width=256, depth=3), tmp_path / "once.onnx")
    variant = models.save(models.mlp(width=256, depth=6), tmp_path / "twice.onnx")
    # 2 s: in one CI run 1 s beside the other tests' load gave too few rounds to tell (could-not-tell)
    speed = measure_speed(str(source), str(variant), SessionConfig.from_dict(ONE_THREAD), 2.0, tmp_path)
    assert set(speed) >= FIELDS
    assert speed["verdict"] == "slower" and speed["ratio_ci"][1] < 0.8
    assert speed["ratio_ci"][0] <= speed["ratio"] <= speed["ratio_ci"][1]
    assert speed["variant_p50_ms"] > 1.5 * speed["source_p50_ms"]
    # the ratio is the two medians it prints (of each run's CPU time where one thread runs alone,
    # which waiting for a core does not inflate), over enough rounds for an interval
    assert speed["measure"] in ("cpu", "wall")
    assert speed["ratio"] == pytest.approx(speed["source_p50_ms"] / speed["variant_p50_ms"], rel=1e-9)
    assert speed["rounds"] >= SPEED_ROUNDS and speed["conclusive"] and speed["feeds"] == "made for the source"
    assert speed["inputs"][0]["shape"] == [32, 256]
    assert "slower than the source" in speed_sentence(speed)


def test_the_source_doing_twice_the_work_makes_the_variant_faster_on_the_given_feeds(tmp_path):
    source = models.save(models.mlp(width=256, depth=6), tmp_path / "twice.onnx")
    variant = models.save(models.mlp(width=256, depth=3), tmp_path / "once.onnx")
    feeds = tmp_path / "feeds.npz"
    np.savez(feeds, x=np.ones((16, 256), np.float32))
    speed = measure_speed(str(source), str(variant), SessionConfig.from_dict({"intra_op_num_threads": 1}), 1.0,
                          tmp_path, feeds=feeds)
    # twice the work is faster by its whole interval; the speedup itself well past ×1.2 (the interval's lower
    # end is the part a busy machine moves: ×1.06 beside a full CI run and a window's jobs)
    assert speed["verdict"] == "faster" and speed["ratio"] > 1.2 and speed["ratio_ci"][0] > 1.0
    assert speed["inputs"][0]["shape"] == [16, 256] and speed["feeds"] == "the fidelity check's"
    assert "why" not in speed


def test_a_conversion_reports_its_speed_and_can_skip_it(tmp_path):
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    params = {"kind": "optimize", "input": str(source), "output": str(tmp_path / "cnn.opt.onnx"), "speed_s": 0.5}
    report = CONVERT(params, JobContext())
    speed = report["speed"]
    assert set(speed) >= FIELDS and speed["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")
    assert speed["feeds"] == "the fidelity check's" and speed["inputs"] == report["fidelity"]["inputs"]
    assert report["check"] == "passed" and (tmp_path / "cnn.opt.onnx").is_file()
    skipped = CONVERT({**params, "force": True, "speed_s": 0}, JobContext())["speed"]
    assert skipped == {"skipped": True, "why": "the speed check was turned off"}


def test_a_speed_check_that_cannot_run_says_why_and_never_fails_the_conversion(tmp_path):
    source = models.save(models.mlp(width=8), tmp_path / "mlp.onnx")
    other = models.save(models.cnn(), tmp_path / "cnn.onnx")      # its input is not the source's
    params = ConvertParams(kind="fp16", input=str(source), output=str(other), speed_s=0.5)
    report = {"kind": "fp16", "input": str(source), "output": str(other), "check": "passed",
              "fidelity": {"inputs": []}}
    speed = variant_speed(report, params, tmp_path / "none.npz", tmp_path, JobContext())
    assert speed["skipped"] is True and speed["why"].startswith("the speed check could not run")
    assert "speed: not measured" in speed_sentence(speed)


def test_no_speed_without_a_run_of_the_source_or_for_a_gpu_kind_on_the_cpu(tmp_path):
    params = ConvertParams(kind="fp16", input="a.onnx", output="b.onnx")
    unchecked = {"kind": "fp16", "input": "a.onnx", "output": "b.onnx", "check": "not-run",
                 "fidelity": {"problem": "the source could not run on the check's inputs: Reshape refused"}}
    speed = variant_speed(unchecked, params, tmp_path / "none.npz", tmp_path, JobContext())
    assert speed["skipped"] is True and "Reshape refused" in speed["why"]
    mixed = {**unchecked, "kind": "mixed", "check": "passed"}
    speed = variant_speed(mixed, ConvertParams(kind="mixed", input="a.onnx", output="b.onnx"), tmp_path / "none.npz",
                          tmp_path, JobContext())
    assert speed == {"skipped": True, "why": "mixed is made for a GPU, and the session runs on the CPU only"}


def test_cancel_during_the_speed_check_ends_the_job(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    ctx = None

    def emit(kind, payload):
        if kind == "progress" and payload["message"].startswith("measuring the speed: round"):
            ctx.cancel()

    ctx = JobContext(emit)
    with pytest.raises(JobCancelled):
        CONVERT({"kind": "int8-dynamic", "input": str(source), "output": str(tmp_path / "q.onnx"), "speed_s": 60},
                ctx)


def test_the_why_of_a_slower_variant_names_the_known_causes(monkeypatch):
    cpu = ["CPUExecutionProvider"]
    monkeypatch.setattr("app.core.session.machine_cpu.cpu_description", lambda: ("Old CPU", {"avx2", "sse4_2"}))
    assert "Old CPU has no int8 dot-product instructions" in slower_hint("int8-dynamic", cpu, {})
    monkeypatch.setattr("app.core.session.machine_cpu.cpu_description", lambda: ("New CPU", {"avx512_vnni"}))
    assert "quantize and dequantize steps" in slower_hint("int8-static", cpu, {})
    assert "float16 on the CPU provider" in slower_hint("fp16", cpu, {})
    assert slower_hint("fp16", ["CUDAExecutionProvider", *cpu], {}) == ""
    assert slower_hint("ort", cpu, {"target_platform": THIS_PLATFORM}) == ""
    assert "without the blocked (NCHWc) layout" in slower_hint("ort", cpu, {"target_platform": "any"})
    line = speed_sentence({"ratio": 0.83, "ratio_ci": [0.8, 0.86], "verdict": "slower", "source_p50_ms": 1.0,
                           "variant_p50_ms": 1.2, "rounds": 20, "why": slower_hint("fp16", cpu, {})})
    assert line.startswith("speed: ×0.83 [0.80–0.86] the source's speed — slower than the source on this machine")
    assert line.endswith("float16 pays off on GPUs")


def test_an_interval_too_wide_to_answer_says_it_could_not_tell():
    from app.core.verdict import judge_speed

    judged = judge_speed(0.11, 0.06, 8.65)
    speed = {"ratio": 0.11, "ratio_ci": [0.06, 8.65], "verdict": judged.verdict, "why_verdict": judged.why,
             "source_p50_ms": 1.74, "variant_p50_ms": 15.76, "rounds": 90}
    line = speed_sentence(speed)
    assert "could not tell" in line and "no difference" not in line and "×0.11 [0.06–8.65]" in line
    judged = judge_speed(1.0, 0.97, 1.04)
    assert "— no difference (" in speed_sentence({**speed, "ratio_ci": [0.97, 1.04], "verdict": judged.verdict,
                                                  "why_verdict": judged.why})
