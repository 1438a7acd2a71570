"""Next-token agreement: does a variant of a decoder (fused, fp16, int4 …) choose the tokens
its reference chooses? The reference generates greedily; the variant is fed the reference's
tokens (teacher forcing, so one early difference does not count again at every later step)
and at each step its own most likely next token is compared with the reference's. The
share that agree is the task-level fidelity of a generative model; where the first
disagreement falls says how soon a user would see it."""

from __future__ import annotations

import numpy as np

from app.core.generate.loop import CacheLoop
from app.core.jobs.protocol import JobContext


def next_token_agreement(reference: CacheLoop, variant: CacheLoop, reference_feeds: dict, variant_feeds: dict,
                         new_tokens: int, ctx: JobContext) -> dict:
    """Agreement over `new_tokens` greedy steps from one prompt (the same token ids in both
    models' feeds), every sequence of the batch counted."""
    expected, _ = reference.prefill(reference_feeds)
    chosen, _ = variant.prefill(variant_feeds)
    same = [expected == chosen]
    for _ in range(new_tokens - 1):
        ctx.check_cancel()
        following, _ = reference.step(expected)
        chosen, _ = variant.step(expected)
        same.append(following == chosen)
        expected = following
    agree = np.stack(same, axis=1)                     # [batch, steps]
    misses = np.flatnonzero(~agree.all(axis=0))
    return {"steps": int(agree.size), "agree": int(agree.sum()), "rate": float(agree.mean()),
            "first_disagreement": int(misses[0]) if misses.size else None}


def against_reference(path: str, config, session, decoder, inputs: list[dict], hints, prompts: list[int],
                      new_tokens: int, batch: int, ctx: JobContext, reference_config=None) -> dict:
    """The next-token agreement of the model in `session` (its decoder, inputs and hints)
    with the decoder at `path`, the reference, on the same session settings (or on
    `reference_config`: the same model on the user's provider, where `session` runs it on
    another): per prompt length, from the same prompt tokens."""
    from pathlib import Path

    from app.core.generate.measure import decoder_of, prompt_feeds, use_binding
    from app.core.jobs.errors import UserError
    from app.core.model.inspect import inspect_model
    from app.core.session.create import create_session

    summary = inspect_model(path)
    ctx.progress(None, f"next-token agreement with {Path(summary['path']).name}")
    reference = create_session(summary["path"], reference_config or config)
    ref_decoder, ref_inputs, ref_hints = decoder_of(path, reference)
    longest = max(prompts) + new_tokens
    if ref_decoder.max_context is not None and longest > ref_decoder.max_context:
        raise UserError("bad-option", f"a context of {longest:,} is past the {ref_decoder.max_context:,} positions of "
                                      f"{Path(summary['path']).name}, the model to agree with")
    rows = []
    for prompt in prompts:
        ref_feeds, _ = prompt_feeds(ref_decoder, ref_inputs, ref_hints, config.inputs, prompt, batch)
        feeds, _ = prompt_feeds(decoder, inputs, hints, config.inputs, prompt, batch)
        feeds[decoder.ids] = ref_feeds[ref_decoder.ids].astype(feeds[decoder.ids].dtype)
        loops = (CacheLoop(reference, ref_decoder, prompt + new_tokens, batch,
                           use_binding(reference_config or config, reference)),
                 CacheLoop(session, decoder, prompt + new_tokens, batch, use_binding(config, session)))
        rows.append({"prompt_length": prompt, **next_token_agreement(*loops, ref_feeds, feeds, new_tokens, ctx)})
    steps = sum(row["steps"] for row in rows)
    agree = sum(row["agree"] for row in rows)
    return {"against": summary["path"], "rate": agree / steps, "steps": steps, "agree": agree, "prompts": rows,
            "how": "the reference generates greedily; this model is fed the reference's tokens and its most likely "
                   "next token is compared with the reference's at every step"}
