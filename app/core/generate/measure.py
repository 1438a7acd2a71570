"""Measure generation: for each prompt length, `warmup` generations not counted, then
`repeats` timed ones, each a prefill and new_tokens - 1 decode steps (the first new token
comes from the prompt's run). Per-token latency is a decode step's wall time: building its
small feeds, the run, and choosing the token, as any generation loop pays it.

Before anything runs, the cache the longest context needs (past and present are both
alive during a step) is checked against the job's memory budget."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from app.core.generate.loop import DEVICE_PROVIDERS, CacheLoop
from app.core.jobs.errors import UserError
from app.core.jobs.memory import gib, rss_bytes
from app.core.jobs.protocol import JobContext
from app.core.session.decoder import Decoder, Step, find_decoder, step_labels
from app.core.session.graph_hints import read_hints
from app.core.session.inputs import make_feeds, session_inputs

#: the most points of per-token latency against the context a report keeps per prompt
CONTEXT_POINTS = 64
#: how often the live per-token latencies are sent on
SEND_EVERY_S = 0.1


def decoder_of(path, session) -> tuple[Decoder, list[dict], object]:
    """The model's cache, its inputs and its graph's hints; a model without one is refused."""
    hints = read_hints(path)
    inputs = session_inputs(session)
    decoder = find_decoder(inputs, hints)
    if decoder is None:
        raise UserError("not-a-decoder", "the model has no KV cache (no float 'past…' inputs beside token ids), so "
                                         "it does not generate token by token; measure it with `ortune bench`")
    if any(cache.output is None and not cache.cross for cache in decoder.cache):
        raise UserError("not-a-decoder", "the model's 'past…' inputs have no 'present…' outputs to feed back")
    return decoder, inputs, hints


def prompt_feeds(decoder: Decoder, inputs: list[dict], hints, spec, prompt: int, batch: int) -> tuple[dict, dict]:
    """The plan's prefill feeds for `batch` prompts of `prompt` tokens (the user's sizes for
    open cache axes kept, the step's own labels dropped)."""
    ours = step_labels(decoder, inputs, Step("prefill", 1, 0, 1, ("", "")))
    dims = {k: v for k, v in spec.dims.items() if k not in ours}
    batch_label = (inputs[[i["name"] for i in inputs].index(decoder.ids)].get("shape") or [None])[0]
    if isinstance(batch_label, str):
        dims[batch_label] = batch
    elif batch != 1 and batch_label != batch:
        raise UserError("bad-option", f"the model's batch is fixed at {batch_label}; it cannot generate {batch} "
                                      "sequences at once")
    # a data folder's samples are one step's inputs (optimize's hold a decode step): a prompt is drawn
    planned = replace(spec, phase="prefill", prompt_length=prompt, dims=dims, shapes={}, values={}, files={},
                      mode="random", data="")
    return make_feeds(inputs, planned, hints)


def check_memory(per_token: int, context: int, budget: int | None, in_use: int) -> None:
    """Refuse a context whose cache (past and present both alive during a step) would not
    fit in the budget beside what the process holds already (`in_use`: the model loaded)."""
    need = 2 * per_token * context
    if budget and need + in_use > budget:
        raise UserError("over-memory-budget",
                        f"a context of {context:,} tokens needs {gib(need)} of KV cache ({per_token:,} bytes a token, "
                        f"past and present) beside the {gib(in_use)} the loaded model holds, more than the memory "
                        f"limit of {gib(budget)}; choose fewer tokens or a smaller batch, or raise --memory-limit")


class TokenSender:
    """Per-token latencies to the caller in batches, not one message per token."""

    def __init__(self, ctx: JobContext, prompt: int, repeat: int):
        self.ctx, self.prompt, self.repeat = ctx, prompt, repeat
        self.contexts: list[int] = []
        self.ms: list[float] = []
        self.last = time.monotonic()

    def add(self, context: int, ms: float) -> None:
        self.contexts.append(context)
        self.ms.append(ms)
        if time.monotonic() - self.last > SEND_EVERY_S:
            self.flush()

    def flush(self) -> None:
        if self.ms:
            self.ctx.data("generate-tokens", {"prompt_length": self.prompt, "repeat": self.repeat,
                                              "context": self.contexts, "ms": self.ms})
        self.contexts, self.ms, self.last = [], [], time.monotonic()


def generate_once(loop: CacheLoop, feeds: dict, new_tokens: int, ctx: JobContext,
                  sender: TokenSender | None = None) -> tuple[float, list[float], list[int], np.ndarray, int]:
    """One greedy generation: (prefill ms, decode step ms, each step's context, token ids
    [batch, new_tokens], the most resident memory seen after the prefill)."""
    tokens, ns = loop.prefill(feeds)
    prefill_rss = rss_bytes() or 0
    chosen = [tokens]
    steps, contexts = [], []
    for _ in range(new_tokens - 1):
        ctx.check_cancel()
        tokens, ns_step = loop.step(tokens)
        steps.append(ns_step / 1e6)
        contexts.append(loop.context)
        chosen.append(tokens)
        if sender is not None:
            sender.add(loop.context, ns_step / 1e6)
    if sender is not None:
        sender.flush()
    return ns / 1e6, steps, contexts, np.stack(chosen, axis=1), prefill_rss


