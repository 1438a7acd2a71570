"""`ortune gate NEW --against OLD`: a latency, accuracy and memory gate for CI, judged on
intervals so a noisy runner cannot pass or fail it by luck."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path

from app.cli.printing import add_json_flag, check_output_file, distinct_outputs, format_table, output, render_inputs, warn, write_output_file

from app.cli.running import run_job_cli
from app.cli.compare import generation_text
from app.cli.convert import add_tolerance_arguments, tolerance_from_args
from app.cli.param_args import add_param_arguments, flag_values
from app.cli.session_args import (add_run_arguments, add_session_arguments, run_settings_from_args,
                                  session_config_from_args)
from app.core.gate.params import GateParams
from app.core.jobs.errors import UserError

ORDER = 33
FIRST_STRETCH_S = 2.0          # seconds per model before the first judgement, unless --duration/--iterations


TOLERANCE_KEYS = ("atol", "rtol", "min_cosine")


def output_tolerances(given: list[str] | None) -> dict[str, dict[str, float]]:
    """--tolerance NAME=ATOL,RTOL[,COSINE], as often as there are outputs to set: each output's
    own settings over --tol-abs/--tol-rel/--tol-cosine (a field left empty keeps those)."""
    tolerances: dict[str, dict[str, float]] = {}
    for text in given or []:
        name, equals, values = text.rpartition("=")
        fields = values.split(",")
        if not equals or not name or not 1 <= len(fields) <= 3:
            raise UserError("bad-option", f"--tolerance expects NAME=ATOL,RTOL[,COSINE] (e.g. logits=1e-3,1e-2), "
                                          f"not {text!r}")
        own = {}
        for key, field in zip(TOLERANCE_KEYS, fields):
            if field.strip():
                try:
                    own[key] = float(field)
                except ValueError:
                    raise UserError("bad-option", f"--tolerance {text!r}: {field!r} is not a number") from None
        tolerances[name] = own
    return tolerances


def _sessions(args, new_preset: Path | None, old_preset: Path | None) -> tuple[dict, dict]:
    """Each side's session: its own preset (--config / --against-config, else its shipped
    folder's preset.json, else the other's --config), with every session flag on top."""
    new_base = args.config or (str(new_preset) if new_preset else None)
    old_base = args.against_config or (str(old_preset) if old_preset else None) or args.config
    new = session_config_from_args(argparse.Namespace(**{**vars(args), "config": new_base}))
    old = session_config_from_args(argparse.Namespace(**{**vars(args), "config": old_base}))
    return new.to_dict(), old.to_dict()


def params_from_args(args) -> dict:
    from app.core.gate.params import read_side

    if not args.against and not args.against_config:
        raise UserError("bad-option", "say what NEW must not be worse than: --against OLD (a model or a folder "
                                      "`ortune optimize` wrote), or --against-config PRESET for the same model")
    new = read_side(args.new, "the new model")
    old = read_side(args.against, "the old model") if args.against else new
    new_session, old_session = _sessions(args, new.preset, old.preset)
    run = run_settings_from_args(args)
    if args.iterations is None and args.duration is None:
        run.duration_s = FIRST_STRETCH_S
    return {"new": str(new.model), "old": str(old.model), "new_session": new_session, "old_session": old_session,
            "run": run, **flag_values(args, GateParams),
            "tolerance": tolerance_from_args(args), "output_tolerance": output_tolerances(args.tolerance),
            "record": not args.no_history,
            "new_label": "new" if new.model == old.model else "", "old_label": "old" if new.model == old.model else "",
            "presets": [args.config, args.against_config, new.preset, old.preset]}      # read, never written


def render(result: dict) -> str:
    from app.core.gate.judge import exit_code

    rows = [[c["name"], c["verdict"], c["summary"]] for c in result["criteria"]]
    new, old = result["new"], result["old"]
    lines = [f"gate: {new['label']} against {old['label']}: {result['verdict'].upper()} (exit code "
             f"{exit_code(result['verdict'])})", format_table(["criterion", "verdict", "figures"], rows), "",
             f"{result['slowdown_definition']}; a regression only when the whole 95 % interval lies beyond "
             "--max-slowdown; each pair of fresh processes gives one ratio and the interval comes from their spread; an "
             "interval across the limit gets more pairs while one fits in --max-seconds, then undecided"]
    lines += generation_text(result.get("generation"))
    for key in ("new", "old"):
        sha = result[key].get("sha256")
        lines.append(f"{key}: {result[key]['path']}" + (f" (sha256 {sha[:12]}…)" if sha else ""))
    lines += render_inputs(result.get("inputs", []))
    if result.get("history_id"):
        lines.append(f"stored as result {result['history_id']} (see `ortune history`; the window's History tab "
                     "opens it as Compare and Drift)")
    return "\n".join(lines)


def gate_inputs(params: dict) -> tuple[Path, ...]:
    """Every file the gate reads: the two models, their presets (taken out of `params`, which
    name them only for this) and the input files of each session. None of them is ever an
    output, --force or not."""
    files = [params["new"], params["old"], *params.pop("presets")]
    for key in ("new_session", "old_session"):
        files += list((params[key].get("inputs") or {}).get("files", {}).values())
    return tuple(Path(f).expanduser().absolute() for f in files if f)


def step_summary(inputs: tuple[Path, ...]) -> Path | None:
    """$GITHUB_STEP_SUMMARY, checked before measuring: a summary is appended only to a
    regular file (or one that does not exist yet), never to a FIFO, which would hold the
    gate until something read it, nor to one of the gate's inputs."""
    from app.core.model.output import same_file

    given = os.environ.get("GITHUB_STEP_SUMMARY")
    if not given:
        return None
    path = Path(given).absolute()
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        warn(f"GITHUB_STEP_SUMMARY {path} cannot be checked ({exc.strerror}); no summary is appended to it")
        return None
    if not stat.S_ISREG(mode) or any(same_file(path, read) for read in inputs):
        why = "is one of the gate's inputs" if stat.S_ISREG(mode) else "is not a regular file"
        warn(f"GITHUB_STEP_SUMMARY {path} {why}; no summary is appended to it")
        return None
    return path


