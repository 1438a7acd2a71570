from tests import models
from tests.gui.conftest import wait_for_model

PROBE = {"ort_version": "1.x", "package": "onnxruntime-gpu 1.x", "devices": [], "providers": [
    {"name": "CPUExecutionProvider", "short": "cpu", "available": True, "reason": ""},
    {"name": "CUDAExecutionProvider", "short": "cuda", "available": False, "reason": "no NVIDIA driver"},
    {"name": "DmlExecutionProvider", "short": "dml", "available": True, "reason": ""}]}


def open_panel(qtbot, window, model):
    window.open_model(model)
    wait_for_model(qtbot, window)
    panel = window.panel("IO Binding")
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
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


def test_input_size_comes_from_the_models_symbolic_dims(qtbot, window, tmp_path):
    panel = open_panel(qtbot, window, models.save(models.transformer_block(), tmp_path / "block.onnx"))
    assert list(panel.dim_spins) == ["batch", "sequence"]
    assert panel.dim_spins["batch"].value() == 1 and panel.dim_spins["sequence"].value() == 128


def test_running_on_the_cpu_fills_the_table_chart_and_explanation(qtbot, window, tmp_path):
    panel = open_panel(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    panel.iterations.setValue(5)
    panel.warmup.setValue(0)
    panel.dim_spins["batch"].setValue(2)
    with qtbot.waitSignal(window.jobs.job_finished, timeout=60000,
                          check_params_cb=lambda job: job.title.startswith("IO binding")):
        panel.start()
        assert not panel.run_button.isEnabled() and panel.cancel_button.isEnabled()
    assert panel.run_button.isEnabled() and not panel.cancel_button.isEnabled()
    rows = panel.table.rows
    assert [r[0] for r in rows] == ["1. Plain run", "2. Bind inputs each run", "3. Inputs on the device",
                                    "4. Preallocated outputs", "5. CUDA graph (skipped)"]
    assert all(r[1] > 0 for r in rows[:4]) and rows[4][1] is None
    assert len(panel.chart.labels) == 4
    assert panel.chart.values == [r[2] for r in rows[:4]]      # medians, like the speed-ups
    text = panel.explanation.toPlainText()
    assert "On the CPU" in text and "CUDA graphs are a feature of the CUDA provider" in text
    result = panel.results[window.current_model().path]
    assert result["inputs"][0]["shape"] == [2, 3, 32, 32]
    assert panel.caption.current and "cnn.onnx</b> · x 2×3×32×32 · " in panel.caption.text()


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
