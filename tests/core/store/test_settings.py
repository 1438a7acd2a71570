"""Settings: defaults for what a file lacks, and damaged values replaced by defaults."""

import json

import pytest

from app.core.store.settings import FINISHED_JOBS_KEPT, Settings, load_settings, save_settings


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
