"""The Session tab's widgets and the window's SessionState, kept in step both ways."""

import pytest

from app.core.session.config import ProviderSpec, SessionConfig
from app.gui.panels.session.fields import FIELDS, TABLE_FIELDS, read_widget
from tests.gui.steps import tab

#: a value for every field that differs from the default, as a user could set it in the form
SAMPLES = {
    "providers": [ProviderSpec("CUDAExecutionProvider", {"device_id": "1"}), ProviderSpec("CPUExecutionProvider")],
    "graph_optimization_level": "extended", "execution_mode": "parallel", "enable_mem_pattern": False,
    "enable_cpu_mem_arena": False, "use_deterministic_compute": True, "io_binding": True, "log_severity_level": 0,
    "intra_op_num_threads": 3, "inter_op_num_threads": 2, "intra_op_thread_affinities": "1;2",
    "intra_op_allow_spinning": False, "inter_op_allow_spinning": True, "intra_op_spin_duration_us": 250,
    "inter_op_spin_duration_us": 0, "intra_op_spin_backoff_max": 4, "inter_op_spin_backoff_max": 2,
    "dynamic_block_base": 4, "free_dimension_overrides": {"batch": 2},
    "config_entries": {"session.disable_prepacking": "1"}, "memory_limit": "2G", "inputs.mode": "zeros", "inputs.seed": 5,
    "inputs.vocab_size": 77, "inputs.data": "/data/samples", "inputs.sample": 2, "inputs.image_preset": "unit",
    "inputs.image_layout": "NHWC", "device_policy": "max-efficiency", "ep_libraries": {"my_ep": "/opt/ep/libmy_ep.so"},
    "inputs.phase": "prefill", "inputs.past_length": 300, "inputs.prompt_length": 64,
}


@pytest.fixture
def form(qtbot, window):
    panel = tab(window, "Session")
    heard = []
    window.session.subscribe(lambda _state, changed: heard.append(changed))
    yield panel, heard
    qtbot.waitUntil(lambda: not any(j.state == "running" for j in window.jobs.jobs), timeout=30000)


def test_the_table_covers_every_field_once():
    from app.core.session.state import FIELD_NAMES
    names = [f.name for f in FIELDS]
    assert len(names) == len(set(names))
    assert set(names) == set(FIELD_NAMES) - TABLE_FIELDS, "the Inputs table edits sizes, files and values"
    assert set(SAMPLES) == set(names)


def test_every_widget_is_made_from_its_row_with_the_rows_help_as_its_tooltip(form):
    from app.core.session.fields import FIELD

    panel, _ = form
    assert set(panel.widgets) == set(FIELD) - TABLE_FIELDS
    for name, widget in panel.widgets.items():
        assert widget.toolTip() == FIELD[name].help, name


def test_a_row_changed_in_the_table_changes_its_widget(qtbot):
    import dataclasses

    from app.core.session.fields import FIELD
    from app.gui.panels.session.fields import make_widget

    widget, _ = make_widget(dataclasses.replace(FIELD["dynamic_block_base"], help="Another help", maximum=8))
    qtbot.addWidget(widget)
    assert widget.toolTip() == "Another help" and widget.maximum() == 8


def test_setting_the_state_redraws_the_widget_and_nothing_echoes(form, window, monkeypatch):
    panel, heard = form
    writes = []
    original = window.session.set
    monkeypatch.setattr(window.session, "set", lambda **values: writes.append(values) or original(**values))
    for name, value in SAMPLES.items():
        heard.clear()
        writes.clear()
        original(**{name: value})
        assert read_widget(panel.binding.fields[name], panel.widgets[name]) == value, name
        assert heard == [frozenset({name})], name
        assert writes == [], f"redrawing {name} wrote the state back"


def test_changing_widgets_sets_the_state_once_each(form, window):
    panel, heard = form
    panel.widgets["intra_op_num_threads"].setValue(3)
    panel.widgets["intra_op_allow_spinning"].setCurrentIndex(2)
    panel.widgets["intra_op_spin_duration_us"].setValue(-1)        # the lowest value: ORT's default
    panel.widgets["enable_mem_pattern"].setChecked(False)
    panel.widgets["inputs.mode"].setCurrentText("zeros")
    panel.widgets["config_entries"].setPlainText("session.disable_prepacking=1")
    assert heard == [frozenset({"intra_op_num_threads"}), frozenset({"intra_op_allow_spinning"}),
                     frozenset({"enable_mem_pattern"}), frozenset({"inputs.mode"}), frozenset({"config_entries"})]
    config = window.session.config()
    assert config.intra_op_num_threads == 3 and config.intra_op_allow_spinning is False
    assert config.intra_op_spin_duration_us is None and config.enable_mem_pattern is False
    assert config.inputs.mode == "zeros" and config.config_entries == {"session.disable_prepacking": "1"}


