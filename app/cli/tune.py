"""`ortune tune MODEL`: search session settings with a noise-aware race."""

from __future__ import annotations

from app.cli.common import add_json_flag, format_table, output, render_inputs, run_job_cli
from app.cli.session_args import add_session_arguments, session_config_from_args, whole_number
from app.core.tune.jobs import TUNE

ORDER = 70


def render(result: dict) -> str:
    lines = [f"{result['trials_used']} trials over {result['space_size']} settings in "
             f"{result['seconds']:.0f} s ({result['strategy']})" + (" — cancelled" if result["cancelled"] else "")]
    default, best = result["default"], result["best"]
    lines.append(f"default  {default['latency_ms']:.3f} ms")
    lines.append(f"best     {best['latency_ms']:.3f} ms  {best['label']}  (speedup ×{result['speedup']:.2f})")
    if result["speedup"] > 1.0 and not result["clearly_faster"]:
        lines.append("         not clearly faster than your settings: its interval reaches theirs "
                     "(a bigger budget measures it longer)")
    rows = []
    for trial in result["trials"][:15]:
        ci = trial["ci_ms"]
        rows.append([trial["label"], f"{trial['latency_ms']:.3f}",
                     f"{ci[0]:.3f}–{ci[1]:.3f}" if ci else "", trial["blocks"],
                     "yes" if trial["alive"] else f"round {trial['eliminated_in_round']}"])
    lines += ["", format_table(["setting", "ms", "95% interval", "blocks", "still in"], rows)]
    if result["failed"]:
        lines += ["", f"{len(result['failed'])} setting(s) could not run, e.g. {result['failed'][0]['label']}: "
                      f"{result['failed'][0]['error']}"]
    lines += ["", "Save the best as a preset with --save-best FILE.json; reuse it with --config FILE.json."]
    lines += [""] + render_inputs(result.get("inputs", []))
    return "\n".join(lines)


def run(args) -> int:
    config = session_config_from_args(args)
    limits = {"providers": config.provider_names()}
    if args.max_threads is not None:
        limits["max_threads"] = whole_number(args.max_threads, "--max-threads", 1)
    given = {"path": args.model, "session": config, "limits": limits, "strategy": args.strategy,
             "budget_trials": args.budget_trials, "budget_seconds": args.budget_seconds}
    if args.block_runs:
        given["block_runs"] = args.block_runs
    result = run_job_cli(TUNE, TUNE.params.from_dict(given, text=True), memory_limit=args.memory_limit)
    if args.save_best:
        from app.core.session.config import SessionConfig
        SessionConfig.from_dict(result["best"]["session"]).save(args.save_best)
    return output(args, result, render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "tune", help="search session settings for the lowest latency",
        description="Race session settings (provider, optimisation level, execution mode, threads, "
                    "spinning, dynamic block base, IO binding) against each other, measuring each in "
                    "alternation with your own settings so machine noise cancels out. The settings given "
                    "with the session flags are the baseline; --provider limits the providers tried.")
    parser.add_argument("model", metavar="MODEL")
    parser.add_argument("--budget-trials", metavar="N", help="stop after N trials (a trial = one measured block)")
    parser.add_argument("--budget-seconds", metavar="S", help="stop after S seconds")
    parser.add_argument("--max-threads", metavar="N", help="never try more than N intra-op threads")
    parser.add_argument("--strategy", choices=["race", "grid"], default="race",
                        help="race (default) or grid: every setting measured fully (slow, for comparison)")
    parser.add_argument("--block-runs", metavar="N", help="timed runs per block (default 10)")
    parser.add_argument("--save-best", metavar="FILE.json", help="write the best setting as a session preset")
    add_session_arguments(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run)
