"""A preset in words: whole, or as what it changes in another."""

from app.core.session.config import ProviderSpec, SessionConfig
from app.core.session.settings_text import settings_text


def test_a_whole_preset_names_the_main_settings_and_what_is_not_default():
    assert settings_text(SessionConfig().to_dict()) == "CPU, all optimisations, a thread per core, sequential"
    config = SessionConfig(providers=[ProviderSpec("CUDAExecutionProvider", {"device_id": "1"}),
                                      ProviderSpec("CPUExecutionProvider")],
                           graph_optimization_level="basic", intra_op_num_threads=1, io_binding=True,
                           free_dimension_overrides={"batch": 8})
    assert settings_text(config.to_dict()) == ("CUDA (device_id 1) then CPU, basic optimisation, 1 thread, "
                                               "sequential, IO binding, batch = 8")


def test_against_a_base_only_the_changes_are_named():
    base = SessionConfig(intra_op_num_threads=1).to_dict()
    changed = SessionConfig(intra_op_num_threads=2, intra_op_allow_spinning=False, inter_op_allow_spinning=False,
                            dynamic_block_base=4,
                            execution_mode="parallel", inter_op_num_threads=2).to_dict()
    assert settings_text(changed, base) == ("2 threads, spinning off, dynamic block base 4, "
                                            "parallel with 2 inter-op threads")
    assert settings_text(base, base) == "the same settings"


def test_options_without_effect_are_not_named():
    # one thread: no pool, so neither spinning nor the block base does anything
    lone = SessionConfig(intra_op_num_threads=1, intra_op_allow_spinning=False, dynamic_block_base=4).to_dict()
    assert settings_text(lone) == "CPU, all optimisations, 1 thread, sequential"
