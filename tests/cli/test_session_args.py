def test_cli_level_names_match_the_core():
    from app.cli.session_args import OPT_LEVEL_NAMES
    from app.core.session.config import OPT_LEVELS
    assert OPT_LEVEL_NAMES == list(OPT_LEVELS)


def _session_from(argv):
    import argparse

    from app.cli.session_args import add_session_arguments, session_config_from_args

    parser = argparse.ArgumentParser()
    add_session_arguments(parser)
    return session_config_from_args(parser.parse_args(argv))


def test_the_memory_limit_goes_into_the_session_that_every_child_runs_with(tmp_path):
    from app.core.session.config import SessionConfig

    assert _session_from([]).memory_limit == ""
    assert _session_from(["--memory-limit", "2G"]).memory_limit == "2G"
    preset = tmp_path / "preset.json"
    SessionConfig(memory_limit="50%").save(preset)
    assert _session_from(["--config", str(preset)]).memory_limit == "50%"
    assert _session_from(["--config", str(preset), "--memory-limit", "1G"]).memory_limit == "1G"


def test_a_bad_memory_limit_is_refused_naming_the_flag():
    import pytest

    from app.core.jobs.errors import UserError

    with pytest.raises(UserError, match="--memory-limit expects a size"):
        _session_from(["--memory-limit", "lots"])


def test_the_data_folder_and_its_image_settings_go_into_the_input_plan(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    feeds = _session_from(["--data", "pages", "--image-preset", "unit", "--image-layout", "NHWC"]).inputs
    assert (feeds.data, feeds.image_preset, feeds.image_layout) == (str(tmp_path / "pages"), "unit", "NHWC")
