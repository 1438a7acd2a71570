"""The generate job: a decoder with a KV cache timed as it generates (see app.core.generate)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from app.core.generate.genai_engine import ENGINES, HOW
from app.core.jobs.entry import Job, ON_TARGET
from app.core.jobs.errors import UserError
from app.core.jobs.params import Params, setting
from app.core.jobs.protocol import JobContext
from app.core.session.config import SessionConfig

MAX_TOKENS = 1 << 20


@dataclass
class GenerateParams(Params):
    path: str
    session: SessionConfig = setting(factory=SessionConfig)
    prompt_lengths: list[int] = setting(factory=lambda: [128], flag="--prompt-lengths")
    new_tokens: int = setting(64, minimum=1, maximum=MAX_TOKENS, flag="--new-tokens", metavar="N",
                              help="tokens to generate")
    batch: int = setting(1, minimum=1, maximum=4096, flag="--batch", metavar="N", help="sequences generated at once")
    repeats: int = setting(3, minimum=1, maximum=1000, flag="--repeats", metavar="N",
                           help="timed generations per prompt length")
    warmup: int = setting(1, minimum=0, maximum=1000, flag="--warmup", metavar="N",
                          help="generations before timing")
    against: str = ""              # a reference decoder: the next-token agreement with it (app.core.generate.agreement)
    # who runs the loop: ORTune's present->past loop on an ONNX Runtime session, or onnxruntime-genai's
    # generator on a genai folder (app.core.generate.genai_engine)
    engine: str = setting("ort", choices=ENGINES, flag="--engine",
                          help="who runs the generation loop: ort, ORTune's present->past loop on an ONNX Runtime "
                               "session; genai, onnxruntime-genai's generator on a genai model folder (a "
                               "genai_config.json beside the decoder), for its figures beside ORTune's")

    def validate(self) -> None:
        if not self.prompt_lengths or any(not 1 <= n <= MAX_TOKENS for n in self.prompt_lengths):
            raise UserError("bad-option", f"prompt lengths are whole numbers from 1 to {MAX_TOKENS:,}")
        if self.engine == "genai" and self.against:
            raise UserError("bad-option", "--against compares on ORTune's loop (it feeds the reference's tokens); "
                                          "leave --engine genai out, or compare the token ids of two runs")


def generate_job(params: GenerateParams, ctx: JobContext) -> dict:
    """Streams ("generate-prefill", {prompt_length, repeat, ms}) and ("generate-tokens",
    {prompt_length, repeat, context [...], ms [...]}) while the timed generations run."""
    import onnxruntime as ort

    from app.core.generate.loop import DEVICE_PROVIDERS, CacheLoop
    from app.core.generate.measure import check_memory, decoder_of, measure_prompt, prompt_feeds, use_binding
    from app.core.jobs.memory import rss_bytes
    from app.core.model.inspect import inspect_model
    from app.core.session.create import create_session, effective_settings
    from app.core.session.machine import describe_machine, gpu_memory_bytes, peak_rss_bytes

    config = params.session
    summary = inspect_model(params.path)
    if params.against:                   # a reference that is not there is said before the measuring, not after
        from app.core.model.intake import check_readable
        check_readable(params.against)
    if params.engine == "genai":            # what genai cannot run is said before anything loads
        from app.core.generate.genai_engine import check_engine
        check_engine(params.path, config)
    ctx.progress(None, "creating the session")
    session = create_session(summary["path"], config)
    decoder, inputs, hints = decoder_of(params.path, session)
    longest = max(params.prompt_lengths) + params.new_tokens
    if decoder.max_context is not None and longest > decoder.max_context:
        raise UserError("bad-option", f"a prompt of {max(params.prompt_lengths):,} and {params.new_tokens:,} new "
                                      f"tokens make a context of {longest:,}, past the {decoder.max_context:,} "
                                      "positions the model has")
    first_feeds, first_info = prompt_feeds(decoder, inputs, hints, config.inputs, params.prompt_lengths[0],
                                           params.batch)
    per_token = first_info["decoder"]["kv_cache_bytes_per_token"]
    check_memory(per_token, longest, ctx.memory_budget, rss_bytes() or summary["total_bytes"])
    providers, settings, binding, engine = session.get_providers(), effective_settings(session, config), False, None
    if params.engine == "genai":
        from app.core.generate.genai_engine import GenaiLoop, load_model
        session = None           # the plan's session is let go: genai loads the folder itself
        ctx.progress(None, "loading the folder with onnxruntime-genai")
        model, engine = load_model(params.path, config)
        make_loop = lambda longest: GenaiLoop(model, decoder.ids, longest)  # noqa: E731
    else:
        binding = use_binding(config, session)
        make_loop = lambda longest: CacheLoop(session, decoder, longest, params.batch, binding)  # noqa: E731
    runs, prefill_rss, decode_rss = [], 0, 0
    for index, prompt in enumerate(params.prompt_lengths):
        feeds, info = (first_feeds, first_info) if index == 0 else prompt_feeds(
            decoder, inputs, hints, config.inputs, prompt, params.batch)
        context = prompt + params.new_tokens
        row, rss = measure_prompt(lambda longest=context: make_loop(longest), feeds, prompt, params, ctx, index)
        prefill_rss, decode_rss = max(prefill_rss, rss[0]), max(decode_rss, rss[1])
        runs.append(row | {"kv_cache_bytes": per_token * context,
                           "prompt_ids": feeds[decoder.ids].tolist(), "inputs": info["inputs"]})
    agreement = None
    if params.against:
        from app.core.generate.agreement import against_reference
        agreement = against_reference(params.against, config, session, decoder, inputs, hints, params.prompt_lengths,
                                      params.new_tokens, params.batch, ctx)
    first = runs[0]
    return {
        "model": {"path": summary["path"], "size_bytes": summary["total_bytes"]},
        "ttft_ms": first["ttft_ms"], "decode_latency_ms": first["decode_latency_ms"],
        "tokens_per_s": first["tokens_per_s"], "runs": runs,
        "prompt_lengths": params.prompt_lengths, "new_tokens": params.new_tokens, "batch": params.batch,
        "repeats": params.repeats, "warmup": params.warmup,
        "kv_cache_bytes_per_token": per_token, "kv_cache_bytes": per_token * longest,
        "memory": {"peak_rss_bytes": max(peak_rss_bytes(), prefill_rss, decode_rss),
                   "after_prefill_rss_bytes": prefill_rss,
                   "after_decode_rss_bytes": decode_rss,
                   "gpu_memory_bytes": gpu_memory_bytes() if providers[0] in DEVICE_PROVIDERS else None},
        "engine": engine or {"engine": "ort"},
        "loop": {"io_binding": binding,
                 "how": HOW if engine else ("IO binding: each step's present stays on the device and is bound as the next past; only "
                         "the logits come to the host") if binding else
                        ("plain runs: each step's present arrays are fed back as the next past as ONNX Runtime "
                         "returned them, no copy")},
        "next_token_agreement": agreement, "decoder": decoder.to_dict(), "inputs": first["inputs"],
        "providers": providers, "session": settings,
        "ort_version": ort.__version__, "machine": describe_machine(), "created": time.time(),
    }


GENERATE = Job("generate", generate_job, GenerateParams, runs=ON_TARGET, measures=True)
