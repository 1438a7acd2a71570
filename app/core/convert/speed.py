"""Is the variant faster than its source? A variant made for speed that runs slower is worse
than none, so every conversion measures the two against each other once it is made and
checked: in alternation (app.core.measure.alternate), each in a process of its own, with the
same session settings and the same feeds (the fidelity check's, when it ran), for a couple
of seconds, and at least SPEED_ROUNDS rounds (the blocks shrink to fit them). The ratio is
the source's p50 over the variant's (above 1: the variant is faster), the two p50s it
prints, with its 95 % interval and the one verdict rule (app.core.verdict). An
interval that could not tell gets more rounds, up to EXTEND times the time asked; one that
still cannot then says so.

The check never fails a conversion: when it cannot run it says why (`not_measured`).
"""

from __future__ import annotations

from pathlib import Path

from app.core.verdict import FASTER, SLOWER, verdict_words
from app.core.convert.options import THIS_PLATFORM, kind_info
from app.core.jobs.errors import JobFailed, UserError
from app.core.jobs.protocol import JobContext, scaled_context
from app.core.session.config import SessionConfig
from app.core.session.providers import GPU_PROVIDERS
from app.core.formatting import duration_text, interval_text, ratio_text, ratio_with_interval

CPU = "CPUExecutionProvider"
#: the fewest rounds of a speed check: ten gave intervals such as [0.06, 8.65]
SPEED_ROUNDS = 30
#: an interval that does not answer yet gets up to this many times the time asked, more
EXTEND = 2.0
_INT8_KINDS = {"int8-dynamic", "int8-static", "int4"}
_HALF_KINDS = {"fp16", "mixed"}


def not_measured(why: str) -> dict:
    return {"skipped": True, "why": why}


def variant_speed(report: dict, params, feeds: Path, folder: Path, ctx: JobContext, start: float = 0.0) -> dict:
    """The speed block of a conversion's `report` (params: ConvertParams). `feeds`: the check's
    feeds, where the check saved them; `folder`: scratch space for the members; `start`:
    where the progress bar stands when the measuring begins."""
    config = params.session
    why = _cannot_measure(report, config)
    if why:
        return not_measured(why)
    ctx.progress(start, "measuring the variant's speed against the source")
    checked = feeds.exists()
    try:
        speed = measure_speed(report["input"], report["output"], config, params.speed_s, folder, ctx,
                              feeds=feeds if checked else None, start=start)
    except (UserError, JobFailed) as exc:
        ctx.log(f"the speed check could not run: {exc.message}", "warning")
        return not_measured(f"the speed check could not run: {exc.message}")
    if checked:      # the rows that say where each of the check's inputs came from
        speed["inputs"] = report["fidelity"]["inputs"]
    hint = slower_hint(report["kind"], speed["providers"], report["options"]) if speed["verdict"] == "slower" else ""
    if hint:
        speed["why"] = hint
    return speed


def _cannot_measure(report: dict, config: SessionConfig) -> str:
    if report.get("check") == "not-run":
        return f"the source does not run on the check's inputs ({report['fidelity'].get('problem', '')})"
    if kind_info(report["kind"]).needs_gpu and not set(config.provider_names()) & GPU_PROVIDERS:
        return f"{report['kind']} is made for a GPU, and the session runs on the CPU only"
    return ""


