"""No tab shows another model's result as current: with a result shown on every tab that
holds one, choosing another model greys each of them, names whose it is, and choosing the
model back makes it current again."""

from app.gui.shell.tabs import PANELS
from app.gui.widgets.run_caption import RunCaption
from tests import models
from tests.gui.test_benchmark_panels import add_model
from tests.optimize_results import choice, result


def _captions(panel) -> list[RunCaption]:
    return panel.findChildren(RunCaption)


def test_every_tab_greys_its_result_once_another_model_is_chosen(window, tmp_path):
    first = add_model(window, models.save(models.mlp(), tmp_path / "detector.onnx"))
    shown = {}
    for title, _, _ in PANELS:
        panel = window.panel(title)
        panel.ensure_built()
        for caption in _captions(panel):
            caption.show_run(first.path, "detector.onnx", [{"name": "x", "shape": [1, 64], "source": "user"}])
            shown.setdefault(panel.title, []).append(caption)
    optimize = window.panel("Optimize")
    optimize.ensure_built()
    optimize.show_result(dict(result(choice()), model=first.path))
    # every tab that shows a measured result carries a caption bound to its model
    assert {"Benchmark", "Compare", "Profile", "IO Binding", "Tune", "Diagnose", "Optimize"} <= set(shown)
    add_model(window, models.save(models.mlp(seed=2), tmp_path / "bert.onnx"))
    for title, captions in shown.items():
        for caption in captions:
            # greyed and named as the previous model's, or cleared for the new model's own (none yet)
            assert caption.state in ("previous", "empty"), f"{title} still shows detector.onnx's result as current"
            assert caption.state == "empty" or "previous model: <b>detector.onnx" in caption.text(), title
    assert not optimize.answer.isEnabled() and not optimize.table.isEnabled()
    window.model_list.select(first)
    assert all(caption.current for captions in shown.values() for caption in captions if caption.run is not None)
    assert optimize.answer.isEnabled()


def test_the_cost_is_counted_again_on_the_shapes_a_job_ran_the_model_on(qtbot, window, tmp_path):
    """Overview and Graph counted a 1×3×224×224 input while Session, Convert and Benchmark ran
    1×3×48×192: once a job reports the plan it ran on, the cost follows it."""
    from tests.gui.conftest import wait_for_model

    path = models.save(models.mlp(width=64), tmp_path / "mlp.onnx")
    window.open_paths([str(path)])
    model = wait_for_model(qtbot, window)
    before, batch = model.summary["macs"], model.summary["cost"]["inputs"][0]["shape"][0]
    assert batch != 8
    window.context.report_inputs(model.path, [{"name": "x", "shape": [8, 64], "source": "user"}])
    qtbot.waitUntil(lambda: model.summary["cost"]["inputs"][0]["shape"] == [8, 64], timeout=60000)
    assert model.summary["macs"] * batch == 8 * before
    jobs = len(window.jobs.jobs)
    window.context.report_inputs(model.path, [{"name": "x", "shape": [8, 64], "source": "user"}])
    assert len(window.jobs.jobs) == jobs, "the same shapes are not counted twice"
