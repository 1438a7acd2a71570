from PySide6.QtCore import Qt

from tests import models
from tests.gui.conftest import wait_for_model
from tests.gui.steps import tab

PROBE = {"ort_version": "1.x", "package": "onnxruntime-gpu 1.x", "devices": [], "providers": [
    {"name": "CPUExecutionProvider", "short": "cpu", "available": True, "reason": ""},
    {"name": "CUDAExecutionProvider", "short": "cuda", "available": False, "reason": "no NVIDIA driver"},
    {"name": "DmlExecutionProvider", "short": "dml", "available": True, "reason": ""}]}


def open_panel(qtbot, window, model):
    window.open_model(model)
    wait_for_model(qtbot, window)
    panel = tab(window, "IO Binding")
    return panel


def test_the_tab_follows_overview(window):
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert titles.index("IO Binding") > titles.index("Overview")


def test_providers_that_do_not_start_are_disabled_with_the_reason(qtbot, window, tmp_path):
    panel = open_panel(qtbot, window, models.save(models.mlp(), tmp_path / "mlp.onnx"))
    items = [panel.provider_combo.model().item(i) for i in range(panel.provider_combo.count())]
    assert [i.isEnabled() for i in items] == [True, False, False]      # not probed yet
    assert "Checking" in panel.provider_note.text()
    window.providers_info = PROBE
    window.providers_ready.emit(PROBE)
    assert [i.isEnabled() for i in items] == [True, False, True]
    assert items[1].toolTip() == "no NVIDIA driver"
    assert "CUDA</b> is not usable here: no NVIDIA driver" in panel.provider_note.text()
    panel.provider_combo.setCurrentIndex(2)
    assert "not yet been seen to run" in panel.provider_note.text()


def test_the_inputs_are_the_session_tabs_and_follow_it(qtbot, window, tmp_path):
    panel = open_panel(qtbot, window, models.save(models.transformer_block(), tmp_path / "block.onnx"))
    assert not hasattr(panel, "dim_spins"), "one place sets the sizes: the Session tab"
    text = panel.inputs_label.text()
    assert text.startswith("Inputs, from the Session tab: ") and "<i>1</i>×<i>128</i>×" in text
    window.session.set(**{"inputs.dims": {"batch": 2}})
    assert "2×<i>128</i>×" in panel.inputs_label.text(), "a size set in the Session tab shows here at once"
    window.context.report_inputs(window.current_model().path, [{"name": "x", "shape": [2, 40, 32]}])
    assert "x 2×<i>40</i>×32" in panel.inputs_label.text(), "and so does what the last plan chose"


