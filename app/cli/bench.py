"""`ortune bench MODEL [session options]`: latency benchmark, or a sweep grid with --sweep."""

from __future__ import annotations

from pathlib import Path

from app.cli.parser import add_cluster_argument

from app.cli.printing import add_json_flag, cluster_lines, format_table, output, render_inputs

from app.core.formatting import human_bytes

from app.cli.running import run_job_cli
from app.cli.session_args import add_run_arguments, add_session_arguments, run_settings_from_args, session_config_from_args
from app.core.session.load import busy_note
from app.core.session.plugins import devices_text
from app.core.text import printable
from app.core.jobs.errors import UserError
from app.core.bench.jobs import BENCH, SWEEP, BenchParams, SweepParams
from app.core.bench.sweep import items_unit
from app.core.formatting import duration_column, duration_text

ORDER = 30
STAT_KEYS = ["mean", "p50", "p90", "p95", "p99", "p999", "min", "max", "std"]


def latency_columns(latencies: list[dict], keys) -> dict[str, tuple[str, list[str]]]:
    """Per percentile, its unit and texts over `latencies` (one unit and format per column)."""
    return {key: duration_column([latency.get(key) for latency in latencies]) for key in keys}


def decoder_lines(step: dict | None) -> list[str]:
    """A decoder's step, for a benchmark of one: what a run is, in tokens, and its cache."""
    if not step:
        return []
    tokens = step["batch"] * step["new"]
    what = (f"decode step: {step['new']} new token(s) after {step['past']:,} past" if step["phase"] == "decode"
            else f"prefill: a prompt of {step['new']:,} tokens")
    return [f"{what}, batch {step['batch']}: {tokens:,} token(s) a run; KV cache "
            f"{human_bytes(step['kv_cache_bytes_per_token'])} a token, {human_bytes(step['kv_cache_bytes'])} at "
            f"the context of {step['context']:,} (`ortune generate` times the whole loop)"]


def render(report: dict) -> str:
    unit, figures = duration_column([report["latency_ms"][k] for k in STAT_KEYS])
    lines = [f"{Path(report['model']['path']).name} on {', '.join(report['providers'])} "
             f"(ONNX Runtime {report['ort_version']})",
             f"session created in {duration_text(report['session_create_ms'])}, first run "
             f"{duration_text(report['first_run_ms'], 4)}, {report['warmup']} warm-up runs, "
             f"{report['iterations']:,} measured runs in {report['measure_s']:.2f} s",
             "", f"latency in {unit}:",
             format_table(STAT_KEYS, [figures]),
             "",
             f"throughput {report['throughput_per_s']:,.1f} runs/s (concurrency {report['concurrency']})",
             *decoder_lines(report.get("decoder")),
             f"peak RSS {human_bytes(report['peak_rss_bytes'])}"
             + (f", GPU memory {human_bytes(report['gpu_memory_bytes'])}" if report.get("gpu_memory_bytes") else ""),
             ""] + render_inputs(report.get("inputs", []))
    if report.get("session", {}).get("device_policy", "none") != "none":
        lines.append(f"the device policy {report['session']['device_policy']} picked: "
                     f"{printable(devices_text(report.get('devices', [])))}")
    if busy := busy_note(report.get("load")):
        lines.append(f"note: {busy}")
    if report.get("history_id"):
        lines.append(f"stored as result {report['history_id']} (see `ortune history`)")
    return "\n".join(lines)


def _interval(low: float, high: float) -> str:
    return f"[{low:.3g}, {high:.3g}]"


