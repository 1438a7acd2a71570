"""`ortune placement MODEL [session options]`: which provider runs each node."""

from __future__ import annotations

from app.cli.printing import add_json_flag, format_table, output

from app.cli.running import run_job_cli
from app.cli.param_args import add_param_arguments, params_from_args
from app.cli.session_args import add_session_arguments, session_config_from_args
from app.core.session.jobs import PLACEMENT, PlacementParams

ORDER = 33
MAX_LISTED = 40


def render(result: dict) -> str:
    from app.core.session.placement import display_name

    lines = [f"{result['path']} ({'ORT graph assignment' if result['method'] == 'assignment' else 'one profiled run'})",
             "", result["summary"]]
    lines += [f"note: {n}" for n in result.get("notes", [])]
    lines += [f"warning: {w}" for w in result["warnings"]]
    first = result["providers"][0]
    elsewhere = [n for n in result["nodes"] if n["provider"] != first]
    if elsewhere:
        lines += ["", f"nodes not on {display_name(first)}:",
                  format_table(["node", "operator", "provider"],
                               [[n["name"], n["op_type"], display_name(n["provider"])] for n in elsewhere[:MAX_LISTED]])]
        if len(elsewhere) > MAX_LISTED:
            lines.append(f"… and {len(elsewhere) - MAX_LISTED} more (use --json for all)")
    return "\n".join(lines)


def run(args) -> int:
    params = params_from_args(args, PlacementParams, {"path": args.model, "session": session_config_from_args(args)})
    return output(args, run_job_cli(PLACEMENT, params, memory_limit=args.memory_limit, target=args.target), render)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "placement", help="which execution provider runs each node (silent CPU fallback)",
        description="Create the session with the chosen providers and list which provider takes each node of the "
                    "optimised graph; warn when a GPU provider takes only a small part of it.")
    parser.add_argument("model", metavar="MODEL", help="a .onnx or .ort file")
    add_param_arguments(parser, PlacementParams)
    add_session_arguments(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run)