def test_running_on_the_cpu_shows_one_compact_table_and_what_a_gpu_would_show(qtbot, window, tmp_path):
    panel = open_panel(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    window.providers_info = PROBE
    window.providers_ready.emit(PROBE)
    panel.iterations.setValue(5)
    panel.warmup.setValue(0)
    window.session.set(**{"inputs.dims": {"batch": 2}})
    with qtbot.waitSignal(window.jobs.job_finished, timeout=60000,
                          check_params_cb=lambda job: job.title.startswith("IO binding")):
        panel.start()
        assert not panel.control.start_button.isEnabled() and panel.control.cancel_button.isEnabled()
    assert panel.control.start_button.isEnabled() and not panel.control.cancel_button.isEnabled()
    rows = panel.table.rows
    assert panel.table.headers == ["Mode", "p50 ms", "p99 ms", "× plain (p50)", "95 % interval", "Verdict", "Max diff"]
    assert [r[0] for r in rows] == ["1. Plain run", "2. Bind inputs each run", "3. Inputs on the device",
                                    "4. Preallocated outputs"]
    assert all(r[1] > 0 and r[2] >= r[1] for r in rows) and rows[0][3:6] == [1.0, "", "reference"]
    for row in rows[1:]:             # every ratio with its interval and verdict, as Compare shows them
        low, high = (float(part) for part in row[4].split("–"))
        assert low <= round(row[3], 3) + 1e-3 and row[3] <= high + 1e-3
        assert row[5] in ("faster", "slower", "no difference", "could not tell")
    assert panel.chart.isHidden() and panel.explanation.isHidden() and not panel.cpu_note.isHidden()
    note = panel.cpu_note.text()
    assert note.startswith("On a GPU this tab shows what moving inputs and outputs")
    assert "Pick DirectML above to see that here." in note and "(CUDA graph: GPU only)" in note
    assert "the modes below do the same work" in note
    faster = [r[0][3:] for r in rows[1:] if r[5] == "faster"]
    assert ("No mode is measurably faster" in note) == (not faster), "a gain only where the verdict says faster"
    result = panel.results[window.current_model().path]
    assert result["inputs"][0]["shape"] == [2, 3, 32, 32], "the Session tab's batch ran"
    assert panel.caption.current and "cnn.onnx</b> · x 2×3×32×32 (generated) · " in panel.caption.text()
    window.open_model(models.save(models.mlp(), tmp_path / "mlp.onnx"))
    wait_for_model(qtbot, window)
    assert panel.table.rows == [] and panel.cpu_note.isHidden(), "another model's figures are not shown"


def test_without_a_gpu_the_cpu_note_says_so():
    from app.gui.panels.iobinding.panel import IOBindingPanel

    modes = [{"title": "Plain run", "latency_ms": {"p50": 1.0}}, {"title": "CUDA graph", "latency_ms": None}]
    text = IOBindingPanel.cpu_text({"modes": modes, "iterations": 100, "input_bytes": 2 ** 20}, [])
    assert "This machine has no GPU that ONNX Runtime can use" in text and "Pick" not in text
    assert "100 runs per mode in alternating rounds, with 1.0 MB of inputs per run." in text


def test_explanation_shows_bytes_and_their_cost_when_copies_happen():
    from app.gui.panels.iobinding.panel import IOBindingPanel

    mode = {"title": "Plain run", "status": "measured", "skipped_reason": "", "explanation": "copies",
            "bytes_copied_per_run": 3 * 1024 ** 2, "bytes_to_device_per_run": 2 * 1024 ** 2,
            "bytes_to_host_per_run": 1024 ** 2, "copy_ms_per_run": 0.25, "max_abs_diff": 3e-7}
    result = {"provider": "CUDAExecutionProvider", "device": "cuda", "input_bytes": 2 * 1024 ** 2,
              "output_bytes": 1024 ** 2, "iterations": 10, "note": "gpu note", "modes": [mode],
              "transfer": {"to_device_bytes_per_s": 10 * 1024 ** 3, "to_host_bytes_per_s": 8 * 1024 ** 3}}
    text = IOBindingPanel.explanation_html(result)
    assert "2.0 MB to the device and 1.0 MB back" in text and "about 0.250 ms" in text
    assert "host→device 10.0 GB/s, device→host 8.0 GB/s" in text
    assert "plain run's outputs: 3e-07" in text


def test_a_gpu_result_keeps_the_full_table_chart_and_explanation(qtbot, window, tmp_path):
    panel = open_panel(qtbot, window, models.save(models.mlp(), tmp_path / "mlp.onnx"))
    mode = {"title": "Plain run", "status": "measured", "skipped_reason": "", "explanation": "copies",
            "latency_ms": {"mean": 2.0, "p50": 1.9, "p99": 2.5}, "bytes_copied_per_run": 2 ** 20,
            "bytes_to_device_per_run": 2 ** 20, "bytes_to_host_per_run": 0, "copy_ms_per_run": 0.1,
            "speedup_vs_plain": 1.0, "max_abs_diff": 0.0}
    result = {"provider": "CUDAExecutionProvider", "device": "cuda", "input_bytes": 2 ** 20, "output_bytes": 8,
              "iterations": 10, "note": "gpu note", "modes": [mode], "transfer": None, "model": "mlp.onnx",
              "model_path": window.current_model().path, "inputs": [], "created": 0.0}
    panel.show_result(result)
    assert panel.table.headers == ["Mode", "Mean ms", "p50 ms", "p99 ms", "Moved MB/run", "Copy ms", "× plain (p50)",
                                   "95 % interval", "Verdict", "Max diff"]
    assert panel.table.rows[0][:4] == ["1. Plain run", 2.0, 1.9, 2.5] and panel.chart.values == [1.9]
    assert not panel.chart.isHidden() and not panel.explanation.isHidden() and panel.cpu_note.isHidden()


def test_the_cpu_note_shows_its_apostrophes_not_their_html_entity(window):
    panel = window.panel("IO Binding")
    panel.ensure_built()
    modes = [{"title": "Plain run", "latency_ms": {"p50": 1.0}}]
    panel.cpu_note.setText(panel.cpu_text({"modes": modes, "iterations": 100, "input_bytes": 2 ** 20}, []))
    assert panel.cpu_note.textFormat() == Qt.TextFormat.PlainText
    assert "machine's noise" in panel.cpu_note.text() and "&#x27;" not in panel.cpu_note.text()


def test_a_speedup_is_called_a_gain_only_when_its_verdict_says_faster():
    from app.gui.panels.iobinding.panel import IOBindingPanel, speed_sentence

    def mode(verdict, ratio, interval):
        return {"title": verdict, "latency_ms": {"p50": 1.0}, "speedup_vs_plain": ratio, "speedup_ci": interval,
                "verdict": verdict}

    unclear = mode("no-difference", 1.14, [0.98, 1.31])
    assert speed_sentence(unclear) == ("No measurable difference from the plain run: ×1.14 (95 % interval "
                                       "0.98–1.31).")
    assert speed_sentence(mode("faster", 1.5, [1.4, 1.6])).startswith("Faster than the plain run: ×1.50")
    assert speed_sentence(mode("slower", 0.5, [0.4, 0.6])).startswith("Slower than the plain run")
    plain = mode("reference", 1.0, [1.0, 1.0])
    result = {"modes": [plain, unclear], "iterations": 100, "input_bytes": 1}
    assert "No mode is measurably faster than the plain run" in IOBindingPanel.cpu_text(result, [])


def test_no_label_shows_an_html_entity(qtbot, window, tmp_path):
    """Names with quotes and apostrophes, and the DirectML note's quotes, read as typed in every label."""
    from PySide6 import QtGui
    from PySide6.QtWidgets import QLabel

    panel = open_panel(qtbot, window, models.save(models.mlp(), tmp_path / "the machine's \"best\" model.onnx"))
    every = dict(PROBE, providers=[dict(p, available=True, reason="") for p in PROBE["providers"]])
    window.providers_info = every
    window.providers_ready.emit(every)       # nothing unusable: the DirectML note is the only line
    panel.provider_combo.setCurrentIndex(2)
    modes = [{"title": "Plain run", "latency_ms": {"p50": 1.0}, "speedup_vs_plain": 1.0, "max_abs_diff": 0.0}]
    panel.cpu_note.setText(panel.cpu_text({"modes": modes, "iterations": 100, "input_bytes": 2 ** 20}, []))
    for label in panel.findChildren(QLabel):
        text = label.text()
        rich = label.textFormat() == Qt.TextFormat.RichText or (
            label.textFormat() == Qt.TextFormat.AutoText and QtGui.Qt.mightBeRichText(text))
        if not rich:
            assert not any(entity in text for entity in ("&#x27;", "&quot;", "&amp;", "&lt;", "&gt;")), text
    shown = QtGui.QTextDocument()
    shown.setHtml(panel.provider_note.text())
    assert 'the device name "dml"' in shown.toPlainText()
