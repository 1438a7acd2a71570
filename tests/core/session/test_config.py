"""Session presets: preset -> SessionOptions -> preset, and the "Copy as Python" snippet."""

import pytest

from app.core.jobs.errors import UserError
from app.core.session.inputs import FeedSpec
from app.core.session.config import ProviderSpec, SessionConfig
from app.core.session.create import build_session_options, config_from_options, to_python
from tests import models


def rich_config() -> SessionConfig:
    return SessionConfig(
        providers=[ProviderSpec("CPUExecutionProvider")], graph_optimization_level="extended",
        execution_mode="parallel", intra_op_num_threads=2, inter_op_num_threads=2,
        intra_op_thread_affinities="1", intra_op_allow_spinning=False, inter_op_allow_spinning=True,
        intra_op_spin_duration_us=500, inter_op_spin_backoff_max=4, dynamic_block_base=4,
        enable_mem_pattern=False, enable_cpu_mem_arena=False, use_deterministic_compute=True,
        log_severity_level=2, config_entries={"session.disable_prepacking": "1"},
        free_dimension_overrides={"batch": 3}, inputs=FeedSpec(seed=7, dims={"batch": 3}))


def comparable(config: SessionConfig) -> dict:
    """What SessionOptions can give back: everything but the inputs and free dimensions."""
    data = config.to_dict()
    for key in ("inputs", "free_dimension_overrides", "io_binding"):
        data.pop(key)
    return data


def test_preset_to_session_options_and_back():
    config = rich_config()
    options, providers, provider_options = build_session_options(config)
    back = config_from_options(options, providers, provider_options)
    assert comparable(back) == comparable(config)
    assert back.to_dict() != SessionConfig().to_dict()


def test_preset_file_round_trip(tmp_path):
    config = rich_config()
    config.save(tmp_path / "preset.json")
    assert SessionConfig.load(tmp_path / "preset.json").to_dict() == config.to_dict()


@pytest.mark.parametrize("field, value", [("intra_op_spin_duration_us", -5), ("inter_op_spin_backoff_max", 0),
                                          ("intra_op_allow_spinning", "yes")])
def test_bad_spin_settings_are_refused(field, value):
    data = SessionConfig().to_dict()
    data[field] = value
    with pytest.raises(UserError, match=field):
        SessionConfig.from_dict(data)


def test_python_snippet_builds_the_same_session(tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    config = rich_config()
    namespace = {}
    exec(compile(to_python(config, str(path)), "snippet.py", "exec"), namespace)
    session = namespace["session"]
    assert session.get_providers() == ["CPUExecutionProvider"]
    built = config_from_options(session.get_session_options(), session.get_providers())
    assert comparable(built) == comparable(config)
    # the free dimension override reached ORT: the input's batch is now fixed
    assert session.get_inputs()[0].shape == [3, 64]


def test_only_the_users_own_entries_are_checked_against_the_library(monkeypatch):
    def scan():
        raise AssertionError("the library was scanned")

    monkeypatch.setattr("app.core.session.create.supported_config_keys", scan)
    build_session_options(SessionConfig(config_entries={"session.disable_prepacking": "1"}))
    with pytest.raises(AssertionError):
        build_session_options(SessionConfig(config_entries={"session.use_env_allocators": "1"}))


def test_an_unknown_session_key_is_refused():
    with pytest.raises(UserError, match="session.no_such_setting"):
        build_session_options(SessionConfig(config_entries={"session.disable_prepacking": "1",
                                                            "session.no_such_setting": "1"}))
