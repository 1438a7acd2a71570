"""The Generate tab runs the generate job on the current decoder, draws each token's latency
as it comes on one curve per prompt length, and shows the figures when it ends."""

from tests.decoder_models import llama_gqa
from tests.gui.conftest import wait_for_model
from tests.gui.steps import tab
from tests.models import save


def test_generating_draws_per_token_latency_live_and_shows_the_figures(qtbot, window, tmp_path):
    window.open_model(save(llama_gqa(), tmp_path / "llama.onnx"))
    wait_for_model(qtbot, window)
    panel = tab(window, "Generate")
    assert panel.chart.empty and panel.control.start_button.isEnabled()
    panel.prompts.setText("8, 32")
    panel.new_tokens.setValue(12)
    panel.repeats.setValue(1)
    curves = []
    with qtbot.waitSignal(window.jobs.job_finished, timeout=60000,
                          check_params_cb=lambda job: job.title.startswith("Generate")):
        panel.start()
        assert not panel.control.start_button.isEnabled() and panel.control.cancel_button.isEnabled()
        qtbot.waitUntil(lambda: bool(panel.chart.curves), timeout=30000)
        curves.append(next(iter(panel.chart.curves.values())))
    assert panel.control.start_button.isEnabled()
    # the curves were made once: the live one is the one that shows the medians
    assert panel.chart.curves[8] is curves[0] and set(panel.chart.curves) == {8, 32}
    xs, ys = panel.chart.curves[32].getData()
    assert list(xs) == list(range(33, 44)) and all(y > 0 for y in ys)
    rows = panel.table.rows
    assert [row[0] for row in rows] == [8, 32] and all(row[2] > 0 and row[3] > 0 and row[6] > 0 for row in rows)
    details = panel.details.toPlainText()
    assert "KV cache: 256 B a token" in details and "next tokens:" in details
    assert "no growth per 1k tokens: the steps span" in details and rows[0][8] is None    # 11 steps: too few
    assert panel.caption.current and "input_ids 1×8" in panel.caption.text()
    assert "past_key_values" not in panel.caption.text() and "4 cache inputs, 1×2×0×8" in panel.caption.text()


def test_the_next_tokens_of_another_open_model_are_checked(qtbot, window, tmp_path):
    reference = save(llama_gqa(), tmp_path / "reference.onnx")
    window.open_model(reference)
    wait_for_model(qtbot, window)
    window.open_model(save(llama_gqa(), tmp_path / "variant.onnx"))
    wait_for_model(qtbot, window)
    panel = tab(window, "Generate")
    labels = [panel.against.itemText(i) for i in range(panel.against.count())]
    assert labels == ["none", "reference.onnx"], "the other open models, not the current one"
    panel.against.setCurrentIndex(1)
    panel.prompts.setText("8")
    panel.new_tokens.setValue(6)
    panel.repeats.setValue(1)
    with qtbot.waitSignal(window.jobs.job_finished, timeout=60000,
                          check_params_cb=lambda job: job.title.startswith("Generate")):
        panel.start()
    assert "Next-token agreement with reference.onnx: 100.0% of 6 tokens" in panel.details.toPlainText()


def test_a_bad_prompt_list_is_said_in_the_tab(qtbot, window, tmp_path):
    window.open_model(save(llama_gqa(), tmp_path / "llama.onnx"))
    wait_for_model(qtbot, window)
    panel = tab(window, "Generate")
    panel.prompts.setText("8, zero")
    panel.start()
    assert panel.job is None and "whole numbers" in panel.control.status.text()


def test_a_genai_folder_runs_through_onnxruntime_genai_with_the_same_tokens(qtbot, window, tmp_path):
    import pytest

    pytest.importorskip("onnxruntime_genai", reason="onnxruntime-genai is not installed (the genai engine needs it)")
    from tests.decoder_models import genai_folder

    window.open_model(save(llama_gqa(), tmp_path / "plain.onnx"))
    wait_for_model(qtbot, window)
    panel = tab(window, "Generate")
    genai = panel.engine.model().item(panel.engine.findData("genai"))
    assert not genai.isEnabled() and "genai_config.json" in genai.toolTip()
    window.open_model(genai_folder(tmp_path / "genai-model", vocab=200))
    wait_for_model(qtbot, window)
    assert genai.isEnabled()
    panel.prompts.setText("8")
    panel.new_tokens.setValue(10)
    panel.repeats.setValue(1)
    tokens = {}
    for engine in ("ort", "genai"):
        panel.engine.setCurrentIndex(panel.engine.findData(engine))
        with qtbot.waitSignal(window.jobs.job_finished, timeout=60000,
                              check_params_cb=lambda job: job.title.startswith("Generate")):
            panel.start()
        tokens[engine] = panel.details.toPlainText().split("next tokens: ")[1]
    assert "through onnxruntime-genai" in panel.details.toPlainText()
    assert tokens["genai"] == tokens["ort"] and len(tokens["ort"].split()) == 10
