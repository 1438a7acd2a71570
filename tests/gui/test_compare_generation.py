"""The Compare tab of two decoders shows their time to the first token and tokens/s, each
with its speedup, interval and verdict, in a Generation tab that other models do not get."""

from app.core.verdict import verdict_words
from tests import models
from tests.decoder_models import gpt2
from tests.gui.steps import tab
from tests.gui.test_benchmark_panels import add_model, two_models_selected, wait_for_job


def _run(qtbot, window, panel):
    panel.run_form.iterations.setValue(20)
    panel.pairs_form.pairs.setValue(1)
    panel.pairs_form.max_seconds.setValue(1)
    panel.start()
    wait_for_job(qtbot, panel.job if panel.job else window.jobs.jobs[-1])
    assert panel.result is not None, window.last_error


def test_two_decoders_get_a_generation_tab_with_ttft_and_tokens_per_second(qtbot, window, tmp_path):
    first = add_model(window, models.save(gpt2(layers=2, hidden=64, vocab=128, seed=0), tmp_path / "old.onnx"))
    second = add_model(window, models.save(gpt2(layers=2, hidden=64, vocab=128, seed=1), tmp_path / "new.onnx"),
                       select=False)
    for model in (first, second):
        window.model_list.item_for(model).setSelected(True)
    panel = tab(window, "Compare")
    _run(qtbot, window, panel)
    generation = panel.result["generation"]
    assert panel.tabs.isTabVisible(panel.tabs.indexOf(panel.generation_table))
    rows = panel.generation_table.rows
    assert [row[0] for row in rows] == ["old.onnx", "new.onnx"]
    other = generation["models"][1]
    assert rows[1][1] == other["prefill"]["ttft_ms"] and rows[1][5] == other["decode"]["tokens_per_s"]
    assert rows[1][4] == verdict_words(other["prefill"]["verdict"])
    assert rows[1][9] == verdict_words(other["decode"]["verdict"])


def test_models_without_a_cache_get_no_generation_tab(qtbot, window, tmp_path):
    two_models_selected(window, tmp_path)
    panel = tab(window, "Compare")
    _run(qtbot, window, panel)
    assert not panel.tabs.isTabVisible(panel.tabs.indexOf(panel.generation_table))
