"""`ortune diagnose MODEL`: findings on why a model is slow, each with evidence and a fix."""

from __future__ import annotations

import textwrap

from app.cli.printing import add_json_flag, output, render_inputs

from app.cli.running import run_job_cli
from app.cli.param_args import add_param_arguments, params_from_args
from app.cli.session_args import add_session_arguments, session_config_from_args
from app.core.diagnose.jobs import DIAGNOSE, DiagnoseParams
from app.core.formatting import duration_text

ORDER = 80
#: the command profiles more runs than the window does by default: it runs once, unattended
RUNS = {"runs": 20}


def render(result: dict) -> str:
    evidence = result["evidence"]
    stats = evidence["latency_ms"]
    lines = [f"{result['model']}",
             f"  latency p50 {duration_text(stats['p50'], 4)}, p99 {duration_text(stats['p99'], 4)} over "
             f"{stats['runs']} runs; "
             f"CPU {evidence['cpu']}", ""]
    if not result["findings"]:
        lines.append("No findings: nothing measured here points at a setting or a conversion to change.")
    for finding in result["findings"]:
        lines.append(f"[{finding['severity']}] {finding['title']}  ({finding['id']})")
        for label, text in (("evidence", finding["evidence"]), ("cost", finding["cost"]), ("fix", finding["fix"])):
            if text:
                lines += textwrap.wrap(text, 100, initial_indent=f"    {label:9}", subsequent_indent=" " * 13)
        if finding.get("setting"):
            flags = " ".join(f"{k}={v}" for k, v in finding["setting"].items())
            lines.append(f"    setting  {flags}")
        lines.append("")
    lines += [""] + render_inputs(result.get("inputs", []))
    return "\n".join(lines)


def run(args) -> int:
    config = session_config_from_args(args)
    params = params_from_args(args, DiagnoseParams, {"path": args.model, "session": config, "trace": args.trace},
                              defaults=RUNS)
    return output(args, run_job_cli(DIAGNOSE, params, memory_limit=args.memory_limit, target=args.target), render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "diagnose", help="find out why a model is slow here, with evidence and fixes",
        description="Profile the model, time it and run two small experiments (fixed dimensions, spinning), "
                    "then list findings; each has a stable id, the evidence measured, the likely cost and a fix.")
    parser.add_argument("model", metavar="MODEL")
    parser.add_argument("--trace", metavar="T.json", help="use this profile instead of profiling again")
    add_param_arguments(parser, DiagnoseParams, RUNS)
    add_session_arguments(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run)
