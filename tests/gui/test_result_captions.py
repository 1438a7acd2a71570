"""Results say what they ran on, and old numbers never pass as current."""

from app.core.bench.jobs import BENCH
from app.core.jobs.errors import JobCancelled
from app.gui.widgets.run_caption import RunCaption, inputs_text
from tests import models
from tests.gui.test_benchmark_panels import add_model, wait_for_job


def bench_panel(window):
    panel = window.panel("Benchmark")
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
    return panel


def test_shapes_read_compactly():
    rows = [{"name": "input_ids", "shape": [1, 128], "source": "file"}, {"name": "attention_mask", "shape": [1, 128]},
            {"name": "sr", "shape": []}]
    assert inputs_text(rows) == "input_ids 1×128 (your file), attention_mask 1×128 (generated), sr scalar (generated)"


def test_a_caption_greys_what_it_labels_when_it_is_no_longer_current(qtbot):
    from PySide6.QtWidgets import QLabel

    from app.gui.shell.open_model import OpenModel

    caption, figures = RunCaption(), QLabel("1.0 ms")
    qtbot.addWidget(caption)
    qtbot.addWidget(figures)
    caption.follow(figures)
    caption.show_run("/a.onnx", "a.onnx", [{"name": "x", "shape": [1, 4], "source": "user"}], 0.0)
    assert caption.current and figures.isEnabled() and "sizes chosen by default" not in caption.text()
    caption.model_changed(OpenModel("/b.onnx"))
    assert caption.state == "previous" and not figures.isEnabled()
    assert caption.text().startswith("<span style='color: gray'>previous model: <b>a.onnx</b> · x 1×4 (generated) · 1970")
    caption.model_changed(OpenModel("/a.onnx"))
    assert caption.current and figures.isEnabled()
    caption.running("a.onnx")
    assert not figures.isEnabled() and "Measuring <b>a.onnx</b>" in caption.text()
    caption.stopped()
    assert caption.state == "earlier" and not figures.isEnabled()


def test_a_benchmark_is_titled_and_greyed_when_the_model_changes(qtbot, window, tmp_path):
    path = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    add_model(window, path)
    panel = bench_panel(window)
    panel.run_form.iterations.setValue(50)
    panel.start()
    wait_for_job(qtbot, panel.job)
    caption = panel.caption.text()
    assert panel.caption.current and "tiny.onnx</b> · x 1×4 (generated) · 20" in caption
    assert "sizes chosen by default: check them" in panel.guess_note.text() and panel.guess_note.isVisibleTo(panel)
    assert "x: batch 1" in panel.guess_note.text()
    assert window.context.last_plan(str(path.resolve())) == panel.report["inputs"]
    add_model(window, models.save(models.mlp(), tmp_path / "mlp.onnx"))
    assert panel.caption.state == "previous" and "previous model: <b>tiny.onnx" in panel.caption.text()
    assert not panel.view.isEnabled(), "the other model's chart is greyed"


def test_a_cancelled_benchmark_keeps_its_runs_as_partial(qtbot, window, tmp_path):
    add_model(window, models.save(models.tiny_add(), tmp_path / "tiny.onnx"))
    panel = bench_panel(window)
    panel.run_form.iterations.setValue(100_000_000)
    panel.start()
    job = panel.job
    qtbot.waitUntil(lambda: panel.planned is not None and panel.view.series.count > 100, timeout=60000)
    panel.control.cancel_button.click()
    wait_for_job(qtbot, job)
    assert isinstance(job.error, JobCancelled)
    count = panel.view.series.count
    assert count > 100, "the measured runs stay on the chart"
    note = f"partial — cancelled after {count:,} runs"
    assert note in panel.caption.text() and note in panel.control.status.text()
    assert panel.values["runs"].text() == f"{count:,}" and panel.values["p50"].text() != "–"
    assert "x 1×4" in panel.caption.text() and panel.view.isEnabled()


def test_history_lists_the_inputs_and_a_reopened_result_names_them(qtbot, window, tmp_path):
    add_model(window, models.save(models.tiny_add(), tmp_path / "tiny.onnx"))
    panel = bench_panel(window)
    panel.run_form.iterations.setValue(20)
    panel.start()
    wait_for_job(qtbot, panel.job)
    history = window.panel("History")
    window.tabs.setCurrentWidget(history)
    history.ensure_built()
    assert history.table.rows[0][history.table.headers.index("Inputs")] == "x 1×4 (generated)"
    history.table.selectRow(0)
    history.open_selected()
    assert "on x 1×4" in history.detail_title.text() and "sizes chosen by default" in history.detail_title.text()
    window.context.show_result(BENCH, history.entry["report"])
    assert "tiny.onnx</b> · x 1×4 (generated) · " in panel.caption.text() and "re-opened from History" in panel.caption.text()