def measure_prompt(make_loop, feeds: dict, prompt: int, params, ctx: JobContext,
                   index: int) -> tuple[dict, tuple[int, int]]:
    """One prompt length's figures (the `index`-th of params.prompt_lengths): its warm-up and
    timed generations, each with a fresh loop from `make_loop()`; and the most resident memory
    seen after a prompt's run and after decoding."""
    from app.core.measure.stats import latency_stats

    for number in range(params.warmup):
        ctx.progress(None, f"prompt {prompt}: warm-up generation {number + 1}")
        generate_once(make_loop(), feeds, params.new_tokens, ctx)
    prefills, steps, tokens, prefill_rss, decode_rss = [], [], None, 0, 0
    for repeat in range(params.repeats):
        ctx.progress((index * params.repeats + repeat) / (len(params.prompt_lengths) * params.repeats),
                     f"prompt {prompt}: generation {repeat + 1} of {params.repeats}")
        prefill_ms, step_ms, contexts, chosen, after_prefill = generate_once(
            make_loop(), feeds, params.new_tokens, ctx, TokenSender(ctx, prompt, repeat))
        ctx.data("generate-prefill", {"prompt_length": prompt, "repeat": repeat, "ms": prefill_ms})
        prefill_rss, decode_rss = max(prefill_rss, after_prefill), max(decode_rss, rss_bytes() or 0)
        prefills.append(prefill_ms)
        steps.append(step_ms)
        if tokens is None:
            tokens = chosen
        elif not np.array_equal(tokens, chosen):
            ctx.log(f"prompt {prompt}: generation {repeat + 1} chose other tokens than the first", "warning")
    flat = [ms for run in steps for ms in run]
    decode_s = sum(flat) / 1000
    total_s = (sum(prefills) + sum(flat)) / 1000
    return {
        "prompt_length": prompt, "context": prompt + params.new_tokens,
        "ttft_ms": float(np.median(prefills)), "ttft_runs_ms": prefills,
        "decode_latency_ms": latency_stats(flat) if flat else None,
        "tokens_per_s": {"decode": params.batch * len(flat) / decode_s if decode_s else None,
                         "end_to_end": params.batch * params.new_tokens * params.repeats / total_s},
        "latency_by_context": by_context(contexts, steps),
        "growth": growth([c for _ in steps for c in contexts], flat),
        "token_ids": tokens.tolist(),
    }, (prefill_rss, decode_rss)


#: the fewest tokens of context between the first and the last steps for a slope: over a dozen
#: tokens the steps' spread (a step's first allocations, a neighbour's burst) is larger than what
#: the cache's growth adds, and a slope per 1,000 tokens read from them was noise (even negative)
MIN_GROWTH_SPAN = 64


def growth(contexts: list[int], ms: list[float]) -> dict:
    """How per-token latency grows with the context: the median of the first and of the last
    eighth of the steps, and the slope between them in ms per 1,000 tokens of context (from
    medians, so one slow step, such as the first after the prompt, does not tilt it); no slope
    where the steps span fewer than MIN_GROWTH_SPAN tokens, with `why`."""
    if len(ms) < 2:
        return {"ms_per_1k_tokens": None, "first_ms": ms[0] if ms else None, "last_ms": ms[-1] if ms else None,
                "why": "one step: nothing to compare"}
    order = np.argsort(np.asarray(contexts), kind="stable")
    context, times = np.asarray(contexts, float)[order], np.asarray(ms, float)[order]
    eighth = max(1, len(times) // 8)
    first, last = float(np.median(times[:eighth])), float(np.median(times[-eighth:]))
    span = float(np.median(context[-eighth:]) - np.median(context[:eighth]))
    if span < MIN_GROWTH_SPAN:
        return {"ms_per_1k_tokens": None, "first_ms": first, "last_ms": last,
                "why": f"the steps span {span:.0f} tokens of context, too few to read a growth from "
                       f"({MIN_GROWTH_SPAN} at least: more --new-tokens)"}
    return {"ms_per_1k_tokens": (last - first) / span * 1000, "first_ms": first, "last_ms": last, "why": ""}


def by_context(contexts: list[int], per_repeat: list[list[float]]) -> list[list[float]]:
    """[context, median ms over the repeats] for at most CONTEXT_POINTS steps, evenly spread."""
    medians = np.median(np.asarray(per_repeat), axis=0) if per_repeat else np.zeros(0)
    keep = np.unique(np.linspace(0, len(contexts) - 1, min(CONTEXT_POINTS, len(contexts))).astype(int)) \
        if contexts else []
    return [[int(contexts[i]), float(medians[i])] for i in keep]


def use_binding(config, session) -> bool:
    """IO binding where the provider keeps the cache off the host, or where it was asked for."""
    return bool(config.io_binding) or session.get_providers()[0] in DEVICE_PROVIDERS
