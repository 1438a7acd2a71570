"""The search space: what cannot work is left out, and settings that run alike are one."""

import json

from app.core.session.config import SessionConfig
from app.core.tune.space import (SearchLimits, apply_candidate, build_space, canonical, describe, effective,
                                 thread_counts)


def _key(config: SessionConfig, cores: int) -> str:
    return json.dumps(effective(config, cores), sort_keys=True)


def test_thread_counts():
    assert thread_counts(8) == [1, 2, 4, 8]
    assert thread_counts(6) == [1, 2, 4, 6]
    assert thread_counts(16, limit=2) == [1, 2]
    assert thread_counts(1) == [1]


def test_cpu_space_prunes_what_cannot_work():
    space = build_space(SearchLimits(), cores=2)
    for candidate in space:
        if candidate["execution_mode"] == "sequential":
            assert candidate["inter_op_num_threads"] == 0
        assert candidate["io_binding"] is False           # binding on the CPU provider buys nothing
        assert "enable_cuda_graph" not in candidate
    assert len({describe(c) for c in space}) == len(space)


def test_cpu_space_has_each_setting_once():
    space = build_space(SearchLimits(), cores=2)
    # Per level, sequential: 1 thread (1) + 2 threads × spin × block base (4); parallel: 1 intra
    # thread with 1 inter-op thread (1) or 2 (spin: 2), 2 intra threads × 2 inter × spin × block base (8).
    assert len(space) == 4 * (1 + 4 + 1 + 2 + 8)
    assert len({_key(apply_candidate(SessionConfig(), c), 2) for c in space}) == len(space)


def test_one_thread_has_no_spinning_or_block_base_to_choose():
    space = build_space(SearchLimits(opt_levels=("all",)), cores=4)
    alone = [c for c in space if c["intra_op_num_threads"] == 1
             and (c["execution_mode"] == "sequential" or c["inter_op_num_threads"] == 1)]
    assert [describe(c) for c in alone] == ["1 thread", "1 thread, parallel with 1 inter-op thread"]
    # An inter-op pool of threads still spins or not, with one intra-op thread.
    pooled = [describe(c) for c in space if c["intra_op_num_threads"] == 1 and c["inter_op_num_threads"] == 2]
    assert pooled == ["1 thread, parallel with 2 inter-op threads",
                      "1 thread, spinning off, parallel with 2 inter-op threads"]


def test_settings_read_in_words_as_what_they_change():
    base = SessionConfig(intra_op_num_threads=1)
    candidate = {"provider": "CPUExecutionProvider", "graph_optimization_level": "extended",
                 "execution_mode": "sequential", "intra_op_num_threads": 4, "inter_op_num_threads": 0,
                 "intra_op_allow_spinning": False, "dynamic_block_base": 4, "io_binding": False}
    assert describe(candidate, base) == ("extended optimisation, 4 threads, spinning off, "
                                         "dynamic block base 4")
    assert describe(dict(candidate, graph_optimization_level="all", intra_op_allow_spinning=True), base) == \
        "4 threads, dynamic block base 4"       # spinning on is ORT's default for a pool
    space = build_space(SearchLimits(), cores=4)
    assert len({describe(c, base) for c in space}) == len(space)


def test_canonical_drops_only_options_without_effect():
    one = {"provider": "CPUExecutionProvider", "graph_optimization_level": "all", "execution_mode": "sequential",
           "intra_op_num_threads": 1, "inter_op_num_threads": 0, "intra_op_allow_spinning": False,
           "dynamic_block_base": 4, "io_binding": False}
    assert canonical(one) == dict(one, intra_op_allow_spinning=None, dynamic_block_base=0)
    two = dict(one, intra_op_num_threads=2)
    assert canonical(two) == two


def test_effective_tells_which_presets_run_alike():
    def same(a: dict, b: dict, cores: int = 4) -> bool:
        return _key(SessionConfig.from_dict(a), cores) == _key(SessionConfig.from_dict(b), cores)

    assert same({}, {"intra_op_num_threads": 4, "intra_op_allow_spinning": True})      # ORT's defaults
    assert not same({}, {"intra_op_num_threads": 2})
    assert same({"intra_op_num_threads": 1, "intra_op_allow_spinning": False, "dynamic_block_base": 4},
                {"intra_op_num_threads": 1})
    assert not same({"intra_op_num_threads": 2, "dynamic_block_base": 4}, {"intra_op_num_threads": 2})
    assert not same({"intra_op_num_threads": 2, "intra_op_allow_spinning": False}, {"intra_op_num_threads": 2})
    assert same({"inter_op_num_threads": 3, "inter_op_allow_spinning": False}, {})     # sequential: no inter-op pool
    parallel = {"execution_mode": "parallel", "inter_op_num_threads": 2}
    assert not same(dict(parallel, inter_op_allow_spinning=False), parallel)
    assert same(dict(parallel, inter_op_num_threads=1, inter_op_allow_spinning=False),
                dict(parallel, inter_op_num_threads=1))
    assert not same(parallel, {})                                                     # another executor


