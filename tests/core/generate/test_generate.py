"""Generation is measured as it runs: the prompt's run, then one run per token with the
cache fed back; the tokens it chooses are the ones a plain onnxruntime loop chooses, its
figures are consistent with the steps it timed, and a context that would not fit is refused
before anything runs."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from app.core.generate.jobs import GENERATE
from app.core.generate.measure import growth
from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from tests.decoder_models import decoder, gpt2, llama_gqa
from tests.models import save


def bare_greedy(path, prompt_ids: list, new_tokens: int) -> list:
    """Greedy tokens from plain session.run calls, written without ORTune's code."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs = {i.name: i for i in session.get_inputs()}
    names = [o.name for o in session.get_outputs()]
    ids = np.asarray(prompt_ids, np.int64)
    batch, length = ids.shape
    feeds = {"input_ids": ids, "attention_mask": np.ones((batch, length), np.int64),
             "position_ids": np.tile(np.arange(length), (batch, 1))}
    for name, item in inputs.items():
        if name.startswith("past"):
            shape = [batch if isinstance(d, str) and "batch" in d or d == "s0" else d for d in item.shape]
            shape = [0 if isinstance(d, str) else d for d in shape]
            if isinstance(item.shape[-1], str):         # the genai spelling leaves the head size open
                shape[-1] = 8
            feeds[name] = np.zeros(shape, np.float32)
    chosen = []
    for _ in range(new_tokens):
        result = dict(zip(names, session.run(None, feeds)))
        token = result["logits"][:, -1].argmax(-1)
        chosen.append(token)
        length += 1
        feeds = {"input_ids": token[:, None], "attention_mask": np.ones((batch, length), np.int64),
                 "position_ids": np.full((batch, 1), length - 1)}
        feeds.update({name: result[name.replace("past_key_values", "present").replace("past", "present")]
                      for name in inputs if name.startswith("past")})
    return np.stack(chosen, axis=1).tolist()


def run(params: dict, budget: int | None = None) -> tuple[dict, list]:
    events = []
    result = GENERATE(params, JobContext(lambda *event: events.append(event), memory_budget=budget))
    return result, events


@pytest.mark.parametrize("make,names", [(gpt2, "optimum"), (gpt2, "legacy"), (llama_gqa, "dynamo"),
                                        (llama_gqa, "genai")])
def test_generate_reports_ttft_per_token_latency_and_the_bare_loops_tokens(tmp_path, make, names):
    path = save(make(names), tmp_path / "decoder.onnx")
    result, events = run({"path": str(path), "prompt_lengths": [12, 30], "new_tokens": 10, "repeats": 2,
                          "batch": 2})
    assert result["ttft_ms"] > 0 and result["decode_latency_ms"]["p50"] > 0
    assert result["decode_latency_ms"]["p90"] >= result["decode_latency_ms"]["p50"]
    for row in result["runs"]:
        assert row["token_ids"] == bare_greedy(path, row["prompt_ids"], 10)
        assert np.asarray(row["prompt_ids"]).shape == (2, row["prompt_length"])
        assert row["context"] == row["prompt_length"] + 10
        assert [c for c, _ in row["latency_by_context"]] == list(range(row["prompt_length"] + 1, row["context"]))
    # the decode rate is the timed steps' own: 2 sequences × 9 steps × 2 generations over their time
    streamed = [ms for kind, payload in events if kind == "data" and payload["kind"] == "generate-tokens"
                and payload["payload"]["prompt_length"] == 12 for ms in payload["payload"]["ms"]]
    assert len(streamed) == 18
    assert result["tokens_per_s"]["decode"] == pytest.approx(2 * 18 / (sum(streamed) / 1000))
    assert result["kv_cache_bytes"] == result["kv_cache_bytes_per_token"] * 40


def test_io_binding_keeps_the_cache_bound_and_chooses_the_same_tokens(tmp_path):
    path = save(llama_gqa(), tmp_path / "llama.onnx")
    plain, _ = run({"path": str(path), "prompt_lengths": [16], "new_tokens": 8, "repeats": 1})
    bound, _ = run({"path": str(path), "prompt_lengths": [16], "new_tokens": 8, "repeats": 1,
                    "session": {"io_binding": True}})
    assert bound["loop"]["io_binding"] and not plain["loop"]["io_binding"]
    assert bound["runs"][0]["token_ids"] == plain["runs"][0]["token_ids"]


