"""Compare and Sweep say which models ran on which inputs when, and how to read their
ratios; an earlier run's figures are greyed, and a cancelled run keeps what it measured."""

from app.core.jobs.errors import JobCancelled
from tests import models
from tests.gui.test_benchmark_panels import add_model, two_models_selected, wait_for_job
from tests.gui.steps import tab


def compare_panel(qtbot, window, tmp_path):
    first, second = two_models_selected(window, tmp_path)
    panel = tab(window, "Compare")
    panel.pairs_form.max_seconds.setValue(1)      # near-identical models: not the running-longer rule's test
    panel.pairs_form.pairs.setValue(1)            # the captions' test, not the pairs': one set of processes, not four
    return panel, first, second


def cancel_at_round_three(qtbot, window, view, measuring: str) -> None:
    """Start a long run of `view` (Compare or Sweep), check its caption says what it measures
    (`measuring`) and cancel it at its third round."""
    view.run_form.stop_by.setCurrentIndex(1)
    view.run_form.duration.setValue(600)
    view.start()
    job = window.jobs.jobs[-1]
    qtbot.waitUntil(lambda: view.control.status.text().startswith("round 3"), timeout=60000)
    assert measuring in view.caption.text()
    job.cancel()
    wait_for_job(qtbot, job)
    assert isinstance(job.error, JobCancelled)


def sweep_view(window, tmp_path):
    add_model(window, models.save(models.mlp(), tmp_path / "mlp.onnx"))
    panel = tab(window, "Benchmark")
    panel.tabs.setCurrentWidget(panel.sweep)
    sweep = panel.sweep
    sweep.dim.setCurrentText("batch")
    sweep.dim_values.setText("1,2")
    return sweep


def test_a_comparison_is_titled_and_greyed_once_another_model_is_chosen(qtbot, window, tmp_path):
    panel, first, second = compare_panel(qtbot, window, tmp_path)
    panel.run_form.iterations.setValue(30)
    panel.start()
    assert panel.caption.state == "running" and "Measuring <b>a.onnx vs b.onnx</b>" in panel.caption.text()
    wait_for_job(qtbot, window.jobs.jobs[-1])
    text = panel.caption.text()
    assert panel.caption.current and "<b>a.onnx vs b.onnx</b> · x 1×64 (generated) · 20" in text
    assert "sizes chosen by default: check them" in text
    rounds = panel.result["alternation"]["rounds_run"]
    assert ("Speedup = reference p50 / model p50, the reference being a.onnx (above 1: faster than it), as the "
            f"median over {rounds} rounds") in text
    assert "its 95 % interval. Verdict: faster or slower when the whole 95 % interval" in text
    assert window.context.last_plan(first.path) == panel.result["inputs"], "the Session tab learns the plan"
    window.model_list.select(second)
    assert panel.caption.current, "either compared model keeps the comparison current"
    add_model(window, models.save(models.tiny_add(), tmp_path / "other.onnx"))
    assert panel.caption.state == "previous" and "previous model: <b>a.onnx vs b.onnx" in panel.caption.text()
    assert not panel.table.isEnabled() and not panel.speedup_chart.isEnabled()


def test_a_new_comparison_greys_the_last_one_until_it_has_figures(qtbot, window, tmp_path):
    panel, _, _ = compare_panel(qtbot, window, tmp_path)
    panel.run_form.iterations.setValue(30)
    panel.start()
    wait_for_job(qtbot, window.jobs.jobs[-1])
    panel.start()
    job = window.jobs.jobs[-1]
    assert not panel.table.isEnabled() and "(greyed: the earlier run, a.onnx vs b.onnx" in panel.caption.text()
    wait_for_job(qtbot, job)
    assert panel.caption.current and panel.table.isEnabled()


def test_a_cancelled_comparison_shows_its_rounds_as_partial(qtbot, window, tmp_path):
    panel, _, _ = compare_panel(qtbot, window, tmp_path)
    cancel_at_round_three(qtbot, window, panel, "Measuring <b>a.onnx vs b.onnx on x 1×64 (generated)</b>")
    rounds = panel.partial["alternation"]["rounds_run"]
    assert rounds >= 3 and panel.result is panel.partial
    assert f"partial — cancelled after {rounds} rounds; not stored" in panel.caption.text()
    assert panel.caption.current and panel.table.isEnabled()
    reference, other = panel.table.rows
    assert reference[3] == "reference" and other[3] in ("faster", "slower", "no difference", "could not tell")
    assert other[9] == "not checked" and other[4] > 0
    assert f"median over {rounds} rounds" in panel.caption.text()


def test_a_sweep_is_titled_with_its_grid_and_greyed_when_the_model_changes(qtbot, window, tmp_path):
    sweep = sweep_view(window, tmp_path)
    sweep.run_form.iterations.setValue(20)
    sweep.start()
    assert sweep.caption.state == "running"
    wait_for_job(qtbot, sweep.job or window.jobs.jobs[-1])
    text = sweep.caption.text()
    assert sweep.caption.current and "<b>mlp.onnx</b> · x 1×64 (generated) · 20" in text
    assert "batch = 1, 2 × concurrency 1, each cell in a process of its own" in text
    assert "Ratio = batch items per second of the cell / of the first cell" in text
    assert "Verdict: faster or slower when the whole 95 % interval" in text
    assert "sizes chosen by default" not in text, "the first cell's batch is the sweep's, not a guess"
    add_model(window, models.save(models.tiny_add(), tmp_path / "tiny.onnx"))
    assert sweep.caption.state == "previous" and not sweep.table.isEnabled()


def test_a_cancelled_sweep_keeps_its_cells_as_partial(qtbot, window, tmp_path):
    sweep = sweep_view(window, tmp_path)
    cancel_at_round_three(qtbot, window, sweep, "Measuring <b>mlp.onnx on x 1×64 (generated)</b>")
    assert [(c["dim_value"], c["partial"]) for c in sweep.cells] == [(1, True), (2, True)]
    assert "partial — cancelled with 2 of 2 cells measured; not stored" in sweep.caption.text()
    assert [row[0] for row in sweep.table.rows] == [1, 2] and sweep.table.rows[0][-2] == "reference"
    assert sweep.table.isEnabled()


def test_a_long_model_name_is_shortened_under_its_bar_only():
    from app.gui.panels.compare.panel import _short

    long = "rapidocr_onnxruntime__ch_ppocr_mobile_v2.0_cls_infer.onnx"
    assert _short(long) == "rapidocr_onnx…cls_infer.onnx" and len(_short(long)) == 28
    assert _short("cls_int8.onnx [int8-dynamic]") == "cls_int8.onnx [int8-dynamic]"
