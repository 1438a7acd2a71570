"""A full disk under the results history or the settings is named as such ("no space left
on …: N MB needed"), in one line, and what was there stays whole. The disk is made full by
the test: SQLite held to the pages the database has, or ENOSPC raised by the writer."""

import re
import sqlite3

import pytest

from app.core.jobs.errors import UserError
from app.core.store import history as history_module
from app.core.store.history import History
from app.core.store.settings import Settings, load_settings, save_settings
from tests.core.store.test_history import report
from tests.disk_full import NO_SPACE, fill_every_opened_file, full



def test_a_result_recorded_on_a_full_disk_is_named_and_the_history_kept(tmp_path, monkeypatch):
    path = tmp_path / "history.sqlite"
    first = History(path).record("bench", report(tmp_path / "a.onnx", 0.5), [1.0], [0.5])
    before = [entry["id"] for entry in History(path).entries()]
    real = sqlite3.connect

    def full(*args, **kwargs):         # SQLite may not grow the file by a page: its "disk is full"
        connection = real(*args, **kwargs)
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {max(pages, 1)}")
        return connection
    monkeypatch.setattr(history_module.sqlite3, "connect", full)
    history = History(path)
    assert history.record("bench", report(tmp_path / "a.onnx", 0.6), None, list(range(100_000))) is None
    assert len(history.warnings) == 1
    assert re.match(NO_SPACE + "; this result is not stored$", history.warnings[0])
    monkeypatch.undo()
    assert before == [first] and [entry["id"] for entry in History(path).entries()] == before


def test_a_history_whose_folder_cannot_be_made_on_a_full_disk_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(history_module.Path, "mkdir", full)
    history = History(tmp_path / "data" / "history.sqlite")
    assert history.record("bench", report(tmp_path / "a.onnx", 0.5)) is None
    assert len(history.warnings) == 1 and re.match(NO_SPACE, history.warnings[0])


def test_settings_saved_to_a_full_disk_are_named_and_the_old_file_kept(tmp_path, monkeypatch):
    path = tmp_path / "settings.json"
    save_settings(Settings(memory_limit="50%"), path)
    before = path.read_bytes()
    fill_every_opened_file(monkeypatch)
    with pytest.raises(UserError, match=NO_SPACE + "$") as caught:
        save_settings(Settings(memory_limit="70%"), path)
    monkeypatch.undo()
    assert caught.value.kind == "no-space" and "\n" not in caught.value.message
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["settings.json"]
    assert load_settings(path).memory_limit == "50%"
