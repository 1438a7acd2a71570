"""A gate kept in the history opens, with one click, as Compare and Drift on its pair."""

import pytest

from app.core.drift.jobs import DRIFT
from app.core.store.history import History
from tests.gate_results import gate_result
from app.gui.shell.handover import DriftPair


@pytest.fixture(autouse=True)
def own_history(tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))


def test_compare_and_drift_opens_a_stored_gate_on_its_pair(qtbot, window, monkeypatch):
    result = gate_result()
    result["model"] = {"path": result["new"]["path"], "sha256": result["new"]["sha256"], "size_bytes": 10}
    entry_id = History().record("gate", result)
    drifts = []
    monkeypatch.setattr(window.context, "run_again", lambda kind, entry: drifts.append((kind, entry)))
    history = window.panel("History")
    window.tabs.setCurrentWidget(history)
    history.ensure_built()
    history.refresh()
    history.table.selectRow(0)
    assert history.selected_id() == entry_id
    history.actions["Compare and Drift"].click()
    compare = window.panel("Compare")
    assert window.tabs.currentWidget() is compare and compare.result["verdict"] == "pass"
    assert drifts == [(DRIFT, DriftPair("/models/old.onnx", "/models/new.onnx"))]
