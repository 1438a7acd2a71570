"""Optimize on a decoder with a KV cache judges every candidate as a generative model runs:
on the decode step (the input plan's default) and on greedy next-token agreement with the
source under the policy whose task decides, named in the candidate's reason."""

from __future__ import annotations

from app.core.jobs.protocol import JobContext
from app.core.optimize.jobs import OPTIMIZE
from app.core.optimize.rows import candidate_tolerance
from app.core.session.config import SessionConfig
from app.core.session.fidelity_policy import DECODER_TASK
from tests.decoder_models import gpt2
from tests.models import save


def test_each_candidate_of_a_decoder_is_judged_on_its_next_tokens(tmp_path):
    model = save(gpt2(layers=2, hidden=64, vocab=128, seed=3), tmp_path / "decoder.onnx")
    params = {"model": str(model), "out_dir": str(tmp_path / "ship"), "screen_seconds": 0.3, "tune": False,
              "kinds": ["optimize", "int4"], "budget_seconds": 30,
              "session": SessionConfig(intra_op_num_threads=1).to_dict()}
    result = OPTIMIZE(params, JobContext())
    made = [row for row in result["candidates"] if row["fidelity"] and row["kind"] != "source"]
    assert {row["kind"] for row in made} == {"optimize", "int4"}
    for row in made:
        check = row["fidelity"]["next_tokens"]
        assert row["fidelity"]["tolerance"]["policy"] == DECODER_TASK.name and check["decides"]
        assert f"next tokens agree on {check['agree']} of {check['steps']} greedy steps" in row["reason"]
        assert (row["status"] == "passed") == (check["rate"] >= check["required"])
    assert next(row for row in made if row["kind"] == "optimize")["fidelity"]["next_tokens"]["rate"] == 1.0
    step = {row["name"]: row["shape"] for row in result["inputs"]}
    assert step["input_ids"] == [1, 1]              # the decode step: one new token after the cache


def test_only_a_decoder_is_held_to_the_task_policy_and_the_users_bounds_stay():
    assert candidate_tolerance({"atol": 0.5}, decoder=False) == {"atol": 0.5}
    held = candidate_tolerance({"atol": 0.5}, decoder=True)
    assert held["policy"] == DECODER_TASK.name and held["atol"] == 0.5 and held["min_top1"] == DECODER_TASK.min_top1
