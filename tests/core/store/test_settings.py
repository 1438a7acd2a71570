"""Settings: defaults for what a file lacks, damaged values replaced by defaults, and a file this
version cannot read kept aside under a new name rather than overwritten."""

import json

import pytest

from app.core.store.settings import FINISHED_JOBS_KEPT, SCHEMA_VERSION, Settings, load_settings, save_settings


def test_a_file_from_before_a_setting_existed_gets_its_default(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"schema_version": 1, "recent_files": [], "last_open_dir": "/x"}))
    settings = load_settings(path)
    assert settings.finished_jobs_kept == FINISHED_JOBS_KEPT and settings.last_open_dir == "/x"


@pytest.mark.parametrize("value", [0, -3, "many", True, None, 2.5])
def test_a_bad_number_of_kept_jobs_falls_back_to_the_default(tmp_path, value):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"finished_jobs_kept": value}))
    assert load_settings(path).finished_jobs_kept == FINISHED_JOBS_KEPT


def test_the_number_of_kept_jobs_round_trips(tmp_path):
    path = tmp_path / "settings.json"
    save_settings(Settings(finished_jobs_kept=7), path)
    assert load_settings(path).finished_jobs_kept == 7


@pytest.mark.parametrize("text, why", [("{not json", "damaged"), ("[1, 2]", "damaged"),
                                       ('{"schema_version": "two"}', "damaged"),
                                       ('{"schema_version": 99, "recent_files": ["/a"]}', "v99")])
def test_a_file_this_version_cannot_read_is_kept_aside_not_overwritten(tmp_path, text, why):
    path = tmp_path / "settings.json"
    path.write_text(text)
    settings = load_settings(path, set_aside=True)
    assert settings.recent_files == [] and settings.set_aside is not None
    assert settings.set_aside.parent == tmp_path and f".{why}-" in settings.set_aside.name
    assert settings.set_aside.read_text() == text
    assert not path.exists()
    save_settings(settings, path)             # the defaults go to a new file; the old one stays
    assert settings.set_aside.read_text() == text
    assert json.loads(path.read_text())["schema_version"] == SCHEMA_VERSION
    assert "set_aside" not in json.loads(path.read_text())


def test_a_reader_that_does_not_set_aside_leaves_the_file(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"schema_version": 99}')
    settings = load_settings(path)            # a job's child reading its memory limit
    assert settings.set_aside is None and path.read_text() == '{"schema_version": 99}'


def test_two_files_set_aside_in_the_same_second_both_stay(tmp_path):
    path = tmp_path / "settings.json"
    kept = []
    for text in ("{bad one", "{bad two"):
        path.write_text(text)
        kept.append(load_settings(path, set_aside=True).set_aside)
    assert kept[0] != kept[1] and [k.read_text() for k in kept] == ["{bad one", "{bad two"]


def test_a_version_1_file_keeps_its_values_and_gets_the_new_ones(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"schema_version": 1, "recent_files": ["/m.onnx"], "memory_limit": "2G"}))
    settings = load_settings(path, set_aside=True)
    assert settings.set_aside is None and path.exists()
    assert settings.recent_files == ["/m.onnx"] and settings.memory_limit == "2G"
    assert settings.schema_version == SCHEMA_VERSION and settings.open_models == [] and settings.panels == {}


def test_the_window_state_round_trips_and_bad_parts_fall_back(tmp_path):
    path = tmp_path / "settings.json"
    save_settings(Settings(open_models=[{"path": "/a.onnx", "kind": "source", "parent": ""}], current_model="/a.onnx",
                           panels={"Convert": {"kind": "fp16"}}, convert_output_dir="/out"), path)
    settings = load_settings(path)
    assert settings.open_models[0]["path"] == "/a.onnx" and settings.current_model == "/a.onnx"
    assert settings.panels == {"Convert": {"kind": "fp16"}} and settings.convert_output_dir == "/out"
    path.write_text(json.dumps({"schema_version": 2, "open_models": [{"path": 3}, "x", {"path": "/b.onnx"}],
                                "panels": {"Convert": [1], "Profile": {"runs": 5}}, "current_model": 7}))
    settings = load_settings(path)
    assert settings.open_models == [{"path": "/b.onnx"}] and settings.panels == {"Profile": {"runs": 5}}
    assert settings.current_model == ""