def test_a_provider_option_typed_in_its_form_reaches_the_state(form, window):
    panel, _ = form
    panel.providers.set_providers([ProviderSpec("CUDAExecutionProvider")])
    window.session.set(providers=panel.providers.providers())
    panel.providers.pages["CUDAExecutionProvider"].fields["device_id"].setText("1")
    assert window.session.get("providers")[0].options == {"device_id": "1"}


def test_an_unknown_providers_options_are_free_pairs_that_reach_the_state(form, window):
    panel, _ = form
    panel.providers.set_availability([{"name": "WebGpuExecutionProvider", "available": True, "reason": ""}])
    panel.providers.set_providers([ProviderSpec("WebGpuExecutionProvider")])
    window.session.set(providers=panel.providers.providers())
    page = panel.providers.pages["WebGpuExecutionProvider"]
    page.free.setPlainText("deviceId=1\npreferredLayout=NHWC")
    assert window.session.get("providers")[0].options == {"deviceId": "1", "preferredLayout": "NHWC"}


def test_the_picker_shows_the_selected_providers_devices_as_plain_text(form):
    panel, _ = form
    devices = [{"provider": "OpenVINOExecutionProvider", "type": "CPU", "vendor": "Intel", "vendor_id": 0x8086,
                "device_id": 0, "metadata": {"FULL_DEVICE_NAME": "<b>Xeon</b>\x1b[31m"}, "available": True,
                "reason": ""},
               {"provider": "CPUExecutionProvider", "type": "CPU", "vendor": "Intel", "vendor_id": 0x8086,
                "device_id": 0, "metadata": {}, "available": True, "reason": ""}]
    editor = panel.providers
    editor.set_availability([{"name": "OpenVINOExecutionProvider", "available": True, "reason": ""}], devices)
    editor.set_providers([ProviderSpec("OpenVINOExecutionProvider")])
    text = editor.device_note.text()
    assert text.startswith("Devices:\nCPU · Intel · 8086:0000 · <b>Xeon</b>") and text.endswith("— usable")
    assert text.count("\n") == 1          # OpenVINO's device only, not the CPU provider's
    from PySide6.QtCore import Qt
    assert editor.device_note.textFormat() == Qt.TextFormat.PlainText


def test_text_the_form_cannot_read_stops_jobs_until_it_is_redrawn(form, window):
    panel, heard = form
    entries = panel.widgets["config_entries"]
    entries.setPlainText("not a pair")
    assert heard == [] and "line 1" in window.session.problems()["config_entries"]
    assert panel.python_snippet() is None and "line 1" in window.last_error[1]
    panel.reset()
    assert entries.toPlainText() == "" and window.session.problems() == {}
    assert window.session.config().to_dict() == SessionConfig().to_dict()


def test_the_state_is_there_before_the_tab_is_built(qtbot, window):
    window.session.set(intra_op_num_threads=2)
    panel = tab(window, "Session")
    assert panel.widgets["intra_op_num_threads"].value() == 2
    qtbot.waitUntil(lambda: not any(j.state == "running" for j in window.jobs.jobs), timeout=30000)


def test_the_memory_limit_typed_in_the_tab_is_every_jobs_budget_and_travels_in_presets(qtbot, form, window,
                                                                                        tmp_path):
    from app.core.jobs.errors import UserError
    from tests import models
    from tests.gui.test_benchmark_panels import add_model, wait_for_job

    panel, _ = form
    limit = panel.widgets["memory_limit"]
    assert "75%" in limit.placeholderText()
    limit.setText("1.5G")
    add_model(window, models.save(models.tiny_add(), tmp_path / "tiny.onnx"))
    bench = window.panel("Benchmark")
    bench.ensure_built()
    bench.run_form.iterations.setValue(5)
    bench.start()
    handle = bench.job.worker.handle
    assert handle.params.session.memory_limit == "1.5G"
    wait_for_job(qtbot, bench.job)
    assert handle.handle.memory_budget == int(1.5 * (1 << 30)), "the child ran within the tab's limit"
    panel.save_preset(str(tmp_path / "preset.json"))
    panel.reset()
    assert limit.text() == "" and window.session.config().memory_limit == ""
    panel.load_preset(str(tmp_path / "preset.json"))
    assert limit.text() == "1.5G" and window.session.config().memory_limit == "1.5G"
    limit.setText("lots")
    with pytest.raises(UserError, match="memory_limit expects a size such as 4G"):
        window.session.config()
