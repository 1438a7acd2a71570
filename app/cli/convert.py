"""`ortune convert KIND MODEL -o OUT [options]`: make a variant and check its fidelity."""

from __future__ import annotations

from pathlib import Path

import argparse

from app.cli.printing import add_json_flag, format_table, output

from app.cli.running import run_job_cli
from app.cli.repair_steps import add_repair_arguments, render_repair, repair_bounds
from app.cli.param_args import add_param_arguments, params_from_args
from app.cli.session_args import add_session_arguments, session_config_from_args
from app.core.convert.compiled import compiled_lines
from app.core.convert.jobs import CONVERT
from app.core.convert.fusers import attention_text, fusers_lines, rotary_text
from app.core.convert.options import KINDS, options_for_flags
from app.core.convert.speed import speed_sentence
from app.core.convert.weights import share_text
from app.core.drift.jobs import REPAIR
from app.core.jobs.errors import UserError
from app.core.convert.decoder_fusion import rotary_angles_text
from app.core.convert.int4 import gemm_text
from app.core.convert.next_tokens import agreement_text, output_word
from app.core.session.fidelity_policy import GivenBounds, GivenTolerance, policy_text
from app.core.session.inputs import origin_word
from app.core.formatting import cosine_text, human_bytes

ORDER = 30
#: exit code of a conversion that made its variant, but whose check failed or could not run
CHECK_NOT_PASSED = 4


def _number(value) -> str:
    if value is None:
        return "–"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def render(result: dict) -> str:
    text = _render_conversion(result)
    if "repair" in result:
        text += "\n\n" + "\n".join(render_repair(result["repair"]))
    return text


def _render_conversion(result: dict) -> str:
    ratio = result.get("size_ratio")
    lines = [f"{result['kind']}: {result['input']}", f"  → {result['output']}",
             f"  size        {human_bytes(result['input_bytes'])} → {human_bytes(result['output_bytes'])}"
             + (f" ({ratio:.2f}×)" if ratio else ""),
             f"  time        {result['seconds']:.2f} s",
             f"  operators   {result['op_changes']['text']}"]
    if "fused_operators" in result:
        fused = ", ".join(f"{op} ×{n}" for op, n in result["fused_operators"].items()) or "none"
        lines.append(f"  fused       {fused} (as {result['model_type']}, {result['num_heads'] or 'unknown'} heads, "
                     f"hidden size {result['hidden_size'] or 'unknown'}; {_shape_source(result['shape_source'])})")
        if result.get("attention_layers"):
            lines.append(f"  attention   {attention_text(result['attention_layers'])}")
        if result.get("rotary"):
            lines.append(f"  rotary      {rotary_text(result['rotary'])}")
        if rotary_angles_text(result):
            lines.append(f"  rewritten   {rotary_angles_text(result)}")
        lines += [f"  fuser       {line}" for line in fusers_lines(result)]
    half = result.get("float16_weights")
    if half and half["share"] is not None:
        lines.append(f"  float16     {share_text(half['share'])} of the weights ({human_bytes(half['converted_bytes'])} as "
                     f"float32; {human_bytes(half['kept_bytes'])} kept float32)")
    lines += [f"  {line}" for line in compiled_lines(result)]
    if gemm_text(result):
        lines.append(f"  layers      {gemm_text(result)}")
    for item in result.get("kept_in_fp32", []):
        lines.append(f"  kept in float32: {item['what']} — {item['why']}")
    for item in result.get("repairs", []):
        lines.append(f"  repaired: {item['what']} — {item['why']}")
    for message in result.get("warnings", []):
        lines.append(f"  note: {message}")
    fidelity = result["fidelity"]
    if fidelity.get("skipped"):
        lines.append("  fidelity    not checked (--no-fidelity)")
        return "\n".join(lines + ["", speed_sentence(result["speed"])])
    if result["check"] == "not-run":
        lines.append(f"  fidelity    NOT CHECKED: {fidelity['problem']}")
        lines.append("  (give the inputs with --dim/--shape/--input to check it; exit code 4)")
        return "\n".join(lines + ["", speed_sentence(result["speed"])])
    tolerance = fidelity["tolerance"]
    dims = ", ".join(f"{k}={v}" for k, v in fidelity.get("dims_used", {}).items()) or "none needed"
    lines += ["", f"fidelity: held to {policy_text(tolerance)}; dimensions used: {dims}"]
    decides = bool((fidelity.get("next_tokens") or {}).get("decides"))
    rows = [[o["name"], _number(o["max_abs_diff"]), _number(o["max_rel_diff"]),
             cosine_text(o["cosine"]), o["nonfinite"],
             output_word(o["passed"], decides)
             + (f" ({o['problem'] or o.get('note')})" if o["problem"] or o.get("note") else "")]
            for o in fidelity["outputs"]]
    lines.append(format_table(["output", "max abs diff", "max rel diff", "cosine", "NaN/Inf", "result"], rows))
    lines.append("inputs: " + ", ".join(f"{i['name']} {'×'.join(map(str, i['shape'])) or 'scalar'} ({origin_word(i)})"
                                        for i in fidelity.get("inputs", [])))
    check = fidelity.get("next_tokens")
    if check:
        lines.append(f"next tokens not measured: {check['problem']}" if "problem" in check
                     else f"{agreement_text(check)}, from a prompt of {check['prompt_length']}")
    lines.append(f"PASSED {policy_text(tolerance)}" if fidelity["passed"] else
                 f"FAILED {policy_text(tolerance)}: the variant's "
                 f"{'next tokens or outputs are' if check else 'outputs are'} outside it (exit code 4)")
    lines.append(speed_sentence(result["speed"]))
    return "\n".join(lines)


