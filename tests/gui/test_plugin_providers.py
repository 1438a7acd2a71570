"""The window with an execution provider plugin installed: the provider check lists it,
the Session tab's picker offers it with its devices, Help › Execution providers shows the
plugin and each device."""

from app.gui.panels.session.forms import NAME_ROLE
from app.gui.shell.providers_dialog import ProvidersDialog
from tests.gui.steps import tab
from tests.openvino_plugin import openvino_plugin  # noqa: F401 (a fixture)

OPENVINO = "OpenVINOExecutionProvider"


def test_the_picker_offers_the_plugin_with_its_devices(qtbot, window, openvino_plugin):
    with qtbot.waitSignal(window.providers_ready, timeout=60000):
        window.check_providers()
    info = window.providers_info
    openvino = next(p for p in info["providers"] if p["name"] == OPENVINO)
    assert openvino["available"] and openvino["plugin"]["package"] == "onnxruntime-ep-openvino"
    assert "openvino" in window.providers_label.text().split(", ")

    editor = tab(window, "Session").providers
    item = next(editor.list.item(i) for i in range(editor.list.count()) if editor.list.item(i).data(NAME_ROLE) == OPENVINO)
    assert item.text() == "OpenVINO"                      # not greyed as unavailable
    editor.list.setCurrentItem(item)
    lines = editor.device_note.text().splitlines()
    assert lines[0] == "Devices:" and lines[1].startswith("CPU · ") and lines[1].endswith("— usable")
    assert set(editor.pages[OPENVINO].fields) >= {"device_type", "precision", "num_of_threads", "num_streams",
                                                  "cache_dir", "enable_qdq_optimizer", "load_config"}

    dialog = ProvidersDialog(info, window)
    qtbot.addWidget(dialog)
    plugins = dialog.plugins.model()
    assert plugins.rowCount() == len(info["plugins"]) >= 1
    devices = dialog.devices.model()
    providers = {devices.index(row, 3).data() for row in range(devices.rowCount())}
    assert OPENVINO in providers


def test_a_benchmark_under_a_device_policy_says_which_devices_it_picked(qtbot, window, tmp_path, openvino_plugin):
    from tests import models
    from tests.gui.test_benchmark_panels import add_model, wait_for_job

    add_model(window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    window.session.set(device_policy="max-performance")
    panel = tab(window, "Benchmark")
    panel.run_form.iterations.setValue(20)
    panel.start()
    job = panel.job
    wait_for_job(qtbot, job)
    assert job.state == "done", job.error
    assert panel.report["session"]["device_policy"] == "max-performance"
    assert "(the device policy max-performance picked " in panel.control.status.text()
    assert "CPUExecutionProvider: CPU" in panel.control.status.text()
