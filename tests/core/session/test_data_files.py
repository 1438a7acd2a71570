"""What of a data folder travels to a target or a cluster's workers (app.core.session.data_files):
only the files its loader reads, never through a link out of it, and bounded."""

import numpy as np
import pytest

from app.core.jobs.errors import UserError
from app.core.session import data_files
from app.core.targets.upload import FOLDER_MAIN, folder_bundle


def _folder(tmp_path):
    data = tmp_path / "data"
    (data / "expected").mkdir(parents=True)
    for name in ("a", "b"):
        np.save(data / f"{name}.npy", np.ones((1, 4), np.float32))
    np.save(data / "expected" / "a.npy", np.ones((1, 4), np.float32))
    np.save(data / "expected" / "stray.npy", np.ones(1, np.float32))     # no sample of that name
    (data / "labels.csv").write_text("a,1\nb,0\n")
    (data / "notes.txt").write_text("not read by the loader")
    (data / "deeper").mkdir()
    (data / "deeper" / "c.npy").write_bytes(b"not read either")
    return data


def test_only_the_files_the_loader_reads_travel(tmp_path):
    data = _folder(tmp_path)
    (data / "inside.npy").symlink_to(data / "a.npy")       # a link that stays inside is read as its file
    names = [name for name, _ in data_files.folder_files(data)]
    assert names == ["a.npy", "b.npy", "inside.npy", "labels.csv", "expected/a.npy"]
    found = folder_bundle(data_files.folder_files(data), tmp_path / "send")
    assert found.main.name == FOLDER_MAIN and [n for n, _, _ in found.files][1:] == names
    other = folder_bundle([(n, p) for n, p in data_files.folder_files(data) if n != "inside.npy"], tmp_path / "s2")
    assert other.sha != found.sha, "another set of names is another bundle"


def test_a_link_out_of_the_folder_is_refused_in_one_line(tmp_path):
    data = _folder(tmp_path)
    secret = tmp_path / "secret.npy"
    np.save(secret, np.zeros((1, 4), np.float32))
    (data / "c.npy").symlink_to(secret)
    with pytest.raises(UserError) as caught:
        data_files.folder_files(data)
    assert "leads out of the data folder" in caught.value.message and "\n" not in caught.value.message
    (data / "c.npy").unlink()
    (data / "expected" / "b.npy").symlink_to(secret)
    with pytest.raises(UserError, match="leads out"):
        data_files.folder_files(data)


def test_a_folder_too_large_or_too_many_files_is_refused(tmp_path, monkeypatch):
    data = _folder(tmp_path)
    monkeypatch.setattr(data_files, "MAX_BYTES", 100)
    with pytest.raises(UserError, match="at most 100 B travel"):
        data_files.folder_files(data)
    monkeypatch.setattr(data_files, "MAX_BYTES", 1 << 30)
    monkeypatch.setattr(data_files, "MAX_FILES", 3)
    with pytest.raises(UserError, match="holds 4 files to send; at most 3"):
        data_files.folder_files(data)
