"""`ortune optimize MODEL -o DIR`: the fastest faithful variant and settings, and a folder to ship."""

from __future__ import annotations

from app.cli.parser import add_cluster_argument

from app.cli.printing import add_json_flag, format_table, output, render_inputs

from app.cli.running import run_job_cli
from app.cli.convert import add_tolerance_arguments, tolerance_from_args
from app.cli.param_args import add_param_arguments, params_from_args
from app.cli.session_args import add_session_arguments, session_config_from_args
from app.core.optimize.candidates import ALL_KINDS
from app.core.optimize.jobs import OPTIMIZE
from app.core.optimize.params import OptimizeParams
from app.core.optimize.report import where_text
from app.core.optimize.rows import answer_text, judged_text, tune_text
from app.core.formatting import human_bytes

ORDER = 75


def _ratio(value, interval) -> str:
    if value is None:
        return "–"
    return f"×{value:.2f}" + (f" [{interval[0]:.2f}–{interval[1]:.2f}]" if interval and None not in interval else "")


def render(result: dict) -> str:
    choice = result["choice"]
    rows = [[("* " if r.get("chosen") else "  ") + r["kind"], r["status"], _ratio(r["speedup"], r["speedup_ci"]),
             r["verdict"] or "–", f"{r['latency_ms']:.3g}" if r.get("latency_ms") is not None else "–",
             human_bytes(r["size_bytes"]) if r.get("size_bytes") is not None else "–", r["reason"]]
            for r in result["candidates"]]
    lines = [format_table(["candidate", "status", "speedup [95 %]", "verdict", "median ms", "size", "why"], rows),
             "speedup: the source's median over the candidate's, timed in alternation with your settings; * chosen",
             "", f"tuning: {tune_text(result['tune'])}",
             "", f"answer: {answer_text(choice)}",
             judged_text(result["data"]),
             f"made and measured on: {where_text(result)}" + (f" — {result['target']['note']}"
                                                               if (result.get("target") or {}).get("note") else ""),
             f"shipped in {result['out_dir']}: {', '.join(p.rsplit('/', 1)[-1] for p in result['files'])}",
             f"budget {result['budget_seconds']:g} s, used {result['elapsed_seconds']:.0f} s"
             + (" — cancelled: partial" if result["partial"] else ""), ""]
    return "\n".join(lines + render_inputs(result.get("inputs", [])))


def run(args) -> int:
    kinds = [k.strip() for k in (args.kinds or "").split(",") if k.strip()]
    params = params_from_args(args, OptimizeParams, {
        "model": args.model, "out_dir": args.output, "kinds": kinds, "tolerance": tolerance_from_args(args),
        "session": session_config_from_args(args)})
    return output(args, run_job_cli(OPTIMIZE, params, memory_limit=args.memory_limit, target=args.target,
                                    cluster=args.cluster, tasks=args.cluster_tasks), render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "optimize", help="find the fastest variant and settings that stay faithful, and write a folder to ship",
        description="Make every conversion that can help on the session's provider (the others are skipped, "
                    "with the reason), check each against the source and time it in alternation with it, repair "
                    "one whose check fails, tune the session of the best, and write DIR: the chosen model, "
                    "preset.json (loads with --config), session.py (plain onnxruntime), report.html (offline) and "
                    "optimize.json. A candidate is chosen only when it passed its check and the whole 95 % "
                    "interval of its speedup lies beyond ±2 %; else the source is kept.")
    parser.add_argument("model", metavar="MODEL", help="the source .onnx model (never modified)")
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder to ship (made if missing)")
    parser.add_argument("--kinds", metavar="K1,K2", help="the candidates to try: conversions, and the source on "
                                                         f"another execution provider (default all: {', '.join(ALL_KINDS)})")
    add_param_arguments(parser, OptimizeParams)
    add_cluster_argument(parser)
    add_tolerance_arguments(parser.add_argument_group("fidelity check"))
    add_session_arguments(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run)