def measure_speed(source: str, variant: str, config: SessionConfig, seconds: float, folder: Path,
                  ctx: JobContext | None = None, feeds: Path | None = None, start: float = 0.0,
                  variant_config: SessionConfig | None = None) -> dict:
    """`variant` against `source`, each in a member process of its own, for about `seconds`
    in all (at least SPEED_ROUNDS rounds, and longer while the interval does not answer);
    on `feeds` (an .npz) when given, else on the inputs `config` makes for the source, which
    the variant then gets too. `variant_config`: the variant's own session (its provider), if
    not `config`."""
    from app.core.measure.alternate import alternate, summarize
    from app.core.measure.runs import RunSettings
    from app.core.bench.jobs import MEMBER, MemberParams
    from app.core.session.input_spec import FeedSpec

    ctx = ctx or JobContext()
    base = config.checked()
    if feeds is not None:
        base.inputs = FeedSpec(mode="files", files={"*": str(feeds)}, seed=base.inputs.seed,
                               vocab_size=base.inputs.vocab_size)
    settings = RunSettings(duration_s=max(seconds / 2, 0.001))
    own = base.checked()
    if variant_config is not None:
        own = variant_config.checked()
        own.inputs = base.checked().inputs
    members = [MemberParams(path=str(path), session=session, run=settings,
                            variant=label, record=False, reference_dir=str(folder), is_reference=index == 0)
               for index, (path, label, session) in enumerate(((source, "source", base.checked()),
                                                               (variant, "variant", own)))]

    def on_event(index: int, event: str, payload: dict) -> None:
        if event == "log":
            ctx.log(f"speed check, {members[index].variant}: {payload['message']}", payload.get("level", "info"))

    with scaled_context(ctx, start, 1 - start, "measuring the speed") as scaled:
        alternation = alternate(MEMBER, members, settings, scaled, on_event, min_rounds=SPEED_ROUNDS,
                                extend_s=EXTEND * seconds)
    row = summarize(alternation)[1]
    source_report, variant_report = alternation.reports
    return speed_fields(row) | {
            "source_p50_ms": alternation.judged_p50_ms(0),      # the two medians the ratio is of
            "variant_p50_ms": alternation.judged_p50_ms(1), "rounds": row["rounds"],
            "providers": variant_report["providers"], "inputs": source_report["inputs"],
            "feeds": "the fidelity check's" if feeds is not None else "made for the source",
            "alternation": alternation.describe()}


def speed_fields(row: dict) -> dict:
    """A speed block's ratio and verdict fields from a row of app.core.measure.alternate.summarize."""
    return {"ratio": row["speedup"], "ratio_ci": row["speedup_ci"], "verdict": row["verdict"],
            "conclusive": row["conclusive"], "measure": row["measure"],     # cpu: each run's own CPU time
            "claim": row["claim"], "widened_ci": row["widened_ci"], "why_verdict": row["why"],
            "contention": row["contention"], "too_busy": bool(row.get("too_busy"))}      # other programs took the cores: the interval was widened


def slower_hint(kind: str, providers: list[str], options: dict, cpu_flags: set[str] | None = None) -> str:
    """Why a variant of `kind` made with `options` is slower on `providers`, for the cases
    known to cause it. `cpu_flags`: the CPU's instruction sets where known (this machine's
    by default)."""
    on_cpu = bool(providers) and providers[0] == CPU
    if kind == "ort" and on_cpu and options.get("target_platform") != THIS_PLATFORM:
        return (f"made for the {options.get('target_platform')} platform, without the blocked (NCHWc) layout a "
                f"session of the source applies to convolutions on this {THIS_PLATFORM} machine")
    if kind in _INT8_KINDS and on_cpu:
        from app.core.session.machine_cpu import cpu_description, int8_acceleration

        name, flags = cpu_description()
        flags = flags if cpu_flags is None else cpu_flags
        if flags and not int8_acceleration(flags):
            return (f"{name} has no int8 dot-product instructions (AVX512-VNNI, AVX-VNNI, AMX or Arm dot-product): "
                    "its int8 kernels gain little over float32 and the quantize/dequantize steps cost more")
        return ("the quantize and dequantize steps around the integer operators cost more than they save on "
                "this model: quantize fewer, larger operators (exclude the small ones) or keep float32")
    if (kind in _HALF_KINDS or (kind == "transformers" and options.get("fp16"))) and on_cpu:
        return ("float16 on the CPU provider: it has few float16 kernels and casts to float32 and back around "
                "the rest; float16 pays off on GPUs")
    return ""


def speed_sentence(speed: dict) -> str:
    """One line for a person: how fast the variant is against its source, and why when slower."""
    if speed.get("skipped"):
        return f"speed: not measured — {speed['why']}"
    verdict = verdict_words(speed["verdict"])
    if speed["verdict"] in (FASTER, SLOWER):
        verdict += " than the source on this machine"
    if speed.get("why_verdict"):
        verdict += f" ({speed['why_verdict'].split(': ', 1)[-1]})"
    figure = ratio_with_interval(speed["ratio"], speed["ratio_ci"]) if interval_text(speed["ratio_ci"]) else \
        f"{ratio_text(speed['ratio'])} [interval unknown]"
    median = "CPU-time p50" if speed.get("measure") == "cpu" else "p50"
    line = (f"speed: {figure} the source's speed — {verdict} ({median} {duration_text(speed['source_p50_ms'])} → "
            f"{duration_text(speed['variant_p50_ms'])}, {speed['rounds']} rounds)")
    return line + (f"; why: {speed['why']}" if speed.get("why") else "")