def test_a_context_whose_cache_would_not_fit_is_refused_before_it_runs(tmp_path):
    path = save(gpt2(), tmp_path / "gpt2.onnx")
    with pytest.raises(UserError, match="KV cache") as caught:
        run({"path": str(path), "prompt_lengths": [400], "new_tokens": 100, "batch": 2048}, budget=256 << 20)
    assert caught.value.kind == "over-memory-budget"


def test_a_context_past_the_models_positions_and_a_model_without_a_cache_are_refused(tmp_path):
    path = save(decoder(positions=64), tmp_path / "short.onnx")
    with pytest.raises(UserError, match="past the 64 positions"):
        run({"path": str(path), "prompt_lengths": [60], "new_tokens": 8})
    from tests.models import mlp
    with pytest.raises(UserError, match="no KV cache"):
        run({"path": str(save(mlp(), tmp_path / "mlp.onnx"))})


def test_growth_is_read_from_medians_so_one_slow_step_does_not_tilt_it():
    contexts = list(range(100, 180))
    ms = [1.0 + (c - 100) / 1000 for c in contexts]        # 1 ms more per 1,000 tokens of context
    ms[0] = 50.0                                            # the first step after the prompt
    assert growth(contexts, ms)["ms_per_1k_tokens"] == pytest.approx(1.0, rel=0.05)


def test_a_cross_attention_cache_is_fed_the_same_at_every_step(tmp_path):
    path = save(decoder(cross=True), tmp_path / "whisper_like.onnx")
    params = {"path": str(path), "prompt_lengths": [6], "new_tokens": 8, "repeats": 1,
              "session": {"inputs": {"dims": {"encoder_sequence_length_out": 50}}}}
    plain, _ = run(params)
    bound, _ = run({**params, "session": {**params["session"], "io_binding": True}})
    assert plain["runs"][0]["token_ids"] == bound["runs"][0]["token_ids"]
    assert len(plain["runs"][0]["token_ids"][0]) == 8


def test_next_token_agreement_with_a_reference(tmp_path):
    reference = save(gpt2(seed=0), tmp_path / "reference.onnx")
    same = save(gpt2(seed=0), tmp_path / "same.onnx")
    other = save(gpt2("legacy", seed=5), tmp_path / "other.onnx")
    params = {"prompt_lengths": [8, 20], "new_tokens": 12, "repeats": 1, "warmup": 0, "against": str(reference)}
    result, _ = run({"path": str(same), **params})
    agreement = result["next_token_agreement"]
    assert (agreement["rate"], agreement["steps"]) == (1.0, 24)
    assert [row["first_disagreement"] for row in agreement["prompts"]] == [None, None]
    result, _ = run({"path": str(other), **params})
    agreement = result["next_token_agreement"]
    assert agreement["rate"] < 1 and agreement["agree"] == round(agreement["rate"] * 24)
    assert any(row["first_disagreement"] is not None for row in agreement["prompts"])
    assert run({"path": str(same), "prompt_lengths": [8], "new_tokens": 4})[0]["next_token_agreement"] is None


def test_teacher_forcing_counts_each_step_once():
    from app.core.generate.agreement import next_token_agreement

    class Scripted:
        """A loop that answers from a script: prefill, then one answer per step."""
        def __init__(self, answers):
            self.answers = iter(answers)

        def prefill(self, feeds):
            return np.array([next(self.answers)]), 0

        def step(self, tokens):
            return np.array([next(self.answers)]), 0

    # the variant differs at step 2 only: fed the reference's tokens, it agrees again after
    result = next_token_agreement(Scripted([1, 2, 3, 4, 5]), Scripted([1, 2, 9, 4, 5]), {}, {}, 5, JobContext())
    assert (result["agree"], result["steps"], result["first_disagreement"]) == (4, 5, 2)


def test_no_growth_is_read_from_a_dozen_tokens():
    contexts = list(range(129, 144))
    ms = [4.0 - (c - 129) * 0.05 for c in contexts]          # the first steps slower: no growth to read
    read = growth(contexts, ms)
    assert read["ms_per_1k_tokens"] is None and "too few" in read["why"] and read["first_ms"] > read["last_ms"]