def render_sweep(result: dict) -> str:
    dim = result["dim"]
    best = result["best"]
    latency = latency_columns([cell["latency_ms"] for cell in result["cells"]], ("p50", "p99"))
    tokens = any("tokens_per_s" in cell for cell in result["cells"])     # a decoder's step: per token, tokens/s
    per_token = latency_columns([cell.get("per_token_ms", {}) for cell in result["cells"]], ("p50",))["p50"]
    headers = ([dim] if dim else []) + ["concurrency"] + [f"{key} {latency[key][0]}" for key in ("p50", "p99")] + (
        [f"per token p50 {per_token[0]}"] if tokens else []) + ["runs/s"] + (
        [items_unit(dim, result["cells"])] if dim or tokens else []) + ["vs first", "95 % interval", "verdict", "best"]
    rows = []
    for index, cell in enumerate(result["cells"]):
        mark = "◀" if cell == best else ""
        rows.append(([cell["dim_value"]] if dim else []) + [
            cell["concurrency"], latency["p50"][1][index], latency["p99"][1][index]] + (
            [per_token[1][index]] if tokens else []) + [
            f"{cell['throughput_per_s']:,.1f}"] + ([f"{cell['items_per_s']:,.1f}"] if dim or tokens else []) + [
            "–" if cell["ratio"] is None else f"{cell['ratio']:.3g}x",
            "–" if cell["ratio_ci"] is None else _interval(*cell["ratio_ci"]), cell["verdict"], mark])
    lines = [f"{Path(result['model']['path']).name}: sweep of " + (f"{dim} × " if dim else "") + "concurrency", "",
             format_table(headers, rows), ""]
    if result["alternation"]:          # none: the cells were timed one after the other (their verdicts say so)
        groups = result["alternation"]["groups"]
        lines += [f"vs first: {result['ratio_definition']}",
                  "measured in alternation, each cell in its own process, "
                  + ("all at once" if len(groups) == 1 else f"in {len(groups)} groups, each with the first cell")]
    if result["latency_limit_ms"] is not None:
        lines.append(f"latency limit: {result['limit_percentile']} ≤ {result['latency_limit_ms']} ms"
                     + ("" if best else " — no cell meets it"))
    margin = result.get("best_vs_runner_up")
    if margin:
        other = margin["runner_up"]
        name = (f"{dim}={other['dim_value']}, " if dim else "") + f"concurrency {other['concurrency']}"
        verdict = ("a measurable lead" if margin["measurable"]
                   else "not a measurable lead: either could be the best")
        lines.append(f"best against the runner-up ({name}): {margin['ratio']:.3g}x "
                     f"{_interval(*margin['ci'])}, {verdict}")
    lines += cluster_lines(result, lambda c: (f"{dim}={c['dim_value']}, " if dim else "") + f"concurrency {c['concurrency']}")
    lines += [""] + render_inputs(result.get("inputs", []))
    return "\n".join(lines)


def _sweep_params(args) -> dict | None:
    from app.core.bench.sweep import LIMIT_PERCENTILES, parse_values

    if not args.sweep and not args.sweep_concurrency:
        if args.latency_limit is not None:
            raise UserError("bad-option", "--latency-limit applies to a sweep; add --sweep or --sweep-concurrency")
        return None
    dim, values = None, []
    if args.sweep:
        dim, sep, text = args.sweep.partition("=")
        if not sep or not dim.strip():
            raise UserError("bad-option", f"--sweep expects NAME=V1,V2,..., not {args.sweep!r}")
        dim, values = dim.strip(), parse_values(text, f"--sweep {dim.strip()}")
    concurrency = parse_values(args.sweep_concurrency, "--sweep-concurrency") if args.sweep_concurrency else None
    limit = None
    if args.latency_limit is not None:
        try:
            limit = float(args.latency_limit)
        except ValueError:
            raise UserError("bad-option", f"--latency-limit expects milliseconds, not {args.latency_limit!r}") from None
    if args.limit_percentile not in LIMIT_PERCENTILES:
        raise UserError("bad-option", f"--limit-percentile must be one of {', '.join(LIMIT_PERCENTILES)}")
    return {"dim": dim, "dim_values": values, "concurrency_values": concurrency, "latency_limit_ms": limit,
            "limit_percentile": args.limit_percentile}


def run(args) -> int:
    config = session_config_from_args(args)
    settings = run_settings_from_args(args)
    sweep = _sweep_params(args)
    if sweep is None:
        if args.cluster:
            raise UserError("bad-option", "--cluster spreads a sweep: add --sweep or --sweep-concurrency")
        params = BenchParams(path=args.model, session=config, run=settings, record=not args.no_history)
        return output(args, run_job_cli(BENCH, params, memory_limit=args.memory_limit, target=args.target), render)
    sweep["concurrency_values"] = sweep["concurrency_values"] or [settings.concurrency]
    params = SweepParams(path=args.model, session=config, run=settings, record=not args.no_history, **sweep)
    result = run_job_cli(SWEEP, params, memory_limit=args.memory_limit, target=args.target,
                         cluster=args.cluster, tasks=args.cluster_tasks)
    return output(args, result, render_sweep)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench", help="measure latency and throughput of a model",
        description="Create the session, time the first run, warm up, then time each run with a monotonic "
                    "nanosecond clock. The result is stored in the history. With --sweep and/or "
                    "--sweep-concurrency, measure a grid of cells, each in a process of its own, in "
                    "alternation against the first cell.")
    parser.add_argument("model", metavar="MODEL", help="a .onnx or .ort file")
    add_session_arguments(parser)
    add_run_arguments(parser)
    sweep = parser.add_argument_group("sweep")
    sweep.add_argument("--sweep", metavar="NAME=V1,V2,...", help="values of a symbolic dimension, e.g. batch=1,2,4,8")
    sweep.add_argument("--sweep-concurrency", metavar="K1,K2,...", help="concurrency levels, e.g. 1,2,4")
    sweep.add_argument("--latency-limit", metavar="MS", help="highlight the best throughput within this latency")
    sweep.add_argument("--limit-percentile", default="p99", metavar="P",
                       help="the percentile the limit applies to: p50, p90, p95 or p99 (default p99)")
    parser.add_argument("--no-history", action="store_true", help="do not store the result in the history")
    add_cluster_argument(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run)
