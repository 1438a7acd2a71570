"""`ortune bench`, `compare`, `placement` and `history` as a user runs them."""

import json

import pytest

from app.core.verdict import verdict_words
from tests import models

STATS = {"mean", "p50", "p90", "p95", "p99", "p999", "min", "max", "std"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-bench")
    models.save(models.mlp(), folder / "mlp.onnx")
    models.save(models.mlp(seed=1), folder / "other.onnx")
    return folder


def test_bench_json_contract_and_config_reproduces_the_session(ortune, folder, tmp_path):
    first = ortune("bench", folder / "mlp.onnx", "--iterations", "50", "--warmup", "3", "--threads", "1",
                   "--session-config", "session.intra_op.allow_spinning=0", "--dim", "batch=2", "--json")
    assert first.code == 0, first.stderr
    report = first.json()
    assert STATS <= set(report["latency_ms"])
    for key in ("iterations", "throughput_per_s", "session_create_ms", "first_run_ms", "peak_rss_bytes"):
        assert report[key] > 0
    assert report["iterations"] == 50 and report["providers"] == ["CPUExecutionProvider"]
    preset = tmp_path / "preset.json"
    preset.write_text(json.dumps(report["session"]))
    again = ortune("bench", folder / "mlp.onnx", "--config", preset, "--iterations", "20", "--json")
    assert again.code == 0, again.stderr
    session = again.json()["session"]
    assert session == report["session"]
    assert session["intra_op_num_threads"] == 1 and session["inputs"]["dims"] == {"batch": 2}
    assert session["config_entries"] == {"session.intra_op.allow_spinning": "0"}
    assert [(row["name"], row["shape"], row["source"]) for row in again.json()["inputs"]] == [("x", [2, 64], "user")]
    assert set(report["load"]) >= {"other_cores", "own_cores", "cores", "busy"}


def test_bench_profile_and_iobinding_say_when_the_machine_was_busy(tmp_path):
    # the sentence the window shows under its caption, on the command line's text output
    from app.cli.bench import render
    from app.cli.iobinding import render as render_binding
    from app.cli.profile import render_profile
    from app.core.measure.runs import RunSettings, benchmark
    from app.core.iobinding.iobinding import run_iobinding
    from app.core.jobs.protocol import JobContext
    from app.core.profile.jobs import PROFILE
    from app.core.session.config import SessionConfig

    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    busy = {"seconds": 3.0, "other_cores": 1.4, "own_cores": 0.9, "cores": 2, "busy": True}
    results = ((render, benchmark(str(path), SessionConfig(), RunSettings(iterations=20))[0]),
               (render_profile, PROFILE({"model": str(path), "out": str(tmp_path / "p.json"), "runs": 5}, JobContext())),
               (render_binding, run_iobinding(str(path), SessionConfig(), "cpu", iterations=12, warmup=1)))
    for write, result in results:
        assert "note: the machine was busy: other programs used 1.4 of 2" in write({**result, "load": busy})
        assert "machine was busy" not in write({**result, "load": {**busy, "busy": False}})


# (OpenVINO is no longer one: its plugin package is a test extra; tests/core/session/test_plugins.py has its message)
@pytest.mark.parametrize("provider, words", [("dml", "DirectML"), ("coreml", "CoreML")])
def test_unavailable_provider_is_refused(ortune, folder, provider, words):
    done = ortune("bench", folder / "mlp.onnx", "--provider", provider, "--json")
    assert done.code == 2
    error = done.json()["error"]
    assert error["kind"] == "provider-unavailable" and words in error["message"]
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_compare_and_history(ortune, folder):
    done = ortune("compare", folder / "mlp.onnx", folder / "other.onnx", "--iterations", "30", "--max-seconds", "5", "--json")
    assert done.code == 0, done.stderr
    result = done.json()
    assert [m["label"] for m in result["models"]] == ["mlp.onnx", "other.onnx"]
    reference, other = result["models"]
    assert reference["speedup"] == 1.0 and reference["verdict"] == "reference"
    assert other["speedup_ci"][0] <= other["speedup"] <= other["speedup_ci"][1] and other["rounds"] >= 10
    assert other["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")
    assert result["speedup_definition"].startswith("speedup = reference p50 / model p50")
    assert other["fidelity"]["max_abs_diff"] > 0       # other weights, other answers
    assert [row["shape"] for row in result["inputs"]] == [[1, 64]]
    assert reference["inputs"] == result["inputs"]
    # the reference's feeds, labelled where the reference's came from (not "your file")
    assert [(row["shape"], row["source"]) for row in other["inputs"]] == [([1, 64], reference["inputs"][0]["source"])]
    assert other["inputs"][0]["reason"].startswith("the reference's inputs")
    listed = ortune("history", "--kind", "compare", "--json")
    assert listed.code == 0
    stored = next(e for e in listed.json()["results"] if e["id"] == result["history_id"])
    assert stored["inputs"] == result["inputs"]
    text = ortune("history", "--show", result["history_id"])
    assert text.code == 0 and "other.onnx" in text.stdout and "reference" in text.stdout
    low, high = other["speedup_ci"]
    line = next(line for line in text.stdout.splitlines() if line.startswith("other.onnx"))
    assert line.split()[7:9] == [f"{other['speedup']:.3f}×", f"[{low:.3f}–{high:.3f}]"]
    assert line.split("]", 1)[1].split()[:len(verdict_words(other["verdict"]).split())] == \
        verdict_words(other["verdict"]).split()
    assert "measured in alternation: " in text.stdout and "verdict: faster or slower when the whole" in text.stdout


def test_bench_sweep_grid(ortune, folder):
    done = ortune("bench", folder / "mlp.onnx", "--sweep", "batch=1,2", "--sweep-concurrency", "1,2",
                  "--iterations", "20", "--latency-limit", "1000", "--json")
    assert done.code == 0, done.stderr
    grid = done.json()
    assert [(c["dim_value"], c["concurrency"]) for c in grid["cells"]] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert grid["best"] in grid["cells"]
    text = ortune("history", "--show", grid["history_id"])
    assert text.code == 0, text.stderr
    for cell in grid["cells"][1:]:
        low, high = cell["ratio_ci"]
        line = next(line for line in text.stdout.splitlines()
                    if line.split()[:2] == [str(cell["dim_value"]), str(cell["concurrency"])])
        assert line.split()[6:9] == [f"{cell['ratio']:.3g}x", f"[{low:.3g},", f"{high:.3g}]"]
    assert "vs first: ratio = items per second" in text.stdout and "best against the runner-up" in text.stdout
    listed = ortune("history", "--kind", "sweep", "--json").json()["results"]
    assert next(e for e in listed if e["id"] == grid["history_id"])["inputs"] == grid["inputs"]


def test_a_sweep_stored_before_alternation_still_shows():
    from app.cli.bench import render_sweep
    from app.core.store.migrations import migrated
    from tests.old_reports import sweep_before_alternation

    text = render_sweep(migrated(sweep_before_alternation(), "a sweep"))
    row = next(line for line in text.splitlines() if line.split()[:2] == ["2", "1"])
    assert row.split()[-4:] == ["–", "–", "one-after-the-other", "◀"] and "vs first:" not in text


def test_placement_and_bad_sweep(ortune, folder):
    done = ortune("placement", folder / "mlp.onnx", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["by_provider"]["CPUExecutionProvider"]["share"] == 1.0
    bad = ortune("bench", folder / "mlp.onnx", "--sweep", "batch=0,2")
    assert bad.code == 2 and "whole numbers" in bad.stderr


def test_a_comparison_stored_before_alternation_still_shows():
    from app.cli.compare import render
    from app.core.store.migrations import migrated
    from tests.old_reports import compare_before_alternation

    text = render(migrated(compare_before_alternation(), "a comparison"))
    row = next(line for line in text.splitlines() if line.startswith("b.onnx"))
    assert "1.500×  " in row and "one after the other" in row and "measured in alternation" not in text


def test_the_inputs_table_says_where_inputs_came_from_in_the_windows_words(ortune, folder):
    """`from` reads "generated" (the captions' word), never the plan's raw "user" / "default"."""
    from app.core.session.inputs import origin_word

    result = ortune("bench", folder / "mlp.onnx", "--iterations", "5", "--warmup", "1", "--dim", "batch=2")
    assert result.code == 0, result.stderr
    table = result.stdout.split("inputs:", 1)[1]
    row = next(line for line in table.splitlines() if line.startswith("x "))
    assert row.split()[3] == origin_word({"source": "user"}) == "generated"
    assert " user " not in row and " default " not in row
