"""The History tab opens a result stored by an older ORTune in its tab, as a new one, and
says in one message that a result from a newer ORTune cannot be opened."""

import json

import pytest

from app.core.store.migrations import REPORT_VERSION, VERSION_KEY
from tests import old_reports


@pytest.fixture(autouse=True)
def own_history(tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))


def _open(window, entry_id):
    history = window.panel("History")
    window.tabs.setCurrentWidget(history)
    history.ensure_built()
    history.refresh()
    history.table.selectRow(0)
    assert history.selected_id() == entry_id
    history.open_selected()
    return history


def test_a_comparison_stored_before_versions_opens_in_the_compare_tab(window):
    _open(window, old_reports.store_unversioned("compare", old_reports.compare_before_alternation()))
    compare = window.panel("Compare")
    assert window.tabs.currentWidget() is compare and window.last_error is None
    assert compare.table.rows[1][1:4] == [1.5, "not measured", "one after the other"]
    assert "timed one after the other: no interval, no verdict" in compare.caption.text()


def test_a_sweep_stored_before_versions_opens_in_the_benchmark_tab(window):
    _open(window, old_reports.store_unversioned("sweep", old_reports.sweep_before_alternation()))
    bench = window.panel("Benchmark")
    assert window.tabs.currentWidget() is bench and bench.tabs.currentWidget() is bench.sweep
    assert [row[-4:-1] for row in bench.sweep.table.rows] == [["–", "–", "one after the other"]] * 2


def test_a_result_from_a_newer_ortune_is_refused_in_one_message(window):
    entry_id = old_reports.store_raw("compare", json.dumps({VERSION_KEY: REPORT_VERSION + 1}))
    history = _open(window, entry_id)
    title, message = window.last_error
    assert title == "History" and message.startswith(f"stored result {entry_id} was stored by a newer ORTune")
    assert history.entry is None and window.tabs.currentWidget() is history
