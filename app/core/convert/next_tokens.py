"""A decoder's variant is asked the task's question as well: does it choose the next tokens
its source chooses? One step's logits (the check's decode step, on a random cache) say how
far the numbers moved; greedy next-token agreement over NEXT_TOKEN_STEPS steps from one
prompt, against the source (app.core.generate.agreement), says whether a user would see a
different text. Where the policy's task decides (int4, and every candidate optimize makes
of a decoder) the agreement decides the check and the step's figures are reported beside
it; under the other policies it must hold too, once the policy asks for a top-1 rate."""

from __future__ import annotations

from app.core.jobs.errors import UserError
from app.core.session.fidelity_policy import NEXT_TOKEN_PROMPT, NEXT_TOKEN_STEPS
from app.core.session.outputs import Tolerance


def next_token_check(source, variant, config, tolerance: Tolerance, ctx, reference_config=None) -> dict | None:
    """The variant's next-token agreement with its source, with what it required; None where
    the variant has no KV cache to generate with. {"problem"} where it could not run. The
    source runs on `reference_config` where given (a provider candidate: the source itself on
    another provider, judged against the user's)."""
    from app.core.convert.fidelity import RunFailed, load_session
    from app.core.generate.agreement import against_reference
    from app.core.generate.measure import decoder_of

    try:
        session = load_session(variant, config)
        decoder, inputs, hints = decoder_of(variant, session)
    except (RunFailed, UserError) as exc:
        return None if getattr(exc, "kind", "") == "not-a-decoder" else {"problem": exc.message}
    longest = decoder.max_context or NEXT_TOKEN_PROMPT + NEXT_TOKEN_STEPS
    prompt = max(1, min(NEXT_TOKEN_PROMPT, longest - NEXT_TOKEN_STEPS))
    steps = min(NEXT_TOKEN_STEPS, longest - prompt)
    try:
        found = against_reference(str(source), config, session, decoder, inputs, hints, [prompt], steps, 1, ctx,
                                  reference_config)
    except UserError as exc:
        return {"problem": exc.message}
    except Exception as exc:  # ORT's own exception types: a step the variant cannot run
        return {"problem": f"the variant could not generate: {' '.join(str(exc).split())[:300]}"}
    row = found["prompts"][0]
    return {"rate": found["rate"], "agree": found["agree"], "steps": found["steps"], "prompt_length": prompt,
            "first_disagreement": row["first_disagreement"], "required": tolerance.min_top1,
            "decides": tolerance.decides == "task", "how": found["how"]}


def judge(fidelity: dict, check: dict | None) -> dict:
    """The fidelity report with the next-token check folded in: where the task decides, the
    agreement is the verdict; elsewhere both must hold."""
    if check is None:
        return fidelity
    fidelity["next_tokens"] = check
    if "problem" in check:
        fidelity["passed"] = False
        fidelity.setdefault("problem", f"next-token agreement could not be measured: {check['problem']}")
        return fidelity
    holds = check["rate"] >= check["required"]
    fidelity["passed"] = holds if check["decides"] else bool(fidelity["passed"]) and holds
    return fidelity


def agreement_text(check: dict) -> str:
    """"next tokens agree on 15 of 16 greedy steps (first differs at step 4), ≥ 90 % required"."""
    text = f"next tokens agree on {check['agree']} of {check['steps']} greedy steps"
    if check["first_disagreement"] is not None:
        text += f" (first differs at step {check['first_disagreement'] + 1})"
    if check["required"]:
        text += f", ≥ {check['required']:.0%} required"
    return text + (" (it decides)" if check["decides"] else "")


def output_word(passed: bool | None, decides: bool = False) -> str:
    """One output's result: pass, FAIL, not compared; an output outside the tolerance where a
    decoder's next tokens decide (the int4 policy) is a secondary figure, not a failure."""
    if passed is False and decides:
        return "outside (the next tokens decide)"
    return {True: "pass", False: "FAIL", None: "not compared"}[passed]
