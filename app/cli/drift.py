"""`ortune drift SOURCE VARIANT`: where a variant's values part from its source's, tensor by
tensor, and the node where that starts."""

from __future__ import annotations

from pathlib import Path

from app.cli.printing import add_json_flag, format_table, output, render_inputs

from app.cli.running import run_job_cli
from app.cli.convert import add_tolerance_arguments, tolerance_from_args
from app.cli.repair_steps import add_repair_arguments, render_repair, repair_bounds
from app.cli.session_args import add_session_arguments, session_config_from_args
from app.core.session.fidelity_policy import policy_text
from app.core.convert.speed import speed_sentence
from app.core.drift.jobs import DRIFT, REPAIR, DriftParams
from app.core.jobs.errors import UserError

ORDER = 32
WORST = 10


def _number(value, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def _first_text(label: str, first: dict | None) -> str:
    if first is None:
        return f"{label}: none"
    return (f"{label}: tensor {first['tensor']} made by {first['node'] or '(unnamed)'} ({first['op_type']}), "
            f"max |Δ| {_number(first['max_abs_diff'], '.3g')}, SQNR {_number(first['sqnr_db'], '.1f')} dB"
            + (f"; {first['problem']}" if first.get("problem") else ""))


def render(result: dict) -> str:
    rows = result["tensors"]
    worst = sorted((r for r in rows if r["sqnr_db"] is not None), key=lambda r: r["sqnr_db"])[:WORST]
    table = [[r["index"], r["name"], r["node"], r["op_type"], _number(r["max_abs_diff"], ".3g"),
              _number(r["max_rel_diff"], ".3g"), _number(r["cosine"], ".6f"), _number(r["sqnr_db"], ".1f"),
              _number(r["sqnr_loss_db"], ".1f"), r["nonfinite"], _number(r["fp16_fraction"], ".2g"),
              "yes" if r["passed"] else ("no" if r["passed"] is False else "–")]
             for r in sorted(worst, key=lambda r: r["index"])]
    tolerance = result["tolerance"]
    lines = [f"{result['variant']} ({result['variant_precision']}) against {result['source']}: "
             f"{result['compared']} of {result['source_tensors']} tensors compared",
             f"the {len(worst)} with the lowest SQNR, in graph order:",
             format_table(["#", "tensor", "node", "op", "max |Δ|", "max rel", "cosine", "SQNR dB", "lost dB",
                           "NaN/Inf", "of fp16 max", "within"], table), "",
             _first_text("first drift", result["first_drift"]),
             _first_text("first non-finite", result["first_nonfinite"]),
             f"tolerance: {policy_text(tolerance)}", ""]
    lines += render_inputs(result.get("inputs", []))
    if "repair" in result:
        remade = result["remade_as"]
        repaired = result["repaired"]
        lines += ["", f"remade as {remade['kind']} with {remade['options'] or 'its default options'}, into "
                      f"{repaired['output']}:", *render_repair(result["repair"]), speed_sentence(repaired["speed"])]
    return "\n".join(lines)


def _repaired_name(variant: str) -> str:
    path = Path(variant)
    return str(path.with_name(f"{path.stem}.repaired{path.suffix}"))


def _repair(args, result: dict, session: dict, tolerance: dict, bounds: dict) -> None:
    """Remake the variant the way it looks to have been made, with the repair loop."""
    remade = result["remade_as"]
    if remade is None:
        raise UserError("nothing-to-repair", f"{Path(args.variant).name} computes in float32: there is no lower "
                                             "precision to keep nodes out of")
    convert = {"kind": remade["kind"], "input": args.source, "output": args.output or _repaired_name(args.variant),
               "force": args.force, "options": remade["options"], "tolerance": tolerance, "session": session,
               "speed_s": args.speed_seconds}
    repair = REPAIR.params.from_dict({"convert": convert, **bounds}, text=True)
    repaired = run_job_cli(REPAIR, repair, memory_limit=args.memory_limit)
    result["repair"] = repaired.pop("repair")
    result["repaired"] = {key: repaired[key] for key in ("output", "check", "fidelity", "speed", "kept_in_fp32")}


def run(args) -> int:
    tolerance, session = tolerance_from_args(args), session_config_from_args(args).to_dict()
    bounds = repair_bounds(args)         # checked before the first job runs
    if args.repair and args.target:
        raise UserError("bad-option", "--repair runs on this machine; leave out --target")
    params = DriftParams.from_dict({"source": args.source, "variant": args.variant, "tolerance": tolerance,
                                    "session": session})
    result = run_job_cli(DRIFT, params, memory_limit=args.memory_limit, target=args.target)
    if args.repair:
        _repair(args, result, session, tolerance, bounds)
    code = output(args, result, render)
    return 4 if args.repair and not result["repair"]["passed"] else code


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "drift", help="find the node where a variant's values start to part from its source's",
        description="Run the source and the variant on the same inputs with every intermediate tensor exposed "
                    "and compare them tensor by tensor in graph order: max abs and rel difference, cosine, SQNR, "
                    "NaN/Inf, the source's reach into float16's range; name the first tensor past the tolerance "
                    "and the first that goes non-finite, each with the node that made it.")
    parser.add_argument("source", metavar="SOURCE", help="the float32 model")
    parser.add_argument("variant", metavar="VARIANT", help="its variant (fp16, int8, optimised …)")
    add_tolerance_arguments(parser)
    add_repair_arguments(parser, "remake the variant from SOURCE as it looks to have been made (fp16, int8 "
                                 "dynamic or static, default options)")
    parser.add_argument("-o", "--output", metavar="OUT", help="with --repair: the repaired variant's file (default: "
                                                              "VARIANT's name with .repaired)")
    parser.add_argument("--force", action="store_true", help="with --repair: replace OUT if it exists")
    parser.add_argument("--speed-seconds", metavar="S", default="2",
                        help="with --repair: how long each step's variant and the source are timed, in all "
                             "(default 2)")
    add_session_arguments(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run)
