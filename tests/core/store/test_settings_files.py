"""What sits at the settings path need not be a file ORTune wrote: a FIFO, a device or a folder
is never opened (a FIFO would block the reader for ever), and a save never writes through a
link someone planted in the settings folder."""

import json
import os
import subprocess
import sys
import threading

import pytest

from app.core.store.settings import Settings, load_settings, save_settings
from tests import models


def _load_unblocked(path, set_aside):
    """load_settings in a thread; should it block on the FIFO, a writer opened then closed frees it."""
    found = []
    reader = threading.Thread(target=lambda: found.append(load_settings(path, set_aside=set_aside)), daemon=True)
    reader.start()
    reader.join(60)
    blocked = reader.is_alive()
    if blocked:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        reader.join()
    assert not blocked, "load_settings opened the FIFO and waited for a writer"
    return found[0]


@pytest.mark.parametrize("set_aside", [False, True])
def test_a_fifo_at_the_settings_path_is_moved_aside_unopened(tmp_path, set_aside):
    path = tmp_path / "settings.json"
    os.mkfifo(path)
    settings = _load_unblocked(path, set_aside)
    assert settings == Settings()
    assert settings.set_aside is not None and ".not-a-file-" in settings.set_aside.name
    assert str(settings.set_aside) in settings.set_aside_note and "not a regular file" in settings.set_aside_note
    assert not path.exists() and settings.set_aside.is_fifo()


def test_a_folder_at_the_settings_path_is_moved_aside_and_saving_works_again(tmp_path):
    path = tmp_path / "settings.json"
    path.mkdir()
    settings = load_settings(path)
    assert settings.set_aside.is_dir() and not path.exists()
    save_settings(Settings(memory_limit="2G"), path)
    assert load_settings(path).memory_limit == "2G"


def test_a_link_to_a_device_is_moved_aside_and_the_device_stays(tmp_path):
    path = tmp_path / "settings.json"
    path.symlink_to("/dev/null")
    settings = load_settings(path)
    assert settings.set_aside.is_symlink() and os.readlink(settings.set_aside) == "/dev/null"
    assert os.path.exists("/dev/null")


def test_a_regular_file_still_reads(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"memory_limit": "3G"}))
    settings = load_settings(path)
    assert settings.memory_limit == "3G" and settings.set_aside is None and settings.set_aside_note == ""


@pytest.mark.parametrize("name", ["settings.tmp", "settings.json.tmp", ".settings.json.tmp"])
def test_saving_never_writes_through_a_planted_link(tmp_path, name):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / name).symlink_to(victim)
    save_settings(Settings(memory_limit="5G"), folder / "settings.json")
    assert victim.read_text() == "keep me" and (folder / name).is_symlink()
    assert load_settings(folder / "settings.json").memory_limit == "5G"
    assert sorted(p.name for p in folder.iterdir()) == sorted([name, "settings.json"])


def test_a_save_that_fails_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "settings.json"
    path.mkdir()
    (path / "inside").write_text("")              # a folder that is not empty cannot be replaced
    with pytest.raises(OSError):
        save_settings(Settings(), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_bench_with_a_fifo_for_its_settings_runs_and_warns(tmp_path):
    models.save(models.tiny_add(), tmp_path / "m.onnx")
    config = tmp_path / "config"
    config.mkdir()
    os.mkfifo(config / "settings.json")
    env = dict(os.environ, ORTUNE_CONFIG_DIR=str(config))
    done = subprocess.run([sys.executable, "-m", "app", "bench", "m.onnx", "--iterations", "3", "--warmup", "0",
                           "--json"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "warning: The settings file" in done.stderr and "not a regular file" in done.stderr
    assert json.loads(done.stdout)["iterations"] == 3
    assert not (config / "settings.json").exists()