def test_cuda_graph_only_with_binding_and_sequential():
    limits = SearchLimits(providers=["CUDAExecutionProvider"], opt_levels=("all",))
    space = build_space(limits, cores=1)
    graphs = [c for c in space if c.get("enable_cuda_graph")]
    assert graphs
    assert all(c["io_binding"] and c["execution_mode"] == "sequential" for c in graphs)
    assert any(c["io_binding"] for c in space) and any(not c["io_binding"] for c in space)


def test_limits_narrow_the_space():
    limits = SearchLimits(max_threads=1, opt_levels=("all",), execution_modes=("sequential",),
                          try_spinning=False, try_dynamic_block_base=False)
    assert build_space(limits, cores=64) == [{
        "provider": "CPUExecutionProvider", "graph_optimization_level": "all", "execution_mode": "sequential",
        "intra_op_num_threads": 1, "inter_op_num_threads": 0, "intra_op_allow_spinning": None,
        "dynamic_block_base": 0, "io_binding": False}]


def test_apply_candidate_keeps_the_base_inputs_and_options():
    base = SessionConfig.from_dict({"providers": [{"name": "cuda", "options": {"device_id": "1"}}],
                                    "inputs": {"dims": {"batch": 8}}})
    candidate = {"provider": "CUDAExecutionProvider", "graph_optimization_level": "basic",
                 "execution_mode": "sequential", "intra_op_num_threads": 2, "inter_op_num_threads": 0,
                 "intra_op_allow_spinning": False, "dynamic_block_base": 4, "io_binding": True,
                 "enable_cuda_graph": True}
    config = apply_candidate(base, candidate)
    assert config.inputs.dims == {"batch": 8}
    assert config.providers[0].options == {"device_id": "1", "enable_cuda_graph": "1"}
    assert config.graph_optimization_level == "basic" and config.io_binding
    assert base.providers[0].options == {"device_id": "1"}


def test_affinities_stay_only_with_the_thread_count_they_were_made_for():
    base = SessionConfig.from_dict({"intra_op_num_threads": 2, "intra_op_thread_affinities": "1"})
    candidate = {"provider": "CPUExecutionProvider", "graph_optimization_level": "all",
                 "execution_mode": "sequential", "intra_op_num_threads": 2, "inter_op_num_threads": 0,
                 "intra_op_allow_spinning": True, "dynamic_block_base": 0, "io_binding": False}
    assert apply_candidate(base, candidate).intra_op_thread_affinities == "1"
    assert apply_candidate(base, {**candidate, "intra_op_num_threads": 1}).intra_op_thread_affinities == ""


def test_a_share_of_the_settings_is_checked():
    import pytest

    from app.core.jobs.errors import UserError
    from app.core.tune.jobs import TUNE
    for bad in ([2, 2], [0], [-1, 3]):
        with pytest.raises(UserError, match="share of the settings"):
            TUNE.make_params({"path": "m.onnx", "share": bad})
    assert TUNE.make_params({"path": "m.onnx", "share": [1, 2]}).share == [1, 2]


def test_the_execution_provider_is_a_dimension_with_its_own_options():
    base = SessionConfig.from_dict({"providers": [{"name": "cpu"}, {"name": "openvino",
                                                                     "options": {"precision": "FP32"}}]})
    limits = SearchLimits(providers=base.provider_names(), opt_levels=("all",), execution_modes=("sequential",),
                          try_spinning=False, try_dynamic_block_base=False)
    space = build_space(limits, cores=2)
    assert {c["provider"] for c in space} == {"CPUExecutionProvider", "OpenVINOExecutionProvider"}
    openvino = apply_candidate(base, next(c for c in space if c["provider"] == "OpenVINOExecutionProvider"))
    assert openvino.provider_names() == ["OpenVINOExecutionProvider"]
    assert openvino.providers[0].options == {"precision": "FP32"}, "its precision goes with it"
