"""The window's run form takes its ranges, defaults and tooltips from RunSettings: every value
it offers is one the measuring core takes, and its defaults are the core's."""

import dataclasses

from app.core.measure.runs import RunSettings
from app.core.session.fields import thread_limit
from app.gui.widgets.run_form import RunSettingsForm


def _form(qtbot) -> RunSettingsForm:
    form = RunSettingsForm()
    qtbot.addWidget(form)
    return form


def test_the_forms_defaults_are_the_cores(qtbot):
    assert _form(qtbot).settings() == RunSettings()


def test_the_forms_extremes_are_values_the_core_takes(qtbot):
    form = _form(qtbot)
    assert form.concurrency.maximum() == thread_limit()       # not a number of its own
    form.stop_by.setCurrentIndex(1)
    for spin in (form.warmup, form.iterations, form.duration, form.concurrency):
        spin.setValue(spin.minimum())
    low = form.settings()
    assert low.duration_s == 0.001 and low.checked() == low
    for spin in (form.warmup, form.iterations, form.duration, form.concurrency):
        spin.setValue(spin.maximum())
    high = form.settings()
    assert high.checked() == high


def test_a_stored_run_is_shown_as_it_ran(qtbot):
    form = _form(qtbot)
    run = RunSettings(warmup=4, iterations=70, duration_s=2.5, concurrency=3)
    form.set_settings(run)
    assert form.settings() == run
    form.set_settings(dataclasses.replace(run, duration_s=None))
    assert form.settings().duration_s is None and form.settings().iterations == 70


def test_the_tooltips_are_the_cores_words(qtbot):
    form = _form(qtbot)
    help_of = {f.name: f.metadata["help"] for f in dataclasses.fields(RunSettings)}
    assert form.concurrency.toolTip() == help_of["concurrency"] and form.warmup.toolTip() == help_of["warmup"]
