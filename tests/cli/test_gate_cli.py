"""`ortune gate`: each exit code, the reports it writes, and the annotations under GitHub Actions."""

import onnx
import pytest
from onnx import numpy_helper

from app.core.gate import judge
from tests import models
from tests.gate_results import gate_result

QUICK = ("--warmup", "2", "--duration", "0.2", "--max-seconds", "1", "--threads", "1")
#: for the gates whose outputs are what the test reads: one pair of processes, not four (a third of the time)
OUTPUTS = (*QUICK, "--pairs", "1")


def _perturbed(source, target):
    model = onnx.load(str(source))
    weight = next(t for t in model.graph.initializer if t.name == "w1")
    values = numpy_helper.to_array(weight).copy()
    values[:, 0] += 1.0        # a whole column, so no Relu before it can hide the change
    weight.CopyFrom(numpy_helper.from_array(values, weight.name))
    onnx.save(model, str(target))
    return target


@pytest.fixture
def old(tmp_path):
    return models.save(models.mlp(width=16, depth=3), tmp_path / "old.onnx")


def test_a_byte_identical_copy_passes_with_exit_0_and_is_stored_with_both_hashes(ortune, old, tmp_path):
    copy = tmp_path / "new.onnx"
    copy.write_bytes(old.read_bytes())
    # up to 20 s: on a loaded machine 1 s of rounds was too few undisturbed ones to judge (exit 6, undecided),
    # and 5 s beside other jobs too; the gate stops as soon as the pair is judged, so a quiet run takes no longer
    done = ortune("gate", copy, "--against", old, "--max-slowdown", "50", *QUICK[:-4], "--max-seconds", "20",
                  *QUICK[-2:], "--json")
    assert done.code == 0, done.stderr
    data = done.json()
    assert data["verdict"] == "pass" and [c["name"] for c in data["criteria"]] == ["speed", "outputs", "accuracy",
                                                                                  "memory"]
    assert data["new"]["sha256"] == data["old"]["sha256"] and data["new"]["path"] != data["old"]["path"]
    from app.core.store.history import History
    entry = History().get(data["history_id"])
    assert entry["kind"] == "gate" and entry["report"]["old"]["sha256"] == data["old"]["sha256"]


def test_a_perturbed_weight_fails_the_outputs_with_exit_5_and_names_its_node(ortune, old, tmp_path):
    wrong = _perturbed(old, tmp_path / "wrong.onnx")
    done = ortune("gate", wrong, "--against", old, "--max-slowdown", "50", *OUTPUTS, "--no-history")
    assert done.code == 5, done.stderr
    assert "REGRESSION (exit code 5)" in done.stdout
    assert "first drifting node: matmul1 (MatMul)" in done.stdout


def test_an_undecided_gate_exits_6(ortune, old, monkeypatch):
    import app.cli.gate as gate_cli
    monkeypatch.setattr(gate_cli, "run_job_cli", lambda *a, **k: gate_result(judge.UNDECIDED))
    done = ortune("gate", old, "--against", old)
    assert done.code == 6 and "UNDECIDED (exit code 6)" in done.stdout


@pytest.mark.parametrize("extra, message", [
    ((), "--against OLD"),
    (("--against", "missing.onnx"), "the old model not found"),
    (("--against", "OLD", "--max-slowdown", "five"), "--max-slowdown expects a percentage"),
    (("--against", "OLD", "--tol-abs", "x"), "--tol-abs expects a number"),
])
def test_bad_input_is_one_line_and_exit_2(ortune, old, tmp_path, extra, message):
    extra = [str(old) if value == "OLD" else value for value in extra]
    done = ortune("gate", old, *extra, cwd=tmp_path)
    assert done.code == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_report_that_exists_is_refused_before_any_measuring(ortune, old, tmp_path):
    (tmp_path / "gate.xml").write_text("kept")
    done = ortune("gate", old, "--against", old, "--junit", tmp_path / "gate.xml")
    assert done.code == 2 and "--force" in done.stderr
    assert (tmp_path / "gate.xml").read_text() == "kept"


def test_a_shipped_folder_is_taken_as_its_model_and_preset(ortune, old, tmp_path, monkeypatch):
    import app.cli.gate as gate_cli
    folder = tmp_path / "shipped"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(old.read_bytes())
    (folder / "preset.json").write_text('{"intra_op_num_threads": 3}')
    seen = {}

    def fake(job, params, **_):
        seen.update(params.to_dict())
        return gate_result()
    monkeypatch.setattr(gate_cli, "run_job_cli", fake)
    assert ortune("gate", folder, "--against", old).code == 0
    assert seen["new"] == str(folder / "model.onnx") and seen["new_session"]["intra_op_num_threads"] == 3
    assert seen["old_session"]["intra_op_num_threads"] == 0


