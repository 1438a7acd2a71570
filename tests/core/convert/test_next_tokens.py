"""A decoder's variant is asked for its next tokens: greedy agreement with its source over
a number of steps, which decides under the int4 policy and must hold beside the bounds
under the others; a model without a cache is not asked."""

from __future__ import annotations

import pytest

from app.core.convert.jobs import CONVERT
from app.core.convert.next_tokens import agreement_text, judge
from app.core.jobs.protocol import JobContext
from app.core.session.fidelity_policy import NEXT_TOKEN_STEPS
from tests import models
from tests.decoder_models import gpt2, llama_gqa
from tests.models import save


def convert(kind, source, out, **options):
    return CONVERT({"kind": kind, "input": str(source), "output": str(out), "options": options, "speed_s": 0},
                   JobContext())


@pytest.mark.parametrize("make", [gpt2, llama_gqa])
def test_an_int4_decoder_is_judged_on_its_next_tokens(tmp_path, make):
    source = save(make(layers=2, hidden=64, vocab=128, seed=1), tmp_path / "decoder.onnx")
    report = convert("int4", source, tmp_path / "int4.onnx")
    check = report["fidelity"]["next_tokens"]
    assert check["steps"] == NEXT_TOKEN_STEPS and check["agree"] == round(check["rate"] * check["steps"])
    assert check["decides"] and check["required"] == 0.9
    assert report["check"] == ("passed" if check["rate"] >= 0.9 else "failed")


def test_a_float_rewrite_of_a_decoder_keeps_every_next_token_and_its_bounds_decide(tmp_path):
    source = save(gpt2(layers=2, hidden=64, vocab=128, seed=1), tmp_path / "decoder.onnx")
    report = convert("optimize", source, tmp_path / "opt.onnx")
    check = report["fidelity"]["next_tokens"]
    assert (check["rate"], check["first_disagreement"], check["decides"]) == (1.0, None, False)
    assert report["check"] == "passed"


def test_a_model_without_a_cache_is_not_asked_for_tokens(tmp_path):
    source = save(models.mlp(width=16, depth=2), tmp_path / "mlp.onnx")
    assert "next_tokens" not in convert("optimize", source, tmp_path / "opt.onnx")["fidelity"]


def _check(rate, decides, required=0.9):
    steps = 16
    return {"rate": rate, "agree": round(rate * steps), "steps": steps, "first_disagreement": None if rate == 1 else 2,
            "required": required, "decides": decides, "prompt_length": 8}


def test_where_the_task_decides_the_tokens_are_the_verdict_else_both_must_hold():
    assert judge({"passed": False}, _check(1.0, decides=True))["passed"] is True
    assert judge({"passed": True}, _check(0.5, decides=True))["passed"] is False
    assert judge({"passed": True}, _check(0.5, decides=False))["passed"] is False
    assert judge({"passed": False}, _check(1.0, decides=False))["passed"] is False
    assert judge({"passed": True}, _check(0.5, decides=False, required=0.0))["passed"] is True
    unmeasured = judge({"passed": True}, {"problem": "it could not run"})
    assert unmeasured["passed"] is False and "could not run" in unmeasured["problem"]
    assert judge({"passed": True}, None) == {"passed": True}


def test_the_agreement_in_words_names_the_count_the_first_difference_and_the_bar():
    text = agreement_text(_check(0.5, decides=True))
    assert text == "next tokens agree on 8 of 16 greedy steps (first differs at step 3), ≥ 90% required (it decides)"


def test_k_quant_packs_the_same_weights_and_is_judged_alike(tmp_path):
    import onnx

    source = save(gpt2(layers=2, hidden=64, vocab=128, seed=1), tmp_path / "decoder.onnx")
    rtn = convert("int4", source, tmp_path / "rtn.onnx")
    k_quant = convert("int4", source, tmp_path / "k_quant.onnx", method="k_quant", block_size=16)
    packed = [[n for n in onnx.load(report["output"]).graph.node if n.op_type == "MatMulNBits"]
              for report in (rtn, k_quant)]
    assert len(packed[0]) == len(packed[1]) > 0
    assert {a.i for n in packed[1] for a in n.attribute if a.name == "block_size"} == {16}
    assert k_quant["options"]["method"] == "k_quant" and k_quant["fidelity"]["next_tokens"]["decides"]


def test_hqq_without_pytorch_is_refused_in_one_line(tmp_path, monkeypatch):
    import importlib.util

    from app.core.jobs.errors import UserError

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else found(name, *a))
    source = save(models.mlp(width=32, depth=2), tmp_path / "mlp.onnx")
    with pytest.raises(UserError) as caught:
        from app.core.convert.jobs import MAKE
        MAKE({"kind": "int4", "input": str(source), "output": str(tmp_path / "hqq.onnx"),
              "options": {"method": "hqq"}}, None)
    assert "needs PyTorch" in caught.value.message
