"""`ortune generate MODEL`: a decoder with a KV cache timed as it generates text."""

from __future__ import annotations

from pathlib import Path

from app.cli.printing import add_json_flag, format_table, output

from app.core.formatting import human_bytes

from app.cli.running import run_job_cli
from app.cli.param_args import add_param_arguments, params_from_args
from app.cli.session_args import add_session_arguments, session_config_from_args
from app.core.bench.sweep import parse_values
from app.core.generate.jobs import GENERATE, GenerateParams
from app.core.jobs.errors import UserError
from app.core.formatting import duration_text

ORDER = 35


def _ms(value) -> str:
    return "–" if value is None else duration_text(value, 3)


def _rate(value) -> str:
    return "–" if value is None else f"{value:,.1f}"


def _growth(growth: dict) -> str:
    slope = growth.get("ms_per_1k_tokens")
    if slope is None:
        return f"– ({growth['why']})" if growth.get("why") else "–"
    return f"{_ms(growth['first_ms'])} → {_ms(growth['last_ms'])} ({slope:+.3g} ms per 1k tokens)"


def render(report: dict) -> str:
    engine = report.get("engine") or {}
    through = f", through onnxruntime-genai {engine['genai_version']}" if engine.get("engine") == "genai" else ""
    lines = [f"{Path(report['model']['path']).name} on {', '.join(report['providers'])} "
             f"(ONNX Runtime {report['ort_version']}{through})",
             f"greedy generation: batch {report['batch']}, {report['new_tokens']} new tokens, "
             f"{report['repeats']} timed generation(s) per prompt after {report['warmup']} warm-up",
             f"loop: {report['loop']['how']}",
             f"KV cache: {human_bytes(report['kv_cache_bytes_per_token'])} a token, "
             f"{human_bytes(report['kv_cache_bytes'])} at the longest context", ""]
    rows = []
    for run in report["runs"]:
        latency = run["decode_latency_ms"] or {}
        rows.append([run["prompt_length"], run["context"], _ms(run["ttft_ms"]), _ms(latency.get("p50")),
                     _ms(latency.get("p90")), _ms(latency.get("p99")), _rate(run["tokens_per_s"]["decode"]),
                     _rate(run["tokens_per_s"]["end_to_end"]), human_bytes(run["kv_cache_bytes"])])
    lines.append(format_table(["prompt", "context", "TTFT", "token p50", "token p90", "token p99", "tokens/s decode",
                               "tokens/s end to end", "KV cache"], rows))
    lines.append("")
    for run in report["runs"]:
        lines.append(f"prompt {run['prompt_length']}: per-token latency {_growth(run['growth'])}")
        for row, ids in enumerate(run["token_ids"][:4]):
            lines.append(f"  next tokens{f' (sequence {row + 1})' if len(run['token_ids']) > 1 else ''}: "
                         + " ".join(map(str, ids[:32])) + (" …" if len(ids) > 32 else ""))
    agreement = report.get("next_token_agreement")
    if agreement:
        first = [row["first_disagreement"] for row in agreement["prompts"] if row["first_disagreement"] is not None]
        lines += ["", f"next-token agreement with {Path(agreement['against']).name}: {agreement['rate']:.1%} of "
                      f"{agreement['steps']:,} tokens" + (f" (first difference at step {min(first) + 1})" if first
                                                          else " (every token the same)"),
                  f"  {agreement['how']}"]
    memory = report["memory"]
    lines += ["", f"memory: peak RSS {human_bytes(memory['peak_rss_bytes'])}, after the prompt "
                  f"{human_bytes(memory['after_prefill_rss_bytes'])}, after decoding "
                  f"{human_bytes(memory['after_decode_rss_bytes'])}"
              + (f", GPU {human_bytes(memory['gpu_memory_bytes'])}" if memory.get("gpu_memory_bytes") else "")]
    return "\n".join(lines)


def _prompt_lengths(args) -> dict:
    """--prompt-lengths, or the input plan's --prompt-length as one length (neither: the default);
    a generation runs the prompt and then every token, so the plan's choice of one step (--phase,
    --past-length) has no meaning here and is refused rather than ignored."""
    for flag, value in (("--phase", args.phase), ("--past-length", args.past_length)):
        if value is not None:
            raise UserError("bad-option", f"{flag} chooses the one step bench and compare time; generate runs the "
                                          "prompt and then each new token: give --prompt-lengths and --new-tokens")
    if args.prompt_length is not None and args.prompt_lengths is not None:
        raise UserError("bad-option", "give --prompt-length or --prompt-lengths, not both")
    if args.prompt_length is not None:
        return {"prompt_lengths": [args.prompt_length]}
    if args.prompt_lengths is not None:
        return {"prompt_lengths": parse_values(args.prompt_lengths, "--prompt-lengths")}
    return {}


def run(args) -> int:
    config = session_config_from_args(args)
    params = params_from_args(args, GenerateParams, {
        "path": args.model, "session": config, "against": args.against or "", **_prompt_lengths(args)})
    return output(args, run_job_cli(GENERATE, params, memory_limit=args.memory_limit, target=args.target), render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "generate", help="time a decoder with a KV cache as it generates: first token, then token by token",
        description="Generate greedily with a decoder that has a KV cache (past/present inputs and outputs): the "
                    "prompt's run (time to first token), then one run per new token, each step's present fed back "
                    "as the next past. Reports TTFT, per-token latency percentiles and how they grow with the "
                    "context, tokens per second (decode and end to end), the KV cache's bytes, memory, and the "
                    "tokens chosen. --memory-limit refuses a context whose cache would not fit, before it runs.")
    parser.add_argument("model", metavar="MODEL", help="a .onnx or .ort decoder with past/present")
    add_session_arguments(parser)
    group = parser.add_argument_group("generation")
    group.add_argument("--prompt-lengths", metavar="N[,N...]",
                       help="prompt length(s) in tokens, each generated from (default 128; --prompt-length N: one)")
    add_param_arguments(group, GenerateParams)
    group.add_argument("--against", metavar="REFERENCE",
                       help="a reference decoder (the source of a variant): how often this model's next token is the "
                            "reference's, over the same greedy steps")
    add_json_flag(parser)
    parser.set_defaults(handler=run)