def test_under_github_actions_it_annotates_and_appends_the_summary(ortune, old, tmp_path, monkeypatch):
    hostile = tmp_path / "new\x1b[31m%0A.onnx"
    _perturbed(old, hostile)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    done = ortune("gate", hostile, "--against", old, "--max-slowdown", "50", *OUTPUTS, "--no-history",
                  "--junit", tmp_path / "gate.xml", "--markdown", tmp_path / "gate.md")
    assert done.code == 5, done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and errors[0].startswith("::error title=ORTune gate%3A outputs regression::")
    assert "\x1b" not in done.stdout and "\\x1b[31m%250A.onnx" in errors[0]
    written = summary.read_text()
    assert written.startswith("earlier step\n### ORTune gate: ❌ regression")
    assert (tmp_path / "gate.md").read_text() in written and (tmp_path / "gate.xml").is_file()
    as_json = ortune("gate", hostile, "--against", old, "--max-slowdown", "50", *OUTPUTS, "--no-history", "--json")
    assert as_json.json()["verdict"] == "regression" and "::error title=" in as_json.stderr


def test_outside_github_actions_there_are_no_annotations(ortune, old, tmp_path, monkeypatch):
    import app.cli.gate as gate_cli
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setattr(gate_cli, "run_job_cli", lambda *a, **k: gate_result(judge.REGRESSION))
    done = ortune("gate", old, "--against", old)
    assert done.code == 5 and "::error" not in done.stdout + done.stderr


def test_an_outputs_own_tolerance_lets_a_known_drift_pass_and_an_unknown_name_is_refused(ortune, old, tmp_path):
    wrong = _perturbed(old, tmp_path / "wrong.onnx")
    done = ortune("gate", wrong, "--against", old, "--max-slowdown", "50", *OUTPUTS, "--no-history", "--json",
                  "--tolerance", "y=1000,1000,-1")
    outputs = next(c for c in done.json()["criteria"] if c["name"] == "outputs")
    assert outputs["verdict"] == "pass" and outputs["figures"]["outputs"][0]["tolerance"]["atol"] == 1000
    assert "outputs with their own bounds: y" in outputs["summary"]
    done = ortune("gate", wrong, "--against", old, *QUICK, "--no-history", "--tolerance", "logits=1,1")
    assert done.code == 2 and "logits" in done.stderr and "its outputs: y" in done.stderr


@pytest.mark.parametrize("given, message", [
    ("y", "NAME=ATOL,RTOL"), ("=1,1", "NAME=ATOL,RTOL"), ("y=1,2,3,4", "NAME=ATOL,RTOL"), ("y=a,1", "'a' is not"),
])
def test_a_malformed_tolerance_is_one_line_and_exit_2(ortune, old, given, message):
    done = ortune("gate", old, "--against", old, "--tolerance", given)
    assert done.code == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_tolerance_keeps_the_common_fields_it_leaves_empty():
    from app.cli.gate import output_tolerances
    assert output_tolerances(["a=b=1e-3,,0.99", "y=,0.5"]) == {"a=b": {"atol": 1e-3, "min_cosine": 0.99},
                                                               "y": {"rtol": 0.5}}


def test_the_gate_holds_a_float16_variant_to_the_float16_policy_convert_passed_it_on(ortune, old, tmp_path):
    """convert passed an fp16 variant that the gate then failed on the float32 bounds: one file,
    two answers. Both now name and apply the float16 policy."""
    half = tmp_path / "old.fp16.onnx"
    made = ortune("convert", "fp16", old, "-o", half, "--no-speed", "--json")
    assert made.code == 0, made.stderr
    assert made.json()["fidelity"]["tolerance"]["policy"] == "float16" and made.json()["fidelity"]["passed"]
    done = ortune("gate", half, "--against", old, "--max-slowdown", "50", *OUTPUTS, "--no-history", "--json")
    outputs = next(c for c in done.json()["criteria"] if c["name"] == "outputs")
    assert outputs["verdict"] == "pass", outputs["summary"]
    assert "within the float16 policy" in outputs["summary"] and "computes in float16" in outputs["summary"]


def test_the_limit_flags_come_from_the_gates_fields_in_their_units(ortune, old):
    """Percent on the command line, a fraction in GateParams: each flag said once, on its field."""
    import argparse

    from app.cli.param_args import add_param_arguments, flag_values
    from app.core.gate.params import GateParams

    parser = argparse.ArgumentParser()
    add_param_arguments(parser, GateParams)
    args = parser.parse_args(["--max-slowdown", "12.5", "--max-memory-growth", "0", "--pairs", "6"])
    assert flag_values(args, GateParams) == {"max_slowdown": 0.125, "max_memory_growth": 0.0, "pairs": "6"}
    shown = " ".join(parser.format_help().split())
    assert "slowdown that fails (default 5)" in shown and "that fails (default 10)" in shown
    for given, message in ((("--max-slowdown", "x"), "--max-slowdown expects a percentage such as 5"),
                           (("--max-accuracy-drop", "-1"), "--max-accuracy-drop must be 0 or more"),
                           (("--max-seconds", "abc"), "--max-seconds expects a number"),
                           (("--pairs", "0"), "--pairs must be at least 1")):
        done = ortune("gate", old, "--against", old, *given)
        assert done.code == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