def _shape_source(source: dict) -> str:
    """Where the transformer's model type, heads and hidden size came from, in a few words."""
    if all(value == "yours" for value in source.values()):
        return "all as you gave them"
    return "; ".join(f"{name.replace('_', ' ')}: {value}" for name, value in source.items() if value != "yours")


#: shorter names for the repairs `ortune drift` points at: keep its first drifting node (or every
#: node of its operator type) in float32 (fp16) or out of quantization (int8)
ALIASES = {"node_block_list": ("--keep-fp32",), "nodes_to_exclude": ("--exclude-node",),
           "op_block_list": ("--keep-fp32-op",), "exclude_op_types": ("--exclude-op",)}



def _add_option_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("conversion options (the kinds each applies to are in brackets)")
    for name, users in options_for_flags().items():
        option = users[0][1]
        kinds = ", ".join(kind for kind, _ in users)
        defaults = {repr(o.default) for _, o in users}
        default = option.default if len(defaults) == 1 else "; ".join(f"{k}: {o.default!r}" for k, o in users)
        if isinstance(default, tuple):
            default = ",".join(default) or "none"
        text = f"[{kinds}] {option.help} (default: {default})".replace("%", "%%")
        if option.kind == "bool":
            group.add_argument(option.flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=text)
        else:
            metavar = "|".join(option.choices) if option.kind == "choice" else {
                "list": "A,B,…", "path": "FOLDER", "int": "N", "float": "X"}[option.kind]
            group.add_argument(option.flag, *ALIASES.get(name, ()), dest=name, metavar=metavar, default=None,
                               help=text)


def _given_options(args, kind: str) -> dict:
    given = {}
    for name, users in options_for_flags().items():
        value = getattr(args, name)
        if value is None:
            continue
        owners = [k for k, _ in users]
        if kind not in owners:
            raise UserError("bad-option", f"{users[0][1].flag} is not an option of {kind} "
                                          f"(it belongs to {', '.join(owners)})")
        given[name] = value
    return given


def add_tolerance_arguments(group) -> None:
    """--tol-abs, --tol-rel and --tol-cosine, made from GivenTolerance (convert's check, drift,
    optimize and the gate share them)."""
    add_param_arguments(group, GivenBounds)


def tolerance_from_args(args) -> GivenTolerance:
    return GivenTolerance.from_dict(params_from_args(args, GivenBounds).to_dict())


def run(args) -> int:
    params = {"kind": args.kind, "input": args.model, "output": args.output, "force": args.force,
              "options": _given_options(args, args.kind), "fidelity": not args.no_fidelity,
              "tolerance": tolerance_from_args(args), "session": session_config_from_args(args).to_dict(),
              "speed_s": "0" if args.no_speed else args.speed_seconds}
    if args.repair:
        if args.target:
            raise UserError("bad-option", "--repair runs on this machine; leave out --target")
        repair = REPAIR.params.from_dict({"convert": params, **repair_bounds(args)}, text=True)
        result = run_job_cli(REPAIR, repair, memory_limit=args.memory_limit)
        code = output(args, result, render)
        return CHECK_NOT_PASSED if result["check"] in ("failed", "not-run") else code
    if args.target:        # refuse a bad output before any work there
        from app.core.model.output import check_target
        check_target(Path(args.model).resolve(), Path(args.output).resolve(), args.force)
    result = run_job_cli(CONVERT, CONVERT.params.from_dict(params, text=True), memory_limit=args.memory_limit,
                         target=args.target)
    code = output(args, result, render)
    return CHECK_NOT_PASSED if result["check"] in ("failed", "not-run") else code


def register(subparsers) -> None:
    kinds = "\n".join(f"  {k.name:<13} {k.summary}" for k in KINDS.values())
    parser = subparsers.add_parser(
        "convert", help="make a variant (fp16, int8, int4, .ort …) and check it gives the same answers",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Convert a model with ONNX Runtime's and onnxconverter-common's own tools, load the result in "
                    "ONNX Runtime (repairing and retrying when it refuses it), and compare its outputs with the "
                    f"source's on the same inputs, then time the two in alternation.\n\nKinds:\n{kinds}\n\n"
                    f"Exit codes: 0 the variant is made and passed its check (or --no-fidelity), {CHECK_NOT_PASSED} "
                    "it is made but its check failed or could not run, 2 bad input, 1 internal error, 3 cancelled; "
                    "the speed check never changes them.")
    parser.add_argument("kind", metavar="KIND", choices=list(KINDS), help=", ".join(KINDS))
    parser.add_argument("model", metavar="MODEL", help="the source .onnx model (never modified)")
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="the variant's file")
    parser.add_argument("--force", action="store_true", help="replace OUT if it exists")
    _add_option_flags(parser)
    fidelity = parser.add_argument_group("fidelity check")
    fidelity.add_argument("--no-fidelity", action="store_true",
                          help="skip the check (the variant is still loaded in ONNX Runtime)")
    add_tolerance_arguments(fidelity)
    speed = parser.add_argument_group("speed check")
    speed.add_argument("--no-speed", action="store_true",
                       help="do not measure the variant against the source (in alternation, each in its own "
                            "process, on the check's inputs)")
    speed.add_argument("--speed-seconds", metavar="S", default="2",
                       help="how long to measure the two, in all (default 2; at least 10 rounds)")
    add_repair_arguments(parser, "convert")
    add_session_arguments(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run)
