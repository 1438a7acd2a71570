"""What a look at every tab, as a user would, after real work on an image detector and a
text model found at 1024×700 and 1600×1000: a button that slid below the fold, a form cut
short, a warning that said the opposite of another tab."""

from tests import models
from tests.gui.test_benchmark_panels import add_model
from tests.gui.steps import tab


def test_compare_runs_on_the_references_sizes_not_the_last_clicked_variants(qtbot, window, tmp_path):
    # the user's sequence=128 was set on the source; Ctrl+clicking its variants made the last
    # one current, and Compare ran on default sizes, captioned "sizes chosen by default: check them"
    source = add_model(window, models.save(models.mlp(), tmp_path / "a.onnx"))
    window.context.session.set(**{"inputs.dims": {"batch": 4}})
    variant = add_model(window, models.save(models.mlp(seed=3), tmp_path / "b.onnx"), select=False)
    window.context.select_models([source, variant])
    qtbot.waitUntil(lambda: window.current_model() is variant, timeout=5000)
    panel = tab(window, "Compare")
    started = []
    panel.jobs.start = lambda title, job, params, **kw: started.append(params)
    panel.start()
    assert started and started[0].session.inputs.dims == {"batch": 4}