def test_history_lists_the_inputs_of_comparisons_and_sweeps(window, tmp_path):
    from app.core.bench.jobs import COMPARE, SWEEP
    from app.core.launch.start import run as start_and_wait      # history keeps what the start function ran

    path = models.save(models.mlp(), tmp_path / "listed.onnx")
    other = models.save(models.mlp(seed=1), tmp_path / "other.onnx")
    run = {"warmup": 1, "iterations": 20}
    start_and_wait(COMPARE, {"models": [{"path": str(path)}, {"path": str(other)}], "run": run, "max_seconds": 2})
    start_and_wait(SWEEP, {"path": str(path), "dim": "batch", "dim_values": [2, 3], "run": run})
    history = window.panel("History")
    window.tabs.setCurrentWidget(history)
    history.ensure_built()
    history.refresh()
    headers = history.table.headers
    ours = [row for row in history.table.rows if row[headers.index("Model")] == "listed.onnx"]
    assert [(row[headers.index("Kind")], row[headers.index("Inputs")]) for row in ours] == [
        ("sweep", "x 2×64 (generated)"), ("compare", "x 1×64 (generated)")]   # newest first: the sweep's first cell, the reference


def test_a_result_timed_on_a_busy_machine_says_so_under_its_caption(qtbot):
    # Diagnose alone said the machine was busy; the Benchmark, Profile and IO Binding tabs showed
    # their figures as if it were quiet, and they disagreed with each other
    caption = RunCaption()
    qtbot.addWidget(caption)
    busy = {"seconds": 3.0, "other_cores": 1.4, "own_cores": 0.9, "cores": 2, "busy": True}
    caption.show_run("/m/mlp.onnx", "mlp.onnx", [{"name": "x", "shape": [1, 4]}], 0.0, load=busy)
    assert "the machine was busy: other programs used 1.4 of 2 logical cores" in caption.text()
    caption.show_run("/m/mlp.onnx", "mlp.onnx", [{"name": "x", "shape": [1, 4]}], 0.0, load={**busy, "busy": False})
    assert "busy" not in caption.text()


def test_the_benchmark_profile_and_io_binding_tabs_pass_their_results_load_to_the_caption(qtbot, window, tmp_path):
    from app.core.iobinding.iobinding import run_iobinding
    from app.core.jobs.protocol import JobContext
    from app.core.profile.jobs import PROFILE
    from app.core.session.config import SessionConfig
    from app.gui.shell.job_control import RunOf
    from tests.gui.steps import open_and_wait, tab

    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    open_and_wait(qtbot, window, path)
    busy = {"seconds": 3.0, "other_cores": 1.4, "own_cores": 0.9, "cores": 2, "busy": True}
    bench = tab(window, "Benchmark")
    bench.run_form.iterations.setValue(20)
    bench.start()
    wait_for_job(qtbot, bench.job)
    assert "load" in bench.report
    bench.show_report({**bench.report, "load": busy}, str(path))
    profile = PROFILE({"model": str(path), "out": str(tmp_path / "p.json"), "runs": 5}, JobContext())
    binding = run_iobinding(str(path), SessionConfig(), "cpu", iterations=12, warmup=1)
    assert "load" in profile and "load" in binding
    profiles = tab(window, "Profile")
    profiles.add_profile("mlp.onnx", {**profile, "load": busy})
    iobinding = tab(window, "IO Binding")
    iobinding.keep_result({**binding, "load": busy}, RunOf(str(path), "mlp.onnx"))
    for panel in (bench, profiles, iobinding):
        assert "the machine was busy: other programs used 1.4" in panel.caption.text(), panel.title


def test_a_p50_measured_on_two_tabs_is_shown_with_the_other(qtbot, window, tmp_path):
    """The source's p50 read 1.01 / 1.36 / 1.48 ms on three tabs with nothing to say they were
    one fact timed three ways: each tab now names the others' figures beside its own."""
    from app.core.formatting import duration_text
    from tests.gui.steps import open_and_wait, tab

    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    open_and_wait(qtbot, window, path)
    bench = tab(window, "Benchmark")
    bench.run_form.iterations.setValue(20)
    bench.start()
    wait_for_job(qtbot, bench.job)
    report = bench.report
    assert "Also measured" not in bench.caption.text(), "nothing else was measured yet"
    compare = tab(window, "Compare")
    row = {"label": "mlp.onnx", "path": str(path), "size_bytes": 1, "throughput_per_s": 1.0,
           "latency_ms": {"p50": 2.5, "p90": 3.0, "p99": 4.0}, "speedup": 1.0, "speedup_ci": [1.0, 1.0],
           "verdict": "reference", "fidelity": None, "providers": ["CPUExecutionProvider"]}
    other = {**row, "label": "other", "path": str(tmp_path / "other.onnx"), "verdict": "no-difference"}
    compare.show_result({"baseline": "mlp.onnx", "models": [row, other], "alternation": None,
                         "inputs": report["inputs"], "session": report["session"], "created": report["created"] + 5})
    said = compare.caption.text()
    assert f"Benchmark {duration_text(report['latency_ms']['p50'])} (alone" in said
    bench.show_report(report, str(path))          # re-opened: its own figure, and Compare's beside it
    assert "Compare 2.5 ms (beside the others, in alternation" in bench.caption.text()
    # other inputs: another fact, nothing beside it
    compare.show_result({"baseline": "mlp.onnx", "models": [row, other], "alternation": None,
                         "inputs": [{**report["inputs"][0], "shape": [7, 7]}], "session": report["session"],
                         "created": report["created"] + 9})
    assert "Also measured" not in compare.caption.text()