def _append(path: Path, text: str) -> None:
    """Append without waiting: a FIFO put there since the check is refused, not waited on."""
    try:
        handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
    except OSError as exc:
        warn(f"GITHUB_STEP_SUMMARY could not be appended to ({exc.strerror})")
        return
    with os.fdopen(handle, "a", encoding="utf-8") as stream:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            warn("GITHUB_STEP_SUMMARY is not a regular file; no summary was appended to it")
            return
        os.set_blocking(handle, True)
        try:
            stream.write(text)
        except OSError as exc:
            warn(f"GITHUB_STEP_SUMMARY could not be appended to ({exc.strerror})")


def publish(args, result: dict, files: dict[str, Path | None], inputs: tuple[Path, ...]) -> None:
    """The files and lines a CI system reads."""
    from app.core.gate.report import annotations, junit_xml, markdown as markdown_text

    if files["--junit"]:
        write_output_file(files["--junit"], junit_xml(result), args.force, inputs)
    summary = markdown_text(result)
    if files["--markdown"]:
        write_output_file(files["--markdown"], summary, args.force, inputs)
    if files["GITHUB_STEP_SUMMARY"]:
        _append(files["GITHUB_STEP_SUMMARY"], summary + "\n")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        stream = sys.stderr if args.json else sys.stdout       # --json keeps stdout one JSON object
        for line in annotations(result):
            stream.write(line + "\n")
        stream.flush()


def run(args) -> int:
    from app.core.gate.jobs import GATE
    from app.core.gate.judge import exit_code

    given = params_from_args(args)
    inputs = gate_inputs(given)
    params = GATE.params.from_dict(given, text=True)     # the limits as their flags gave them, as text
    files = {"--junit": check_output_file(args.junit, args.force, inputs),
             "--markdown": check_output_file(args.markdown, args.force, inputs)}
    distinct_outputs(files)
    files["GITHUB_STEP_SUMMARY"] = step_summary(inputs)
    result = run_job_cli(GATE, params, memory_limit=args.memory_limit, target=args.target)
    publish(args, result, files, inputs)
    output(args, result, render)
    return exit_code(result["verdict"])


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "gate", help="CI gate: fail when NEW is slower, less accurate or bigger in memory than OLD",
        description="Measure NEW and OLD in alternation, each in a process of its own, on this machine (or "
                    "--target) in one run, and judge: speed (a regression only when the whole 95 %% interval of "
                    "the slowdown lies beyond --max-slowdown; measured in --pairs pairs of fresh processes, the "
                    "interval from the spread between pairs; too wide to decide: more pairs while one fits in "
                    "--max-seconds, then undecided), outputs (per-output tolerances as a conversion's check; the "
                    "first drifting node named), accuracy on --data labels, peak memory. When other processes "
                    "take the cores in most rounds, the machine was too busy to tell: undecided. Exit codes: "
                    "0 pass, 5 regression (speed, outputs, accuracy or memory), 6 undecided (the interval still "
                    "reaches across --max-slowdown after --max-seconds, or the machine was too busy), 2 bad input.")
    parser.add_argument("new", metavar="NEW", help="the new model (.onnx, .ort) or a folder `ortune optimize` wrote")
    parser.add_argument("--against", metavar="OLD", help="the model NEW must not be worse than (or a shipped folder)")
    parser.add_argument("--against-config", metavar="FILE.json",
                        help="OLD's session preset (default: --config); without --against, NEW's model under two presets")
    limits = parser.add_argument_group("limits")
    add_param_arguments(limits, GateParams)
    add_tolerance_arguments(limits)
    limits.add_argument("--tolerance", metavar="NAME=ATOL,RTOL[,COSINE]", action="append",
                        help="one output's own tolerances over --tol-abs/--tol-rel/--tol-cosine (repeat per output; "
                             "an empty field keeps the common one)")
    reports = parser.add_argument_group("reports")
    reports.add_argument("--junit", metavar="FILE", help="write a JUnit XML report (one test case per criterion)")
    reports.add_argument("--markdown", metavar="FILE", help="write a Markdown summary (also appended to "
                                                            "$GITHUB_STEP_SUMMARY when that is set)")
    reports.add_argument("--force", action="store_true", help="replace --junit/--markdown files that exist")
    add_session_arguments(parser)
    add_run_arguments(parser)
    parser.add_argument("--no-history", action="store_true", help="do not store the result in the history")
    add_json_flag(parser)
    parser.set_defaults(handler=run)
