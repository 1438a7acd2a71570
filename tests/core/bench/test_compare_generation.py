"""Two decoders compared or gated as they generate: the plan's decode step (tokens/s) and the
prompt's run (time to the first token) are each timed in an alternation of their own and
judged by the one verdict rule; a model without a cache gets neither."""

from __future__ import annotations

import pytest

from app.core.bench.generation import generation_table, in_phase
from app.core.bench.jobs import COMPARE
from app.core.gate.jobs import GATE
from app.core.jobs.protocol import JobContext
from app.core.session.config import SessionConfig
from app.core.verdict import FASTER, SLOWER, NO_DIFFERENCE, COULD_NOT_TELL
from tests import models
from tests.decoder_models import gpt2, llama_gqa
from tests.models import save

QUICK = {"warmup": 2, "iterations": 20}
VERDICTS = {FASTER, SLOWER, NO_DIFFERENCE, COULD_NOT_TELL}


def _decoders(tmp_path, make=gpt2):
    """Two decoders of one layout (the later is fed the reference's inputs), different weights."""
    return (save(make(layers=2, hidden=64, vocab=128, seed=0), tmp_path / "old.onnx"),
            save(make(layers=2, hidden=64, vocab=128, seed=1), tmp_path / "new.onnx"))


def _check(generation, timed_rows):
    prefill, decode = generation["inputs"]["prefill"], generation["inputs"]["decode"]
    assert next(r["shape"] for r in prefill if r["name"] == "input_ids") == [1, 16]
    assert next(r["shape"] for r in decode if r["name"] == "input_ids") == [1, 1]
    reference, other = generation["models"]
    assert reference["decode"]["verdict"] == reference["prefill"]["verdict"] == "reference"
    for phase in ("decode", "prefill"):
        assert other[phase]["verdict"] in VERDICTS and other[phase]["why"]
        low, high = other[phase]["speedup_ci"]
        assert low <= other[phase]["speedup"] <= high
    for model in generation["models"]:
        assert model["decode"]["tokens_per_s"] == 1000 / model["decode"]["per_token_ms"]
        assert model["prefill"]["prompt_tokens"] == 16
    # the plan's phase (decode) is the comparison's own alternation: its row is the table's row
    assert other["decode"]["speedup"] == timed_rows[1]["speedup"]
    headers, rows = generation_table(generation)
    assert [row[0] for row in rows] == [m["label"] for m in generation["models"]] and len(rows[0]) == len(headers)


@pytest.mark.parametrize("make", [gpt2, llama_gqa])
def test_compare_of_two_decoders_reports_ttft_and_tokens_per_second_each_in_alternation(tmp_path, make):
    first, second = _decoders(tmp_path, make)
    session = {"intra_op_num_threads": 1, "inputs": {"prompt_length": 16, "past_length": 15}}
    result = COMPARE({"models": [{"path": str(first)}, {"path": str(second)}], "session": session, "run": QUICK,
                      "record": False, "pairs": 1, "max_seconds": 1}, JobContext())
    _check(result["generation"], result["models"])


def test_a_gate_of_two_decoders_reports_them_beside_its_criteria(tmp_path):
    first, second = _decoders(tmp_path)
    session = SessionConfig.from_dict({"intra_op_num_threads": 1,
                                       "inputs": {"prompt_length": 16, "past_length": 15}}).to_dict()
    result = GATE({"new": str(second), "old": str(first), "old_session": session, "new_session": session,
                   "run": QUICK, "record": False, "pairs": 1, "max_seconds": 1, "max_slowdown": 50}, JobContext())
    _check(result["generation"], result["models"])


def test_a_model_without_a_cache_is_compared_on_its_plan_only(tmp_path):
    first = models.save(models.mlp(width=16, depth=2), tmp_path / "a.onnx")
    second = models.save(models.mlp(width=16, depth=2, seed=1), tmp_path / "b.onnx")
    result = COMPARE({"models": [{"path": str(first)}, {"path": str(second)}], "run": QUICK, "record": False,
                      "pairs": 1, "max_seconds": 1}, JobContext())
    assert "generation" not in result


def test_the_other_phase_leaves_the_users_files_to_the_phase_they_were_made_for():
    config = SessionConfig.from_dict({"inputs": {"phase": "decode", "files": {"input_ids": "ids.npy"},
                                                 "data": "folder", "prompt_length": 32}})
    other = in_phase(config, "prefill")
    assert (other.inputs.phase, other.inputs.files, other.inputs.data, other.inputs.prompt_length) == \
        ("prefill", {}, "", 32)
    assert config.inputs.phase == "decode" and config.inputs.files
