"""Session presets: preset -> SessionOptions -> preset, and the "Copy as Python" snippet."""

import os
import stat

import pytest

from app.core.jobs.errors import UserError
from app.core.session.inputs import FeedSpec
from app.core.session.config import ProviderSpec, SessionConfig
from app.core.session.create import build_session_options, to_python
from app.core.session.fields import SESSION_FIELDS
from tests import models


def read_back(options, providers: list[str], provider_options: list[dict] | None = None) -> SessionConfig:
    """The preset ORT's SessionOptions hold, read by what the table says ORT calls each setting
    (the free dimensions and the inputs cannot be read back). ORT cannot list the config entries
    it holds: the table's keys and session.disable_prepacking (rich_config's) are looked for."""
    data = {"providers": [{"name": name, "options": {k: str(v) for k, v in (opts or {}).items()}}
                          for name, opts in zip(providers, provider_options or [{}] * len(providers))]}
    for row in SESSION_FIELDS:
        if row.option and not isinstance(row.default, dict) and row.factory is None:
            value = getattr(options, row.option)
            data[row.name] = {member: value for value, member in row.members}[value.name] if row.enum else value
        elif row.entry:
            try:
                text = options.get_session_config_entry(row.entry)
            except RuntimeError:     # ORT's answer for a key that was never set
                continue
            data[row.name] = text == "1" if row.type == bool | None else text if row.type is str else int(text)
    try:
        data["config_entries"] = {"session.disable_prepacking":
                                  options.get_session_config_entry("session.disable_prepacking")}
    except RuntimeError:
        pass
    return SessionConfig.from_dict(data)


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
    back = read_back(options, providers, provider_options)
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
    built = read_back(session.get_session_options(), session.get_providers())
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


@pytest.mark.parametrize("threads, affinities, words", [
    (3, "1", "need 2 intra-op threads; intra_op_num_threads is 3"),
    (0, "1;2", "intra_op_num_threads is not set"),
    (2, "0", "outside this machine's logical processors"),
    (2, "1-x", "not a processor number"),
    (2, "2-1", "runs backwards"),
])
def test_thread_affinities_must_match_the_thread_count(threads, affinities, words):
    with pytest.raises(UserError) as caught:
        SessionConfig.from_dict({"intra_op_num_threads": threads, "intra_op_thread_affinities": affinities})
    assert words in caught.value.message
    with pytest.raises(UserError):     # the same through the free-form entry
        SessionConfig.from_dict({"intra_op_num_threads": threads,
                                 "config_entries": {"session.intra_op_thread_affinities": affinities}})


def test_matching_affinities_start_a_session(tmp_path):
    import onnxruntime as ort

    config = SessionConfig.from_dict({"intra_op_num_threads": 2, "intra_op_thread_affinities": "1"})
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    options, providers, provider_options = build_session_options(config)
    ort.InferenceSession(str(path), options, providers=providers, provider_options=provider_options)


@pytest.mark.parametrize("make", [os.mkfifo, os.mkdir])
def test_a_preset_never_replaces_a_fifo_or_a_folder(tmp_path, make):
    target = tmp_path / "preset.json"
    make(target)
    with pytest.raises(UserError) as caught:
        SessionConfig().save(target)
    assert "only ever replaces a regular file" in caught.value.message
    assert not target.is_file() and sorted(p.name for p in tmp_path.iterdir()) == ["preset.json"]


def test_a_saved_preset_gets_normal_permissions(tmp_path):
    previous = os.umask(0o022)
    try:
        SessionConfig().save(tmp_path / "preset.json")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "preset.json").st_mode) == 0o644
