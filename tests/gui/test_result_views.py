"""Every entry whose results the history keeps can be shown everywhere: `ortune history
--show` prints it, the History tab summarises it, and its view names a tab of the window
that does what the view promises (re-opens a stored one, runs one again)."""

import importlib

import pytest

from app.core.launch.registry import RECORDED
from app.gui.panels.history.summary import FIGURES
from app.gui.shell.panel import Panel
from app.gui.shell.result_views import RESULT_VIEWS
from app.gui.shell.tabs import PANELS


def _panel_class(title: str) -> type:
    module, name = next((module, name) for tab, module, name in PANELS if tab == title)
    return getattr(importlib.import_module(module), name)


def test_the_tables_keyed_by_entry_cover_exactly_the_recorded_entries():
    from app.cli.history import renderers

    assert set(RESULT_VIEWS) == set(RECORDED), "an entry the window cannot place"
    assert set(FIGURES) == set(RECORDED), "an entry whose stored result History cannot summarise"
    assert set(renderers()) == set(RECORDED), "an entry whose stored result `ortune history --show` cannot print"


@pytest.mark.parametrize("job", RECORDED, ids=lambda job: job.name)
def test_each_view_names_a_tab_that_does_what_it_promises(job):
    view = RESULT_VIEWS[job]
    assert view.tab in [tab for tab, _, _ in PANELS]
    panel = _panel_class(view.tab)
    assert not view.reopens or panel.open_result is not Panel.open_result, f"{view.tab} cannot re-open {job.name}"
    assert view.again is None or panel.run_again is not Panel.run_again, f"{view.tab} cannot run {job.name} again"
