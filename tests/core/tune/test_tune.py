import pytest

from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from app.core.session.config import SessionConfig
from app.core.tune.jobs import TUNE
from app.core.tune.tune import Contender, prune
from app.core.tune.space import SearchLimits, apply_candidate, build_space, describe, thread_counts
from tests import models


def test_thread_counts():
    assert thread_counts(8) == [1, 2, 4, 8]
    assert thread_counts(6) == [1, 2, 4, 6]
    assert thread_counts(16, limit=2) == [1, 2]
    assert thread_counts(1) == [1]


def test_cpu_space_prunes_what_cannot_work():
    space = build_space(SearchLimits(), cores=2)
    assert len(space) == 4 * (2 * 2 * 2 + 2 * 2 * 2 * 2)
    for candidate in space:
        if candidate["execution_mode"] == "sequential":
            assert candidate["inter_op_num_threads"] == 0
        assert candidate["io_binding"] is False           # binding on the CPU provider buys nothing
        assert "enable_cuda_graph" not in candidate
    assert len({describe(c) for c in space}) == len(space)


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


def test_prune_drops_clearly_worse_then_halves():
    base = SessionConfig()
    contenders = [Contender(i, f"c{i}", base) for i in range(8)]
    for i, contender in enumerate(contenders):
        contender.ratios = [1.0 + i * 0.1 + d for d in (-0.001, 0.0, 0.001)]
    prune(contenders, 0, eta=4)
    assert [c.label for c in contenders if c.alive] == ["c0"]
    assert all(c.eliminated_in_round == 0 for c in contenders[1:])


@pytest.fixture
def small_model(tmp_path):
    return str(models.save(models.mlp(width=32, depth=2), tmp_path / "mlp.onnx"))


def _params(path, **extra):
    limits = {"max_threads": 1, "opt_levels": ["disable", "all"], "execution_modes": ["sequential"]}
    return {"path": path, "limits": limits, "block_runs": 3, "warmup": 1, **extra}


def test_race_spends_fewer_trials_than_the_grid(small_model):
    grid = TUNE(_params(small_model, strategy="grid", grid_blocks=3), JobContext())
    race = TUNE(_params(small_model, final_blocks=2), JobContext())
    assert grid["space_size"] == race["space_size"] == 8
    assert grid["trials_used"] == 8 * 3
    assert all(t["blocks"] == 3 for t in grid["trials"])
    assert race["trials_used"] < grid["trials_used"]
    for result in (grid, race):
        assert result["best"]["latency_ms"] > 0 and result["default"]["latency_ms"] > 0
        assert result["speedup"] >= 1.0
        if result["clearly_faster"]:
            low, high = result["best"]["ci_ms"]
            assert high < result["default"]["latency_ms"]
        SessionConfig.from_dict(result["best"]["session"])        # a preset --config accepts
        latencies = [t["latency_ms"] for t in result["trials"]]
        assert latencies == sorted(latencies)


def test_budget_in_trials_is_respected(small_model):
    result = TUNE(_params(small_model, budget_trials=5), JobContext())
    assert result["trials_used"] == 5


def test_cancel_keeps_what_was_learned(small_model):
    ctx = JobContext()
    seen = []

    def emit(kind, payload):
        if kind == "data":
            seen.append(payload)
            if len(seen) == 2:
                ctx.cancel()

    ctx._emit = emit
    result = TUNE(_params(small_model, strategy="grid", grid_blocks=10), ctx)
    assert result["cancelled"] is True
    assert 0 < result["trials_used"] < 80
    assert result["best"]["latency_ms"] > 0


def test_settings_that_cannot_start_are_dropped_not_fatal(small_model):
    candidates = [
        {"provider": "CPUExecutionProvider", "graph_optimization_level": "all", "execution_mode": "sequential",
         "intra_op_num_threads": 1, "inter_op_num_threads": 0, "intra_op_allow_spinning": None,
         "dynamic_block_base": 0, "io_binding": False},
        {"provider": "DmlExecutionProvider", "graph_optimization_level": "all", "execution_mode": "sequential",
         "intra_op_num_threads": 1, "inter_op_num_threads": 0, "intra_op_allow_spinning": None,
         "dynamic_block_base": 0, "io_binding": False},
    ]
    result = TUNE({"path": small_model, "candidates": candidates, "block_runs": 3, "strategy": "grid",
                       "grid_blocks": 2}, JobContext())
    assert [f["label"] for f in result["failed"]] == [describe(candidates[1])]
    assert "DirectML" in result["failed"][0]["error"] or "Dml" in result["failed"][0]["error"]
    assert result["best"]["label"] in (describe(candidates[0]), "default (no setting was faster)")


def test_empty_space_is_a_user_error(small_model):
    with pytest.raises(UserError):
        TUNE({"path": small_model, "candidates": []}, JobContext())
