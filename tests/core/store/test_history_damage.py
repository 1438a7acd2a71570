"""A store that cannot be used never costs a result: a damaged database is moved aside and
a fresh one started; a locked or read-only one, or a data folder that is a file, leaves
the result unstored with one warning."""

import os
import pickle
import sqlite3
import stat
import tempfile
from pathlib import Path

import pytest

from app.core.jobs.errors import UserError
from app.core.store.history import History
from tests.core.store.test_history import report


def filled(path, count=200):
    history = History(path)
    for index in range(count):
        history.record("bench", report(path.parent / "a.onnx", 0.5 + index), None, list(range(1000)))
    return path


def record_one(history) -> int | None:
    """What a benchmark does with its history: the model's identity, then the result."""
    model = history.model_identity(history.path.parent / "model.onnx")
    return history.record("bench", report(model["path"], 0.5), [1.0], [0.5, 0.6])


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "model.onnx").write_bytes(b"model")
    return tmp_path


def moved_aside(folder):
    return sorted(p.name for p in folder.iterdir() if ".damaged-" in p.name)


@pytest.mark.parametrize("damage", ["random bytes", "truncated", "empty pages"])
def test_a_damaged_database_is_moved_aside_and_a_fresh_one_started(folder, damage):
    path = folder / "history.sqlite"
    if damage == "random bytes":
        path.write_bytes(os.urandom(5000))
    elif damage == "truncated":
        filled(path)
        with open(path, "r+b") as handle:
            handle.truncate(path.stat().st_size // 2)
    else:
        filled(path)
        with open(path, "r+b") as handle:     # the header stays, the pages after it are zeroed
            handle.seek(4096)
            handle.write(b"\0" * (path.stat().st_size - 4096))
    before = path.read_bytes()
    warned = []
    history = History(path, warn=warned.append)
    entry_id = record_one(history)
    assert entry_id == 1
    assert len(warned) == 1 and "was damaged" in warned[0] and "moved to history.sqlite.damaged-" in warned[0]
    assert history.warnings == warned
    kept = moved_aside(folder)
    assert kept and (folder / kept[0]).read_bytes() == before      # moved, not deleted
    assert [e["id"] for e in History(path).entries()] == [1]


def test_a_locked_database_leaves_the_result_unstored_with_one_warning(folder, monkeypatch):
    path = folder / "history.sqlite"
    record_one(History(path))
    monkeypatch.setattr(History, "LOCK_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        history = History(path)
        assert record_one(history) is None
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(history.warnings) == 1 and "locked" in history.warnings[0]
    assert "this result is not stored" in history.warnings[0]
    assert not moved_aside(folder) and len(History(path).entries()) == 1


def test_a_data_folder_that_is_a_file_leaves_the_result_unstored(folder):
    (folder / "data").write_text("not a folder")
    history = History(folder / "data" / "history.sqlite")
    identity = history.model_identity(folder / "model.onnx")
    assert identity["sha256"] and history.record("bench", report(identity["path"], 0.5)) is None
    assert len(history.warnings) == 1 and "cannot be used" in history.warnings[0]
    with pytest.raises(UserError) as caught:
        history.entries()
    assert caught.value.kind == "history-unavailable"


def test_a_missing_database_and_folder_are_made(folder):
    history = History(folder / "new" / "deeper" / "history.sqlite")
    assert history.record("bench", report(folder / "model.onnx", 0.5)) == 1 and not history.warnings


def _as_ordinary_user(action):
    """action() in a process that file permissions apply to (root writes through them)."""
    if os.geteuid() != 0:
        return action()
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(reader)
            os.setgid(65534)
            os.setuid(65534)
            result = ("done", action())
        except BaseException as exc:   # the test process shows it
            result = ("raised", repr(exc))
        finally:
            os.write(writer, pickle.dumps(result))
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as handle:
        outcome, value = pickle.loads(handle.read())
    os.waitpid(pid, 0)
    assert outcome == "done", value
    return value


def test_a_read_only_database_leaves_the_result_unstored(folder):
    store = tempfile.mkdtemp()      # a folder an ordinary user can reach
    try:
        path = filled(Path(store) / "history.sqlite", 1)
        os.chmod(path, 0o444)
        os.chmod(store, 0o555)

        def attempt():
            history = History(path)
            return history.record("bench", report("model.onnx", 0.5) | {"model": {"path": "m", "sha256": "0"}}), \
                history.warnings

        entry_id, warnings = _as_ordinary_user(attempt)
        assert entry_id is None
        assert len(warnings) == 1 and "readonly" in warnings[0] and "this result is not stored" in warnings[0]
        assert stat.S_IMODE(path.stat().st_mode) == 0o444 and len(History(path).entries()) == 1
    finally:
        os.chmod(store, 0o755)
        for name in os.listdir(store):
            os.remove(os.path.join(store, name))
        os.rmdir(store)
